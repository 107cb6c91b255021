/* Rigid-body trajectories: what a data set holds, the full-toss metrics of
 * the cube-toss literature, ballistic flight and random splits
 * (include/impulse/rigid_traj.h, docs/cube.md). */
#include "impulse/rigid_traj.h"

#include "contact/contact_internal.h"
#include "core/stats.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- quaternions, w x y z ---- */
static void quat_mul(const double a[4], const double b[4], double out[4]) { imp_quat_mul(a, b, out); }

static void quat_conj(const double q[4], double out[4])
{
    out[0] = q[0];
    out[1] = -q[1];
    out[2] = -q[2];
    out[3] = -q[3];
}

static void quat_normalise(double q[4])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; i++) q[i] /= n;
}

/* Rotation vector (axis times angle in [0, pi]) of a unit quaternion. */
static void quat_log(const double q_in[4], double r[3])
{
    double q[4];
    memcpy(q, q_in, sizeof q);
    if (q[0] < 0)
        for (int i = 0; i < 4; i++) q[i] = -q[i];
    double s = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double theta = 2.0 * atan2(s, q[0]);
    double f = s > 1e-12 ? theta / s : 2.0 / q[0];
    for (int i = 0; i < 3; i++) r[i] = f * q[i + 1];
}

static void quat_exp(const double r[3], double q[4])
{
    double th = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    double f = th > 1e-12 ? sin(0.5 * th) / th : 0.5 - th * th / 48.0;
    q[0] = cos(0.5 * th);
    for (int i = 0; i < 3; i++) q[i + 1] = f * r[i];
}

static void quat_rotate(const double q[4], const double v[3], double out[3])
{
    /* v + 2 w (u x v) + 2 u x (u x v), u = vector part (unit q) */
    const double *u = q + 1;
    double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]), 2 * (u[0] * v[1] - u[1] * v[0])};
    out[0] = v[0] + q[0] * t[0] + (u[1] * t[2] - u[2] * t[1]);
    out[1] = v[1] + q[0] * t[1] + (u[2] * t[0] - u[0] * t[2]);
    out[2] = v[2] + q[0] * t[2] + (u[0] * t[1] - u[1] * t[0]);
}

double imp_rigid_quat_angle(const double a[4], const double b[4])
{
    double na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3]);
    double nb = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3]);
    if (!(na > 0) || !(nb > 0)) return NAN;
    /* 2 atan2(|a^-1 b|_vec, |w|): accurate at small angles, unlike acos */
    double ac[4], d[4];
    quat_conj(a, ac);
    quat_mul(ac, b, d);
    double s = sqrt(d[1] * d[1] + d[2] * d[2] + d[3] * d[3]);
    return 2.0 * atan2(s, fabs(d[0]));
}

