/* CHNN and CLNN with contact (issue #25; docs/derivations/contact.md
 * section 10): the contact map through the learned constrained inverse mass
 * keeps the joints and the contact law, and its reverse pass (to the state,
 * the step's start, the learned masses, e and mu) and the training chunk
 * loss through impacts match central finite differences, with sticking,
 * sliding and separating contacts all seen. */
#include "test.h"
#define CLI_TEST_TAG "chnn_contact"
#include "cli_test.h"
#include "impulse/chnn_models.h"
#include "impulse/chnn_systems.h"
#include "impulse/constrained_contact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMAX (3 * IMP_CSYS_MAX_POINTS)


/* A model of system `name` with contact, random network and masses, its
 * contacts' e and mu set. */
static void make_model(imp_cmodel *m, double **params, const char *name, imp_cmodel_kind kind, double e, double mu,
                       unsigned long long seed)
{
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, name));
    CHECK_OK(imp_cmodel_init(m, kind, &cs, 16, 2));
    CHECK_OK(imp_cmodel_enable_contact(m));
    *params = malloc(m->n_params * sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    imp_cmodel_init_params(m, *params, &rng);
    for (int c = 0; c < cs.full.n_contacts; c++) CHECK_OK(imp_cmodel_set_contact(m, *params, c, e, mu));
}

/* A state y* on the joints whose lowest contact has the gap `gap`, closing
 * (the plane moved to make it so), and x_k = x* - h v*. */
static int draw_state(imp_cmodel *m, imp_rng *rng, double gap, double h, double *ys, double *xk)
{
    imp_csys *s = &m->sys.full;
    int N = imp_csys_ndof(s);
    imp_csys_work *w = imp_csys_work_new(s);
    int st = imp_chnn_sample_state(s, rng, 0.5, ys, w);
    imp_csys_work_free(w);
    if (st) return st;
    double J[3 * NMAX];
    int lo = 0;
    double phimin = INFINITY;
    for (int c = 0; c < s->n_contacts; c++) {
        double phi = imp_csys_contact_frame(s, ys, c, NULL, NULL, NULL);
        if (phi < phimin) phimin = phi, lo = c;
    }
    s->planes[s->contacts[lo].plane].offset += phimin - gap;
    imp_csys_contact_frame(s, ys, lo, NULL, NULL, J);
    double un = 0;
    for (int q = 0; q < N; q++) un += J[q] * ys[N + q];
    if (un > 0)
        for (int q = 0; q < N; q++) ys[N + q] = -ys[N + q];
    for (int q = 0; q < N; q++) xk[q] = ys[q] - h * ys[N + q];
    return IMP_OK;
}

static double map_loss(const imp_cmodel *m, const double *params, const double *xk, const double *ys, double h,
                       const double *wt)
{
    int dim = m->dim;
    double y[2 * NMAX];
    memcpy(y, ys, (size_t)dim * sizeof(double));
    if (imp_cmodel_contact_step(m, params, xk, y, h, NULL)) return NAN;
    double L = 0;
    for (int q = 0; q < dim; q++) L += wt[q] * y[q];
    return L;
}

/* The map's reverse pass against central differences on every input. */
static void check_map_gradient(imp_cmodel *m, double *params, const double *xk, const double *ys, double h,
                               imp_rng *rng, const char *what)
{
    int dim = m->dim, N = dim / 2;
    double wt[2 * NMAX], yb[2 * NMAX], xkb[NMAX] = {0};
    for (int q = 0; q < dim; q++) wt[q] = yb[q] = imp_rng_normal(rng);
    double *tb = calloc(m->n_params, sizeof(double));
    CHECK_OK(imp_cmodel_contact_step_vjp(m, params, xk, ys, h, yb, xkb, tb));
    double eps = 1e-6, worst = 0;
    double yp[2 * NMAX], xp[NMAX];
    for (int q = 0; q < dim + N; q++) {
        memcpy(yp, ys, (size_t)dim * sizeof(double));
        memcpy(xp, xk, (size_t)N * sizeof(double));
        double *z = q < dim ? &yp[q] : &xp[q - dim];
        double z0 = *z;
        *z = z0 + eps;
        double Lp = map_loss(m, params, xp, yp, h, wt);
        *z = z0 - eps;
        double Lm = map_loss(m, params, xp, yp, h, wt);
        double fd = (Lp - Lm) / (2 * eps), an = q < dim ? yb[q] : xkb[q - dim];
        double err = fabs(fd - an) / (fabs(fd) + fabs(an) + 1e-3);
        worst = fmax(worst, err);
        CHECK_MSG(err < 1e-5, "%s: d/d%s[%d] analytic %.10g fd %.10g", what, q < dim ? "y*" : "x_k",
                  q < dim ? q : q - dim, an, fd);
    }
    /* masses, e, mu */
    for (size_t p = m->off_mass; p < m->n_params; p++) {
        double p0 = params[p];
        params[p] = p0 + eps;
        double Lp = map_loss(m, params, xk, ys, h, wt);
        params[p] = p0 - eps;
        double Lm = map_loss(m, params, xk, ys, h, wt);
        params[p] = p0;
        double fd = (Lp - Lm) / (2 * eps);
        double err = fabs(fd - tb[p]) / (fabs(fd) + fabs(tb[p]) + 1e-3);
        worst = fmax(worst, err);
        CHECK_MSG(err < 1e-5, "%s: d/dtheta[%zu] (%s) analytic %.10g fd %.10g", what, p,
                  p < m->off_contact ? "mass" : (p - m->off_contact) % 2 ? "mu" : "e", tb[p], fd);
    }
    free(tb);
}

