/* Ground-truth trajectories: the constrained Hamiltonian flow ([F] eq 6)
 * integrated by DOPRI5 in double precision (the reference integrates it in
 * float32 with torchdiffeq dopri5, rtol 1e-7, [chnn] section 1), and the
 * chunking of trajectories into training windows. */
#include "impulse/chnn_systems.h"

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
