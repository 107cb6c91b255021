/* impulse's learned cube (#28): the rigid-body step with its contact
 * geometry (the body-fixed contact points), e, mu and the ground learned by
 * Adam on rollout windows of the training tosses through
 * imp_rigid_window_loss; the parameters kept are those with the lowest
 * full-toss error on the validation tosses (include/impulse/rigid_model.h,
 * docs/cube.md). */
#include "impulse/core.h"
#include "impulse/nn.h"
#include "impulse/rigid_model.h"
#include "core/nlopt_restarts.h"

#include <math.h>
#include <nlopt.h>
#include <stdlib.h>
#include <string.h>

#define LOG4 1.3862943611198906

void imp_rigid_learn_defaults(imp_rigid_learn_opts *o)
{
    memset(o, 0, sizeof *o);
    o->substeps = 2;
    o->window = 12;
    o->batch = 16;
    o->steps = 300;
    o->lr = 0.02;
    o->eval_every = 25;
    o->point_scale = 1e-3;
    o->ground_scale = 1e-3;
    o->learn_points = 1;
    o->seed = 0;
    o->fit_evals = 150;
    o->learn_inertia = 1;
    o->learn_dv0 = 0;
    o->select_inertia = 0; /* measured on the cube curve: not better at 64-256 tosses (docs/cube.md) */
    o->rot_weight = 1.0;
    /* the full-toss fit's MAP priors: chosen on the validation tosses of the cube curve among
       sd x0.5, x1, x2 of (1 mm, log 2), kept for a lower mean validation error over its 35 tasks
       (docs/cube.md); none on the corners (no better on validation) */
    o->prior_ground_sd = 0.002, o->prior_inertia_sd = LOG4, o->prior_point_sd = 0.0;
}

/* The learned parameters as one vector in Adam's units: physical value =
 * scale * p (e and mu in 1, the ground and the points in the opts' scales),
 * so that one learning rate moves each by a sensible amount. */
enum { P_E = 0, P_MU = 1, P_GROUND = 2, P_POINTS = 3 };

static void to_vec(const imp_rigid_model *m, const imp_rigid_learn_opts *o, double *p)
{
    p[P_E] = m->e, p[P_MU] = m->mu, p[P_GROUND] = m->ground / o->ground_scale;
    for (int k = 0; k < m->n_points; k++)
        for (int i = 0; i < 3; i++) p[P_POINTS + 3 * k + i] = m->points[k][i] / o->point_scale;
}

static void from_vec(imp_rigid_model *m, const imp_rigid_learn_opts *o, double *p)
{
    p[P_E] = fmin(fmax(p[P_E], 0.0), 1.0);
    p[P_MU] = fmin(fmax(p[P_MU], 0.0), 2.0);
    p[P_GROUND] = fmin(fmax(p[P_GROUND], -0.01 / o->ground_scale), 0.01 / o->ground_scale);
    m->e = p[P_E], m->mu = p[P_MU], m->ground = p[P_GROUND] * o->ground_scale;
    for (int k = 0; k < m->n_points; k++)
        for (int i = 0; i < 3; i++) m->points[k][i] = p[P_POINTS + 3 * k + i] * o->point_scale;
}

/* ---- the full-toss fit: x = (e, mu, ground, log inertia scale(s) (0, 1 or 3), dv0_z (learn_dv0)) ---- */
typedef struct full_fit {
    const imp_rigid_traj *t;
    const int *ep;
    int n, substeps, n_inertia, dv0;
    imp_rigid_model start;
    int evals;
    double prior_ground_sd, prior_inertia_sd; /* > 0: the MAP objective (imp_rigid_learn_opts) */
} full_fit;

static const double FIT_LO[3] = {0.0, 0.0, -0.01}, FIT_HI[3] = {1.0, 2.0, 0.01};

static void fit_bounds(const full_fit *c, unsigned dim, double *lo, double *hi, double *step)
{
    for (unsigned i = 0; i < dim; i++) {
        int k = (int)i - 3;
        lo[i] = i < 3 ? FIT_LO[i] : k < c->n_inertia ? -LOG4 : -0.2;
        hi[i] = i < 3 ? FIT_HI[i] : k < c->n_inertia ? LOG4 : 0.2;
        step[i] = i < 2 ? 0.2 : i == 2 ? 0.002 : k < c->n_inertia ? 0.3 : 0.03;
    }
}

