/* Issue 24: where CD-Lagrange's training loss puts each contact's e and mu
 * when everything else is exact. A CD-Lagrange model with the data's masses
 * and radii (as training has them) and a potential that is exactly the
 * data's gravity (softplus units in pairs: m g (softplus(y) - softplus(-y))
 * = m g y per body) is scored with training's window loss
 * (imp_model_window_loss, horizon 10, every window of the training file, the
 * data's touch labels gating the impulses as in `impulse train`). For each
 * contact pair, with every other pair's e and mu at the truth, a
 * golden-section search finds the e (then the mu) that minimises the loss;
 * printed against the truth. A minimum away from the truth is a bias of the
 * step itself (not of learning a potential or of the optimiser).
 *
 *   build/bench_cdl_law_profile TRAIN.npz [step|event] [OPTIONS]
 *
 * TRAIN.npz: `impulse simulate bouncing-disks:5 --trajectories 20 --seed 100`
 * (or bouncing-points:5). Timing: event (default) or step (the paper's law).
 * Options: pair=P (only that pair), rest-out (targets of a body resting on
 * a contact, its label on at the sample and the one before, left out, as
 * --contact-labels onset does), impacts-only (only windows that start
 * right before a labelled sample of the pair's bodies: the impact steps),
 * steps (instead of the profile: every single step, sample t - 1 to t, in
 * which a pair is active and its e changes the step's loss, with that
 * loss at the truth, the e minimising it alone, the labelled bodies at
 * t - 1 and the other pairs active in the step; results/disks-law-profile.md
 * sorts them by whether the pair really met an impact there).
 */
#include "impulse/cdl.h"
#include "impulse/core.h"
#include "models/cdl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H 10

typedef struct ctx {
    imp_model *m;
    imp_model_work *w;
    const imp_trajset *d;
    size_t *win; /* window starts (global sample index) */
    size_t n_win;
    int rest_out;
    double *x0, *target, *labels, *weight;
    imp_model_work *w1; /* B = 1, H = 1 */
} ctx;

enum { CHUNK = 64 };

static double loss_of(ctx *c)
{
    const int D = c->m->D, K = c->m->K, S = 2 * D;
    double total = 0.0;
    for (size_t s = 0; s < c->n_win; s += CHUNK) {
        int B = (int)(c->n_win - s < CHUNK ? c->n_win - s : CHUNK);
        for (int b = 0; b < B; b++) {
            size_t t0 = c->win[s + b];
            memcpy(c->x0 + (size_t)b * S, c->d->q + t0 * D, D * sizeof(double));
            memcpy(c->x0 + (size_t)b * S + D, c->d->qdot + t0 * D, D * sizeof(double));
            for (int k = 0; k < H; k++) {
                size_t t = t0 + 1 + k;
                memcpy(c->target + ((size_t)b * H + k) * S, c->d->q + t * D, D * sizeof(double));
                memcpy(c->target + ((size_t)b * H + k) * S + D, c->d->qdot + t * D, D * sizeof(double));
                memcpy(c->labels + ((size_t)b * H + k) * K, c->d->contact + t * K, K * sizeof(double));
                int rest = 0;
                for (int j = 0; c->rest_out && j < K; j++)
                    rest |= c->d->contact[t * K + j] != 0.0 && c->d->contact[(t - 1) * K + j] != 0.0;
                c->weight[(size_t)b * H + k] = rest ? 0.0 : 1.0;
            }
        }
        imp_loss_parts lp;
        if (imp_model_window_loss(c->m, c->m->params, c->w, c->x0, c->target, c->labels, c->weight, B, H, 0.0, NULL,
                                  &lp)) {
            fprintf(stderr, "bench_cdl_law_profile: %s\n", imp_last_error());
            exit(1);
        }
        total += lp.state * B;
    }
    return total;
}

/* loss with pair p's e (which 0) or mu (1) set to x */
static double loss_at(ctx *c, int p, int which, double x, const double *e0, const double *mu0)
{
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    memcpy(e, e0, sizeof e);
    memcpy(mu, mu0, sizeof mu);
    if (which == 0) e[p] = x;
    else mu[p] = x;
    imp_model_set_contact_law(c->m, e, mu);
    return loss_of(c);
}

