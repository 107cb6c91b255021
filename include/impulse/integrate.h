/* impulse integrators: steppers behind one small interface (GSL odeiv2
 * style), each with its discrete adjoint, so that training can backpropagate
 * exactly through the steps.
 *
 * A system of ODEs y' = f(t, y; theta) is evaluated for a batch of B
 * independent samples at once (rows of a B x dim array). The right-hand side
 * and its vector-Jacobian product are user callbacks with `void *user`.
 */
#ifndef IMPULSE_INTEGRATE_H
#define IMPULSE_INTEGRATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imp_ode {
    int dim;        /* state size per sample */
    size_t n_theta; /* number of parameters theta (0 if none) */
    /* ydot (B x dim) = f(t, y (B x dim)). Returns IMP_OK or a status. */
    int (*rhs)(void *user, double t, const double *y, int B, double *ydot);
    /* Reverse mode at (t, y): given fbar (B x dim) = dL/df, accumulate
     * ybar += (df/dy)^T fbar and, if theta_bar != NULL, theta_bar += (df/dtheta)^T fbar
     * (summed over the batch). May recompute f at y internally. NULL if the
     * ODE is only integrated forward. */
    int (*rhs_vjp)(void *user, double t, const double *y, int B, const double *fbar,
                   double *ybar, double *theta_bar);
    void *user;
} imp_ode;

/* A fixed-step one-step method with its exact discrete adjoint. */
typedef struct imp_stepper_type {
    const char *name;
    int order;
    /* y_next = Phi_h(t, y). work: at least work_size(dim, B) doubles. */
    int (*step)(const imp_ode *ode, double t, double h, const double *y, int B, double *y_next,
                double *work);
    /* Given ybar_next = dL/dy_next, accumulate ybar += (dPhi/dy)^T ybar_next and
     * theta_bar += (dPhi/dtheta)^T ybar_next, recomputing the stages from y. */
    int (*step_vjp)(const imp_ode *ode, double t, double h, const double *y, int B,
                    const double *ybar_next, double *ybar, double *theta_bar, double *work);
    size_t (*work_size)(int dim, int B);
} imp_stepper_type;

extern const imp_stepper_type imp_stepper_euler;
extern const imp_stepper_type imp_stepper_rk4;   /* Kutta's 3/8 rule, as torchdiffeq's "rk4" */

/* Integrate n_steps fixed steps of size h from y0 (B x dim); writes the
 * trajectory traj ((n_steps+1) x B x dim), traj[0] = y0. */
int imp_integrate_fixed(const imp_stepper_type *st, const imp_ode *ode, double t0, double h,
                        int n_steps, const double *y0, int B, double *traj);
/* Reverse pass of imp_integrate_fixed: given traj_bar ((n_steps+1) x B x dim)
 * = dL/dtraj, accumulate y0_bar += dL/dy0 and theta_bar += dL/dtheta. */
int imp_integrate_fixed_vjp(const imp_stepper_type *st, const imp_ode *ode, double t0, double h,
                            int n_steps, const double *traj, int B, const double *traj_bar,
                            double *y0_bar, double *theta_bar);

/* Adaptive Dormand-Prince 5(4) with PI step-size control and dense output at
 * the requested times t_out[0..n_out-1] (increasing, t_out[0] >= t0). Writes
 * y_out (n_out x B x dim). Errors are scaled per component by
 * atol + rtol * max(|y|, |y_new|) over the whole batch. Fails with
 * IMP_ERR_NUMERIC if the step size underflows or max_steps is exceeded. */
typedef struct imp_dopri5_opts {
    double rtol, atol;
    double h0;         /* initial step (0: automatic) */
    long max_steps;    /* 0: 10^7 */
} imp_dopri5_opts;
typedef struct imp_dopri5_stats {
    long n_steps, n_rejected, n_rhs;
} imp_dopri5_stats;
int imp_dopri5_solve(const imp_ode *ode, const imp_dopri5_opts *opts, double t0,
                     const double *y0, int B, const double *t_out, int n_out, double *y_out,
                     imp_dopri5_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
