/* Synthetic drop experiments, part 1: the compliant-contact simulator (see
 * include/impulse/drop.h for the model). Fixed-step classical RK4 with a
 * small step near and in contact and a large one in free flight, where RK4
 * is exact (the motion is polynomial in t). */
#include "impulse/drop.h"

#include <math.h>
#include <string.h>

void imp_drop_params_default(imp_drop_params *p)
{
    memset(p, 0, sizeof *p);
    /* the data set's ellipse (data README; reference §4) */
    p->a = 0.035;
    p->b = 0.025;
    p->mass = 0.0364;
    p->kg = 0.0192;
    p->g = 9.81;
    /* contact: ~0.3 ms impacts, restitution ~0.55 at 2.6 m/s (measured in
     * docs/impact-gp.md), Coulomb mu = 0.3 (inclined-plane value, reference §3) */
    p->k_n = 1e8;
    p->c_n = 0.4;
    p->mu = 0.3;
    p->k_t = 2e5;
    p->c_t = 2.0;
    p->rho_patch = 0.0;
    p->dt = 2e-6;
    p->dt_free = 2e-4;
    /* Vicon at 250 Hz; noise levels assumed (not published, reference §4) */
    p->frame_rate = 250.0;
    p->noise_pos = 2e-4;
    p->noise_theta = 3e-3;
    /* pre-impact statistics of the data set (reference §4) */
    p->vx_mean = 0.60;
    p->vx_sd = 0.16;
    p->vy_mean = -2.57;
    p->vy_sd = 0.16;
    p->omega_mean = -1.1;
    p->omega_sd = 6.1;
    /* [CODE2] data_process_ellipse.m */
    p->accel_threshold = 200.0;
    p->pre_first = 20;
    p->pre_last = 5;
    p->post_first = 2;
    p->post_count = 15;
}