static double golden(ctx *c, int p, int which, double lo, double hi, const double *e0, const double *mu0)
{
    const double r = 0.5 * (sqrt(5.0) - 1.0);
    double a = lo, b = hi, x1 = b - r * (b - a), x2 = a + r * (b - a);
    double f1 = loss_at(c, p, which, x1, e0, mu0), f2 = loss_at(c, p, which, x2, e0, mu0);
    while (b - a > 2e-4) {
        if (f1 < f2) b = x2, x2 = x1, f2 = f1, x1 = b - r * (b - a), f1 = loss_at(c, p, which, x1, e0, mu0);
        else a = x1, x1 = x2, f1 = f2, x2 = a + r * (b - a), f2 = loss_at(c, p, which, x2, e0, mu0);
    }
    return 0.5 * (a + b);
}

/* One step from sample t - 1 to t (global index t) with the true law but
 * pair p's e (which 0) or mu (1) at x; its state loss. */
static double step_loss(ctx *c, size_t t, int p, int which, double x, const double *e0, const double *mu0)
{
    size_t save_n = c->n_win, save_w = c->win[0];
    (void)save_w;
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    memcpy(e, e0, sizeof e);
    memcpy(mu, mu0, sizeof mu);
    if (p >= 0 && which == 0) e[p] = x;
    else if (p >= 0) mu[p] = x;
    imp_model_set_contact_law(c->m, e, mu);
    const int D = c->m->D, K = c->m->K;
    imp_loss_parts lp;
    double x0[2 * IMP_MAX_BODIES * IMP_MAX_DIM], tg[2 * IMP_MAX_BODIES * IMP_MAX_DIM], lab[IMP_MAX_BODIES], wt = 1.0;
    memcpy(x0, c->d->q + (t - 1) * D, D * sizeof(double));
    memcpy(x0 + D, c->d->qdot + (t - 1) * D, D * sizeof(double));
    memcpy(tg, c->d->q + t * D, D * sizeof(double));
    memcpy(tg + D, c->d->qdot + t * D, D * sizeof(double));
    memcpy(lab, c->d->contact + t * K, K * sizeof(double));
    if (imp_model_window_loss(c->m, c->m->params, c->w1, x0, tg, lab, &wt, 1, 1, 0.0, NULL, &lp)) {
        fprintf(stderr, "bench_cdl_law_profile: %s\n", imp_last_error());
        exit(1);
    }
    c->n_win = save_n;
    return lp.state;
}

static double golden1(ctx *c, size_t t, int p, int which, double lo, double hi, const double *e0, const double *mu0)
{
    const double r = 0.5 * (sqrt(5.0) - 1.0);
    double a = lo, b = hi, x1 = b - r * (b - a), x2 = a + r * (b - a);
    double f1 = step_loss(c, t, p, which, x1, e0, mu0), f2 = step_loss(c, t, p, which, x2, e0, mu0);
    while (b - a > 1e-5) {
        if (f1 < f2) b = x2, x2 = x1, f2 = f1, x1 = b - r * (b - a), f1 = step_loss(c, t, p, which, x1, e0, mu0);
        else a = x1, x1 = x2, f1 = f2, x2 = a + r * (b - a), f2 = step_loss(c, t, p, which, x2, e0, mu0);
    }
    return 0.5 * (a + b);
}

/* Every step whose impulse acts on pair p (its activity in the step, the
 * true law): the step's loss at the truth, the e minimising that step's
 * loss, the other pairs active in the step. */
