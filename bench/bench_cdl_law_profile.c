/* Issue 24: where CD-Lagrange's training loss puts each contact's e and mu
 * when everything else is exact. A CD-Lagrange model with the data's masses
 * and radii (as training has them) and a potential that is exactly the
 * data's gravity (softplus units in pairs: m g (softplus(y) - softplus(-y))
 * = m g y per body) is scored with training's window loss
 * (horizon 10, the training windows, the data's touch labels gating the
 * impulses as in `impulse train`; the contact network's weights are zero,
 * so its loss term is the same for every law). For each contact pair, with
 * every other pair's e and mu at the truth, the library's law refit in its
 * profile mode (imp_model_law_refit, profile = 1: a grid, then golden
 * section, over the windows where the pair's impulse acts) finds the e and
 * the mu that minimise the loss; printed against the truth. A minimum away
 * from the truth is a bias of the step itself (not of learning a potential
 * or of the optimiser).
 *
 *   build/bench_cdl_law_profile TRAIN.npz [step|event] [OPTIONS]
 *
 * TRAIN.npz: `impulse simulate bouncing-disks:5 --trajectories 20 --seed 100`
 * (or bouncing-points:5). Timing: event (default) or step (the paper's law).
 * Options: pair=P (print only that pair), rest-out (targets of a body
 * resting on a contact, its label on at the sample and the one before,
 * left out, as --contact-labels onset does),
 * steps (instead of the profile: every single step, sample t - 1 to t, in
 * which a pair is active and its e changes the step's loss, with that
 * loss at the truth, the e minimising it alone, the labelled bodies at
 * t - 1 and the other pairs active in the step; results/disks-law-profile.md
 * sorts them by whether the pair really met an impact there).
 */
#include "impulse/cdl.h"
#include "impulse/core.h"
#include "models/cdl_internal.h"
#include "train/cdl_refit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H 10

typedef struct ctx {
    imp_model *m;
    const imp_trajset *d;
    imp_model_work *w1; /* B = 1, H = 1 */
    size_t t;           /* the step (global sample index) */
    int p;              /* the pair whose e is moved */
    const double *e0, *mu0;
} ctx;

/* One step from sample t - 1 to t (global index t) with the true law but
 * pair p's e (which 0) or mu (1) at x; its state loss. */
static double step_loss(ctx *c, size_t t, int p, int which, double x, const double *e0, const double *mu0)
{
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
    return lp.state;
}

/* the step c->t's loss with pair c->p's e at x (imp_golden_min's function) */
static double step_loss_e(double x, void *ctx_)
{
    ctx *c = ctx_;
    return step_loss(c, c->t, c->p, 0, x, c->e0, c->mu0);
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
                c->t = gt, c->p = p, c->e0 = e0, c->mu0 = mu0;
                double es = imp_golden_min(step_loss_e, c, 0.0, 1.0, 1e-5, NULL);
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
        fprintf(stderr, "usage: bench_cdl_law_profile TRAIN.npz [step|event] [pair=P] [rest-out] [steps]\n");
        return 2;
    }
    int timing = IMP_CDL_TIMING_EVENT, only = -1, rest_out = 0, steps = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "step")) timing = IMP_CDL_TIMING_STEP;
        else if (!strcmp(argv[i], "event")) timing = IMP_CDL_TIMING_EVENT;
        else if (!strncmp(argv[i], "pair=", 5)) only = atoi(argv[i] + 5);
        else if (!strcmp(argv[i], "rest-out")) rest_out = 1;
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
    /* training's resting targets out: what --contact-labels onset marks */
    if (rest_out) snprintf(d.labels, sizeof d.labels, "onset");
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
    if (imp_model_set_gravity_potential(m, d.gravity)) {
        fprintf(stderr, "bench_cdl_law_profile: %s\n", imp_last_error());
        return 1;
    }
    /* the contact network's output 1/2 everywhere: its loss term does not move with the law */
    memset(m->params + m->off_contact, 0, m->contact.n_params * sizeof(double));
    double qs[IMP_MAX_BODIES * IMP_MAX_DIM] = {0}, gr[IMP_MAX_BODIES * IMP_MAX_DIM];
    for (int i = 0; i < D; i++) qs[i] = 0.3 + 0.1 * i;
    imp_model_potential_grad(m, qs, 1, gr);
    for (int k = 0; k < K; k++)
        if (fabs(gr[dim * k + 1] - g->mass[k] * d.gravity) > 1e-9 * g->mass[k] * d.gravity || fabs(gr[dim * k]) > 0) {
            fprintf(stderr, "bench_cdl_law_profile: the potential is not gravity (body %d)\n", k);
            return 1;
        }
    const double *e0 = g->pair_e, *mu0 = g->pair_mu;
    imp_model_set_contact_law(m, e0, mu0);
    if (steps) {
        ctx c = {.m = m, .d = &d, .w1 = imp_model_work_new(m, 1, 1)};
        if (!c.w1) return 1;
        per_impact(&c, only);
        imp_model_work_free(c.w1);
        imp_model_free(m);
        imp_trajset_free(&d);
        return 0;
    }
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    to.horizon = H;
    to.refit.profile = 1;
    to.refit.what = IMP_LAW_REFIT_MU | IMP_LAW_REFIT_E;
    to.refit.min_steps = 1;
    to.refit.mu_max = 3.0;
    to.refit.tol = 2e-4;
    imp_law_refit_report rep;
    if (imp_model_law_refit(m, &d, &to, &rep)) {
        fprintf(stderr, "bench_cdl_law_profile: %s\n", imp_last_error());
        return 1;
    }
    printf("# %s, timing %s%s; loss: training's window loss (horizon %d), gravity and masses exact; %.0f s\n",
           argv[1], timing == IMP_CDL_TIMING_EVENT ? "event" : "step", rest_out ? ", resting targets out" : "", H,
           rep.seconds);
    printf("pair\tbody_i\tbody_j\twindows\te_true\te_min\te_err\tmu_true\tmu_min\tmu_err\n");
    for (int p = 0; p < P; p++) {
        if (only >= 0 && p != only) continue;
        const imp_law_refit_pair *r = &rep.pairs[p];
        const int bi = g->pairs[p].body_i, bj = g->pairs[p].body_j;
        if (!r->searched) {
            printf("%d\t%d\t%d\t%d\t%.3f\t-\t-\t%.3f\t-\t-\n", p, bi, bj, r->windows, e0[p], mu0[p]);
            continue;
        }
        printf("%d\t%d\t%d\t%d\t%.3f\t%.3f\t%+.3f\t%.3f\t%.3f\t%+.3f\n", p, bi, bj, r->windows, e0[p], r->e_after,
               r->e_after - e0[p], mu0[p], r->mu_after, r->mu_after - mu0[p]);
    }
    imp_model_free(m);
    imp_trajset_free(&d);
    return 0;
}
