/* The law refit of a trained CD-Lagrange model (imp_model_law_refit;
 * docs/derivations/contact.md sec 13, docs/cdl.md "Law refit"): each contact
 * pair's mu, then e, searched on the training loss with everything else
 * fixed, over the windows that pair's law enters, where the loss's gradient
 * with respect to it is exactly 0 (the sticking plateau; every pair with
 * law_refit.all). The law identification (imp_law_refit_opts_identify,
 * sec 14) is the same search of every pair's mu and e on one-step windows
 * with a robust loss (law_refit.horizon, law_refit.robust). */
#include "train/cdl_refit.h"
#include "models/cdl_internal.h"
#include "train/cdl_pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 64 };

void imp_law_refit_opts_default(imp_law_refit_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_steps = 5;
    o->grid = 16;
    o->mu_max = 2.0;
    o->tol = 1e-3;
    o->what = IMP_LAW_REFIT_MU;
}

void imp_law_refit_opts_identify(imp_law_refit_opts *o)
{
    o->what = IMP_LAW_REFIT_MU | IMP_LAW_REFIT_E;
    o->all = 1;
    o->horizon = 1;
    o->robust = 1;
}

const char *imp_law_refit_mode_name(const imp_law_refit_opts *o)
{
    return o->robust ? "identify" : o->all ? "all" : "plateau";
}

double imp_golden_min(double (*f)(double x, void *ctx), void *ctx, double a, double b, double tol, double *f_min)
{
    const double r = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - r * (b - a), x2 = a + r * (b - a);
    double f1 = f(x1, ctx), f2 = f(x2, ctx);
    while (b - a > tol) {
        if (f1 < f2) b = x2, x2 = x1, f2 = f1, x1 = b - r * (b - a), f1 = f(x1, ctx);
        else a = x1, x1 = x2, f1 = f2, x2 = a + r * (b - a), f2 = f(x2, ctx);
    }
    if (f_min) *f_min = f1 <= f2 ? f1 : f2;
    return f1 <= f2 ? x1 : x2;
}

int imp_law_refit_check(const imp_model *m, const imp_trajset *d, const imp_train_opts *o)
{
    const imp_law_refit_opts *r = &o->refit;
    if (m->cfg.kind != IMP_MODEL_CDL)
        return imp_fail(IMP_ERR_INVALID, "law_refit: a %s model learns no contact law (cdl with a learned "
                                         "restitution or friction)",
                        imp_model_kind_name(m->cfg.kind));
    if (!m->cfg.learn_restitution && !m->cfg.friction)
        return imp_fail(IMP_ERR_INVALID, "law_refit: this cdl model learns neither restitution nor friction");
    if (r->min_steps < 1) return imp_fail(IMP_ERR_INVALID, "law_refit.min_steps: %d must be >= 1", r->min_steps);
    if (r->grid < 3 || r->grid > 10000)
        return imp_fail(IMP_ERR_INVALID, "law_refit.grid: %d outside [3, 10000]", r->grid);
    if (!(r->mu_max > 0.0 && r->mu_max <= 10.0))
        return imp_fail(IMP_ERR_INVALID, "law_refit.mu_max: %g outside (0, 10]", r->mu_max);
    if (!(r->tol > 0.0 && r->tol <= 0.1)) return imp_fail(IMP_ERR_INVALID, "law_refit.tol: %g outside (0, 0.1]", r->tol);
    if (r->what < 1 || r->what > (IMP_LAW_REFIT_E | IMP_LAW_REFIT_MU))
        return imp_fail(IMP_ERR_INVALID, "law_refit.what: %d is not IMP_LAW_REFIT_MU (1), IMP_LAW_REFIT_E (2) or both (3)",
                        r->what);
    if (((r->what & IMP_LAW_REFIT_MU) && m->cfg.friction) + ((r->what & IMP_LAW_REFIT_E) && m->cfg.learn_restitution) == 0)
        return imp_fail(IMP_ERR_INVALID, "law_refit.what: the model learns no %s (refit %s)",
                        r->what == IMP_LAW_REFIT_MU ? "friction" : "restitution",
                        r->what == IMP_LAW_REFIT_MU ? "e, or train with friction" : "mu");
    if (r->profile != 0 && r->profile != 1)
        return imp_fail(IMP_ERR_INVALID, "law_refit.profile: %d is not 0 or 1", r->profile);
    if (r->all != 0 && r->all != 1) return imp_fail(IMP_ERR_INVALID, "law_refit.all: %d is not 0 or 1", r->all);
    if (r->robust != 0 && r->robust != 1)
        return imp_fail(IMP_ERR_INVALID, "law_refit.robust: %d is not 0 or 1", r->robust);
    int st = imp_cdl_check_loss_opts(o, d);
    if (st) return st;
    if (r->horizon < 0 || r->horizon > d->n_steps - 1)
        return imp_fail(IMP_ERR_INVALID, "law_refit.horizon: %d outside [0, %d] (0: training's; the data have %d "
                                         "samples per trajectory)",
                        r->horizon, d->n_steps - 1, d->n_steps);
    if (d->geom.n_bodies != m->K || d->geom.dim != m->geom.dim || d->geom.n_pairs != m->geom.n_pairs)
        return imp_fail(IMP_ERR_SHAPE, "data: %d bodies x %d dims with %d contact pairs, the model expects %d x %d "
                                       "with %d",
                        d->geom.n_bodies, d->geom.dim, d->geom.n_pairs, m->K, m->geom.dim, m->geom.n_pairs);
    return IMP_OK;
}

