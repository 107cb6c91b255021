#define _POSIX_C_SOURCE 200809L
/* One training epoch of impulse's learned cube on box-toss data (issue #24:
 * "a box-toss epoch is measured against a PyTorch peer written the same
 * way", bench/box_toss_epoch_torch.py): the rigid-body step
 * (src/models/rigid_step.c: gravity kick, 8 corners against the ground,
 * the active corners' Newton restitution and Coulomb impulses solved
 * together by the contact module, quaternion update) rolled out over
 * windows of the tosses with imp_rigid_window_loss (forward and reverse
 * pass), and Adam on e, mu, the ground and the 8 corners in rigid_learn.c's
 * units. The epoch is every window once, in order (windows of W samples,
 * one every W - 1, so that each transition is used once), in batches of B.
 *
 * usage: bench_box_toss_epoch tosses.npz [repeats] [window] [substeps] [batch]
 *        (tosses from `impulse simulate box-toss`; defaults 5, 12, 4, 16)
 * Prints one JSON object: the epoch's CPU time per repeat (one thread), the
 * check window's loss, gradient and predicted states (the numbers the peer
 * is checked against: the window with the largest gradient in e and mu) and the parameters after the epoch. */
#include "impulse/core.h"
#include "impulse/nn.h"
#include "impulse/rigid_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* rigid_learn.c's units: e, mu as they are, the ground and the points in mm */
#define SCALE 1e-3
enum { P_E = 0, P_MU = 1, P_GROUND = 2, P_POINTS = 3, NP = 3 + 24 };

static void from_vec(imp_rigid_model *m, double *p)
{
    p[P_E] = fmin(fmax(p[P_E], 0.0), 1.0);
    p[P_MU] = fmin(fmax(p[P_MU], 0.0), 2.0);
    p[P_GROUND] = fmin(fmax(p[P_GROUND], -0.01 / SCALE), 0.01 / SCALE);
    m->e = p[P_E], m->mu = p[P_MU], m->ground = p[P_GROUND] * SCALE;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) m->points[k][i] = p[P_POINTS + 3 * k + i] * SCALE;
}

static void to_vec(const imp_rigid_model *m, double *p)
{
    p[P_E] = m->e, p[P_MU] = m->mu, p[P_GROUND] = m->ground / SCALE;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) p[P_POINTS + 3 * k + i] = m->points[k][i] / SCALE;
}

