/* Synthetic drop experiments, part 2: random drops, camera sampling with
 * pose noise, and the authors' processing ([CODE2] data_process_ellipse.m,
 * reference §4): impact frame = first frame whose finite-difference
 * acceleration |(x'', y'', kg theta'')| exceeds a threshold; least-squares
 * fits over frames [i-20, i-5] before and [i+2, ...] after (x and theta:
 * lines, y: parabola); contact at the lowest point of the fitted pose.
 * Departure: the fits are evaluated at the estimated touch-down time (the
 * fitted lowest point reaching the plane) instead of a frame time, and the
 * contact geometry is taken there. */
#include "impulse/drop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define M_PI_LOCAL 3.14159265358979323846

int imp_drop__simulate(const imp_drop_params *p, const double s0[IMP_DROP_STATE_DIM], double t0,
                       const double *t_out, size_t n_out, double *s_out, double *energy_gain,
                       unsigned char *contact_out, double *t_first, double *t_last);

/* Least-squares polynomial of degree deg (1 or 2) through (t, v), returns
 * coefficients c (value = c0 + c1 t + c2 t^2). Times are pre-centred by the
 * caller, so the 3x3 normal equations are well conditioned. */
static int polyfit(const double *t, const double *v, int n, int deg, double c[3])
{
    double A[3][4] = {{0}};
    int m = deg + 1;
    for (int k = 0; k < n; k++) {
        double pw[3] = {1.0, t[k], t[k] * t[k]};
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < m; j++) A[i][j] += pw[i] * pw[j];
            A[i][m] += pw[i] * v[k];
        }
    }
    for (int col = 0; col < m; col++) { /* Gauss-Jordan with partial pivoting */
        int piv = col;
        for (int r = col + 1; r < m; r++)
            if (fabs(A[r][col]) > fabs(A[piv][col])) piv = r;
        if (fabs(A[piv][col]) < 1e-300) return IMP_ERR_NUMERIC;
        for (int j = 0; j <= m; j++) {
            double tmp = A[col][j];
            A[col][j] = A[piv][j];
            A[piv][j] = tmp;
        }
        for (int r = 0; r < m; r++) {
            if (r == col) continue;
            double f = A[r][col] / A[col][col];
            for (int j = col; j <= m; j++) A[r][j] -= f * A[col][j];
        }
    }
    c[0] = c[1] = c[2] = 0.0;
    for (int i = 0; i < m; i++) c[i] = A[i][m] / A[i][i];
    return IMP_OK;
}

typedef struct pose_fit {
    double cx[3], cy[3], ct[3]; /* in tau = t - t_center */
    double t_center;
} pose_fit;

static int fit_window(const double *tf, const double *pose, int first, int count, pose_fit *f)
{
    double tt[512], vx[512], vy[512], vt[512];
    if (count < 1 || count > 512) return IMP_ERR_INVALID;
    f->t_center = tf[first + count / 2];
    for (int k = 0; k < count; k++) {
        tt[k] = tf[first + k] - f->t_center;
        vx[k] = pose[(first + k) * 3 + 0];
        vy[k] = pose[(first + k) * 3 + 1];
        vt[k] = pose[(first + k) * 3 + 2];
    }
    if (polyfit(tt, vx, count, 1, f->cx) || polyfit(tt, vy, count, 2, f->cy) ||
        polyfit(tt, vt, count, 1, f->ct))
        return IMP_ERR_NUMERIC;
    return IMP_OK;
}

static void fit_eval(const pose_fit *f, double t, double s[6])
{
    double u = t - f->t_center;
    s[0] = f->cx[0] + f->cx[1] * u;
    s[1] = f->cy[0] + f->cy[1] * u + f->cy[2] * u * u;
    s[2] = f->ct[0] + f->ct[1] * u;
    s[3] = f->cx[1];
    s[4] = f->cy[1] + 2.0 * f->cy[2] * u;
    s[5] = f->ct[1];
}