typedef struct refit {
    imp_model *m;
    const imp_trajset *d;
    const imp_law_refit_opts *o;
    int H, P;
    imp_cdl_pool *pool;  /* the loss, in double, on the training's threads (NULL: robust) */
    imp_model_work *w;   /* the activity pass and the robust loss (one thread, double) */
    double *x0, *target, *labels, *weight, *grad;
    size_t *wins, n_wins; /* the training windows */
    unsigned char *flag;  /* n_wins x P: the pair's law enters the window */
    size_t *all, *sel, n_sel;
    int pair, which;      /* the parameter searched: pair's e (0) or mu (1) */
    int status;
} refit;

static void fill(refit *r, const size_t *ids, int bs)
{
    const int S = 2 * r->m->D, K = r->m->K, H = r->H;
    for (int b = 0; b < bs; b++)
        imp_cdl_fill_window(r->m, r->d, H, r->wins[ids[b]], r->x0 + (size_t)b * S, r->target + (size_t)b * H * S,
                            r->labels + (size_t)b * H * K, r->weight + (size_t)b * H);
}

/* Window `id` alone, on the one-thread work (the robust loss reads each
 * window's own loss; grad NULL or zeroed here and filled). */
static int one_window(refit *r, size_t id, double *grad, imp_loss_parts *lp)
{
    fill(r, &id, 1);
    if (grad) memset(grad, 0, r->m->n_params * sizeof *grad);
    return imp_model_window_loss(r->m, r->m->params, r->w, r->x0, r->target, r->labels, r->weight, 1, r->H, 0.0, grad,
                                 lp);
}

/* Sum over the windows ids of their state and contact losses (the terms of
 * the training loss a contact law enters; robust: of their RMS state
 * errors, the contact term not depending on the law); +inf where the loss
 * is not finite, NAN (r->status set) on another failure. */
static double set_loss(refit *r, const size_t *ids, size_t n)
{
    double total = 0.0;
    if (r->o->robust) { /* each window's RMS state error, one window at a time */
        for (size_t i = 0; i < n; i++) {
            imp_loss_parts lp;
            int st = one_window(r, ids[i], NULL, &lp);
            if (st == IMP_ERR_NUMERIC) return INFINITY;
            if (st) {
                if (!r->status) r->status = st;
                return NAN;
            }
            total += sqrt(lp.state);
        }
        return total;
    }
    for (size_t s = 0; s < n; s += CHUNK) {
        int bs = (int)(n - s < CHUNK ? n - s : CHUNK);
        fill(r, ids + s, bs);
        imp_loss_parts lp;
        int st = imp_cdl_pool_loss(r->pool, r->m->params, r->x0, r->target, r->labels, r->weight, bs, 0.0, NULL, &lp);
        if (st == IMP_ERR_NUMERIC) return INFINITY;
        if (st) {
            if (!r->status) r->status = st;
            return NAN;
        }
        total += (lp.state + lp.contact) * bs;
    }
    return total;
}

