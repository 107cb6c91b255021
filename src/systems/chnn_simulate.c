/* Ground-truth trajectories: the constrained Hamiltonian flow ([F] eq 6)
 * integrated by DOPRI5 in double precision (the reference integrates it in
 * float32 with torchdiffeq dopri5, rtol 1e-7, [chnn] section 1), and the
 * chunking of trajectories into training windows. */
#include "impulse/chnn_systems.h"
#include "impulse/constrained_contact.h"
#include "core/dense.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ch_ode_ctx {
    const imp_csys *s;
    imp_csys_work *w;
} ch_ode_ctx;

static int ch_rhs(void *user, double t, const double *z, int B, double *zdot)
{
    (void)t;
    ch_ode_ctx *c = user;
    int n2 = 2 * imp_csys_ndof(c->s);
    for (int b = 0; b < B; b++) {
        int st = imp_csys_hamilton_rhs(c->s, z + (size_t)b * n2, zdot + (size_t)b * n2, c->w);
        if (st) return st;
    }
    return IMP_OK;
}

int imp_chnn_simulate(const imp_csys *s, const double *xv0, double dt, int n_steps,
                      const imp_chnn_sim_opts *o, double *traj, imp_dopri5_stats *stats)
{
    if (!s || !xv0 || !traj) return imp_fail(IMP_ERR_INVALID, "simulate: NULL");
    if (!(dt > 0) || !isfinite(dt)) return imp_fail(IMP_ERR_INVALID, "dt: %g must be positive", dt);
    if (n_steps < 0) return imp_fail(IMP_ERR_INVALID, "steps: %d must be >= 0", n_steps);
    int N = imp_csys_ndof(s), st;
    if ((st = imp_check_finite(xv0, 2 * (size_t)N, "initial state"))) return st;
    if (s->n_contacts > 0) {
        imp_chnn_contact_stats cs;
        st = imp_chnn_simulate_contact(s, xv0, dt, n_steps, o, traj, &cs);
        if (stats) *stats = cs.ode;
        return st;
    }
    imp_csys_work *w = imp_csys_work_new(s);
    double *t_out = malloc((size_t)(n_steps + 1) * sizeof(double));
    double *z0 = malloc(2 * (size_t)N * sizeof(double));
    if (!w || !t_out || !z0) {
        imp_csys_work_free(w);
        free(t_out);
        free(z0);
        return imp_fail(IMP_ERR_NOMEM, "simulate: buffers");
    }
    for (int k = 0; k <= n_steps; k++) t_out[k] = k * dt;
    /* z = (x, p = M v) */
    memcpy(z0, xv0, (size_t)N * sizeof(double));
    imp_csys_mass_mul(s, xv0 + N, z0 + N);
    ch_ode_ctx ctx = {s, w};
    imp_ode ode = {2 * N, 0, ch_rhs, NULL, &ctx};
    imp_dopri5_opts dopts = {o && o->rtol > 0 ? o->rtol : 1e-10, o && o->atol > 0 ? o->atol : 1e-12,
                             0, 0};
    st = imp_dopri5_solve(&ode, &dopts, 0.0, z0, 1, t_out, n_steps + 1, traj, stats);
    if (!st) {
        /* p -> v in place */
        for (int k = 0; k <= n_steps; k++) {
            double *zk = traj + (size_t)k * 2 * N;
            memcpy(z0, zk + N, (size_t)N * sizeof(double));
            imp_csys_mass_inv_mul(s, z0, zk + N);
        }
    } else {
        imp_fail_context(st, "simulate %s", s->name);
    }
    imp_csys_work_free(w);
    free(t_out);
    free(z0);
    return st;
}

