/* Whole fixed-step trajectories and their reverse pass (backpropagation
 * through the solver: the exact gradient of the discrete trajectory). */
#include "impulse/integrate.h"
#include "impulse/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int check_fixed_args(const imp_stepper_type *st, const imp_ode *ode, double t0, double h,
                            int n_steps, int B)
{
    if (!st || !st->step || !st->work_size) return imp_fail(IMP_ERR_INVALID, "stepper: NULL");
    if (!ode || !ode->rhs) return imp_fail(IMP_ERR_INVALID, "ode: missing right-hand side");
    if (ode->dim <= 0) return imp_fail(IMP_ERR_INVALID, "ode.dim: %d must be positive", ode->dim);
    if (B <= 0) return imp_fail(IMP_ERR_INVALID, "B: batch size %d must be positive", B);
    if (!isfinite(t0)) return imp_fail(IMP_ERR_INVALID, "t0: %g is not finite", t0);
    if (!(h > 0.0) || !isfinite(h))
        return imp_fail(IMP_ERR_INVALID, "h: step size %g must be positive and finite", h);
    if (n_steps < 0) return imp_fail(IMP_ERR_INVALID, "n_steps: %d must be >= 0", n_steps);
    return IMP_OK;
}

int imp_integrate_fixed(const imp_stepper_type *st, const imp_ode *ode, double t0, double h,
                        int n_steps, const double *y0, int B, double *traj)
{
    int rc = check_fixed_args(st, ode, t0, h, n_steps, B);
    if (rc) return rc;
    if (!y0 || !traj) return imp_fail(IMP_ERR_INVALID, "y0: NULL buffer");
    size_t n = (size_t)ode->dim * (size_t)B;
    rc = imp_check_finite(y0, n, "y0");
    if (rc) return rc;
    memmove(traj, y0, n * sizeof(double));
    if (n_steps == 0) return IMP_OK;
    double *work = malloc(st->work_size(ode->dim, B) * sizeof(double));
    if (!work) return imp_fail(IMP_ERR_NOMEM, "integrate: work buffer");
    for (int k = 0; k < n_steps; k++) {
        const double *y = traj + (size_t)k * n;
        double *y1 = traj + (size_t)(k + 1) * n;
        rc = st->step(ode, t0 + k * h, h, y, B, y1, work);
        if (rc) break;
        for (size_t q = 0; q < n; q++) {
            if (!isfinite(y1[q])) {
                rc = imp_fail(IMP_ERR_NUMERIC,
                              "integrate: state became non-finite at step %d (t = %g), component %zu",
                              k + 1, t0 + (k + 1) * h, q);
                break;
            }
        }
        if (rc) break;
    }
    free(work);
    return rc;
}

int imp_integrate_fixed_vjp(const imp_stepper_type *st, const imp_ode *ode, double t0, double h,
                            int n_steps, const double *traj, int B, const double *traj_bar,
                            double *y0_bar, double *theta_bar)
{
    int rc = check_fixed_args(st, ode, t0, h, n_steps, B);
    if (rc) return rc;
    if (!st->step_vjp) return imp_fail(IMP_ERR_INVALID, "stepper: no adjoint");
    if (!traj || !traj_bar || !y0_bar) return imp_fail(IMP_ERR_INVALID, "traj: NULL buffer");
    size_t n = (size_t)ode->dim * (size_t)B;
    double *work = malloc((st->work_size(ode->dim, B) + 2 * n) * sizeof(double));
    if (!work) return imp_fail(IMP_ERR_NOMEM, "integrate_vjp: work buffer");
    double *a = work + st->work_size(ode->dim, B); /* dL/dy_{k+1}, total */
    double *a_prev = a + n;
    memcpy(a, traj_bar + (size_t)n_steps * n, n * sizeof(double));
    for (int k = n_steps - 1; k >= 0; k--) {
        memcpy(a_prev, traj_bar + (size_t)k * n, n * sizeof(double));
        rc = st->step_vjp(ode, t0 + k * h, h, traj + (size_t)k * n, B, a, a_prev, theta_bar, work);
        if (rc) break;
        double *tmp = a; a = a_prev; a_prev = tmp;
    }
    if (!rc)
        for (size_t q = 0; q < n; q++) y0_bar[q] += a[q];
    free(work);
    return rc;
}