static void per_impact(ctx *c, int only)
{
    const imp_contact_geometry *g = &c->d->geom;
    const double *e0 = g->pair_e, *mu0 = g->pair_mu;
    const int P = g->n_pairs, K = g->n_bodies;
    printf("pair\ttraj\tt\tloss_true\te_true\te_step\tlabels_prev\tothers\n");
    for (int tr = 0; tr < c->d->n_traj; tr++)
        for (int t = 1; t < c->d->n_steps; t++) {
            size_t gt = (size_t)tr * c->d->n_steps + t;
            double L = step_loss(c, gt, -1, 0, 0.0, e0, mu0);
            unsigned char act[IMP_MAX_CONTACTS];
            memcpy(act, c->w1->pact, P);
            for (int p = 0; p < P; p++) {
                if (!act[p] || (only >= 0 && p != only)) continue;
                double la = step_loss(c, gt, p, 0, 0.3, e0, mu0), lb = step_loss(c, gt, p, 0, 0.9, e0, mu0);
                if (fabs(la - lb) <= 1e-12 * (la + lb) + 1e-30) continue; /* the pair's e does not enter */
                double es = golden1(c, gt, p, 0, 0.0, 1.0, e0, mu0);
                char others[256] = "", prev[64] = "";
                for (int q = 0, o = 0; q < P; q++)
                    if (act[q] && q != p) o += snprintf(others + o, sizeof others - o, "%s%d", o ? "," : "", q);
                for (int k = 0, o = 0; k < K; k++)
                    if (c->d->contact[(gt - 1) * K + k] != 0.0) o += snprintf(prev + o, sizeof prev - o, "%s%d", o ? "," : "", k);
                printf("%d\t%d\t%d\t%.3e\t%.3f\t%.4f\t%s\t%s\n", p, tr, t, L, e0[p], es, prev[0] ? prev : "-",
                       others[0] ? others : "-");
            }
        }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_cdl_law_profile TRAIN.npz [step|event] [pair=P] [rest-out] [impacts-only]\n");
        return 2;
    }
    int timing = IMP_CDL_TIMING_EVENT, only = -1, rest_out = 0, impacts_only = 0, steps = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "step")) timing = IMP_CDL_TIMING_STEP;
        else if (!strcmp(argv[i], "event")) timing = IMP_CDL_TIMING_EVENT;
        else if (!strncmp(argv[i], "pair=", 5)) only = atoi(argv[i] + 5);
        else if (!strcmp(argv[i], "rest-out")) rest_out = 1;
        else if (!strcmp(argv[i], "impacts-only")) impacts_only = 1;
        else if (!strcmp(argv[i], "steps")) steps = 1;
        else {
            fprintf(stderr, "bench_cdl_law_profile: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    imp_trajset d;
    if (imp_trajset_load(&d, argv[1])) {
        fprintf(stderr, "bench_cdl_law_profile: %s\n", imp_last_error());
        return 1;
    }
    const imp_contact_geometry *g = &d.geom;
    if (!g->has_pair_law || !isfinite(d.gravity)) {
        fprintf(stderr, "bench_cdl_law_profile: %s: needs per-pair e and mu and gravity\n", argv[1]);
        return 1;
    }
    const int K = g->n_bodies, dim = g->dim, D = K * dim, P = g->n_pairs;
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.hidden = 2 * K;
    cfg.friction = 1;
    cfg.learn_restitution = 1;
    cfg.impact_timing = timing;
    cfg.contact_tol = imp_cdl_default_contact_tol(&d);
    imp_model *m;
    if (imp_model_create(&m, &cfg, g, d.dt, 1)) {
        fprintf(stderr, "bench_cdl_law_profile: %s\n", imp_last_error());
        return 1;
    }
    /* the potential: sum_k m_k g y_k exactly */
    double *net = m->params + m->off_net;
    memset(net, 0, m->net.n_params * sizeof(double));
    for (int k = 0; k < K; k++) {
        double *W0 = net + m->net.w_off[0], *W1 = net + m->net.w_off[1];
        W0[(size_t)(2 * k) * D + dim * k + 1] = 1.0;
        W0[(size_t)(2 * k + 1) * D + dim * k + 1] = -1.0;
        W1[2 * k] = g->mass[k] * d.gravity;
        W1[2 * k + 1] = -g->mass[k] * d.gravity;
    }
    double qs[IMP_MAX_BODIES * IMP_MAX_DIM] = {0}, gr[IMP_MAX_BODIES * IMP_MAX_DIM];
    for (int i = 0; i < D; i++) qs[i] = 0.3 + 0.1 * i;
    imp_model_potential_grad(m, qs, 1, gr);
    for (int k = 0; k < K; k++)
        if (fabs(gr[dim * k + 1] - g->mass[k] * d.gravity) > 1e-9 * g->mass[k] * d.gravity || fabs(gr[dim * k]) > 0) {
            fprintf(stderr, "bench_cdl_law_profile: the potential is not gravity (body %d)\n", k);
            return 1;
        }
    ctx c = {.m = m, .d = &d, .rest_out = rest_out};
    c.w = imp_model_work_new(m, CHUNK, H);
    c.x0 = malloc((size_t)CHUNK * 2 * D * sizeof(double));
    c.target = malloc((size_t)CHUNK * H * 2 * D * sizeof(double));
    c.labels = malloc((size_t)CHUNK * H * K * sizeof(double));
    c.weight = malloc((size_t)CHUNK * H * sizeof(double));
    c.win = malloc((size_t)d.n_traj * d.n_steps * sizeof(size_t));
    if (!c.w || !c.x0 || !c.target || !c.labels || !c.weight || !c.win) return 1;
    c.w1 = imp_model_work_new(m, 1, 1);
    if (!c.w1) return 1;
    if (steps) {
        per_impact(&c, only);
        return 0;
    }
    const double *e0 = g->pair_e, *mu0 = g->pair_mu;
    printf("# %s, timing %s%s%s; loss: training's window loss (horizon %d), gravity and masses exact\n", argv[1],
           timing == IMP_CDL_TIMING_EVENT ? "event" : "step", rest_out ? ", resting targets out" : "",
           impacts_only ? ", impact windows only" : "", H);
    printf("pair\tbody_i\tbody_j\twindows\te_true\te_min\te_err\tmu_true\tmu_min\tmu_err\n");
    for (int p = 0; p < P; p++) {
        if (only >= 0 && p != only) continue;
        const int bi = g->pairs[p].body_i, bj = g->pairs[p].body_j;
        /* windows whose targets label one of the pair's bodies (the others
           do not depend on its e and mu) */
        c.n_win = 0;
        for (int tr = 0; tr < d.n_traj; tr++)
            for (int t0 = 0; t0 + H < d.n_steps; t0++) {
                size_t base = (size_t)tr * d.n_steps;
                int any = 0;
                for (int k = 1; k <= (impacts_only ? 1 : H); k++) {
                    const double *lab = d.contact + (base + t0 + k) * K, *prev = d.contact + (base + t0 + k - 1) * K;
                    int on = lab[bj] != 0.0 || (bi >= 0 && lab[bi] != 0.0);
                    int was = prev[bj] != 0.0 || (bi >= 0 && prev[bi] != 0.0);
                    any |= impacts_only ? on && !was : on;
                }
                if (any) c.win[c.n_win++] = base + t0;
            }
        if (c.n_win == 0) {
            printf("%d\t%d\t%d\t0\t%.3f\t-\t-\t%.3f\t-\t-\n", p, bi, bj, e0[p], mu0[p]);
            continue;
        }
        double em = golden(&c, p, 0, fmax(0.01, e0[p] - 0.25), fmin(0.999, e0[p] + 0.25), e0, mu0);
        double mm = golden(&c, p, 1, 0.2 * mu0[p], fmin(3.0, 5.0 * mu0[p]), e0, mu0);
        printf("%d\t%d\t%d\t%zu\t%.3f\t%.3f\t%+.3f\t%.3f\t%.3f\t%+.3f\n", p, bi, bj, c.n_win, e0[p], em, em - e0[p],
               mu0[p], mm, mm - mu0[p]);
        fflush(stdout);
    }
    imp_model_work_free(c.w);
    imp_model_free(m);
    imp_trajset_free(&d);
    free(c.x0), free(c.target), free(c.labels), free(c.weight), free(c.win);
    return 0;
}