static double norm3(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* ---- what a data set holds ---- */
static void order_stats(double *x, size_t n, double *median, double *p95, double *max)
{
    if (n == 0) {
        *median = *p95 = *max = NAN;
        return;
    }
    *median = imp_median_sort(x, n); /* sorted now */
    size_t i95 = (size_t)ceil(0.95 * (double)n);
    *p95 = x[i95 > 0 ? i95 - 1 : 0];
    *max = x[n - 1];
}

int imp_rigid_traj_stats(const imp_rigid_traj *t, imp_rigid_stats *s)
{
    if (!t || !s) return imp_fail(IMP_ERR_INVALID, "rigid stats: NULL argument");
    memset(s, 0, sizeof *s);
    s->n_episodes = t->n_episodes;
    s->n_rows = t->n_rows;
    s->min_length = t->n_rows;
    size_t cap = t->n_rows ? t->n_rows : 1;
    double *lin = malloc(cap * sizeof *lin), *ang = malloc(cap * sizeof *ang), *angw = malloc(cap * sizeof *angw);
    if (!lin || !ang || !angw) {
        free(lin);
        free(ang);
        free(angw);
        return imp_fail(IMP_ERR_NOMEM, "rigid stats: %zu rows", t->n_rows);
    }
    size_t row = 0, m = 0;
    for (int k = 0; k < t->n_episodes; k++) {
        size_t len = (size_t)t->lengths[k];
        if (len < s->min_length) s->min_length = len;
        if (len > s->max_length) s->max_length = len;
        for (size_t i = 0; i < len; i++, row++) {
            const double *x = t->states + row * IMP_RIGID_STATE;
            double nq = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]);
            if (fabs(nq - 1) > s->max_quat_norm_error) s->max_quat_norm_error = fabs(nq - 1);
            double sp = norm3(x + 10);
            if (sp > s->max_speed) s->max_speed = sp;
            if (i == 0) continue;
            const double *p = x - IMP_RIGID_STATE;
            if (!memcmp(x, p, IMP_RIGID_STATE * sizeof *x)) s->repeated_rows++;
            if (!memcmp(x + 7, p + 7, 3 * sizeof *x)) {
                s->repeated_angvel++;
                if (i == 1) s->first_angvel_repeated++;
            }
            double dv[3];
            for (int c = 0; c < 3; c++) dv[c] = x[10 + c] - (x[4 + c] - p[4 + c]) / t->dt;
            lin[m] = norm3(dv);
            double pc[4], d[4], r[3], qa[4], qb[4];
            memcpy(qa, p, sizeof qa);
            memcpy(qb, x, sizeof qb);
            quat_normalise(qa);
            quat_normalise(qb);
            quat_conj(qa, pc);
            quat_mul(pc, qb, d); /* q_{k-1}^-1 q_k: the step in the body frame */
            quat_log(d, r);
            double a = norm3(r);
            if (a > s->max_step_angle) s->max_step_angle = a;
            for (int c = 0; c < 3; c++) dv[c] = x[7 + c] - r[c] / t->dt;
            ang[m] = norm3(dv);
            quat_mul(qb, pc, d); /* q_k q_{k-1}^-1: the step in the world frame */
            quat_log(d, r);
            for (int c = 0; c < 3; c++) dv[c] = x[7 + c] - r[c] / t->dt;
            angw[m] = norm3(dv);
            m++;
        }
    }
    s->n_diffs = m;
    order_stats(lin, m, &s->lin_median, &s->lin_p95, &s->lin_max);
    order_stats(ang, m, &s->ang_median, &s->ang_p95, &s->ang_max);
    double p95w, maxw;
    order_stats(angw, m, &s->ang_world_median, &p95w, &maxw);
    free(lin);
    free(ang);
    free(angw);
    return IMP_OK;
}

/* ---- metrics ---- */
double imp_rigid_lowest_corner(const double state[13], const imp_rigid_body *body, double ground_height)
{
    double q[4];
    memcpy(q, state, sizeof q);
    quat_normalise(q);
    double low = INFINITY;
    for (int c = 0; c < 8; c++) {
        double v[3], w[3];
        for (int a = 0; a < 3; a++) v[a] = ((c >> a) & 1 ? 0.5 : -0.5) * body->size[a];
        quat_rotate(q, v, w);
        double z = state[6] + w[2];
        if (z < low) low = z;
    }
    return low - ground_height;
}

int imp_rigid_metrics_episode(const double *pred, const double *meas, size_t n, const imp_rigid_body *body,
                              double ground_height, imp_rigid_metrics *out)
{
    if (!pred || !meas || !body || !out) return imp_fail(IMP_ERR_INVALID, "rigid metrics: NULL argument");
    if (n == 0) return imp_fail(IMP_ERR_INVALID, "rigid metrics: no samples");
    double width = body->size[0];
    if (!(width > 0) || !isfinite(width)) return imp_fail(IMP_ERR_INVALID, "rigid metrics: width %g", width);
    double pos = 0, rot = 0, pen = 0;
    for (size_t i = 0; i < n; i++) {
        const double *a = pred + i * IMP_RIGID_STATE, *b = meas + i * IMP_RIGID_STATE;
        double d[3] = {a[4] - b[4], a[5] - b[5], a[6] - b[6]};
        pos += norm3(d);
        rot += imp_rigid_quat_angle(a, b);
        double low = imp_rigid_lowest_corner(a, body, ground_height);
        pen += low < 0 ? -low : 0;
    }
    out->position_error_pct = 100.0 * pos / (double)n / width;
    out->rotation_error_deg = rot / (double)n * (180.0 / 3.14159265358979323846);
    out->penetration_pct = 100.0 * pen / (double)n / width;
    if (!isfinite(out->position_error_pct) || !isfinite(out->rotation_error_deg) || !isfinite(out->penetration_pct))
        return imp_fail(IMP_ERR_NUMERIC, "rigid metrics: a prediction is not finite");
    return IMP_OK;
}