/* Stick, slide and separate, each seen, each FD-checked; the joints hold
 * after the map and no active contact closes. */
static void test_map(const char *name, imp_cmodel_kind kind)
{
    imp_cmodel m0;
    double *params;
    make_model(&m0, &params, name, kind, 0.5, 0.3, 7);
    imp_rng rng;
    imp_rng_seed(&rng, 11);
    int seen[3] = {0, 0, 0}, tried = 0, no_solution = 0, chain = strstr(name, "chain") != NULL;
    double worst_phi = 0;
    double h = 0.01;
    const double mus[3] = {0.05, 0.3, 1.0};
    for (int it = 0; it < 60 && !(seen[0] && seen[1] && seen[2] && tried >= 12); it++) {
        imp_cmodel m = m0;
        int N = m.dim / 2;
        double ys[2 * NMAX], xk[NMAX];
        double depth = -(0.002 + (it % 2 ? 0.15 : 0.02) * imp_rng_uniform(&rng));
        if (draw_state(&m, &rng, depth, h, ys, xk)) continue;
        for (int c = 0; c < m.sys.full.n_contacts; c++) CHECK_OK(imp_cmodel_set_contact(&m, params, c, 0.5, mus[it % 3]));
        /* which branches does the solve take? */
        imp_csys s = m.sys.full;
        int act[IMP_CSYS_MAX_CONTACTS], n = 0;
        double J[3 * NMAX];
        for (int c = 0; c < s.n_contacts; c++) {
            double phi = imp_csys_contact_frame(&s, ys, c, NULL, NULL, J);
            double un = 0;
            for (int q = 0; q < N; q++) un += J[q] * ys[N + q];
            if (phi < 0 && un < 0) act[n++] = c;
        }
        if (n == 0) continue;
        /* the impulse alone (h = 0: no position change, so the projection of
         * eq 25 is at x* where v+ already keeps the joints) for the law, and
         * the whole map (h) for the joints at x+ */
        double y[2 * NMAX], y1[2 * NMAX];
        memcpy(y, ys, (size_t)m.dim * sizeof(double));
        memcpy(y1, ys, (size_t)m.dim * sizeof(double));
        int na = 0;
        CHECK_OK(imp_cmodel_contact_step(&m, params, xk, y, 0.0, &na));
        CHECK(na == n);
        CHECK_OK(imp_cmodel_contact_step(&m, params, xk, y1, h, &na));
        /* joints: DPhi(x*) v+ = 0 and DPhi(x+) v' = 0 */
        double D[IMP_CSYS_MAX_ROWS * NMAX], D1[IMP_CSYS_MAX_ROWS * NMAX];
        imp_csys_jacobian(&s, ys, D);
        imp_csys_jacobian(&s, y1, D1);
        double dv = 0, vs = 0;
        for (int r = 0; r < s.n_rows; r++) {
            double a = 0, a1 = 0;
            for (int q = 0; q < N; q++) {
                a += D[(size_t)r * N + q] * y[N + q];
                a1 += D1[(size_t)r * N + q] * y1[N + q];
            }
            dv = fmax(dv, fmax(fabs(a), fabs(a1)));
        }
        for (int q = 0; q < N; q++) vs = fmax(vs, fabs(ys[N + q]));
        double dvmax = dv;
        /* the positions on the joints after the Gauss-Newton step (eq 26):
         * Phi(x*) of the draw (on the joints) against Phi(x') */
        double ph0[IMP_CSYS_MAX_ROWS], ph1[IMP_CSYS_MAX_ROWS], p0 = 0, p1 = 0;
        imp_csys_phi(&s, ys, ph0);
        imp_csys_phi(&s, y1, ph1);
        for (int r = 0; r < s.n_rows; r++) p0 = fmax(p0, fabs(ph0[r])), p1 = fmax(p1, fabs(ph1[r]));
        CHECK_MSG(p1 < 1e-9 + 10 * p0, "%s: Phi(x') = %g after the map (Phi(x*) = %g)", name, p1, p0);
        worst_phi = fmax(worst_phi, p1);
        /* branches, from a direct solve with the model's P (the map's own) */
        imp_contact_solution sol;
        {
            double e[IMP_CSYS_MAX_CONTACTS], mu[IMP_CSYS_MAX_CONTACTS], ea[IMP_CSYS_MAX_CONTACTS],
                mua[IMP_CSYS_MAX_CONTACTS];
            imp_cmodel_contact_values(&m, params, e, mu);
            for (int i = 0; i < n; i++) ea[i] = e[act[i]], mua[i] = mu[act[i]];
            /* the normal velocity after the map does not close */
            int law = 1;
            for (int i = 0; i < n; i++) {
                imp_csys_contact_frame(&s, ys, act[i], NULL, NULL, J);
                double un = 0, um = 0;
                for (int q = 0; q < N; q++) un += J[q] * y[N + q], um += J[q] * ys[N + q];
                law &= un >= ea[i] * -um - 1e-7 * (1 + fabs(um));
            }
            (void)mua;
            /* no impulse satisfies Newton's law with Coulomb friction here (a
             * contact whose compliance J P J^T has rank 1, as a tethered bob's,
             * with friction: Painleve's paradox); the solver keeps its
             * best projected Gauss-Seidel iterate: not a differentiable point */
            if (!law) {
                no_solution++;
                continue;
            }
        }
        /* the solve's branches: rerun the module's solve on A = J P J^T through the map's
         * own reverse pass is not exposed; classify by post-impact velocities instead */
        memset(&sol, 0, sizeof sol);
        for (int i = 0; i < n; i++) {
            imp_csys_contact_frame(&s, ys, act[i], NULL, NULL, J);
            double un = 0, ut = 0, um = 0;
            for (int q = 0; q < N; q++) {
                un += J[q] * y[N + q];
                um += J[q] * ys[N + q];
                ut += J[N + q] * y[N + q];
            }
            double e = 0.5;
            if (un > -e * um + 1e-6 * fabs(um)) seen[0]++; /* separates beyond the restitution target */
            else if (fabs(ut) < 1e-7 * (1 + fabs(um))) seen[1]++;
            else seen[2]++;
        }
        CHECK_MSG(dvmax < 1e-9 * (1 + vs), "%s: DPhi v+ = %g after the map", name, dvmax);
        char what[96];
        snprintf(what, sizeof what, "%s %s state %d (%d active, mu %g)", name, imp_cmodel_kind_name(kind), it, n,
                 mus[it % 3]);
        check_map_gradient(&m, params, xk, ys, h, &rng, what);
        tried++;
    }
    if (chain)
        CHECK_MSG(seen[0] > 0 && seen[1] > 0 && seen[2] > 0, "%s: separate %d, stick %d, slide %d contacts seen", name,
                  seen[0], seen[1], seen[2]);
    CHECK_MSG(tried >= 10 && no_solution * 3 <= tried, "%s: %d states checked, %d without a solution", name, tried,
              no_solution);
    printf("%s %s: %d states FD-checked (separate %d, stick %d, slide %d contacts), %d without a solution; "
           "largest |Phi| after a map %.2g\n",
           name, imp_cmodel_kind_name(kind), tried, seen[0], seen[1], seen[2], no_solution, worst_phi);
    free(params);
}

