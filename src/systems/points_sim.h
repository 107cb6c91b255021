/* bouncing-points:N (src/systems/points_sim.c), dispatched from
 * imp_sim_defaults and imp_simulate (internal). */
#ifndef IMPULSE_SYSTEMS_POINTS_SIM_H
#define IMPULSE_SYSTEMS_POINTS_SIM_H

#include "impulse/contact_systems.h"

/* 1 if system names bouncing-points (with or without ":N"). */
int imp_points_system(const char *system);
int imp_points_sim_defaults(const char *system, imp_sim_opts *o);
int imp_simulate_points(const char *system, const imp_sim_opts *o, imp_trajset *out);

#endif