static void full_fit_model(const full_fit *c, const double *x, imp_rigid_model *m)
{
    *m = c->start;
    m->e = fmin(fmax(x[0], FIT_LO[0]), FIT_HI[0]);
    m->mu = fmin(fmax(x[1], FIT_LO[1]), FIT_HI[1]);
    m->ground = fmin(fmax(x[2], FIT_LO[2]), FIT_HI[2]);
    for (int i = 0; i < 3 && c->n_inertia; i++)
        m->inertia[i] = c->start.inertia[i] * exp(fmin(fmax(x[3 + (c->n_inertia == 3 ? i : 0)], -LOG4), LOG4));
    if (c->dv0) m->dv0[2] = fmin(fmax(x[3 + c->n_inertia], -0.2), 0.2);
}

static double full_fit_loss(unsigned n, const double *x, double *grad, void *data)
{
    (void)n, (void)grad; /* derivative-free */
    full_fit *c = data;
    c->evals++;
    imp_rigid_model m;
    full_fit_model(c, x, &m);
    imp_rigid_model_ctx rc = {&m, c->t->dt, c->substeps};
    imp_rigid_metrics mt;
    if (imp_rigid_eval_rollouts(c->t, c->ep, c->n, imp_rigid_model_rollout_fn, &rc, m.ground, &mt)) {
        imp_clear_error();
        return 1e30;
    }
    double f = mt.position_error_pct + mt.rotation_error_deg;
    if (!isfinite(f)) return 1e30;
    if (!(c->prior_ground_sd > 0) && !(c->prior_inertia_sd > 0)) return f;
    /* MAP: the per-toss errors exponential with their scale profiled out
       (n log L), plus Gaussian priors (R / 2), divided by n */
    double R = 0;
    if (c->prior_ground_sd > 0) {
        double z = (m.ground - c->start.ground) / c->prior_ground_sd;
        R += z * z;
    }
    for (int i = 0; i < 3 && c->prior_inertia_sd > 0 && c->n_inertia; i++) {
        double z = log(m.inertia[i] / c->start.inertia[i]) / c->prior_inertia_sd;
        R += z * z;
    }
    return log(fmax(f, 1e-300)) + R / (2.0 * c->n);
}

/* m (in: the start, out: the fit); returns the training loss (1e30: none rolled out). */
static double full_toss_fit(const imp_rigid_traj *t, const int *train, int n_train, const imp_rigid_learn_opts *o,
                            int n_inertia, imp_rigid_model *m, int *evals)
{
    full_fit c = {t, train, n_train, o->substeps, n_inertia, o->learn_dv0, *m, 0, o->prior_ground_sd,
                  o->prior_inertia_sd};
    const unsigned dim = 3 + (unsigned)n_inertia + (unsigned)o->learn_dv0;
    double lo[7], hi[7], step0[7], best_x[7] = {m->e, m->mu, m->ground, 0, 0, 0, 0}, best_f = 1e30;
    fit_bounds(&c, dim, lo, hi, step0);
    if (o->learn_dv0) best_x[dim - 1] = m->dv0[2];
    int failed = 0;
    best_f = imp_nlopt_restarts(NLOPT_LN_NELDERMEAD, dim, lo, hi, step0, full_fit_loss, &c, &c.evals, o->fit_evals, best_x,
                                &failed);
    if (best_f < 1e29) {
        full_fit_model(&c, best_x, m);
        if (c.prior_ground_sd > 0 || c.prior_inertia_sd > 0) {
            /* the fit's plain training loss (position % + rotation deg) */
            imp_rigid_model_ctx rc = {m, t->dt, o->substeps};
            imp_rigid_metrics mt;
            if (imp_rigid_eval_rollouts(t, train, n_train, imp_rigid_model_rollout_fn, &rc, m->ground, &mt)) {
                imp_clear_error();
                best_f = 1e30;
            } else best_f = mt.position_error_pct + mt.rotation_error_deg;
        }
    }
    *evals = c.evals;
    return best_f;
}

static double valid_score(const imp_rigid_traj *t, const int *ep, int n, const imp_rigid_model *m, int substeps,
                          imp_rigid_metrics *mt)
{
    imp_rigid_model_ctx rc = {m, t->dt, substeps};
    if (imp_rigid_eval_rollouts(t, ep, n, imp_rigid_model_rollout_fn, &rc, m->ground, mt)) {
        imp_clear_error();
        return INFINITY;
    }
    double s = mt->position_error_pct + mt->rotation_error_deg;
    return isfinite(s) ? s : INFINITY;
}