/* Exact free flight of the rigid state (x, y, theta, vx, vy, omega) by tau. */
static void free_flight(const imp_drop_params *p, const double *s, double tau, double out[6])
{
    out[0] = s[0] + s[3] * tau;
    out[1] = s[1] + s[4] * tau - 0.5 * p->g * tau * tau;
    out[2] = s[2] + s[5] * tau;
    out[3] = s[3];
    out[4] = s[4] - p->g * tau;
    out[5] = s[5];
}

/* One attempt; returns 1 if the drop must be redrawn, 0 if accepted, <0 on error. */
static int drop_attempt(const imp_drop_params *p, imp_rng *rng, imp_drop_sample *out)
{
    const double fh = 1.0 / p->frame_rate;
    memset(out, 0, sizeof *out); /* padding too: samples compare bytewise */
    /* pre-impact state at first contact */
    double th_c = imp_rng_uniform_range(rng, -M_PI_LOCAL, M_PI_LOCAL);
    double vx = p->vx_mean + p->vx_sd * imp_rng_normal(rng);
    double vy = p->vy_mean + p->vy_sd * imp_rng_normal(rng);
    double w = p->omega_mean + p->omega_sd * imp_rng_normal(rng);
    double T0 = (p->pre_first + 5 + imp_rng_uniform(rng)) * fh;
    double r[2];
    double hc = imp_drop_lowest_point(p, th_c, r);
    if (!(vy + w * r[0] < 0.0)) return 1; /* the touching point must approach the plane */
    double s0[IMP_DROP_STATE_DIM] = {0};
    double vy0 = vy + p->g * T0;
    s0[0] = -vx * T0;
    s0[1] = hc - vy0 * T0 + 0.5 * p->g * T0 * T0;
    s0[2] = th_c - w * T0;
    s0[3] = vx;
    s0[4] = vy0;
    s0[5] = w;
    /* free flight must not touch the plane before T0 */
    for (int k = 0; k < 400; k++) {
        double tau = T0 * k / 400.0, q[6];
        free_flight(p, s0, tau, q);
        if (q[1] - imp_drop_lowest_point(p, q[2], r) <= 0.0) return 1;
    }

    const int nframes = (int)ceil(T0 / fh) + p->post_first + p->post_count + 8;
    double tf[1024], S[1024 * IMP_DROP_STATE_DIM], pose[1024 * 3];
    unsigned char touched[1024];
    if (nframes > 1024) return imp_fail(IMP_ERR_INVALID, "drop: too many frames (%d)", nframes);
    for (int k = 0; k < nframes; k++) tf[k] = k * fh;
    double gain = 0.0, t_first, t_last;
    int st = imp_drop__simulate(p, s0, 0.0, tf, (size_t)nframes, S, &gain, touched, &t_first, &t_last);
    if (st) return st;
    if (isnan(t_first)) return 1;
    for (int k = 0; k < nframes; k++) {
        pose[k * 3 + 0] = S[k * IMP_DROP_STATE_DIM + 0] + p->noise_pos * imp_rng_normal(rng);
        pose[k * 3 + 1] = S[k * IMP_DROP_STATE_DIM + 1] + p->noise_pos * imp_rng_normal(rng);
        pose[k * 3 + 2] = S[k * IMP_DROP_STATE_DIM + 2] + p->noise_theta * imp_rng_normal(rng);
    }
    /* impact detection by acceleration threshold */
    int i_imp = -1;
    for (int k = 1; k + 1 < nframes; k++) {
        double ax = (pose[(k + 1) * 3] - 2 * pose[k * 3] + pose[(k - 1) * 3]) / (fh * fh);
        double ay = (pose[(k + 1) * 3 + 1] - 2 * pose[k * 3 + 1] + pose[(k - 1) * 3 + 1]) / (fh * fh);
        double at = (pose[(k + 1) * 3 + 2] - 2 * pose[k * 3 + 2] + pose[(k - 1) * 3 + 2]) / (fh * fh);
        if (sqrt(ax * ax + ay * ay + p->kg * at * p->kg * at) > p->accel_threshold) {
            i_imp = k;
            break;
        }
    }
    if (i_imp < 0) return 1;
    int pre0 = i_imp - p->pre_first, pre1 = i_imp - p->pre_last;
    int post0 = i_imp + p->post_first, post1 = post0 + p->post_count - 1;
    if (pre0 < 0 || post1 >= nframes) return 1;
    /* windows must be free flight: no contact up to frame pre1, none after post0 - 1 */
    for (int k = 0; k <= pre1; k++)
        if (touched[k]) return 1;
    for (int k = post0; k <= post1; k++)
        if (touched[k]) return 1; /* contact too long or a second bounce */

    pose_fit fpre, fpost;
    if (fit_window(tf, pose, pre0, pre1 - pre0 + 1, &fpre)) return 1;
    if (fit_window(tf, pose, post0, p->post_count, &fpost)) return 1;
    /* touch-down time: fitted lowest point reaches y = 0, by bisection */
    double ta = tf[i_imp] - 2.0 * fh, tb = tf[i_imp] + 2.0 * fh, sa[6], sb[6];
    fit_eval(&fpre, ta, sa);
    fit_eval(&fpre, tb, sb);
    double t_ref = tf[i_imp];
    if (sa[1] - imp_drop_lowest_point(p, sa[2], r) > 0.0 &&
        sb[1] - imp_drop_lowest_point(p, sb[2], r) < 0.0) {
        for (int it = 0; it < 60; it++) {
            double tm = 0.5 * (ta + tb), sm[6];
            fit_eval(&fpre, tm, sm);
            if (sm[1] - imp_drop_lowest_point(p, sm[2], r) > 0.0) ta = tm;
            else tb = tm;
        }
        t_ref = 0.5 * (ta + tb);
    }
    fit_eval(&fpre, t_ref, out->pre);
    fit_eval(&fpost, t_ref, out->post);
    imp_drop_lowest_point(p, out->pre[2], r);
    out->n[0] = 0.0;
    out->n[1] = 1.0;
    out->n[2] = r[0];
    out->d[0] = 1.0;
    out->d[1] = 0.0;
    out->d[2] = -r[1];
    /* truth: exact free-flight states carried to t_ref */
    free_flight(p, S + pre1 * IMP_DROP_STATE_DIM, t_ref - tf[pre1], out->true_pre);
    free_flight(p, S + post0 * IMP_DROP_STATE_DIM, t_ref - tf[post0], out->true_post);
    out->t_ref = t_ref;
    out->t_contact = t_first;
    out->duration = t_last - t_first;
    out->impact_frame = i_imp;
    out->energy_gain = gain;
    return 0;
}