/* The refit's loss over every window: its mean plus the L2 term. */
static double full_loss(refit *r, double l2)
{
    double L = set_loss(r, r->all, r->n_wins);
    return L / (double)r->n_wins + (l2 > 0.0 ? imp_mlp_l2(&r->m->net, r->m->params + r->m->off_net, l2, NULL) : 0.0);
}

/* Which windows a pair's law enters, from a forward pass at the current
 * parameters: at step level a pair's impulse reads e and mu in a step where
 * its activity (imp_pair_activity) is on and one of its bodies' gates is
 * not 0; with event timing where it acted in the step's sequence of
 * impacts, chains included (imp_event_forward's record). A window where the
 * pair never acts does not depend on its law. steps (P, may be NULL)
 * counts the windows whose first step the pair acts in. */
static int activity(refit *r, const size_t *ids, size_t n, int *steps)
{
    const imp_model *m = r->m;
    const int P = r->P, K = m->K, H = r->H, event = m->cfg.impact_timing == IMP_CDL_TIMING_EVENT;
    for (size_t s = 0; s < n; s += CHUNK) {
        int bs = (int)(n - s < CHUNK ? n - s : CHUNK);
        fill(r, ids + s, bs);
        imp_loss_parts lp;
        int st = imp_model_window_loss(m, m->params, r->w, r->x0, r->target, r->labels, r->weight, bs, H, 0.0, NULL,
                                       &lp);
        if (st && st != IMP_ERR_NUMERIC) return st;
        for (int b = 0; b < bs; b++) {
            unsigned char *f = r->flag + ids[s + b] * P;
            memset(f, 0, (size_t)P);
            for (int k = 0; k < H; k++) {
                const unsigned char *act = r->w->pact + ((size_t)k * bs + b) * P;
                const unsigned char *acted = r->w->acted + ((size_t)k * bs + b) * P;
                const double *gate = r->w->gate + ((size_t)k * bs + b) * K;
                for (int p = 0; p < P; p++) {
                    const int bi = m->geom.pairs[p].body_i, bj = m->geom.pairs[p].body_j;
                    if (event ? !acted[p] : !act[p] || (gate[bj] == 0.0 && (bi == IMP_WALL || gate[bi] == 0.0)))
                        continue;
                    f[p] = 1;
                    if (steps && k == 0) steps[p]++;
                }
            }
        }
    }
    return IMP_OK;
}

/* d(training loss)/d(raw e, raw mu) of pair p (g[0], g[1]): the gradient
 * over the windows ids (the pair's: no other window's loss reads its law)
 * divided by every window's count, as the training loss is their mean. */
static int pair_grad(refit *r, int p, const size_t *ids, size_t n, double g[2])
{
    const imp_model *m = r->m;
    g[0] = g[1] = 0.0;
    if (r->o->robust) { /* d sqrt(L_w) = dL_w / (2 sqrt(L_w)) per window */
        for (size_t i = 0; i < n; i++) {
            imp_loss_parts lp;
            int st = one_window(r, ids[i], r->grad, &lp);
            if (st) return st;
            if (!(lp.state > 0.0)) continue; /* at a window's exact fit its loss is flat to first order */
            const double c = 0.5 / sqrt(lp.state);
            if (m->cfg.learn_restitution) g[0] += c * r->grad[m->off_restitution + p];
            if (m->cfg.friction) g[1] += c * r->grad[m->off_friction + p];
        }
        g[0] /= (double)r->n_wins, g[1] /= (double)r->n_wins;
        return IMP_OK;
    }
    for (size_t s = 0; s < n; s += CHUNK) {
        int bs = (int)(n - s < CHUNK ? n - s : CHUNK);
        fill(r, ids + s, bs);
        memset(r->grad, 0, m->n_params * sizeof *r->grad);
        imp_loss_parts lp;
        int st = imp_cdl_pool_loss(r->pool, m->params, r->x0, r->target, r->labels, r->weight, bs, 0.0, r->grad, &lp);
        if (st) return st;
        /* the chunk's loss is a mean over its bs windows */
        if (m->cfg.learn_restitution) g[0] += r->grad[m->off_restitution + p] * bs;
        if (m->cfg.friction) g[1] += r->grad[m->off_friction + p] * bs;
    }
    g[0] /= (double)r->n_wins, g[1] /= (double)r->n_wins;
    return IMP_OK;
}