int imp_chnn_sample_rollout_start(const imp_csys *s, imp_rng *rng, double spread, int L,
                                  const imp_chnn_sim_opts *o, double *xv, int *offset,
                                  imp_csys_work *w)
{
    if (!s || !rng || !xv || !w) return imp_fail(IMP_ERR_INVALID, "rollout start: NULL");
    if (L < 1) return imp_fail(IMP_ERR_INVALID, "chunk: %d steps must be >= 1", L);
    int T = (s->n_steps > 0 ? s->n_steps : 99) + 1;
    double dt = s->dt > 0 ? s->dt : 0.03;
    int per = T / (L + 1);
    if (per < 1) return imp_fail(IMP_ERR_INVALID, "chunk: %d steps longer than the reference trajectory", L);
    int st = imp_chnn_sample_state(s, rng, spread, xv, w);
    if (st) return st;
    int k = (int)imp_rng_below(rng, (size_t)per), start = k * (L + 1);
    if (offset) *offset = start;
    if (start == 0) return IMP_OK;
    int N = imp_csys_ndof(s);
    double *traj = malloc((size_t)(start + 1) * 2 * N * sizeof(double));
    if (!traj) return imp_fail(IMP_ERR_NOMEM, "rollout start: buffer");
    st = imp_chnn_simulate(s, xv, dt, start, o, traj, NULL);
    if (!st) memcpy(xv, traj + (size_t)start * 2 * N, 2 * (size_t)N * sizeof(double));
    free(traj);
    return st;
}

int imp_chnn_generate(const imp_csys *s, int n_traj, int n_steps, double dt, uint64_t seed,
                      double spread, const imp_chnn_sim_opts *o, double *traj)
{
    if (!s || !traj) return imp_fail(IMP_ERR_INVALID, "generate: NULL");
    if (n_traj < 1) return imp_fail(IMP_ERR_INVALID, "trajectories: %d must be >= 1", n_traj);
    if (n_steps < 1) return imp_fail(IMP_ERR_INVALID, "steps: %d must be >= 1", n_steps);
    int N = imp_csys_ndof(s), st = IMP_OK;
    imp_csys_work *w = imp_csys_work_new(s);
    double *xv = malloc(2 * (size_t)N * sizeof(double));
    if (!w || !xv) {
        imp_csys_work_free(w);
        free(xv);
        return imp_fail(IMP_ERR_NOMEM, "generate: buffers");
    }
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    size_t per = (size_t)(n_steps + 1) * 2 * N;
    for (int i = 0; i < n_traj && !st; i++) {
        st = imp_chnn_sample_state(s, &rng, spread, xv, w);
        if (!st) st = imp_chnn_simulate(s, xv, dt, n_steps, o, traj + (size_t)i * per, NULL);
        if (st) imp_fail_context(st, "trajectory %d", i);
    }
    imp_csys_work_free(w);
    free(xv);
    return st;
}

int imp_chnn_chunks(const double *traj, int n_traj, int T, int dim, int L, imp_rng *rng,
                    double *chunks, int *start)
{
    if (!traj || !chunks || !rng) return imp_fail(IMP_ERR_INVALID, "chunks: NULL");
    if (L < 1) return imp_fail(IMP_ERR_INVALID, "chunk: %d steps must be >= 1", L);
    if (n_traj < 1 || dim < 1) return imp_fail(IMP_ERR_INVALID, "chunks: empty data");
    int per = T / (L + 1);
    if (per < 1)
        return imp_fail(IMP_ERR_INVALID, "chunk: %d steps need %d states, trajectories have %d", L,
                        L + 1, T);
    size_t len = (size_t)(L + 1) * dim;
    for (int i = 0; i < n_traj; i++) {
        int k = (int)imp_rng_below(rng, (size_t)per);
        int s0 = k * (L + 1);
        memcpy(chunks + (size_t)i * len, traj + ((size_t)i * T + s0) * dim, len * sizeof(double));
        if (start) start[i] = s0;
    }
    return IMP_OK;
}

/* ---- systems with contacts (issue #25) ---- */

#define CT_ACCEPT 1e-10 /* a step may end this far below a plane */
#define CT_ACTIVE 1e-8  /* contacts this close take part in an impulse */