#define CHECK_POS(field)                                                                     \
    if (!(p->field > 0.0) || !isfinite(p->field))                                            \
        return imp_fail(IMP_ERR_INVALID, "drop: " #field ": %g must be positive and finite", p->field)
#define CHECK_NONNEG(field)                                                                  \
    if (!(p->field >= 0.0) || !isfinite(p->field))                                           \
        return imp_fail(IMP_ERR_INVALID, "drop: " #field ": %g must be >= 0 and finite", p->field)
#define CHECK_FINITE(field)                                                                  \
    if (!isfinite(p->field)) return imp_fail(IMP_ERR_INVALID, "drop: " #field ": not finite")

int imp_drop_params_check(const imp_drop_params *p)
{
    if (!p) return imp_fail(IMP_ERR_INVALID, "drop: params: NULL");
    CHECK_POS(a);
    CHECK_POS(b);
    CHECK_POS(mass);
    CHECK_POS(kg);
    CHECK_NONNEG(g);
    CHECK_POS(k_n);
    CHECK_NONNEG(c_n);
    CHECK_NONNEG(mu);
    CHECK_POS(k_t);
    CHECK_NONNEG(c_t);
    CHECK_NONNEG(rho_patch);
    if (p->rho_patch >= 0.5 * fmin(p->a, p->b))
        return imp_fail(IMP_ERR_INVALID, "drop: rho_patch: %g m is not small against the body", p->rho_patch);
    CHECK_POS(dt);
    CHECK_POS(dt_free);
    CHECK_POS(frame_rate);
    CHECK_NONNEG(noise_pos);
    CHECK_NONNEG(noise_theta);
    CHECK_FINITE(vx_mean);
    CHECK_NONNEG(vx_sd);
    CHECK_FINITE(vy_mean);
    CHECK_NONNEG(vy_sd);
    CHECK_FINITE(omega_mean);
    CHECK_NONNEG(omega_sd);
    CHECK_POS(accel_threshold);
    if (p->dt > 1e-4)
        return imp_fail(IMP_ERR_INVALID, "drop: dt: %g s too large to resolve a contact (max 1e-4)", p->dt);
    if (p->dt_free < p->dt)
        return imp_fail(IMP_ERR_INVALID, "drop: dt_free: %g smaller than dt %g", p->dt_free, p->dt);
    if (p->dt_free > 1e-3)
        return imp_fail(IMP_ERR_INVALID, "drop: dt_free: %g s too large (max 1e-3)", p->dt_free);
    if (!(p->vy_mean < 0.0))
        return imp_fail(IMP_ERR_INVALID, "drop: vy_mean: %g must be negative (falling)", p->vy_mean);
    if (p->pre_last < 1 || p->pre_first - p->pre_last < 2)
        return imp_fail(IMP_ERR_INVALID,
                        "drop: pre_first/pre_last: need pre_last >= 1 and >= 3 frames (%d, %d)",
                        p->pre_first, p->pre_last);
    if (p->post_first < 1 || p->post_count < 3)
        return imp_fail(IMP_ERR_INVALID, "drop: post_first/post_count: need >= 1 and >= 3 (%d, %d)",
                        p->post_first, p->post_count);
    if (p->pre_first > 200 || p->post_first + p->post_count > 400)
        return imp_fail(IMP_ERR_INVALID, "drop: fit windows too long (%d, %d + %d frames)",
                        p->pre_first, p->post_first, p->post_count);
    return IMP_OK;
}

double imp_drop_lowest_point(const imp_drop_params *p, double theta, double r[2])
{
    /* lowest point of R(theta) (a cos t, b sin t): body point
     * -(a^2 sin, b^2 cos) / h with h = sqrt(a^2 sin^2 + b^2 cos^2) */
    double s = sin(theta), c = cos(theta);
    double h = sqrt(p->a * p->a * s * s + p->b * p->b * c * c);
    double px = -p->a * p->a * s / h, py = -p->b * p->b * c / h;
    r[0] = c * px - s * py;
    r[1] = s * px + c * py; /* = -h */
    return h;
}

void imp_drop_contact_force(const imp_drop_params *p, const double s[IMP_DROP_STATE_DIM], double F[2])
{
    double r[2];
    double h = imp_drop_lowest_point(p, s[2], r);
    double delta = h - s[1];
    F[0] = F[1] = 0.0;
    if (delta <= 0.0) return;
    double ddelta = -(s[4] + s[5] * r[0]);
    double vt = s[3] - s[5] * r[1];
    double fn = p->k_n * delta * sqrt(delta) * (1.0 + p->c_n * ddelta); /* Hunt & Crossley */
    if (fn < 0.0) fn = 0.0;
    double ft = -(p->k_t * s[6] + p->c_t * vt);
    double fmax = p->mu * fn;
    if (ft > fmax) ft = fmax;
    if (ft < -fmax) ft = -fmax;
    F[0] = ft;
    F[1] = fn;
}

double imp_drop_energy(const imp_drop_params *p, const double s[IMP_DROP_STATE_DIM])
{
    double r[2];
    double h = imp_drop_lowest_point(p, s[2], r);
    double delta = h - s[1];
    double inertia = p->mass * p->kg * p->kg;
    double e = 0.5 * p->mass * (s[3] * s[3] + s[4] * s[4]) + 0.5 * inertia * s[5] * s[5] +
               p->mass * p->g * s[1] + 0.5 * p->k_t * s[6] * s[6];
    if (delta > 0.0) e += p->k_n * delta * delta * sqrt(delta) / 2.5;
    return e;
}

static void drop_rhs(const imp_drop_params *p, const double *s, double *ds)
{
    double r[2], F[2];
    double h = imp_drop_lowest_point(p, s[2], r);
    imp_drop_contact_force(p, s, F);
    double inertia = p->mass * p->kg * p->kg;
    ds[0] = s[3];
    ds[1] = s[4];
    ds[2] = s[5];
    ds[3] = F[0] / p->mass;
    ds[4] = F[1] / p->mass - p->g;
    /* torque r x F, plus the patch's rolling resistance (dissipative: its
     * power -rho Fn w tanh(w / w0) <= 0) */
    ds[5] = (r[0] * F[1] - r[1] * F[0] - p->rho_patch * F[1] * tanh(s[5] / 0.5)) / inertia;
    ds[6] = h - s[1] > 0.0 ? s[3] - s[5] * r[1] : 0.0; /* spring follows the slip */
}

static void rk4_step(const imp_drop_params *p, const double *s, double h, double *out)
{
    enum { D = IMP_DROP_STATE_DIM };
    double k1[D], k2[D], k3[D], k4[D], t[D];
    drop_rhs(p, s, k1);
    for (int i = 0; i < D; i++) t[i] = s[i] + 0.5 * h * k1[i];
    drop_rhs(p, t, k2);
    for (int i = 0; i < D; i++) t[i] = s[i] + 0.5 * h * k2[i];
    drop_rhs(p, t, k3);
    for (int i = 0; i < D; i++) t[i] = s[i] + h * k3[i];
    drop_rhs(p, t, k4);
    for (int i = 0; i < D; i++) out[i] = s[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

static double clearance(const imp_drop_params *p, const double *s)
{
    double r[2];
    return s[1] - imp_drop_lowest_point(p, s[2], r);
}

/* After a step: out of contact the tangential spring is released; in contact
 * it is held within the friction cone (the plastic "slip" of the spring).
 * Both only remove stored energy. */
static void tangential_projection(const imp_drop_params *p, double *s)
{
    if (clearance(p, s) >= 0.0) {
        s[6] = 0.0;
        return;
    }
    double F[2];
    double z = s[6];
    s[6] = 0.0; /* normal force does not depend on z */
    imp_drop_contact_force(p, s, F);
    double zmax = p->mu * F[1] / p->k_t;
    s[6] = z > zmax ? zmax : (z < -zmax ? -zmax : z);
}

int imp_drop__simulate(const imp_drop_params *p, const double s0[IMP_DROP_STATE_DIM], double t0,
                       const double *t_out, size_t n_out, double *s_out, double *energy_gain,
                       unsigned char *contact_out, double *t_first, double *t_last)
{
    enum { D = IMP_DROP_STATE_DIM };
    double s[D], sn[D];
    memcpy(s, s0, sizeof s);
    double t = t0, gain = 0.0;
    if (t_first) *t_first = NAN;
    if (t_last) *t_last = NAN;
    const double margin_far = 2e-3, margin_end = 1e-3; /* m */
    for (size_t k = 0; k < n_out; k++) {
        int touched = 0;
        long guard = 0;
        while (t < t_out[k]) {
            if (++guard > 50000000L)
                return imp_fail(IMP_ERR_NUMERIC, "drop: simulation did not reach t = %g", t_out[k]);
            double e0 = imp_drop_energy(p, s);
            double h = p->dt_free;
            int big = clearance(p, s) > margin_far;
            if (big) {
                if (t + h > t_out[k]) h = t_out[k] - t;
                rk4_step(p, s, h, sn);
                if (clearance(p, sn) < margin_end) big = 0; /* too close: redo finely */
            }
            if (!big) {
                h = p->dt;
                if (t + h > t_out[k]) h = t_out[k] - t;
                rk4_step(p, s, h, sn);
            }
            tangential_projection(p, sn);
            for (int i = 0; i < D; i++)
                if (!isfinite(sn[i]))
                    return imp_fail(IMP_ERR_NUMERIC, "drop: state diverged at t = %g", t);
            double e1 = imp_drop_energy(p, sn);
            if (e1 - e0 > gain) gain = e1 - e0;
            t += h;
            memcpy(s, sn, sizeof s);
            if (clearance(p, s) < 0.0) {
                touched = 1;
                if (t_first && isnan(*t_first)) *t_first = t - h;
                if (t_last) *t_last = t;
            }
        }
        memcpy(s_out + k * D, s, sizeof s);
        if (contact_out) contact_out[k] = (unsigned char)touched;
    }
    if (energy_gain) *energy_gain = gain;
    return IMP_OK;
}

int imp_drop_simulate(const imp_drop_params *p, const double s0[IMP_DROP_STATE_DIM], double t0,
                      const double *t_out, size_t n_out, double *s_out, double *energy_out,
                      unsigned char *contact_out)
{
    int st = imp_drop_params_check(p);
    if (st) return st;
    if (!s0 || !s_out || (n_out > 0 && !t_out))
        return imp_fail(IMP_ERR_INVALID, "drop: simulate: NULL state, times or output");
    st = imp_check_finite(s0, IMP_DROP_STATE_DIM, "drop: s0");
    if (st) return st;
    if (!isfinite(t0)) return imp_fail(IMP_ERR_INVALID, "drop: t0: not finite");
    st = imp_check_finite(t_out, n_out, "drop: t_out");
    if (st) return st;
    for (size_t k = 0; k < n_out; k++)
        if (t_out[k] < (k ? t_out[k - 1] : t0))
            return imp_fail(IMP_ERR_INVALID, "drop: t_out[%zu]: times must increase from t0", k);
    return imp_drop__simulate(p, s0, t0, t_out, n_out, s_out, energy_out, contact_out, NULL, NULL);
}