/* ---- ballistic flight ---- */
/* Euler's equations, body frame: I w' = (I w) x w */
static void euler_rhs(const double I[3], const double w[3], double out[3])
{
    double L[3] = {I[0] * w[0], I[1] * w[1], I[2] * w[2]};
    out[0] = (L[1] * w[2] - L[2] * w[1]) / I[0];
    out[1] = (L[2] * w[0] - L[0] * w[2]) / I[1];
    out[2] = (L[0] * w[1] - L[1] * w[0]) / I[2];
}

int imp_rigid_ballistic(const double x0[13], size_t n, double dt, const imp_rigid_body *body, double gravity,
                        int substeps, double *out)
{
    if (!x0 || !body || !out) return imp_fail(IMP_ERR_INVALID, "ballistic: NULL argument");
    if (n == 0 || !(dt > 0) || substeps < 1) return imp_fail(IMP_ERR_INVALID, "ballistic: n %zu, dt %g, substeps %d", n, dt, substeps);
    int st = imp_check_finite(x0, IMP_RIGID_STATE, "ballistic: initial state");
    if (st) return st;
    double q[4], w[3];
    memcpy(q, x0, sizeof q);
    quat_normalise(q);
    memcpy(w, x0 + 7, sizeof w);
    const double *I = body->inertia;
    double h = dt / substeps;
    for (size_t i = 0; i < n; i++) {
        double *y = out + i * IMP_RIGID_STATE;
        double t = dt * (double)i;
        if (i > 0)
            for (int s = 0; s < substeps; s++) {
                /* RK4 on w; the orientation follows the mean rate of the step
                 * (exact when w is constant, as for equal moments) */
                double k1[3], k2[3], k3[3], k4[3], tmp[3], wn[3];
                euler_rhs(I, w, k1);
                for (int c = 0; c < 3; c++) tmp[c] = w[c] + 0.5 * h * k1[c];
                euler_rhs(I, tmp, k2);
                for (int c = 0; c < 3; c++) tmp[c] = w[c] + 0.5 * h * k2[c];
                euler_rhs(I, tmp, k3);
                for (int c = 0; c < 3; c++) tmp[c] = w[c] + h * k3[c];
                euler_rhs(I, tmp, k4);
                for (int c = 0; c < 3; c++) wn[c] = w[c] + h / 6.0 * (k1[c] + 2 * k2[c] + 2 * k3[c] + k4[c]);
                double r[3], dq[4];
                for (int c = 0; c < 3; c++) r[c] = 0.5 * h * (w[c] + wn[c]);
                quat_exp(r, dq);
                quat_mul(q, dq, q); /* body-frame increment */
                quat_normalise(q);
                memcpy(w, wn, sizeof w);
            }
        memcpy(y, q, 4 * sizeof *y);
        for (int c = 0; c < 3; c++) {
            y[4 + c] = x0[4 + c] + x0[10 + c] * t;
            y[10 + c] = x0[10 + c];
        }
        y[6] -= 0.5 * gravity * t * t;
        y[12] -= gravity * t;
        memcpy(y + 7, w, 3 * sizeof *y);
    }
    return IMP_OK;
}

