/* The CD-Lagrange window loss of a minibatch on several threads
 * (src/train/cdl_pool.c); not a public header. */
#ifndef IMPULSE_TRAIN_CDL_POOL_H
#define IMPULSE_TRAIN_CDL_POOL_H

#include "impulse/cdl.h"

typedef struct imp_cdl_pool imp_cdl_pool;
/* threads work spaces for ceil(B / threads) windows of horizon H each, in
 * the training precisions asked for, and threads - 1 threads. */
int imp_cdl_pool_new(imp_cdl_pool **out, const imp_model *m, int B, int H, int threads, int single_contact,
                     int single_potential);
void imp_cdl_pool_free(imp_cdl_pool *p);
/* imp_model_window_loss of bs <= B windows (grad accumulated, parts
 * written). One thread: that call itself. T threads: bs cut into T
 * contiguous slices (the first bs % T one window longer), each slice's loss
 * and gradient on its thread into its own buffer, then added in slice order
 * with weight n_slice / bs (each slice's loss is a mean over its windows, and
 * each adds the whole L2 term, which the weights sum to one): the whole
 * batch's loss up to the order of the sums, the same bit for bit at every
 * call for a given T. A failing slice's error (the first in order) is
 * returned with its message. */
int imp_cdl_pool_loss(imp_cdl_pool *p, const double *params, const double *x0, const double *target,
                      const double *labels, const double *weight, int bs, double l2, double *grad,
                      imp_loss_parts *parts);

#endif
