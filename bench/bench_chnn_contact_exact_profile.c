/* Issue 25: where training's loss puts e and mu when the flow is exact.
 * A CLNN with contact whose flow is the truth's (identity activations, the
 * potential network reduced to the system's linear gravity, the true masses
 * and inertias: as the exact models of tests/test_chnn_contact.c) is scored
 * with training's loss (imp_ctrain_chunk_loss: one RK4 step per sample and
 * the contact map after it, L1 over 5-state windows) on every
 * non-overlapping window of a training file whose loss depends on the
 * contact law, for e and mu on a grid. Prints the grid (loss relative to its
 * minimum, %), the minimum, and the loss at the declared e and mu. Any bias
 * of the minimum then comes from the contact map's discretisation (impulse
 * after a whole step), not from a learned potential or masses.
 *
 *   build/bench_chnn_contact_exact_profile TRAIN.npz [R]   (built with the bench programs)
 *
 * R (default 1, training's): RK4 steps per sample interval, the contact map
 * after each (imp_ctrain_chunk_loss_substeps). E0, MU0: the grid's start
 * (default 0.60, 0.06; steps 0.02 in e, 0.01 in mu, 18 x 13).
 */
#include "impulse/chnn_models.h"
#include "impulse/constrained_contact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S 4
#define NE 18
#define NMU 13

static int R = 1; /* RK4 steps (each followed by the contact map) per sample interval */
static int sub[256];

