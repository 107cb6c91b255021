/* bouncing-points:N (src/systems/points_sim.c), dispatched from
 * imp_sim_defaults and imp_simulate (internal). */
#ifndef IMPULSE_SYSTEMS_POINTS_SIM_H
#define IMPULSE_SYSTEMS_POINTS_SIM_H

#include "impulse/contact_systems.h"

/* 1 if system names bouncing-points (with or without ":N"). */
int imp_points_system(const char *system);
int imp_points_sim_defaults(const char *system, imp_sim_opts *o);
int imp_simulate_points(const char *system, const imp_sim_opts *o, imp_trajset *out);

/* Shared by the box simulators (bouncing-points:N, bouncing-disks:N):
 * N from "BASE" (5) or "BASE:N" (1..max); their defaults (300 samples at
 * dt 0.01, gravity 9.81, random starts); the trajectory set's allocation
 * and header (labels "impact"); one sample's states and labels; the end:
 * with st != 0 the set is freed and st returned, else the observed copies
 * of the clean states are made, with noise. */
int imp_box_sim_count(const char *system, const char *base, int max, int *n);
int imp_box_sim_defaults(const char *system, const char *base, int max, imp_sim_opts *o);
int imp_box_sim_begin(imp_trajset *out, const char *system, const imp_sim_opts *o, const imp_contact_geometry *g);
void imp_box_sim_store(imp_trajset *out, int tr, int t, const double *q, const double *v, const int *hit);
int imp_box_sim_end(imp_trajset *out, int st, const imp_sim_opts *o, imp_rng *rng);
/* A planar contact model of n bodies with the given gap tolerance, empty,
 * and rng seeded for its table. */
struct imp_contact_model;
void imp_box_model_begin(struct imp_contact_model *m, int n, double gap_tol, unsigned long long seed, imp_rng *rng);

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
