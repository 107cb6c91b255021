/* rigid-identified (#28): e, mu and the ground of the rigid-body step fitted
 * on training tosses by NLopt's bounded Nelder-Mead (or BOBYQA) search on the
 * full-toss loss
 * (include/impulse/rigid_model.h, docs/cube.md). */
#include "impulse/core.h"
#include "impulse/rigid_model.h"
#include "core/nlopt_restarts.h"

#include <math.h>
#include <nlopt.h>
#include <string.h>

void imp_rigid_ident_defaults(imp_rigid_ident_opts *o, const imp_rigid_traj *t)
{
    o->substeps = 4;
    o->window = 0;
    o->max_evals = 100;
    o->e0 = 0.3, o->mu0 = 0.3, o->ground0 = t->ground_height;
    o->algorithm = IMP_RIGID_IDENT_NELDERMEAD;
}

typedef struct fit_ctx {
    const imp_rigid_traj *t;
    const int *ep;
    int n;
    int substeps, window;
    imp_rigid_model m;
    int evals;
} fit_ctx;

static const double LO[3] = {0.0, 0.0, -0.01}, HI[3] = {1.0, 2.0, 0.01};

static double fit_loss(fit_ctx *c, const double x[3], imp_rigid_metrics *mt)
{
    c->evals++;
    imp_rigid_model m = c->m;
    m.e = fmin(fmax(x[0], LO[0]), HI[0]);
    m.mu = fmin(fmax(x[1], LO[1]), HI[1]);
    m.ground = fmin(fmax(x[2], LO[2]), HI[2]);
    imp_rigid_model_ctx rc = {&m, c->t->dt, c->substeps};
    imp_rigid_metrics local;
    if (!mt) mt = &local;
    if (c->window == 0) {
        if (imp_rigid_eval_rollouts(c->t, c->ep, c->n, imp_rigid_model_rollout_fn, &rc, m.ground, mt)) return 1e30;
        return mt->position_error_pct + mt->rotation_error_deg;
    }
    /* windows of `window` samples starting every window/2 samples of each episode */
    double out[13 * IMP_RIGID_MAX_WINDOW], sp = 0, sr = 0, spen = 0;
    int nw = 0, stride = c->window > 1 ? c->window / 2 : 1;
    for (int k = 0; k < c->n; k++) {
        size_t off = imp_rigid_traj_offset(c->t, c->ep[k]), len = (size_t)c->t->lengths[c->ep[k]];
        for (size_t a = 0; a + 1 < len; a += (size_t)stride) {
            size_t w = len - a < (size_t)c->window ? len - a : (size_t)c->window;
            const double *meas = c->t->states + 13 * (off + a);
            imp_rigid_metrics one;
            if (imp_rigid_model_rollout(&m, c->t->dt, c->substeps, meas, w, out) ||
                imp_rigid_metrics_episode(out, meas, w, &c->t->body, m.ground, &one))
                return 1e30;
            sp += one.position_error_pct, sr += one.rotation_error_deg, spen += one.penetration_pct, nw++;
        }
    }
    if (nw == 0) return 1e30;
    mt->position_error_pct = sp / nw, mt->rotation_error_deg = sr / nw, mt->penetration_pct = spen / nw;
    return mt->position_error_pct + mt->rotation_error_deg;
}

static double nlopt_loss(unsigned n, const double *x, double *grad, void *data)
{
    (void)n, (void)grad; /* derivative-free */
    return fit_loss(data, x, NULL);
}

int imp_rigid_identify(const imp_rigid_traj *t, const int *episodes, int n_episodes, const imp_rigid_ident_opts *o,
                       imp_rigid_model *m, imp_rigid_ident_result *res)
{
    if (n_episodes < 1) return imp_fail(IMP_ERR_INVALID, "rigid identify: no training episodes");
    if (o->window < 0 || o->window == 1 || o->window > IMP_RIGID_MAX_WINDOW)
        return imp_fail(IMP_ERR_INVALID, "rigid identify: window %d is not 0 (full tosses) or 2..%d", o->window,
                        IMP_RIGID_MAX_WINDOW);
    if (o->max_evals < 4) return imp_fail(IMP_ERR_INVALID, "rigid identify: max_evals %d is not >= 4", o->max_evals);
    fit_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t, c.ep = episodes, c.n = n_episodes, c.substeps = o->substeps, c.window = o->window;
    imp_rigid_model_box(&c.m, &t->body, o->e0, o->mu0, o->ground0, t->gravity);
    int st = imp_rigid_model_check(&c.m);
    if (st) return st;
    /* NLopt's bounded derivative-free search in (e, mu, ground), restarted
       from the best point with smaller initial steps (src/core/nlopt_restarts.h) */
    const double step0[3] = {0.2, 0.2, 0.002};
    double best_x[3] = {o->e0, o->mu0, o->ground0};
    const nlopt_algorithm alg = o->algorithm == IMP_RIGID_IDENT_BOBYQA ? NLOPT_LN_BOBYQA : NLOPT_LN_NELDERMEAD;
    int failed = 0;
    double best_f = imp_nlopt_restarts(alg, 3, LO, HI, step0, nlopt_loss, &c, &c.evals, o->max_evals, best_x, &failed);
    if (failed) return imp_fail(IMP_ERR_NOMEM, "rigid identify: NLopt: no optimiser");
    *m = c.m;
    m->e = best_x[0], m->mu = best_x[1], m->ground = best_x[2];
    if (res) {
        res->loss = fit_loss(&c, best_x, &res->train);
        res->evals = c.evals;
    }
    if (!(best_f < 1e29)) return imp_fail(IMP_ERR_NUMERIC, "rigid identify: no parameters could roll out the tosses");
    return IMP_OK;
}