int imp_rigid_learn(const imp_rigid_traj *t, const int *train, int n_train, const int *valid, int n_valid,
                    const imp_rigid_learn_opts *o, imp_rigid_model *m, imp_rigid_learn_report *rep)
{
    if (!t || !train || !o || !m) return imp_fail(IMP_ERR_INVALID, "rigid learn: NULL");
    if (n_train < 1) return imp_fail(IMP_ERR_INVALID, "rigid learn: no training episodes");
    if (n_valid < 0 || (n_valid > 0 && !valid)) return imp_fail(IMP_ERR_INVALID, "rigid learn: n_valid %d", n_valid);
    if (o->substeps < 1) return imp_fail(IMP_ERR_INVALID, "rigid learn: substeps %d is not >= 1", o->substeps);
    if (o->window < 2 || o->window > IMP_RIGID_MAX_WINDOW)
        return imp_fail(IMP_ERR_INVALID, "rigid learn: window %d is not in 2..%d", o->window, IMP_RIGID_MAX_WINDOW);
    if (o->batch < 1) return imp_fail(IMP_ERR_INVALID, "rigid learn: batch %d is not >= 1", o->batch);
    if (o->steps < 0) return imp_fail(IMP_ERR_INVALID, "rigid learn: steps %d is not >= 0", o->steps);
    if (o->eval_every < 1) return imp_fail(IMP_ERR_INVALID, "rigid learn: eval_every %d is not >= 1", o->eval_every);
    if (o->fit_evals < 0) return imp_fail(IMP_ERR_INVALID, "rigid learn: fit_evals %d is not >= 0", o->fit_evals);
    if (o->learn_dv0 != 0 && o->learn_dv0 != 1)
        return imp_fail(IMP_ERR_INVALID, "rigid learn: learn_dv0 %d is not 0 or 1", o->learn_dv0);
    if (o->learn_inertia != 0 && o->learn_inertia != 1 && o->learn_inertia != 3)
        return imp_fail(IMP_ERR_INVALID, "rigid learn: learn_inertia %d is not 0, 1 or 3", o->learn_inertia);
    if (o->select_inertia != 0 && o->select_inertia != 1)
        return imp_fail(IMP_ERR_INVALID, "rigid learn: select_inertia %d is not 0 or 1", o->select_inertia);
    if (!(o->rot_weight >= 0) || !isfinite(o->rot_weight))
        return imp_fail(IMP_ERR_INVALID, "rigid learn: rot_weight %g is not >= 0", o->rot_weight);
    if (!(o->prior_ground_sd >= 0) || !isfinite(o->prior_ground_sd) || !(o->prior_inertia_sd >= 0) ||
        !isfinite(o->prior_inertia_sd))
        return imp_fail(IMP_ERR_INVALID, "rigid learn: prior_ground_sd %g and prior_inertia_sd %g must be >= 0",
                        o->prior_ground_sd, o->prior_inertia_sd);
    if (!(o->prior_point_sd >= 0) || !isfinite(o->prior_point_sd))
        return imp_fail(IMP_ERR_INVALID, "rigid learn: prior_point_sd %g is not >= 0", o->prior_point_sd);
    if (!(o->lr > 0) || !(o->point_scale > 0) || !(o->ground_scale > 0))
        return imp_fail(IMP_ERR_INVALID, "rigid learn: lr, point_scale and ground_scale must be > 0");
    int st = imp_rigid_model_check(m);
    if (st) return st;
    for (int k = 0; k < n_train; k++)
        if (train[k] < 0 || train[k] >= t->n_episodes || t->lengths[train[k]] < 2)
            return imp_fail(IMP_ERR_INVALID, "rigid learn: training episode %d is not in the data or too short",
                            train[k]);
    /* validation on full tosses: the validation set, else the training set */
    const int *vep = n_valid > 0 ? valid : train;
    const int nv = n_valid > 0 ? n_valid : n_train;
    const int np = P_POINTS + 3 * m->n_points;
    double p[P_POINTS + 3 * IMP_RIGID_MAX_POINTS], gp[P_POINTS + 3 * IMP_RIGID_MAX_POINTS];
    imp_adam opt;
    if ((st = imp_adam_init(&opt, (size_t)np, o->lr, 0.9, 0.999, 1e-8, 0.0))) return st;
    const double width = t->body.size[0];
    const double t0 = imp_time_now();
    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    double fit_loss = NAN, fit_valid[2] = {NAN, NAN};
    int fit_evals = 0, inertia_kept = o->learn_inertia;
    imp_rigid_metrics mt = {NAN, NAN, NAN};
    if (o->fit_evals > 0) {
        const imp_rigid_model start = *m;
        fit_loss = full_toss_fit(t, train, n_train, o, o->learn_inertia, m, &fit_evals);
        if (o->learn_inertia && o->select_inertia) {
            /* the same fit with the start's inertia; the validation tosses'
               full-toss error chooses (a tie keeps the start's inertia) */
            imp_rigid_model nom = start;
            int ev = 0;
            double nl = full_toss_fit(t, train, n_train, o, 0, &nom, &ev);
            fit_evals += ev;
            fit_valid[0] = valid_score(t, vep, nv, &nom, o->substeps, &mt);
            fit_valid[1] = valid_score(t, vep, nv, m, o->substeps, &mt);
            if (!(fit_valid[1] < fit_valid[0]) && nl < 1e29) *m = nom, fit_loss = nl, inertia_kept = 0;
        }
        if (!(fit_loss < 1e29)) fit_loss = NAN;
    }
    imp_rigid_model cur = *m, best = *m;
    double start_points[IMP_RIGID_MAX_POINTS][3];
    memcpy(start_points, m->points, sizeof start_points);
    to_vec(&cur, o, p);
    double best_score = valid_score(t, vep, nv, &cur, o->substeps, &mt), last_loss = NAN;
    imp_rigid_metrics best_mt = mt;
    int best_step = 0, skipped = 0;
    for (int step = 1; step <= o->steps; step++) {
        imp_rigid_model_grad g;
        memset(&g, 0, sizeof g);
        double L = 0;
        int used = 0;
        for (int b = 0; b < o->batch; b++) {
            int ep = train[imp_rng_below(&rng, (size_t)n_train)];
            size_t len = (size_t)t->lengths[ep], w = len < (size_t)o->window ? len : (size_t)o->window;
            size_t a = imp_rng_below(&rng, len - w + 1);
            const double *meas = t->states + 13 * (imp_rigid_traj_offset(t, ep) + a);
            imp_rigid_model_grad gw;
            memset(&gw, 0, sizeof gw);
            double lw = 0;
            if (imp_rigid_window_loss_w(&cur, t->dt, o->substeps, meas, w, width, o->rot_weight, &lw, &gw, NULL) ||
                !isfinite(lw)) {
                imp_clear_error();
                skipped++;
                continue;
            }
            L += lw, used++;
            g.e += gw.e, g.mu += gw.mu, g.ground += gw.ground;
            for (int k = 0; k < cur.n_points; k++)
                for (int i = 0; i < 3; i++) g.points[k][i] += gw.points[k][i];
        }
        if (used) {
            gp[P_E] = g.e / used, gp[P_MU] = g.mu / used, gp[P_GROUND] = g.ground * o->ground_scale / used;
            for (int k = 0; k < cur.n_points; k++)
                for (int i = 0; i < 3; i++) gp[P_POINTS + 3 * k + i] = g.points[k][i] * o->point_scale / used;
            if (o->prior_point_sd > 0) {
                /* MAP: d/dp of log(L) + R / (2 n_train) (the fit's form), times L: the window
                   loss's gradient plus L / n_train (p - p_start) / sd^2 */
                const double c = L / used / n_train / (o->prior_point_sd * o->prior_point_sd);
                for (int k = 0; k < cur.n_points; k++)
                    for (int i = 0; i < 3; i++)
                        gp[P_POINTS + 3 * k + i] += c * (cur.points[k][i] - start_points[k][i]) * o->point_scale;
            }
            int finite = 1;
            for (int i = 0; i < np; i++) finite &= isfinite(gp[i]);
            if (finite) {
                if (!o->learn_points)
                    for (int i = P_POINTS; i < np; i++) gp[i] = 0;
                imp_adam_step(&opt, p, gp, imp_cosine_lr(o->lr, o->lr / 10, step - 1, o->steps));
                from_vec(&cur, o, p);
                last_loss = L / used;
            }
        }
        if (step % o->eval_every == 0 || step == o->steps) {
            double s = valid_score(t, vep, nv, &cur, o->substeps, &mt);
            if (s < best_score) best_score = s, best = cur, best_step = step, best_mt = mt;
        }
    }
    imp_adam_free(&opt);
    *m = best;
    if (rep) {
        rep->best_step = best_step;
        rep->valid_score = best_score;
        rep->train_loss = last_loss;
        rep->skipped_windows = skipped;
        rep->seconds = imp_time_now() - t0;
        rep->fit_evals = fit_evals;
        rep->fit_loss = fit_loss;
        rep->fit_valid_nominal = fit_valid[0];
        rep->fit_valid_inertia = fit_valid[1];
        rep->inertia_kept = inertia_kept;
        rep->valid_position_pct = best_mt.position_error_pct;
        rep->valid_rotation_deg = best_mt.rotation_error_deg;
    }
    if (!isfinite(best_score)) return imp_fail(IMP_ERR_NUMERIC, "rigid learn: no parameters could roll out the tosses");
    return IMP_OK;
}
