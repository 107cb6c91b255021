/* What the CD-Lagrange training loop and its law refit share (the training
 * windows), and the golden-section search the refit and
 * bench/bench_cdl_law_profile.c use. Internal to the library. */
#ifndef IMPULSE_TRAIN_CDL_REFIT_H
#define IMPULSE_TRAIN_CDL_REFIT_H

#include "impulse/cdl.h"

#include <stddef.h>

/* The training windows of horizon H: every start (index tr * (n_steps - H)
 * + t0) except those inside a multi-sample impact (imp_trajset.interior),
 * written to starts (may be NULL); returns how many. */
size_t imp_cdl_windows(const imp_trajset *d, int H, size_t *starts);
/* Window `win` as training takes it: x0 (2D), target (H x 2D), labels
 * (H x K) and the targets' weights (H; 0 inside an impact and, for cdl, at
 * a resting target of onset labels). */
void imp_cdl_fill_window(const imp_model *m, const imp_trajset *d, int H, size_t win, double *x0, double *target,
                         double *labels, double *weight);

/* The options the training loss itself reads (horizon against the data,
 * l2, threads), checked as training checks them. */
int imp_cdl_check_loss_opts(const imp_train_opts *o, const imp_trajset *d);

/* Golden-section search for a minimum of f on [a, b], until the bracket is
 * at most tol wide; returns the better of the last two points evaluated, its
 * value in *f_min. f is evaluated only inside (a, b). */
double imp_golden_min(double (*f)(double x, void *ctx), void *ctx, double a, double b, double tol, double *f_min);

#endif