int imp_drop_run(const imp_drop_params *p, imp_rng *rng, imp_drop_sample *out, size_t *n_rejected)
{
    int st = imp_drop_params_check(p);
    if (st) return st;
    if (!rng || !out) return imp_fail(IMP_ERR_INVALID, "drop: rng/out: NULL");
    size_t rej = 0;
    for (int attempt = 0; attempt < 100; attempt++) {
        st = drop_attempt(p, rng, out);
        if (st < 0) return st;
        if (st == 0) {
            if (n_rejected) *n_rejected += rej;
            return IMP_OK;
        }
        rej++;
    }
    return imp_fail(IMP_ERR_NUMERIC,
                    "drop: 100 consecutive drops rejected (check the fit windows and contact parameters)");
}

int imp_drop_generate(const imp_drop_params *p, uint64_t seed, size_t count, imp_drop_sample *out,
                      size_t *n_rejected)
{
    int st = imp_drop_params_check(p);
    if (st) return st;
    if (count == 0) return imp_fail(IMP_ERR_SHAPE, "drop: count: 0 drops requested");
    if (!out) return imp_fail(IMP_ERR_INVALID, "drop: out: NULL");
    if (n_rejected) *n_rejected = 0;
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    for (size_t i = 0; i < count; i++) {
        st = imp_drop_run(p, &rng, out + i, n_rejected);
        if (st) return imp_fail_context(st, "drop %zu", i);
    }
    return IMP_OK;
}
