/* Fixed-step explicit Runge-Kutta steppers (forward Euler and Kutta's 3/8
 * rule) driven by one Butcher tableau each, with their exact discrete
 * adjoints. The adjoint is the transpose of the linearised step, so a
 * finite-difference check of a whole trajectory matches it to round-off
 * (this is "discretise then differentiate", as torchdiffeq backprop does
 * when gradients flow straight through the solver). */
#include "impulse/integrate.h"
#include "impulse/core.h"

#include <math.h>
#include <string.h>

#define RK_MAX_STAGES 4

typedef struct rk_tableau {
    int s;
    double a[RK_MAX_STAGES][RK_MAX_STAGES]; /* strictly lower triangular */
    double b[RK_MAX_STAGES];
    double c[RK_MAX_STAGES];
} rk_tableau;

static const rk_tableau tableau_euler = {
    1, {{0}}, {1.0}, {0.0}
};

/* Kutta's 3/8 rule: the tableau of torchdiffeq's rk4_alt_step_func, which
 * the CHNN reference uses for training ([chnn] section 3). */
static const rk_tableau tableau_rk38 = {
    4,
    {{0, 0, 0, 0},
     {1.0 / 3.0, 0, 0, 0},
     {-1.0 / 3.0, 1.0, 0, 0},
     {1.0, -1.0, 1.0, 0}},
    {1.0 / 8.0, 3.0 / 8.0, 3.0 / 8.0, 1.0 / 8.0},
    {0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0}
};

/* work layout: k[s] (stage derivatives), Y (stage state), kbar[s], Ybar */
static size_t rk_work_size_s(int s, int dim, int B)
{
    return (size_t)(2 * s + 2) * (size_t)dim * (size_t)B;
}

static int check_step_args(const imp_ode *ode, double h, const double *y, int B,
                           const void *out, const void *work)
{
    if (!ode || !ode->rhs) return imp_fail(IMP_ERR_INVALID, "ode: missing right-hand side");
    if (ode->dim <= 0) return imp_fail(IMP_ERR_INVALID, "ode.dim: %d must be positive", ode->dim);
    if (B <= 0) return imp_fail(IMP_ERR_INVALID, "B: batch size %d must be positive", B);
    if (!(h > 0.0) || !isfinite(h))
        return imp_fail(IMP_ERR_INVALID, "h: step size %g must be positive and finite", h);
    if (!y || !out || !work) return imp_fail(IMP_ERR_INVALID, "y: NULL buffer");
    return IMP_OK;
}

/* Stage i state: Y = y + h sum_j a_ij k_j. */
static void rk_stage_state(const rk_tableau *tb, int i, double h, const double *y, const double *k,
                           size_t n, double *Y)
{
    memcpy(Y, y, n * sizeof(double));
    for (int j = 0; j < i; j++) {
        double w = h * tb->a[i][j];
        if (w == 0.0) continue;
        const double *kj = k + (size_t)j * n;
        for (size_t q = 0; q < n; q++) Y[q] += w * kj[q];
    }
}

static int rk_stages_forward(const rk_tableau *tb, const imp_ode *ode, double t, double h,
                             const double *y, int B, double *k, double *Y)
{
    size_t n = (size_t)ode->dim * (size_t)B;
    for (int i = 0; i < tb->s; i++) {
        rk_stage_state(tb, i, h, y, k, n, Y);
        int st = ode->rhs(ode->user, t + tb->c[i] * h, Y, B, k + (size_t)i * n);
        if (st) return st;
    }
    return IMP_OK;
}

static int rk_step(const rk_tableau *tb, const imp_ode *ode, double t, double h, const double *y,
                   int B, double *y_next, double *work)
{
    int st = check_step_args(ode, h, y, B, y_next, work);
    if (st) return st;
    size_t n = (size_t)ode->dim * (size_t)B;
    double *k = work, *Y = work + (size_t)tb->s * n;
    st = rk_stages_forward(tb, ode, t, h, y, B, k, Y);
    if (st) return st;
    /* write through a temporary so y_next may alias y */
    memcpy(Y, y, n * sizeof(double));
    for (int i = 0; i < tb->s; i++) {
        double w = h * tb->b[i];
        const double *ki = k + (size_t)i * n;
        for (size_t q = 0; q < n; q++) Y[q] += w * ki[q];
    }
    memcpy(y_next, Y, n * sizeof(double));
    return IMP_OK;
}