static double *slot(refit *r, int p, int which)
{
    return r->m->params + (which ? r->m->off_friction : r->m->off_restitution) + p;
}

static double law_loss(double x, void *ctx)
{
    refit *r = ctx;
    *slot(r, r->pair, r->which) = imp_model_law_raw(r->which, x);
    double L = set_loss(r, r->sel, r->n_sel);
    return isnan(L) ? INFINITY : L;
}

/* The searched parameter's minimum: the grid's best point (the first, so
 * the lowest, of equal ones: the edge of a sticking plateau), then golden
 * section between its neighbours. Returns the loss there, *x the value. */
static double search(refit *r, double *x)
{
    const int G = r->o->grid, mu = r->which;
    const double step = mu ? r->o->mu_max / G : 1.0 / (G + 1);
    int best = 0;
    double f_best = INFINITY;
    for (int k = 0; k < G; k++) {
        double f = law_loss(step * (k + 1), r);
        if (r->status) return NAN;
        if (f < f_best) f_best = f, best = k;
    }
    double a = best > 0 ? step * best : 0.0, b = best < G - 1 ? step * (best + 2) : mu ? r->o->mu_max : 1.0;
    double f_gold, x_gold = imp_golden_min(law_loss, r, a, b, r->o->tol, &f_gold);
    if (r->status) return NAN;
    if (f_gold < f_best) {
        *x = x_gold;
        return f_gold;
    }
    *x = step * (best + 1);
    return f_best;
}