/* The chunk loss's gradient in the masses, e, mu and six network weights
 * against central differences; returns sum |d/d(e, mu)| (whether the
 * chunks' impacts reached the contact law). */
static double check_chunk_grad(imp_cmodel *m, double *params, const double *chunks, const int *r, int B, int S,
                               double h, const char *what)
{
    int dim = m->dim;
    imp_cmodel_work *w = imp_cmodel_work_new_slots(m, B, 4 * S + 1);
    double *traj = malloc((size_t)(S + 1) * B * dim * sizeof(double));
    double *tb = malloc((size_t)(S + 1) * B * dim * sizeof(double));
    double *grad = calloc(m->n_params, sizeof(double)), loss;
    CHECK_OK(imp_ctrain_chunk_loss_substeps(m, params, chunks, r, B, S, h, w, traj, tb, grad, &loss));
    size_t idx[64];
    int ni = 0;
    for (size_t p = m->off_mass; p < m->n_params; p++) idx[ni++] = p;
    for (int k = 0; k < 6; k++) idx[ni++] = (size_t)(k * 37) % m->off_mass;
    double eps = 1e-6, ge = 0;
    for (int i = 0; i < ni; i++) {
        size_t p = idx[i];
        double p0 = params[p], Lp, Lm;
        params[p] = p0 + eps;
        CHECK_OK(imp_ctrain_chunk_loss_substeps(m, params, chunks, r, B, S, h, w, traj, tb, NULL, &Lp));
        params[p] = p0 - eps;
        CHECK_OK(imp_ctrain_chunk_loss_substeps(m, params, chunks, r, B, S, h, w, traj, tb, NULL, &Lm));
        params[p] = p0;
        double fd = (Lp - Lm) / (2 * eps);
        double err = fabs(fd - grad[p]) / (fabs(fd) + fabs(grad[p]) + 1e-6);
        CHECK_MSG(err < 1e-4, "%s chunk loss: d/dtheta[%zu] analytic %.10g fd %.10g", what, p, grad[p], fd);
    }
    for (size_t p = m->off_contact; p < m->n_params; p++) ge += fabs(grad[p]);
    imp_cmodel_work_free(w);
    free(traj);
    free(tb);
    free(grad);
    return ge;
}

/* The training chunk loss through impacts: its gradient in e, mu, the masses
 * and some network weights against central differences; R > 1: every chunk
 * with R RK4 substeps per sample, the contact map after each (training's
 * contact substeps, imp_ctrain_opts.contact_substeps), and the maps do act
 * on substeps. */
