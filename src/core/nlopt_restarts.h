/* One derivative-free search used by the rigid-body fits (rigid_ident.c,
 * rigid_learn.c): NLopt's bounded search restarted from the best point with
 * initial steps 4x smaller each time, while the rollout budget lasts (a
 * collapsed simplex can stall one coordinate). */
#ifndef IMPULSE_NLOPT_RESTARTS_H
#define IMPULSE_NLOPT_RESTARTS_H

#include <nlopt.h>

/* Up to 4 runs of `alg` in dim <= 8 unknowns within [lo, hi], the r-th with
 * initial steps min(step0 / 4^r, (hi - lo) / 2) and absolute tolerances 1e-3
 * of them, each from best_x (in: the start, clamped into the box; out: the
 * best point) while *evals (the objective's own count) + dim + 1 <
 * max_evals. Returns the best objective value seen (1e30 if none: best_x
 * left at the clamped start); *failed is set when NLopt could not create an
 * optimiser. */
double imp_nlopt_restarts(nlopt_algorithm alg, unsigned dim, const double *lo, const double *hi, const double *step0,
                          nlopt_func f, void *ctx, const int *evals, int max_evals, double *best_x, int *failed);

#endif
