/* Internals shared by the GP source files (not installed). */
#ifndef IMPULSE_GP_INTERNAL_H
#define IMPULSE_GP_INTERNAL_H

#include "impulse/gp.h"

#define IMP_GP__MAX_DIM 64
#define IMP_GP__LOG_2PI 1.8378770664093454836

int imp_gp__check_data(const double *x, const double *y, size_t n, size_t d);
int imp_gp__factor(double *K, const double *x, size_t n, size_t d, const double *log_theta,
                   double *jitter_used);
void imp_gp__solve(const double *L, size_t n, const double *y, double *alpha);
int imp_gp__lml_work(const double *x, const double *y, size_t n, size_t d,
                     const double *log_theta, double *lml, double *grad, double *jitter_used,
                     double *K, double *alpha);
imp_gp *imp_gp__alloc(size_t n, size_t d);
void imp_gp__standardize(imp_gp *gp, const double *x, const double *y, int standardize, double *ys);
int imp_gp__condition(imp_gp *gp, const double *ys);

#endif