static double loss_of(const imp_cmodel *m, const double *p, const double *chunks, int n, double dt,
                      imp_cmodel_work *w, double *traj, double *tbar, int maxb)
{
    size_t csz = (size_t)(S + 1) * m->dim;
    double total = 0;
    for (int b0 = 0; b0 < n; b0 += maxb) {
        int b = n - b0 < maxb ? n - b0 : maxb;
        double l = 0;
        if (imp_ctrain_chunk_loss_substeps(m, p, chunks + (size_t)b0 * csz, R > 1 ? sub : NULL, b, S, dt, w, traj,
                                           tbar, NULL, &l)) {
            fprintf(stderr, "exact_profile: %s\n", imp_last_error());
            exit(1);
        }
        total += l * b;
    }
    return total / n;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: exact_profile TRAIN.npz [R [E0 MU0]]\n");
        return 2;
    }
    double e_lo = 0.60, mu_lo = 0.06;
    if (argc >= 3) R = atoi(argv[2]);
    if (argc == 5) e_lo = atof(argv[3]), mu_lo = atof(argv[4]);
    if (R < 1 || R > 64 || !(e_lo > 0) || !(e_lo + 0.02 * (NE - 1) < 1) || !(mu_lo > 0)) {
        fprintf(stderr, "exact_profile: R in 1..64, grid e E0..E0+0.34 in (0, 1), mu MU0.. > 0\n");
        return 2;
    }
    for (int i = 0; i < 256; i++) sub[i] = R;
    imp_ctraj data;
    imp_csystem cs;
    imp_cmodel m;
    if (imp_ctraj_load(argv[1], &data, &cs) || imp_cmodel_init(&m, IMP_CMODEL_CLNN, &cs, 16, 2) ||
        imp_cmodel_enable_contact(&m)) {
        fprintf(stderr, "exact_profile: %s\n", imp_last_error());
        return 1;
    }
    const imp_csys *s = &m.sys.full;
    int N = m.dim / 2;
    double *p = calloc(m.n_params, sizeof(double));
    m.net.hidden_act = IMP_ACT_IDENTITY;
    double x0[IMP_CSYS_MAX_POINTS * 3] = {0}, g[IMP_CSYS_MAX_POINTS * 3], g1[IMP_CSYS_MAX_POINTS * 3];
    imp_csys_potential_grad(s, x0, g);
    for (int q = 0; q < N; q++) x0[q] = 0.3 + 0.1 * q;
    imp_csys_potential_grad(s, x0, g1);
    for (int q = 0; q < N; q++)
        if (fabs(g[q] - g1[q]) > 1e-12) {
            fprintf(stderr, "exact_profile: %s: potential not linear\n", cs.name);
            return 1;
        }
    for (int q = 0; q < N; q++) p[m.net.w_off[0] + q] = g[q];
    for (int l = 1; l < m.net.n_layers; l++) p[m.net.w_off[l]] = 1.0;
    for (int bd = 0; bd < m.sys.n_bodies; bd++) {
        const imp_cbody *b = &s->bodies[bd];
        int f = m.sys.body_first[bd];
        p[m.off_mass + f] = log(b->mass);
        for (int a = 0; a < b->n_axes; a++) p[m.off_mass + f + 1 + a] = log(b->inertia[a]);
    }
    int c0 = -1;
    for (int c = 0; c < s->n_contacts; c++)
        if (c0 < 0 || s->contacts[c].mu > 0 || s->contacts[c].e < 1) c0 = c0 < 0 ? c : c0;
    double e_true = s->contacts[0].e, mu_true = s->contacts[0].mu;
    double *chunks;
    int n;
    if (imp_ctrain_all_windows(&data, 1 << 30, S, &chunks, &n)) {
        fprintf(stderr, "exact_profile: %s\n", imp_last_error());
        return 1;
    }
    int maxb = 256;
    imp_cmodel_work *w = imp_cmodel_work_new_slots(&m, maxb, 4 * S + 1);
    double *traj = malloc((size_t)(S + 1) * maxb * m.dim * sizeof(double)), *tbar = malloc((size_t)(S + 1) * maxb * m.dim * sizeof(double));
    size_t csz = (size_t)(S + 1) * m.dim;
    /* the contact windows: their loss moves with the law */
    double *pa = malloc(m.n_params * sizeof(double)), *cw = malloc((size_t)n * csz * sizeof(double));
    memcpy(pa, p, m.n_params * sizeof(double));
    for (int c = 0; c < s->n_contacts; c++) {
        imp_cmodel_set_contact(&m, p, c, fmin(fmax(s->contacts[c].e, 1e-4), 1 - 1e-4), fmax(s->contacts[c].mu, 1e-4));
        imp_cmodel_set_contact(&m, pa, c, 0.5, 0.25);
    }
    int nc = 0;
    double quiet = 0;
    int nq = 0;
    for (int i = 0; i < n; i++) {
        double la = loss_of(&m, p, chunks + (size_t)i * csz, 1, data.dt, w, traj, tbar, maxb);
        double lb = loss_of(&m, pa, chunks + (size_t)i * csz, 1, data.dt, w, traj, tbar, maxb);
        if (fabs(la - lb) > 1e-12 * fmax(la, 1e-300)) memcpy(cw + (size_t)nc++ * csz, chunks + (size_t)i * csz, csz * sizeof(double));
        else quiet += la, nq++;
    }
    printf("%s, %d RK4 step%s per sample: %d windows, %d contact windows; exact flow's loss on the others %.3g; "
           "declared e %g, mu %g\n", cs.name, R, R > 1 ? "s" : "", n, nc, nq ? quiet / nq : 0.0, e_true, mu_true);
    double grid[NE][NMU], best = INFINITY, eb = 0, mb = 0;
    for (int i = 0; i < NE; i++)
        for (int j = 0; j < NMU; j++) {
            double e = e_lo + 0.02 * i, mu = mu_lo + 0.01 * j;
            for (int c = 0; c < s->n_contacts; c++) imp_cmodel_set_contact(&m, pa, c, e, mu);
            grid[i][j] = loss_of(&m, pa, cw, nc, data.dt, w, traj, tbar, maxb);
            if (grid[i][j] < best) best = grid[i][j], eb = e, mb = mu;
        }
    double at_truth = loss_of(&m, p, cw, nc, data.dt, w, traj, tbar, maxb);
    printf("minimum at e %.2f, mu %.2f: loss %.6g; at the declared e, mu: %.6g (+%.3f %%)\n", eb, mb, best, at_truth,
           100 * (at_truth / best - 1));
    printf("loss / minimum - 1 (%%), rows e %.2f..%.2f, columns mu %.2f..%.2f\n", e_lo, e_lo + 0.02 * (NE - 1), mu_lo,
           mu_lo + 0.01 * (NMU - 1));
    for (int i = 0; i < NE; i++) {
        printf("e %.2f", e_lo + 0.02 * i);
        for (int j = 0; j < NMU; j++) printf(" %7.3f", 100 * (grid[i][j] / best - 1));
        printf("\n");
    }
    (void)c0;
    imp_cmodel_work_free(w);
    free(traj);
    free(tbar);
    free(pa);
    free(cw);
    free(chunks);
    free(p);
    imp_ctraj_free(&data);
    return 0;
}