static int epoch(const imp_rigid_traj *t, const size_t *starts, int n_win, int W, int sub, int B, double lr,
                 imp_rigid_model *m, double *mean_loss)
{
    double p[NP], gp[NP], width = t->body.size[0];
    imp_adam opt;
    if (imp_adam_init(&opt, NP, lr, 0.9, 0.999, 1e-8, 0.0)) return -1;
    to_vec(m, p);
    double total = 0;
    for (int b0 = 0; b0 < n_win; b0 += B) {
        imp_rigid_model_grad g;
        memset(&g, 0, sizeof g);
        int used = 0;
        for (int b = b0; b < n_win && b < b0 + B; b++) {
            double lw = 0;
            imp_rigid_model_grad gw;
            memset(&gw, 0, sizeof gw);
            if (imp_rigid_window_loss(m, t->dt, sub, t->states + 13 * starts[b], (size_t)W, width, &lw, &gw, NULL)) {
                imp_adam_free(&opt);
                return -1;
            }
            total += lw, used++;
            g.e += gw.e, g.mu += gw.mu, g.ground += gw.ground;
            for (int k = 0; k < 8; k++)
                for (int i = 0; i < 3; i++) g.points[k][i] += gw.points[k][i];
        }
        gp[P_E] = g.e / used, gp[P_MU] = g.mu / used, gp[P_GROUND] = g.ground * SCALE / used;
        for (int k = 0; k < 8; k++)
            for (int i = 0; i < 3; i++) gp[P_POINTS + 3 * k + i] = g.points[k][i] * SCALE / used;
        imp_adam_step(&opt, p, gp, lr);
        from_vec(m, p);
    }
    imp_adam_free(&opt);
    *mean_loss = total / n_win;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_box_toss_epoch tosses.npz [repeats] [window] [substeps] [batch]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5, W = argc > 3 ? atoi(argv[3]) : 12, sub = argc > 4 ? atoi(argv[4]) : 4,
        B = argc > 5 ? atoi(argv[5]) : 16;
    const double lr = 0.02, e0 = 0.5, mu0 = 0.5;
    if (reps < 1 || reps > 100 || W < 2 || sub < 1 || B < 1) {
        fprintf(stderr, "bench_box_toss_epoch: bad arguments\n");
        return 2;
    }
    imp_rigid_traj t;
    if (imp_rigid_traj_load(&t, argv[1])) {
        fprintf(stderr, "bench_box_toss_epoch: %s\n", imp_last_error());
        return 1;
    }
    /* the windows: every W - 1 samples of every toss */
    size_t cap = t.n_rows, *starts = malloc(cap * sizeof *starts);
    int n_win = 0;
    for (int ep = 0; ep < t.n_episodes; ep++) {
        size_t off = imp_rigid_traj_offset(&t, ep), len = (size_t)t.lengths[ep];
        for (size_t a = 0; a + (size_t)W <= len; a += (size_t)W - 1) starts[n_win++] = off + a;
    }
    imp_rigid_model m0;
    imp_rigid_model_box(&m0, &t.body, e0, mu0, t.ground_height, t.gravity);
    /* the check window (the peer's numbers): the one whose gradient in e and
     * mu is largest, i.e. with impacts and friction; its loss, gradient and
     * predicted states */
    double loss0 = 0, best = -1;
    int check = 0;
    imp_rigid_model_grad g0;
    memset(&g0, 0, sizeof g0);
    for (int w = 0; w < n_win; w++) {
        imp_rigid_model_grad g;
        memset(&g, 0, sizeof g);
        double l = 0;
        if (imp_rigid_window_loss(&m0, t.dt, sub, t.states + 13 * starts[w], (size_t)W, t.body.size[0], &l, &g,
                                  NULL)) {
            fprintf(stderr, "bench_box_toss_epoch: %s\n", imp_last_error());
            return 1;
        }
        if (fabs(g.e) + fabs(g.mu) > best) best = fabs(g.e) + fabs(g.mu), check = w, g0 = g, loss0 = l;
    }
    double *pred = malloc((size_t)W * 13 * sizeof(double));
    if (imp_rigid_model_rollout(&m0, t.dt, sub, t.states + 13 * starts[check], (size_t)W, pred)) return 1;
    /* the epochs, each from the same start */
    double secs[100], mean_loss = 0;
    imp_rigid_model m = m0;
    for (int r = 0; r < reps; r++) {
        m = m0;
        double c0 = cpu_now();
        if (epoch(&t, starts, n_win, W, sub, B, lr, &m, &mean_loss)) {
            fprintf(stderr, "bench_box_toss_epoch: %s\n", imp_last_error());
            return 1;
        }
        secs[r] = cpu_now() - c0;
    }
    double sorted[100];
    memcpy(sorted, secs, (size_t)reps * sizeof(double));
    qsort(sorted, (size_t)reps, sizeof(double), cmp_double);
    printf("{\"impl\": \"impulse C (rigid_step.c, contact module)\", \"tosses\": %d, \"windows\": %d, \"window\": %d, "
           "\"substeps\": %d, \"batch\": %d, \"lr\": %g, \"e0\": %g, \"mu0\": %g,\n",
           t.n_episodes, n_win, W, sub, B, lr, e0, mu0);
    printf(" \"epoch_cpu_seconds\": [");
    for (int r = 0; r < reps; r++) printf("%s%.6f", r ? ", " : "", secs[r]);
    printf("], \"epoch_cpu_min\": %.6f, \"epoch_cpu_median\": %.6f,\n", sorted[0], sorted[reps / 2]);
    printf(" \"check_window\": {\"index\": %d, \"start_row\": %zu, \"loss\": %.17g, \"grad_e\": %.17g, \"grad_mu\": %.17g, "
           "\"grad_ground\": %.17g, \"grad_points\": [",
           check, starts[check], loss0, g0.e, g0.mu, g0.ground);
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) printf("%s%.17g", k + i ? ", " : "", g0.points[k][i]);
    printf("],\n  \"states\": [");
    for (int k = 0; k < W; k++) {
        printf("%s[", k ? ", " : "");
        for (int i = 0; i < 13; i++) printf("%s%.17g", i ? ", " : "", pred[13 * k + i]);
        printf("]");
    }
    printf("]},\n \"after_epoch\": {\"mean_loss\": %.17g, \"e\": %.17g, \"mu\": %.17g, \"ground\": %.17g}}\n",
           mean_loss, m.e, m.mu, m.ground);
    free(pred), free(starts);
    imp_rigid_traj_free(&t);
    return 0;
}