static void test_chunk_loss(const char *name, imp_cmodel_kind kind, int R)
{
    imp_cmodel m;
    double *params;
    make_model(&m, &params, name, kind, 0.4, 0.3, 3);
    imp_rng rng;
    imp_rng_seed(&rng, 5);
    int S = 3, B = 3, dim = m.dim;
    double h = m.sys.dt;
    double *chunks = calloc((size_t)B * (S + 1) * dim, sizeof(double));
    double xk[NMAX];
    /* chunk 0 starts 0.002 above the plane moving into it; the others with
     * its position and perturbed velocities */
    CHECK_OK(draw_state(&m, &rng, 0.002, h, chunks, xk));
    for (int b = 0; b < B; b++)
        for (int k = 0; k <= S; k++)
            for (int q = 0; q < dim; q++) {
                double *z = chunks + ((size_t)b * (S + 1) + k) * dim + q;
                *z = chunks[q] + (k > 0 || (b > 0 && q >= dim / 2) ? 0.05 * imp_rng_normal(&rng) : 0.0);
            }
    int hits = 0, r[3] = {R, R, R};
    for (int b = 0; b < B; b++) {
        double out[4 * 2 * NMAX];
        int n_hit = 0;
        CHECK_OK(imp_cmodel_contact_rollout(&m, params, chunks + (size_t)b * (S + 1) * dim, S + 1, h, R, out, &n_hit));
        hits += n_hit;
    }
    CHECK_MSG(hits > 0, "%s, %d substeps: no contact map acted", name, R);
    char what[64];
    snprintf(what, sizeof what, "%s %s, %d substeps", name, imp_cmodel_kind_name(kind), R);
    /* e and mu get a gradient: the chunks do hit */
    CHECK_MSG(check_chunk_grad(&m, params, chunks, R > 1 ? r : NULL, B, S, h, what) > 0,
              "%s: no gradient reaches e and mu", what);
    if (R > 1) {
        /* the substeps change the loss: it is not one map per sample */
        imp_cmodel_work *w = imp_cmodel_work_new_slots(&m, B, 4 * S + 1);
        double *traj = malloc((size_t)(S + 1) * B * dim * sizeof(double));
        double *tb = malloc((size_t)(S + 1) * B * dim * sizeof(double)), L1, LR;
        CHECK_OK(imp_ctrain_chunk_loss(&m, params, chunks, B, S, h, w, traj, tb, NULL, &L1));
        CHECK_OK(imp_ctrain_chunk_loss_substeps(&m, params, chunks, r, B, S, h, w, traj, tb, NULL, &LR));
        CHECK_MSG(fabs(LR - L1) > 1e-9 * L1, "%s: loss %.12g with substeps, %.12g without", what, LR, L1);
        imp_cmodel_work_free(w);
        free(traj);
        free(tb);
    }
    free(chunks);
    free(params);
}

/* Contacts between two constrained bodies (colliding-pendulums: the normal
 * turns with both bodies' positions): the training chunk loss through a
 * simulated bob-bob impact (the chunk starts at the last sample before it), its gradient in e, mu, the masses and some
 * network weights against central differences. */
static void test_body_contact_chunk(imp_cmodel_kind kind)
{
    imp_cmodel m;
    double *params;
    make_model(&m, &params, "colliding-pendulums", kind, 0.6, 0.2, 4);
    const imp_csys *s = &m.sys.full;
    int dim = m.dim, N = dim / 2, S = 3, T = 400, found = -1;
    double h = m.sys.dt;
    double *traj = malloc((size_t)(T + 1) * dim * sizeof(double)), xv[2 * NMAX];
    imp_rng rng;
    imp_rng_seed(&rng, 21);
    imp_csys_work *cw = imp_csys_work_new(s);
    /* a simulated trajectory with a body-body impact */
    for (int tries = 0; tries < 20 && found < 0; tries++) {
        CHECK_OK(imp_chnn_sample_state(s, &rng, 0.5, xv, cw));
        CHECK_OK(imp_chnn_simulate(s, xv, h, T, NULL, traj, NULL));
        for (int k = 2; k + S < T && found < 0; k++)
            for (int c = 0; c < s->n_contacts; c++) {
                if (s->contacts[c].other < 0) continue;
                const double *a = traj + (size_t)k * dim, *b = traj + (size_t)(k + 1) * dim;
                double va = 0, vb = 0, J[3 * NMAX];
                imp_csys_contact_frame(s, a, c, NULL, NULL, J);
                for (int q = 0; q < N; q++) va += J[q] * a[N + q];
                imp_csys_contact_frame(s, b, c, NULL, NULL, J);
                for (int q = 0; q < N; q++) vb += J[q] * b[N + q];
                /* the normal velocity turns: an impact between k and k + 1, deep enough
                   that the model's own step from k crosses too */
                if (va < -1e-3 && vb > 0 &&
                    imp_csys_contact_frame(s, a, c, NULL, NULL, NULL) + h * va < -0.25 * h * fabs(va))
                    found = k;
            }
    }
    imp_csys_work_free(cw);
    CHECK_MSG(found >= 0, "colliding-pendulums: no bob-bob impact in 20 simulated trajectories");
    if (found < 0) {
        free(traj);
        free(params);
        return;
    }
    double *chunks = traj + (size_t)found * dim;
    char what[64];
    snprintf(what, sizeof what, "colliding-pendulums %s", imp_cmodel_kind_name(kind));
    CHECK_MSG(check_chunk_grad(&m, params, chunks, NULL, 1, S, h, what) > 0,
              "%s: no gradient reaches e and mu (the chunk's impact missed)", what);
    printf("%s: chunk loss through a bob-bob impact (sample %d) FD-checked\n", what, found);
    free(traj);
    free(params);
}

/* The gyroscope's rim at large mu jams the solver at its default
 * regularization (docs/derivations/contact.md sec 9, "Jamming"); the map
 * then solves the regularized law and still keeps the joints. */
