/* bouncing-points:N (src/systems/points_sim.c), dispatched from
 * imp_sim_defaults and imp_simulate (internal). */
#ifndef IMPULSE_SYSTEMS_POINTS_SIM_H
#define IMPULSE_SYSTEMS_POINTS_SIM_H

#include "impulse/contact_systems.h"

/* 1 if system names bouncing-points (with or without ":N"). */
int imp_points_system(const char *system);
int imp_points_sim_defaults(const char *system, imp_sim_opts *o);
int imp_simulate_points(const char *system, const imp_sim_opts *o, imp_trajset *out);

/* First time in (0, tmax] at which phi(t) = c + b t + a t^2 reaches 0 while
 * decreasing (an impact); tmax + 1 if none. c <= tol and b < 0: now (0). */
double imp_sim_first_hit(double a, double b, double c, double tmax, double tol);

/* bouncing-disks:N (src/systems/disks_sim.c), dispatched likewise. */
int imp_disks_system(const char *system);
int imp_disks_sim_defaults(const char *system, imp_sim_opts *o);
int imp_simulate_disks(const char *system, const imp_sim_opts *o, imp_trajset *out);
/* The same with every contact's e and mu set to e_all and mu_all (NaN: the
 * system's table), for tests (energy with e = 1 and mu = 0). */
int imp_simulate_disks_law(const char *system, const imp_sim_opts *o, double e_all, double mu_all, imp_trajset *out);

#endif