typedef struct ct_sim {
    const imp_csys *s;
    imp_csys_work *w;
    int N;
    imp_ode ode;
    imp_dopri5_opts dopts;
    double *z0, *yout; /* 2N, 4N */
    imp_dopri5_stats *stats;
    imp_chnn_impact_fn hook; /* may be NULL */
    void *hook_user;
    double t;                /* time of the state being stepped */
} ct_sim;

/* The smooth constrained flow from xv over a time h into out (2N). */
static int ct_flow(ct_sim *S, const double *xv, double h, double *out)
{
    int N = S->N;
    if (!(h > 0)) {
        memmove(out, xv, 2 * (size_t)N * sizeof(double));
        return IMP_OK;
    }
    memcpy(S->z0, xv, (size_t)N * sizeof(double));
    imp_csys_mass_mul(S->s, xv + N, S->z0 + N);
    double t_out[2] = {0.0, h};
    imp_dopri5_stats one = {0, 0, 0};
    int st = imp_dopri5_solve(&S->ode, &S->dopts, 0.0, S->z0, 1, t_out, 2, S->yout, &one);
    S->stats->n_steps += one.n_steps;
    S->stats->n_rejected += one.n_rejected;
    S->stats->n_rhs += one.n_rhs;
    if (st) return st;
    memcpy(out, S->yout + 2 * N, (size_t)N * sizeof(double));
    imp_csys_mass_inv_mul(S->s, S->yout + 3 * N, out + N);
    return IMP_OK;
}

static double ct_min_gap(const imp_csys *s, const double *x)
{
    double g = INFINITY;
    for (int c = 0; c < s->n_contacts; c++) g = fmin(g, imp_csys_contact_frame(s, x, c, NULL, NULL, NULL));
    return g;
}

/* Move x back onto gap 0 for the contacts below the plane, keeping the
 * joints: steps dx = -P Jn^T (Jn P Jn^T)^-1 phi (the smallest change in the
 * mass metric along the joints' tangent space), each followed by the joints'
 * own projection; then v projected on the joints' tangent space. */
static int ct_project(ct_sim *S, double *x, double *v)
{
    const imp_csys *s = S->s;
    int N = S->N, st = IMP_OK;
    double *Jn = malloc((size_t)2 * IMP_CSYS_MAX_CONTACTS * N * sizeof(double)), *rows = malloc((size_t)3 * N * sizeof(double));
    if (!Jn || !rows) {
        free(Jn);
        free(rows);
        return imp_fail(IMP_ERR_NOMEM, "contact projection: buffers");
    }
    double *PJ = Jn + (size_t)IMP_CSYS_MAX_CONTACTS * N;
    for (int it = 0; it < 30 && !st; it++) {
        int ids[IMP_CSYS_MAX_CONTACTS], m = 0;
        double phi[IMP_CSYS_MAX_CONTACTS];
        for (int c = 0; c < s->n_contacts; c++) {
            double g = imp_csys_contact_frame(s, x, c, NULL, NULL, rows);
            if (g < -1e-13) {
                phi[m] = g;
                memcpy(Jn + (size_t)m * N, rows, (size_t)N * sizeof(double));
                ids[m++] = c;
            }
        }
        if (m == 0) break;
        if ((st = imp_csys_constrained_minv(s, x, Jn, m, PJ, S->w))) break;
        double G[IMP_CSYS_MAX_CONTACTS * IMP_CSYS_MAX_CONTACTS];
        int piv[IMP_CSYS_MAX_CONTACTS];
        for (int a = 0; a < m; a++)
            for (int b = 0; b < m; b++) {
                double acc = 0;
                for (int q = 0; q < N; q++) acc += Jn[(size_t)a * N + q] * PJ[(size_t)b * N + q];
                G[a * m + b] = acc;
            }
        if (imp_lu_factor(m, G, piv, 1e-12)) {
            st = imp_fail(IMP_ERR_NUMERIC, "contact projection: contacts %d.. cannot move independently", ids[0]);
            break;
        }
        imp_lu_solve(m, G, piv, phi);
        for (int a = 0; a < m; a++)
            for (int q = 0; q < N; q++) x[q] -= PJ[(size_t)a * N + q] * phi[a];
        st = imp_csys_project(s, x, NULL, NULL, S->w);
    }
    if (!st) st = imp_csys_project(s, x, v, NULL, S->w);
    free(Jn);
    free(rows);
    return st;
}