static void test_jam(void)
{
    imp_cmodel m0;
    double *params;
    make_model(&m0, &params, "gyroscope-wall", IMP_CMODEL_CLNN, 0.8, 0.5, 9);
    imp_rng rng;
    imp_rng_seed(&rng, 21);
    int fails = 0, draws = 0;
    const double mus[3] = {0.5, 1.0, 2.0};
    for (int it = 0; it < 150; it++) {
        imp_cmodel m = m0;
        double ys[2 * NMAX], xk[NMAX], y[2 * NMAX];
        if (draw_state(&m, &rng, -0.01, 0.02, ys, xk)) continue;
        for (int c = 0; c < m.sys.full.n_contacts; c++) CHECK_OK(imp_cmodel_set_contact(&m, params, c, 0.8, mus[it % 3]));
        memcpy(y, ys, (size_t)m.dim * sizeof(double));
        int na = 0;
        if (imp_cmodel_contact_step(&m, params, xk, y, 0.02, &na)) {
            fails++;
            continue;
        }
        draws += na > 0;
        int N = m.dim / 2;
        double D[IMP_CSYS_MAX_ROWS * NMAX], dv = 0, vs = 0;
        imp_csys_jacobian(&m.sys.full, y, D);
        for (int r = 0; r < m.sys.full.n_rows; r++) {
            double a = 0;
            for (int q = 0; q < N; q++) a += D[(size_t)r * N + q] * y[N + q];
            dv = fmax(dv, fabs(a));
        }
        for (int q = 0; q < N; q++) vs = fmax(vs, fabs(ys[N + q]) + fabs(y[N + q] - ys[N + q]));
        /* jammed impulses are large (of order du / eps) in a direction P nearly
         * annihilates: DPhi P J^T lambda is rounding times |lambda| */
        CHECK_MSG(dv < 1e-6 * (1 + vs), "gyroscope-wall mu %g: DPhi v+ = %g (velocities and jumps up to %g)", mus[it % 3],
                  dv, vs);
    }
    CHECK_MSG(fails == 0 && draws > 100, "gyroscope-wall at mu 0.5-2: %d of %d maps failed", fails, draws + fails);
    free(params);
}