/* Reverse of rk_step: y_next = y + h sum b_i k_i, k_i = f(t + c_i h, Y_i),
 * Y_i = y + h sum_{j<i} a_ij k_j. Sweep the stages backwards:
 * kbar_i = h b_i ybar_next + h sum_{l>i} a_li Ybar_l, Ybar_i = (df/dy)^T kbar_i. */
static int rk_step_vjp(const rk_tableau *tb, const imp_ode *ode, double t, double h,
                       const double *y, int B, const double *ybar_next, double *ybar,
                       double *theta_bar, double *work)
{
    int st = check_step_args(ode, h, y, B, ybar, work);
    if (st) return st;
    if (!ode->rhs_vjp) return imp_fail(IMP_ERR_INVALID, "ode.rhs_vjp: missing (needed for the adjoint)");
    if (!ybar_next) return imp_fail(IMP_ERR_INVALID, "ybar_next: NULL buffer");
    size_t n = (size_t)ode->dim * (size_t)B;
    int s = tb->s;
    double *k = work, *Y = k + (size_t)s * n, *kbar = Y + n, *Ybar = kbar + (size_t)s * n;
    st = rk_stages_forward(tb, ode, t, h, y, B, k, Y);
    if (st) return st;
    for (int i = 0; i < s; i++) {
        double w = h * tb->b[i];
        double *kb = kbar + (size_t)i * n;
        for (size_t q = 0; q < n; q++) kb[q] = w * ybar_next[q];
    }
    for (int i = s - 1; i >= 0; i--) {
        rk_stage_state(tb, i, h, y, k, n, Y);
        memset(Ybar, 0, n * sizeof(double));
        st = ode->rhs_vjp(ode->user, t + tb->c[i] * h, Y, B, kbar + (size_t)i * n, Ybar,
                          theta_bar);
        if (st) return st;
        for (size_t q = 0; q < n; q++) ybar[q] += Ybar[q];
        for (int j = 0; j < i; j++) {
            double w = h * tb->a[i][j];
            if (w == 0.0) continue;
            double *kb = kbar + (size_t)j * n;
            for (size_t q = 0; q < n; q++) kb[q] += w * Ybar[q];
        }
    }
    for (size_t q = 0; q < n; q++) ybar[q] += ybar_next[q];
    return IMP_OK;
}

static int euler_step(const imp_ode *ode, double t, double h, const double *y, int B,
                      double *y_next, double *work)
{
    return rk_step(&tableau_euler, ode, t, h, y, B, y_next, work);
}
static int euler_step_vjp(const imp_ode *ode, double t, double h, const double *y, int B,
                          const double *ybar_next, double *ybar, double *theta_bar, double *work)
{
    return rk_step_vjp(&tableau_euler, ode, t, h, y, B, ybar_next, ybar, theta_bar, work);
}
static size_t euler_work_size(int dim, int B) { return rk_work_size_s(1, dim, B); }

static int rk4_step(const imp_ode *ode, double t, double h, const double *y, int B,
                    double *y_next, double *work)
{
    return rk_step(&tableau_rk38, ode, t, h, y, B, y_next, work);
}
static int rk4_step_vjp(const imp_ode *ode, double t, double h, const double *y, int B,
                        const double *ybar_next, double *ybar, double *theta_bar, double *work)
{
    return rk_step_vjp(&tableau_rk38, ode, t, h, y, B, ybar_next, ybar, theta_bar, work);
}
static size_t rk4_work_size(int dim, int B) { return rk_work_size_s(4, dim, B); }

const imp_stepper_type imp_stepper_euler = {
    "euler", 1, euler_step, euler_step_vjp, euler_work_size
};
const imp_stepper_type imp_stepper_rk4 = {
    "rk4", 4, rk4_step, rk4_step_vjp, rk4_work_size
};