/* The impulse of the closing contacts at gap <= CT_ACTIVE; records energy
 * and tells the hook (resting: on a sustained-contact substep). */
static int ct_impulse(ct_sim *S, double *xv, imp_chnn_contact_stats *cs, int resting)
{
    int act[IMP_CSYS_MAX_CONTACTS], N = S->N;
    int n = imp_csys_contact_active(S->s, xv, xv + N, CT_ACTIVE, 0.0, act);
    if (n == 0) return IMP_OK;
    double e0 = imp_csys_energy(S->s, xv, xv + N), pre[2 * IMP_CSYS_MAX_POINTS * 3];
    if (S->hook) memcpy(pre, xv, 2 * (size_t)N * sizeof(double));
    int st = imp_csys_contact_impulse(S->s, xv, xv + N, act, n, NULL, S->w);
    if (!st && S->hook) st = S->hook(S->hook_user, S->t, pre, xv, act, n, resting);
    if (st) return st;
    double phidot[IMP_CSYS_MAX_ROWS];
    imp_csys_phidot(S->s, xv, xv + N, phidot);
    for (int r = 0; r < S->s->n_rows; r++) cs->max_joint_velocity = fmax(cs->max_joint_velocity, fabs(phidot[r]));
    cs->impacts++;
    cs->impact_energy += imp_csys_energy(S->s, xv, xv + N) - e0;
    return IMP_OK;
}