/* ---- splits ---- */
int imp_rigid_split(int n_episodes, int n_draw, uint64_t seed, double train_frac, double valid_frac, int *train,
                    int *n_train, int *valid, int *n_valid, int *test, int *n_test)
{
    if (!train || !valid || !test || !n_train || !n_valid || !n_test)
        return imp_fail(IMP_ERR_INVALID, "split: NULL argument");
    if (n_draw < 1 || n_draw > n_episodes)
        return imp_fail(IMP_ERR_INVALID, "split: cannot draw %d of %d episodes", n_draw, n_episodes);
    if (!(train_frac > 0) || !(valid_frac >= 0) || train_frac + valid_frac > 1)
        return imp_fail(IMP_ERR_INVALID, "split: fractions %g (train) and %g (validation)", train_frac, valid_frac);
    size_t *idx = malloc((size_t)n_episodes * sizeof *idx);
    if (!idx) return imp_fail(IMP_ERR_NOMEM, "split: %d episodes", n_episodes);
    for (int i = 0; i < n_episodes; i++) idx[i] = (size_t)i;
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    imp_rng_shuffle(&rng, idx, (size_t)n_episodes);
    int nt = (int)floor(train_frac * n_draw + 0.5), nv = (int)floor(valid_frac * n_draw + 0.5);
    if (nt < 1) nt = 1;
    if (nt + nv > n_draw) nv = n_draw - nt;
    *n_train = nt;
    *n_valid = nv;
    *n_test = n_draw - nt - nv;
    for (int i = 0; i < n_draw; i++) {
        int e = (int)idx[i];
        if (i < nt) train[i] = e;
        else if (i < nt + nv) valid[i - nt] = e;
        else test[i - nt - nv] = e;
    }
    free(idx);
    return IMP_OK;
}

/* ---- evaluation over episodes ---- */
int imp_rigid_eval_rollouts(const imp_rigid_traj *t, const int *episodes, int n_episodes, imp_rigid_rollout_fn rollout,
                            void *ctx, double ground_height, imp_rigid_metrics *mean)
{
    if (!t || !rollout || !mean) return imp_fail(IMP_ERR_INVALID, "rigid eval: NULL argument");
    int n = episodes ? n_episodes : t->n_episodes;
    if (n < 1) return imp_fail(IMP_ERR_INVALID, "rigid eval: no episodes");
    size_t max_len = 0;
    for (int i = 0; i < n; i++) {
        int k = episodes ? episodes[i] : i;
        if (k < 0 || k >= t->n_episodes)
            return imp_fail(IMP_ERR_INVALID, "rigid eval: episode %d of %d", k, t->n_episodes);
        if ((size_t)t->lengths[k] > max_len) max_len = (size_t)t->lengths[k];
    }
    double *pred = malloc(max_len * IMP_RIGID_STATE * sizeof *pred);
    if (!pred) return imp_fail(IMP_ERR_NOMEM, "rigid eval: %zu samples", max_len);
    imp_rigid_metrics sum = {0, 0, 0};
    int st = IMP_OK;
    for (int i = 0; i < n && !st; i++) {
        int k = episodes ? episodes[i] : i;
        const double *meas = t->states + imp_rigid_traj_offset(t, k) * IMP_RIGID_STATE;
        size_t len = (size_t)t->lengths[k];
        imp_rigid_metrics m;
        st = rollout(meas, len, ctx, pred);
        if (!st) st = imp_rigid_metrics_episode(pred, meas, len, &t->body, ground_height, &m);
        if (st) {
            imp_fail_context(st, "episode %d", k);
            break;
        }
        sum.position_error_pct += m.position_error_pct;
        sum.rotation_error_deg += m.rotation_error_deg;
        sum.penetration_pct += m.penetration_pct;
    }
    free(pred);
    if (st) return st;
    mean->position_error_pct = sum.position_error_pct / n;
    mean->rotation_error_deg = sum.rotation_error_deg / n;
    mean->penetration_pct = sum.penetration_pct / n;
    return IMP_OK;
}

