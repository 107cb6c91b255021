/* Classical RK4 step for mechanical motion (q' = v, v' = a(q, v)), shared by
 * the event-driven and the compliant-contact simulators. Internal. */
#ifndef IMPULSE_SYSTEMS_RK4_MOTION_H
#define IMPULSE_SYSTEMS_RK4_MOTION_H

#include <string.h>
#include "impulse/contact_systems.h"

#define IMP_RK4_NMAX (IMP_MAX_BODIES * IMP_MAX_DIM)

typedef void (*imp_accel_fn)(const void *ctx, const double *q, const double *v, double *a);

/* Advance (q, v), D values each, by h. */
static inline void imp_rk4_motion(imp_accel_fn accel, const void *ctx, double *q, double *v, double h, int D)
{
    double k1q[IMP_RK4_NMAX], k1v[IMP_RK4_NMAX], k2q[IMP_RK4_NMAX], k2v[IMP_RK4_NMAX];
    double k3q[IMP_RK4_NMAX], k3v[IMP_RK4_NMAX], k4q[IMP_RK4_NMAX], k4v[IMP_RK4_NMAX];
    double tq[IMP_RK4_NMAX] = {0}, tv[IMP_RK4_NMAX] = {0};
    memcpy(k1q, v, D * sizeof(double));
    accel(ctx, q, v, k1v);
    for (int i = 0; i < D; i++) tq[i] = q[i] + 0.5 * h * k1q[i], tv[i] = v[i] + 0.5 * h * k1v[i];
    memcpy(k2q, tv, D * sizeof(double));
    accel(ctx, tq, tv, k2v);
    for (int i = 0; i < D; i++) tq[i] = q[i] + 0.5 * h * k2q[i], tv[i] = v[i] + 0.5 * h * k2v[i];
    memcpy(k3q, tv, D * sizeof(double));
    accel(ctx, tq, tv, k3v);
    for (int i = 0; i < D; i++) tq[i] = q[i] + h * k3q[i], tv[i] = v[i] + h * k3v[i];
    memcpy(k4q, tv, D * sizeof(double));
    accel(ctx, tq, tv, k4v);
    for (int i = 0; i < D; i++) {
        q[i] += h / 6.0 * (k1q[i] + 2 * k2q[i] + 2 * k3q[i] + k4q[i]);
        v[i] += h / 6.0 * (k1v[i] + 2 * k2v[i] + 2 * k3v[i] + k4v[i]);
    }
}

#endif