static int simulate_contact(const imp_csys *s, const double *xv0, double dt, int n_steps, const imp_chnn_sim_opts *o,
                            double *traj, imp_chnn_contact_stats *cst, imp_chnn_impact_fn hook, void *hook_user)
{
    if (!s || !xv0 || !traj) return imp_fail(IMP_ERR_INVALID, "simulate: NULL");
    if (!(dt > 0) || !isfinite(dt)) return imp_fail(IMP_ERR_INVALID, "dt: %g must be positive", dt);
    if (n_steps < 0) return imp_fail(IMP_ERR_INVALID, "steps: %d must be >= 0", n_steps);
    int N = imp_csys_ndof(s), st;
    if ((st = imp_check_finite(xv0, 2 * (size_t)N, "initial state"))) return st;
    if ((st = imp_csys_check_contact_normals(s, xv0))) return imp_fail_context(st, "initial state");
    for (int c = 0; c < s->n_contacts; c++) {
        double g0 = imp_csys_contact_frame(s, xv0, c, NULL, NULL, NULL);
        if (g0 < -1e-9) {
            char name[80];
            imp_csys_contact_name(s, c, name, sizeof name);
            return imp_fail(IMP_ERR_INVALID, "initial state: contact %s overlaps by %.3g", name, -g0);
        }
    }
    imp_chnn_contact_stats local, *cs = cst ? cst : &local;
    memset(cs, 0, sizeof *cs);
    ct_sim S;
    memset(&S, 0, sizeof S);
    S.s = s;
    S.w = imp_csys_work_new(s);
    S.N = N;
    S.stats = &cs->ode;
    S.hook = hook;
    S.hook_user = hook_user;
    double *buf = malloc(12 * (size_t)N * sizeof(double));
    if (!S.w || !buf) {
        imp_csys_work_free(S.w);
        free(buf);
        return imp_fail(IMP_ERR_NOMEM, "simulate: buffers");
    }
    S.z0 = buf;
    S.yout = buf + 2 * N;
    double *xv = buf + 6 * N, *xb = buf + 8 * N, *xm = buf + 10 * N;
    ch_ode_ctx ctx = {s, S.w};
    S.ode = (imp_ode){2 * N, 0, ch_rhs, NULL, &ctx};
    S.dopts = (imp_dopri5_opts){o && o->rtol > 0 ? o->rtol : 1e-10, o && o->atol > 0 ? o->atol : 1e-12, 0, 0};
    memcpy(xv, xv0, 2 * (size_t)N * sizeof(double));
    memcpy(traj, xv, 2 * (size_t)N * sizeof(double));
    double t = 0, h_rest = dt / 20;
    long guard = 0;
    for (int k = 1; k <= n_steps && !st; k++) {
        double tk = k * dt;
        while (!st && tk - t > 1e-13 * fmax(1.0, tk)) {
            if (++guard > 200000L + 100L * n_steps) {
                st = imp_fail(IMP_ERR_NUMERIC, "simulate %s: too many contact events before t = %g", s->name, t);
                break;
            }
            double h = tk - t;
            if ((st = ct_flow(&S, xv, h, xb))) break;
            double gb = ct_min_gap(s, xb);
            if (gb >= -CT_ACCEPT) {
                memcpy(xv, xb, 2 * (size_t)N * sizeof(double));
                t = tk;
                cs->max_penetration = fmax(cs->max_penetration, -gb);
                continue;
            }
            /* locate the crossing: lo keeps gap >= -CT_ACCEPT, hi below */
            double lo = 0, hi = h;
            for (int it = 0; it < 200 && hi - lo > 1e-13 && gb < -10 * CT_ACCEPT; it++) {
                double mid = 0.5 * (lo + hi);
                if ((st = ct_flow(&S, xv, mid, xm))) break;
                double gm = ct_min_gap(s, xm);
                if (gm >= -CT_ACCEPT) {
                    lo = mid;
                } else {
                    hi = mid;
                    gb = gm;
                    memcpy(xb, xm, 2 * (size_t)N * sizeof(double));
                }
            }
            if (st) break;
            /* a crossing soon after a start in contact (gap <= CT_ACTIVE) is
             * sustained contact (resting, rolling, or a bounce sequence
             * accumulating): handled on substeps, not located one by one */
            if (hi > 1e-9 && !(hi < h_rest && ct_min_gap(s, xv) <= CT_ACTIVE)) {
                /* an impact at t + hi */
                cs->max_penetration = fmax(cs->max_penetration, -gb);
                memcpy(xv, xb, 2 * (size_t)N * sizeof(double));
                t += hi;
                S.t = t;
                st = ct_impulse(&S, xv, cs, 0);
                continue;
            }
            /* sustained contact: a substep, back onto the planes, impulse */
            double hs = fmin(h, h_rest);
            if ((st = ct_flow(&S, xv, hs, xv))) break;
            cs->max_penetration = fmax(cs->max_penetration, -ct_min_gap(s, xv));
            double e0 = imp_csys_energy(s, xv, xv + N);
            if ((st = ct_project(&S, xv, xv + N))) break;
            cs->projection_energy += imp_csys_energy(s, xv, xv + N) - e0;
            int before = cs->impacts;
            S.t = t + hs;
            st = ct_impulse(&S, xv, cs, 1);
            cs->resting += cs->impacts - before;
            t += hs;
            if (hs == h) t = tk;
        }
        if (!st) memcpy(traj + (size_t)k * 2 * N, xv, 2 * (size_t)N * sizeof(double));
    }
    if (st) imp_fail_context(st, "simulate %s", s->name);
    imp_csys_work_free(S.w);
    free(buf);
    return st;
}

int imp_chnn_simulate_contact(const imp_csys *s, const double *xv0, double dt, int n_steps,
                              const imp_chnn_sim_opts *o, double *traj, imp_chnn_contact_stats *cst)
{
    return simulate_contact(s, xv0, dt, n_steps, o, traj, cst, NULL, NULL);
}

int imp_chnn_simulate_contact_hook(const imp_csys *s, const double *xv0, double dt, int n_steps,
                                   const imp_chnn_sim_opts *o, double *traj, imp_chnn_contact_stats *cst,
                                   imp_chnn_impact_fn hook, void *user)
{
    if (!hook) return imp_fail(IMP_ERR_INVALID, "simulate: NULL impact hook");
    return simulate_contact(s, xv0, dt, n_steps, o, traj, cst, hook, user);
}