int imp_rigid_rollouts_to_npz(imp_npz *z, const imp_rigid_traj *t, const int *episodes, int k,
                              imp_rigid_rollout_fn rollout, void *ctx)
{
    if (!z || !t || !episodes || !rollout || k < 1) return imp_fail(IMP_ERR_INVALID, "rigid rollouts: NULL or no episodes");
    size_t L = 0;
    for (int i = 0; i < k; i++) {
        if (episodes[i] < 0 || episodes[i] >= t->n_episodes)
            return imp_fail(IMP_ERR_INVALID, "rigid rollouts: episode %d of %d", episodes[i], t->n_episodes);
        if ((size_t)t->lengths[episodes[i]] > L) L = (size_t)t->lengths[episodes[i]];
    }
    const size_t per = L * IMP_RIGID_POSE;
    double *pred = malloc(2 * (size_t)k * per * sizeof *pred), *full = malloc(L * IMP_RIGID_STATE * sizeof *full);
    int64_t *ids = malloc(2 * (size_t)k * sizeof *ids);
    if (!pred || !full || !ids) {
        free(pred), free(full), free(ids);
        return imp_fail(IMP_ERR_NOMEM, "rigid rollouts: %d x %zu samples", k, L);
    }
    double *meas = pred + (size_t)k * per;
    for (size_t i = 0; i < 2 * (size_t)k * per; i++) pred[i] = NAN;
    for (int i = 0; i < k; i++) {
        const int e = episodes[i];
        const size_t len = (size_t)t->lengths[e];
        const double *m = t->states + imp_rigid_traj_offset(t, e) * IMP_RIGID_STATE;
        ids[i] = e;
        ids[k + i] = t->ids ? t->ids[e] : e;
        for (size_t r = 0; r < len * IMP_RIGID_STATE; r++) full[r] = NAN;
        if (rollout(m, len, ctx, full)) imp_clear_error();
        int ok = 1;
        for (size_t r = 0; r < len; r++) {
            for (int c = 0; c < IMP_RIGID_POSE; c++) {
                meas[i * per + r * IMP_RIGID_POSE + c] = m[r * IMP_RIGID_STATE + c];
                ok &= isfinite(full[r * IMP_RIGID_STATE + c]);
            }
            for (int c = 0; c < IMP_RIGID_POSE && ok; c++) pred[i * per + r * IMP_RIGID_POSE + c] = full[r * IMP_RIGID_STATE + c];
        }
    }
    size_t s1[1] = {(size_t)k}, s3[3] = {(size_t)k, L, IMP_RIGID_POSE};
    int st = imp_npz_add_i64(z, "rollout_episodes", 1, s1, ids);
    if (!st) st = imp_npz_add_i64(z, "rollout_ids", 1, s1, ids + k);
    if (!st) st = imp_npz_add_f64(z, "rollout_pred", 3, s3, pred);
    if (!st) st = imp_npz_add_f64(z, "rollout_meas", 3, s3, meas);
    size_t s0[1] = {1};
    if (!st) st = imp_npz_add_f64(z, "rollout_dt", 1, s0, &t->dt);
    free(pred), free(full), free(ids);
    return st;
}

static int ballistic_rollout(const double x0[13], size_t n, void *ctx, double *out)
{
    const imp_rigid_traj *t = ctx;
    return imp_rigid_ballistic(x0, n, t->dt, &t->body, t->gravity, 4, out);
}

int imp_rigid_eval_ballistic(const imp_rigid_traj *t, const int *episodes, int n_episodes, imp_rigid_metrics *mean)
{
    if (!t) return imp_fail(IMP_ERR_INVALID, "ballistic eval: NULL argument");
    return imp_rigid_eval_rollouts(t, episodes, n_episodes, ballistic_rollout, (void *)t, t->ground_height, mean);
}

int imp_rigid_traj_penetration(const imp_rigid_traj *t, double ground_height, double *mean_pct, double *max_pct)
{
    if (!t || !mean_pct || !max_pct || !t->n_rows) return imp_fail(IMP_ERR_INVALID, "rigid penetration: no data");
    double sum = 0, deepest = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        double low = imp_rigid_lowest_corner(t->states + i * IMP_RIGID_STATE, &t->body, ground_height);
        double p = low < 0 ? -low : 0;
        sum += p;
        if (p > deepest) deepest = p;
    }
    *mean_pct = 100.0 * sum / (double)t->n_rows / t->body.size[0];
    *max_pct = 100.0 * deepest / t->body.size[0];
    return IMP_OK;
}