int imp_model_law_refit(imp_model *m, const imp_trajset *data, const imp_train_opts *opts,
                        imp_law_refit_report *rep)
{
    if (!m || !data || !opts) return imp_fail(IMP_ERR_INVALID, "law_refit: NULL model, data or options");
    int st = imp_law_refit_check(m, data, opts);
    if (st) return st;
    const double t0 = imp_time_now();
    const int H = opts->refit.horizon > 0 ? opts->refit.horizon : opts->horizon, P = m->geom.n_pairs, S = 2 * m->D;
    refit r = {.m = m, .d = data, .o = &opts->refit, .H = H, .P = P};
    imp_law_refit_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    rep->n_pairs = P;
    int steps[IMP_MAX_CONTACTS] = {0};
    r.n_wins = imp_cdl_windows(data, H, NULL);
    if (r.n_wins == 0) return imp_fail(IMP_ERR_INVALID, "data: every window starts inside an impact (interior)");
    r.wins = malloc(r.n_wins * sizeof *r.wins);
    r.all = malloc(r.n_wins * sizeof *r.all);
    r.sel = malloc(r.n_wins * sizeof *r.sel);
    r.flag = malloc(r.n_wins * (P > 0 ? (size_t)P : 1));
    r.x0 = malloc((size_t)CHUNK * S * sizeof(double));
    r.target = malloc((size_t)CHUNK * H * S * sizeof(double));
    r.labels = malloc((size_t)CHUNK * H * m->K * sizeof(double));
    r.weight = malloc((size_t)CHUNK * H * sizeof(double));
    r.grad = malloc(m->n_params * sizeof(double));
    r.w = imp_model_work_new(m, CHUNK, H);
    if (!r.wins || !r.all || !r.sel || !r.flag || !r.x0 || !r.target || !r.labels || !r.weight || !r.grad || !r.w) {
        st = imp_fail(IMP_ERR_NOMEM, "law_refit: out of memory");
        goto done;
    }
    imp_cdl_windows(data, H, r.wins);
    for (size_t i = 0; i < r.n_wins; i++) r.all[i] = i;
    /* the pool serves training's loss; the robust one is taken a window at a time on r.w */
    if (!opts->refit.robust &&
        (st = imp_cdl_pool_new(&r.pool, m, CHUNK, H, opts->threads > 0 ? opts->threads : 1, 0, 0)))
        goto done;
    if ((st = activity(&r, r.all, r.n_wins, steps))) goto done;
    rep->loss_before = full_loss(&r, opts->l2);
    if (r.status) goto failed;
    double L_all = rep->loss_before;
    for (int p = 0; p < P; p++) {
        imp_law_refit_pair *rp = &rep->pairs[p];
        const int what = opts->refit.what;
        const int has[2] = {m->cfg.learn_restitution, m->cfg.friction && imp_contact_pair_has_tangent(&m->geom, p)};
        int search_it[2] = {has[0] && (what & IMP_LAW_REFIT_E), has[1] && (what & IMP_LAW_REFIT_MU)};
        rp->steps = steps[p];
        r.n_sel = 0;
        for (size_t i = 0; i < r.n_wins; i++)
            if (r.flag[i * P + p]) r.sel[r.n_sel++] = i;
        rp->windows = (int)r.n_sel;
        double *es = slot(&r, p, 0), *ms = has[1] ? slot(&r, p, 1) : NULL;
        rp->e_before = has[0] ? imp_model_law_value(0, *es) : m->geom.restitution;
        rp->mu_before = ms ? imp_model_law_value(1, *ms) : NAN;
        rp->plateau = -1;
        rp->e_grad = rp->mu_grad = NAN;
        if (steps[p] >= opts->refit.min_steps && r.n_sel > 0 && (has[0] || has[1])) {
            /* the plateau: where gradient descent cannot move the parameter */
            double g[2];
            if ((st = pair_grad(&r, p, r.sel, r.n_sel, g))) goto done;
            if (has[0]) rp->e_grad = g[0] / (rp->e_before * (1.0 - rp->e_before)); /* de/da = e (1 - e) */
            if (has[1]) {
                rp->mu_grad = g[1] / rp->mu_before; /* dmu/da = mu */
                rp->plateau = g[1] == 0.0;
            }
            if (!opts->refit.all && !opts->refit.profile) /* profile: every pair */
                for (int which = 0; which < 2; which++) search_it[which] = search_it[which] && g[which] == 0.0;
        }
        rp->searched = steps[p] >= opts->refit.min_steps && r.n_sel > 0 && (search_it[0] || search_it[1]);
        int changed = 0;
        const double e_raw = *es, mu_raw = ms ? *ms : 0.0;
        if (rp->searched) {
            double L = set_loss(&r, r.sel, r.n_sel);
            if (r.status) goto failed;
            r.pair = p;
            for (int which = 1; which >= 0; which--) { /* mu, then e */
                if (!search_it[which]) continue;
                r.which = which;
                double *a = slot(&r, p, which), a0 = *a, x = NAN;
                double f = search(&r, &x);
                if (r.status) {
                    *a = a0;
                    goto failed;
                }
                if (opts->refit.profile) {
                    *a = a0;
                    if (which) rp->mu_after = x;
                    else rp->e_after = x;
                    continue;
                }
                if (f < L) {
                    *a = imp_model_law_raw(which, x);
                    L = f;
                    changed = 1;
                } else {
                    *a = a0;
                }
            }
        }
        if (changed) { /* kept only if the loss over every window agrees */
            double L = full_loss(&r, opts->l2);
            if (r.status) goto failed;
            if (L < L_all) {
                L_all = L;
            } else {
                *es = e_raw;
                if (ms) *ms = mu_raw;
                changed = 0;
            }
        }
        if (!opts->refit.profile || !rp->searched) {
            rp->e_after = has[0] ? imp_model_law_value(0, *es) : rp->e_before;
            rp->mu_after = ms ? imp_model_law_value(1, *ms) : NAN;
        }
        /* the windows whose forward changed: every pair's activity there anew */
        if (changed && (st = activity(&r, r.sel, r.n_sel, NULL))) goto done;
    }
    rep->loss_after = L_all;
    rep->seconds = imp_time_now() - t0;
    goto done;
failed:
    st = r.status;
done:
    imp_cdl_pool_free(r.pool);
    imp_model_work_free(r.w);
    free(r.wins), free(r.all), free(r.sel), free(r.flag);
    free(r.x0), free(r.target), free(r.labels), free(r.weight), free(r.grad);
    return st;
}
