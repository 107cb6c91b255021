/* Internals shared by the contact simulators (contact_sim.c, compliant_sim.c). */
#ifndef IMPULSE_SYSTEMS_INTERNAL_H
#define IMPULSE_SYSTEMS_INTERNAL_H

#include "impulse/contact_systems.h"

#define IMP_CONTACT_SYSTEM_NAMES                                                                                    \
    "system: unknown '%s' (pendulum, bouncing-ball, newtons-cradle, ball-box, compliant-ball, compliant-cradle, " \
    "compliant-ball-box, bouncing-disk, bouncing-points:N, bouncing-disks:N)"

/* The ball in a box's geometry (three wall pairs: floor, left, right). */
void imp_ball_box_geometry(imp_contact_geometry *g);
/* Its initial state (q, v: 2 values each) for a trajectory (random: drawn). */
void imp_ball_box_initial_state(const imp_sim_opts *o, int random, imp_rng *rng, double *q, double *v);

#endif
