/* rigid-identified (#28): e, mu and the ground of the rigid-body step fitted
 * on training tosses by a bounded Nelder-Mead search on the full-toss loss
 * (include/impulse/rigid_model.h, docs/cube.md). */
#include "impulse/core.h"
#include "impulse/rigid_model.h"

#include <math.h>
#include <string.h>

void imp_rigid_ident_defaults(imp_rigid_ident_opts *o, const imp_rigid_traj *t)
{
    o->substeps = 4;
    o->window = 0;
    o->max_evals = 100;
    o->e0 = 0.3, o->mu0 = 0.3, o->ground0 = t->ground_height;
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
    /* Nelder-Mead in (e, mu, ground), coordinates scaled by the initial steps */
    const double step0[3] = {0.2, 0.2, 0.002};
    double X[4][3], F[4], best_x[3] = {o->e0, o->mu0, o->ground0}, best_f = 1e300;
    /* restarted from the best point with smaller steps while rollouts remain
       (a collapsed simplex can stall one coordinate) */
    for (int restart = 0; restart < 4 && c.evals + 4 < o->max_evals; restart++) {
    double step[3];
    for (int i = 0; i < 3; i++) step[i] = step0[i] / (1 << (2 * restart));
    for (int k = 0; k < 4; k++) {
        memcpy(X[k], best_x, sizeof best_x);
        if (k > 0) X[k][k - 1] += (X[k][k - 1] + step[k - 1] > HI[k - 1] ? -1 : 1) * step[k - 1];
        F[k] = k == 0 && best_f < 1e300 ? best_f : fit_loss(&c, X[k], NULL);
    }
    while (c.evals < o->max_evals) {
        /* order */
        for (int i = 1; i < 4; i++)
            for (int j = i; j > 0 && F[j] < F[j - 1]; j--) {
                double tf = F[j];
                F[j] = F[j - 1], F[j - 1] = tf;
                double tx[3];
                memcpy(tx, X[j], sizeof tx), memcpy(X[j], X[j - 1], sizeof tx), memcpy(X[j - 1], tx, sizeof tx);
            }
        double size = 0;
        for (int k = 1; k < 4; k++)
            for (int i = 0; i < 3; i++) size = fmax(size, fabs(X[k][i] - X[0][i]) / step[i]);
        if (size < 1e-3) break;
        double cen[3] = {0, 0, 0}, xr[3], xe[3], xc[3];
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++) cen[i] += X[k][i] / 3;
        for (int i = 0; i < 3; i++) xr[i] = fmin(fmax(cen[i] + (cen[i] - X[3][i]), LO[i]), HI[i]);
        double fr = fit_loss(&c, xr, NULL);
        if (fr < F[0]) {
            for (int i = 0; i < 3; i++) xe[i] = fmin(fmax(cen[i] + 2 * (cen[i] - X[3][i]), LO[i]), HI[i]);
            double fe = fit_loss(&c, xe, NULL);
            if (fe < fr) memcpy(X[3], xe, sizeof xe), F[3] = fe;
            else memcpy(X[3], xr, sizeof xr), F[3] = fr;
        } else if (fr < F[2]) {
            memcpy(X[3], xr, sizeof xr), F[3] = fr;
        } else {
            for (int i = 0; i < 3; i++) xc[i] = cen[i] + 0.5 * (X[3][i] - cen[i]);
            double fc = fit_loss(&c, xc, NULL);
            if (fc < F[3]) {
                memcpy(X[3], xc, sizeof xc), F[3] = fc;
            } else {
                for (int k = 1; k < 4; k++) {
                    for (int i = 0; i < 3; i++) X[k][i] = X[0][i] + 0.5 * (X[k][i] - X[0][i]);
                    F[k] = fit_loss(&c, X[k], NULL);
                }
            }
        }
    }
    for (int k = 0; k < 4; k++)
        if (F[k] < best_f) best_f = F[k], memcpy(best_x, X[k], sizeof best_x);
    }
    *m = c.m;
    m->e = best_x[0], m->mu = best_x[1], m->ground = best_x[2];
    if (res) {
        res->loss = fit_loss(&c, best_x, &res->train);
        res->evals = c.evals;
    }
    if (!(best_f < 1e29)) return imp_fail(IMP_ERR_NUMERIC, "rigid identify: no parameters could roll out the tosses");
    return IMP_OK;
}