static void test_errors(void)
{
    imp_csystem cs;
    imp_cmodel m;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:2"));
    CHECK_OK(imp_cmodel_init(&m, IMP_CMODEL_CHNN, &cs, 8, 1));
    CHECK_FAILS(imp_cmodel_enable_contact(&m), IMP_ERR_INVALID);
    CHECK_OK(imp_csystem_from_name(&cs, "chain-ground:3"));
    CHECK_OK(imp_cmodel_init(&m, IMP_CMODEL_NODE, &cs, 8, 1));
    CHECK_FAILS(imp_cmodel_enable_contact(&m), IMP_ERR_UNSUPPORTED);
    /* the impact map alone: contacts named out of range, a model without contact, no hook */
    imp_cmodel mc;
    double *pc, x[2 * NMAX] = {0}, vout[NMAX];
    make_model(&mc, &pc, "chain-ground:3", IMP_CMODEL_CLNN, 0.5, 0.3, 5);
    int bad[1] = {mc.sys.full.n_contacts}, good[1] = {0};
    CHECK_FAILS(imp_cmodel_contact_impulse(&mc, pc, x, x + mc.dim / 2, bad, 1, vout, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_cmodel_contact_impulse(&mc, pc, x, x + mc.dim / 2, good, 0, vout, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_cmodel_contact_impulse(&m, pc, x, x + mc.dim / 2, good, 1, vout, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_chnn_simulate_contact_hook(&mc.sys.full, x, 0.01, 1, NULL, x, NULL, NULL, NULL), IMP_ERR_INVALID);
    free(pc);
}

static int stdout_has(const char *needle)
{
    FILE *f = fopen(CLI_TEST_TAG "_stdout.txt", "r");
    char buf[16384];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
    return strstr(buf, needle) != NULL;
}

/* The CLI: contacts learned by default, --no-contact, e and mu in --json. */
static void test_cli(void)
{
    char err[4096];
    CHECK(run("simulate chain-ground:3 --trajectories 4 --seed 1 -o chnn_contact_cg.npz", err, sizeof err) == 0);
    CHECK(run("simulate pendulum-chain:2 --trajectories 4 --seed 1 -o chnn_contact_pc.npz", err, sizeof err) == 0);
    CHECK(run("train clnn --data chnn_contact_cg.npz -o chnn_contact_m.npz --epochs 1 --hidden 8 --chunks 4 --batch 4 "
              "--threads 1 --json",
              err, sizeof err) == 0);
    CHECK_MSG(stdout_has("\"contacts\":[{\"contact\":0") && stdout_has("\"mu_declared\":0.5"),
              "train --json: e and mu per contact");
    CHECK(run("eval --model chnn_contact_m.npz --data chnn_contact_cg.npz --json", err, sizeof err) == 0);
    CHECK_MSG(stdout_has("\"contact\":\"learned\"") && stdout_has("\"e_declared\":0"), "eval --json: contacts");
    CHECK(run("rollout --model chnn_contact_m.npz --data chnn_contact_cg.npz --steps 20 -o chnn_contact_r.npz", err,
              sizeof err) == 0);
    CHECK(run("train clnn --data chnn_contact_cg.npz -o chnn_contact_n.npz --epochs 1 --hidden 8 --chunks 4 --batch 4 "
              "--threads 1 --no-contact",
              err, sizeof err) == 0);
    CHECK(run("eval --model chnn_contact_n.npz --data chnn_contact_cg.npz --json", err, sizeof err) == 0);
    CHECK_MSG(stdout_has("\"contact\":\"none\""), "--no-contact: the flow alone");
    expect_error("train clnn --data chnn_contact_pc.npz -o chnn_contact_x.npz --epochs 1 --contact", "declares no contacts");
    expect_error("train hnn --data chnn_contact_cg.npz -o chnn_contact_x.npz --epochs 1 --contact", "only chnn and clnn");
    remove("chnn_contact_cg.npz");
    remove("chnn_contact_pc.npz");
    remove("chnn_contact_m.npz");
    remove("chnn_contact_n.npz");
    remove("chnn_contact_r.npz");
    remove("chnn_contact_m.npz.log.jsonl");
    remove("chnn_contact_n.npz.log.jsonl");
    remove(CLI_TEST_TAG "_stdout.txt");
    remove(CLI_TEST_TAG "_stderr.txt");
}

/* A model whose flow is the truth's: identity activations, the potential
 * network reduced to V(x) = grad V . x (the system's gravity: linear in x),
 * the true point masses. Its contacts' e and mu set to (e, mu). */
static void make_exact_model(imp_cmodel *m, double **params, const char *name, imp_cmodel_kind kind, double e,
                             double mu)
{
    make_model(m, params, name, kind, e, mu, 5);
    const imp_csys *s = &m->sys.full;
    int N = m->dim / 2;
    m->net.hidden_act = IMP_ACT_IDENTITY;
    memset(*params, 0, m->net.n_params * sizeof(double));
    double x0[NMAX] = {0}, g[NMAX], g1[NMAX], M[NMAX * NMAX];
    imp_csys_potential_grad(s, x0, g);
    for (int q = 0; q < N; q++) x0[q] = 0.3 + 0.1 * q;
    imp_csys_potential_grad(s, x0, g1);
    for (int q = 0; q < N; q++) CHECK_MSG(fabs(g[q] - g1[q]) < 1e-12, "%s: potential not linear", name);
    for (int q = 0; q < N; q++) (*params)[m->net.w_off[0] + q] = g[q]; /* unit 0 of layer 0 */
    for (int l = 1; l < m->net.n_layers; l++) (*params)[m->net.w_off[l]] = 1.0;
    imp_csys_mass_matrix(s, M);
    for (int b = 0; b < m->sys.n_bodies; b++) CHECK_MSG(m->sys.body_size[b] == 1, "%s: not point masses", name);
    for (int p = 0; p < m->sys.n_points; p++) {
        int q = p * m->sys.d;
        (*params)[m->off_mass + p] = log(M[(size_t)q * N + q]);
    }
}

/* n trajectories of T states of the model's system, simulated by its
 * event-accurate truth from random states (rng seed `seed`). */
static void simulate_set(const imp_cmodel *m, int n, int T, unsigned long long seed, imp_ctraj *out)
{
    const imp_csys *s = &m->sys.full;
    int dim = m->dim;
    imp_ctraj t = {n, T, dim, m->sys.dt, malloc((size_t)n * T * dim * sizeof(double)), 0};
    double xv[2 * NMAX];
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    imp_csys_work *cw = imp_csys_work_new(s);
    for (int i = 0; i < n; i++) {
        CHECK_OK(imp_chnn_sample_state(s, &rng, 0.5, xv, cw));
        CHECK_OK(imp_chnn_simulate(s, xv, t.dt, T - 1, NULL, t.z + (size_t)i * T * dim, NULL));
    }
    imp_csys_work_free(cw);
    *out = t;
}

/* eval's impact energy (imp_ceval: one-step predictions from the truth's
 * states and rollouts) on simulated chain-ground:3 data: a model with the
 * truth's flow and e, mu near the truth's loses the truth's energy at the
 * impacts; the same with e 0.9 (the truth's 0) does not. Its rollouts keep
 * the joints away from impacts as DOPRI5 does without contact, far better
 * than training's fixed RK4 step. */
static void test_eval_impact_energy(void)
{
    const char *name = "chain-ground:3";
    imp_cmodel good, bad;
    double *pg, *pb;
    make_exact_model(&good, &pg, name, IMP_CMODEL_CLNN, 1e-4, 0.5);
    make_exact_model(&bad, &pb, name, IMP_CMODEL_CLNN, 0.9, 0.5);
    imp_ctraj test;
    simulate_set(&good, 6, 60, 7, &test);
    imp_ceval_opts eo;
    imp_ceval_opts_default(&eo);
    imp_ceval_result rg, rb, rk;
    CHECK_OK(imp_ceval(&good, pg, &test, &eo, &rg));
    CHECK_OK(imp_ceval(&bad, pb, &test, &eo, &rb));
    eo.contact_rk4 = 1;
    CHECK_OK(imp_ceval(&good, pg, &test, &eo, &rk));
    CHECK(rg.has_contact && rb.has_contact);
    CHECK_MSG(rg.impact_one_step.impacts >= 3, "%d impacts", rg.impact_one_step.impacts);
    CHECK(rb.impact_one_step.impacts == rg.impact_one_step.impacts);
    printf("  exact flow, e 1e-4: one-step rel %.3g (mean %.3g, max %.3g), rollout rel %.3g; e 0.9: one-step %.3g, "
           "rollout %.3g; violation away %.3g (RK4 %.3g, %ld states)\n", rg.impact_one_step.rel_error,
           rg.impact_one_step.mean_rel_error, rg.impact_one_step.max_rel_error, rg.impact_rollout.rel_error,
           rb.impact_one_step.rel_error, rb.impact_rollout.rel_error, rg.mean_violation_away, rk.mean_violation_away,
           rg.violation_away_states);
    CHECK_MSG(rg.impact_one_step.rel_error < 0.05, "exact model: one-step energy error %g",
              rg.impact_one_step.rel_error);
    CHECK_MSG(rb.impact_one_step.rel_error > 0.2, "e 0.9: one-step energy error only %g", rb.impact_one_step.rel_error);
    CHECK_MSG(rb.impact_one_step.mean_rel_error > 4 * rg.impact_one_step.mean_rel_error, "e 0.9 %g, exact %g",
              rb.impact_one_step.mean_rel_error, rg.impact_one_step.mean_rel_error);
    CHECK(rg.violation_away_states > 0);
    /* the steps in which the map acted: the truth's loss, and the exact model's near it */
    CHECK_MSG(rg.map_steps > 0 && rg.map_truth_lost > 0 && rg.map_kinetic >= rg.map_truth_lost,
              "%ld map steps, truth lost %g of %g", rg.map_steps, rg.map_truth_lost, rg.map_kinetic);
    CHECK_MSG(fabs(rg.map_model_lost - rg.map_truth_lost) < 0.05 * rg.map_truth_lost, "map steps: model %g, truth %g",
              rg.map_model_lost, rg.map_truth_lost);
    CHECK_MSG(rg.mean_violation_away < 1e-6 && rg.mean_violation_away < 0.01 * rk.mean_violation_away,
              "violation away from impacts: DOPRI5 %g, RK4 %g", rg.mean_violation_away, rk.mean_violation_away);
    /* the impact map alone, from the truth's located pre-impact states: the
     * exact model's fraction of kinetic energy lost is the truth's (its
     * compliance too), e 0.9 is far off, and so is a wrong bob mass (its
     * normalised compliance shows it) */
    printf("  impact map alone: %d located impacts (%ld elastic, %ld resting); exact rel %.3g (max %.3g, true masses "
           "%.3g), compliance rel %.3g; e 0.9: rel %.3g\n", rg.impact_map.impacts, rg.map_elastic, rg.map_resting,
           rg.impact_map.rel_error, rg.impact_map.max_rel_error, rg.impact_map_true.rel_error,
           rg.compliance_rel_error, rb.impact_map.rel_error);
    CHECK_MSG(rg.impact_map.impacts >= 3 && rb.impact_map.impacts == rg.impact_map.impacts, "%d and %d impacts",
              rg.impact_map.impacts, rb.impact_map.impacts);
    CHECK_MSG(fabs(rg.impact_map.truth_lost - rb.impact_map.truth_lost) < 1e-12 * rg.impact_map.truth_lost,
              "the truth's loss depends on the model: %g, %g", rg.impact_map.truth_lost, rb.impact_map.truth_lost);
    CHECK_MSG(rg.impact_map.max_rel_error < 5e-4 && rg.impact_map_true.max_rel_error < 5e-4,
              "exact model: impact map error %g (true masses %g)", rg.impact_map.max_rel_error,
              rg.impact_map_true.max_rel_error);
    CHECK_MSG(rg.compliance_rel_error < 1e-9 && fabs(rg.compliance_tt_model - rg.compliance_tt_truth) < 1e-9,
              "exact model: compliance error %g", rg.compliance_rel_error);
    CHECK_MSG(rb.impact_map.rel_error > 0.2 && rb.impact_map.within_5pct < rb.impact_map.impacts,
              "e 0.9: impact map error only %g", rb.impact_map.rel_error);
    imp_ceval_result rm;
    pg[good.off_mass + 1] += 0.7; /* bob 2 twice as heavy */
    CHECK_OK(imp_ceval(&good, pg, &test, &eo, &rm));
    printf("  bob 2 twice as heavy: impact map rel %.3g, compliance rel %.3g\n", rm.impact_map.rel_error,
           rm.compliance_rel_error);
    CHECK_MSG(rm.compliance_rel_error > 1e-3, "wrong mass: compliance error only %g", rm.compliance_rel_error);
    CHECK_MSG(rm.impact_map.mean_rel_error > 1e-3, "wrong mass: impact map error only %g", rm.impact_map.mean_rel_error);
    imp_ceval_result_free(&rm);
    imp_ceval_result_free(&rg);
    imp_ceval_result_free(&rb);
    imp_ceval_result_free(&rk);
    imp_ctraj_free(&test);
    free(pg);
    free(pb);
}

/* Training's contact substeps (imp_ctrain_opts.contact_substeps) on
 * simulated chain-ground:3 windows: the windows near the ground
 * (imp_ctrain_contact_window; none once the ground is far below, none
 * without contact) are the ones integrated with R substeps, and the first
 * epoch's loss is the chunk loss with R substeps on exactly those windows
 * (every window in one minibatch, its loss taken before the step), not the
 * loss with one map per sample. */
static void test_contact_windows(void)
{
    imp_cmodel m;
    double *p0;
    make_model(&m, &p0, "chain-ground:3", IMP_CMODEL_CLNN, 0.3, 0.4, 9);
    int dim = m.dim, n = 6, T = 60, S = 4, R = 6, n_win = n * (T / (S + 1));
    imp_ctraj data;
    simulate_set(&m, n, T, 11, &data);
    imp_ctrain_opts o;
    imp_ctrain_opts_default(&o);
    o.epochs = 1;
    o.batch = n_win;
    o.n_chunks = n_win;
    o.all_windows = 1;
    o.chunk_steps = S;
    o.seed = 3;
    o.single_products = 0;
    /* the chunks imp_ctrain draws, and which of them come near the ground */
    double *chunks;
    int nc, near, n_near = 0, *r = malloc((size_t)n_win * sizeof(int));
    CHECK_OK(imp_ctrain_all_windows(&data, n_win, S, &chunks, &nc));
    CHECK(nc == n_win);
    imp_cmodel far = m, plain;
    for (int pl = 0; pl < far.sys.full.n_planes; pl++) far.sys.full.planes[pl].offset -= 100;
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, "chain-ground:3"));
    CHECK_OK(imp_cmodel_init(&plain, IMP_CMODEL_CLNN, &cs, 16, 2));
    for (int b = 0; b < nc; b++) {
        const double *wb = chunks + (size_t)b * (S + 1) * dim;
        CHECK_OK(imp_ctrain_contact_window(&m, wb, S + 1, data.dt, &near));
        r[b] = near ? R : 1;
        n_near += near;
        CHECK_OK(imp_ctrain_contact_window(&far, wb, S + 1, data.dt, &near));
        CHECK_MSG(!near, "window %d near a ground 100 below", b);
        CHECK_OK(imp_ctrain_contact_window(&plain, wb, S + 1, data.dt, &near));
        CHECK_MSG(!near, "window %d near a contact of a model without contact", b);
    }
    printf("  contact substeps: %d of %d chain-ground:3 windows near the ground\n", n_near, nc);
    CHECK_MSG(n_near > 0 && n_near < nc, "%d of %d windows near the ground", n_near, nc);
    CHECK_FAILS(imp_ctrain_contact_window(&m, chunks, 0, data.dt, &near), IMP_ERR_INVALID);
    imp_cmodel_work *w = imp_cmodel_work_new_slots(&m, nc, 4 * S + 1);
    double *traj = malloc((size_t)(S + 1) * nc * dim * sizeof(double));
    double *tb = malloc((size_t)(S + 1) * nc * dim * sizeof(double)), L1, LR;
    CHECK_OK(imp_ctrain_chunk_loss(&m, p0, chunks, nc, S, data.dt, w, traj, tb, NULL, &L1));
    CHECK_OK(imp_ctrain_chunk_loss_substeps(&m, p0, chunks, r, nc, S, data.dt, w, traj, tb, NULL, &LR));
    CHECK_MSG(fabs(LR - L1) > 1e-9 * L1, "the substeps do not change the loss (%.12g)", L1);
    double *params = malloc(m.n_params * sizeof(double));
    imp_ctrain_result res;
    for (int on = 0; on <= 1; on++) {
        o.contact_substeps = on ? R : 1;
        memcpy(params, p0, m.n_params * sizeof(double));
        CHECK_OK(imp_ctrain(&m, params, &data, &o, &res));
        double want = on ? LR : L1;
        printf("  contact_substeps %d: %d windows, up to %d substeps, first loss %.12g (want %.12g)\n",
               o.contact_substeps, res.contact_windows, res.max_substeps, res.final_loss, want);
        CHECK(res.contact_windows == (on ? n_near : 0) && res.substepped_windows == res.contact_windows);
        CHECK(res.max_substeps == (on ? R : 1));
        CHECK_MSG(fabs(res.final_loss - want) < 1e-12 * want, "contact_substeps %d: loss %.15g, want %.15g",
                  o.contact_substeps, res.final_loss, want);
    }
    CHECK(imp_ctrain_contact_substeps(&m, &o) == R && imp_ctrain_contact_substeps(&plain, &o) == 1);
    o.contact_substeps = 0;
    CHECK(imp_ctrain_contact_substeps(&m, &o) == IMP_CTRAIN_CONTACT_SUBSTEPS);
    o.contact_substeps = IMP_CTRAIN_MAX_SUBSTEPS + 1;
    CHECK_FAILS(imp_ctrain(&m, params, &data, &o, &res), IMP_ERR_INVALID);
    o.contact_substeps = -1;
    CHECK_FAILS(imp_ctrain(&m, params, &data, &o, &res), IMP_ERR_INVALID);
    imp_cmodel_work_free(w);
    free(traj);
    free(tb);
    free(chunks);
    free(r);
    free(params);
    free(p0);
    imp_ctraj_free(&data);
}

int main(void)
{
    test_errors();
    test_map("chain-ground:3", IMP_CMODEL_CLNN);
    test_map("gyroscope-wall", IMP_CMODEL_CHNN);
    test_chunk_loss("chain-ground:3", IMP_CMODEL_CLNN, 1);
    test_chunk_loss("chain-ground:3", IMP_CMODEL_CHNN, 1);
    test_chunk_loss("gyroscope-wall", IMP_CMODEL_CLNN, 1);
    test_chunk_loss("chain-ground:3", IMP_CMODEL_CLNN, 4);
    test_chunk_loss("gyroscope-wall", IMP_CMODEL_CLNN, 5);
    test_chunk_loss("gyroscope-wall", IMP_CMODEL_CHNN, 3);
    test_contact_windows();
    test_body_contact_chunk(IMP_CMODEL_CLNN);
    test_body_contact_chunk(IMP_CMODEL_CHNN);
    test_jam();
    test_eval_impact_energy();
    test_cli();
    TEST_MAIN_END();
}
