/* Evaluation of the constrained-network models as the reference does it
 * ([F] section 7 and appendix B, [chnn] section 3): DOPRI5 rollouts
 * (rtol 1e-7, atol 1e-9; a ResNet takes its own step once per sample
 * interval, imp_cmodel_discrete) from the first state of each test trajectory,
 * relative error over time on the full Cartesian state (x, v), its
 * per-trajectory geometric mean by the trapezoid rule, true-energy error,
 * and constraint violation |Psi(x, v)|. */
#include "impulse/chnn_models.h"
#include "impulse/constrained_contact.h"
#include "impulse/contact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_ceval_opts_default(imp_ceval_opts *o)
{
    o->n_test = 0;
    o->steps = 0;
    o->rtol = 1e-7;
    o->atol = 1e-9;
    o->max_steps_per_sample = IMP_CEVAL_STEPS_PER_SAMPLE;
    o->max_seconds = IMP_CEVAL_MAX_SECONDS;
    o->contact_rk4 = 0;
}

void imp_ceval_result_free(imp_ceval_result *r)
{
    if (!r) return;
    free(r->geo);
    free(r->rel_err);
    free(r->energy_err);
    free(r->violation);
    memset(r, 0, sizeof *r);
}

double imp_ceval_rel_err(const double *a, const double *b, int n)
{
    double dd = 0, na = 0, nb = 0;
    for (int i = 0; i < n; i++) {
        dd += (a[i] - b[i]) * (a[i] - b[i]);
        na += a[i] * a[i];
        nb += b[i] * b[i];
    }
    double den = sqrt(na) + sqrt(nb);
    return den > 0 ? sqrt(dd) / den : 0.0;
}

/* exp(dt trapz_k log(err_k + 1e-8) / T) with T = n dt: the trapezoid spans
 * (n - 1) dt but is divided by n dt, exactly as the reference notebooks. */
double imp_ceval_geo_mean(const double *err, int n)
{
    if (n < 2) return n == 1 ? err[0] + 1e-8 : 0.0;
    double s = 0;
    for (int k = 0; k + 1 < n; k++) s += 0.5 * (log(err[k] + 1e-8) + log(err[k + 1] + 1e-8));
    return exp(s / n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The wall-clock budget: the right-hand side fails once the deadline passed. */
typedef struct timed_ode {
    const imp_ode *ode;
    double deadline, seconds;
    long calls;
} timed_ode;

static int timed_rhs(void *user, double t, const double *y, int B, double *ydot)
{
    timed_ode *c = user;
    if (c->deadline > 0 && ++c->calls % 64 == 0 && imp_time_now() > c->deadline)
        return imp_fail(IMP_ERR_NUMERIC, "more than %g s of wall time (reached t = %g)", c->seconds, t);
    return c->ode->rhs(c->ode->user, t, y, B, ydot);
}

/* The batched rollout failed (budget, underflow, non-finite state): roll
 * the trajectories out one by one, with the same budget, to name the first
 * that fails; keep the batch's message if none fails alone. */
static int name_failing_rollout(const imp_ode *ode, const imp_dopri5_opts *dop, const double *y0, int n, int dim,
                                const double *t_out, int T, double *yout, const imp_cmodel *m, int per_sample)
{
    char batch_msg[512];
    snprintf(batch_msg, sizeof batch_msg, "%s", imp_last_error());
    const char *kind = imp_cmodel_kind_name(m->kind);
    if (n == 1)
        return imp_fail_context(IMP_ERR_NUMERIC,
                                "eval: the %s model's rollout of test trajectory 1 of 1 stopped "
                                "(budget %d steps per sample interval, %d intervals)", kind, per_sample, T - 1);
    timed_ode *timed = ode->user;
    for (int i = 0; i < n; i++) {
        if (timed->deadline > 0 && imp_time_now() > timed->deadline) break;
        imp_dopri5_stats stats;
        int st = imp_dopri5_solve(ode, dop, 0.0, y0 + (size_t)i * dim, 1, t_out, T, yout, &stats);
        if (st && strstr(imp_last_error(), "wall time")) break;
        if (st)
            return imp_fail_context(IMP_ERR_NUMERIC,
                                    "eval: the %s model's rollout of test trajectory %d of %d stopped "
                                    "(budget %d steps per sample interval, %d intervals)",
                                    kind, i + 1, n, per_sample, T - 1);
    }
    return imp_fail(IMP_ERR_NUMERIC,
                    "eval: the %s model's rollout of test trajectories 1-%d stopped (budget %d steps per "
                    "sample interval, %d intervals): %s", kind, n, per_sample, T - 1, batch_msg);
}

/* A non-finite mean: name the first trajectory and state where it starts. */
static int name_non_finite(const imp_ceval_result *r, const imp_cmodel *m)
{
    const char *kind = imp_cmodel_kind_name(m->kind);
    for (int i = 0; i < r->n_test; i++)
        for (int k = 0; k < r->T; k++) {
            size_t q = (size_t)i * r->T + k;
            const char *what = !isfinite(r->rel_err[q])      ? "relative error"
                               : !isfinite(r->energy_err[q]) ? "energy error"
                               : !isfinite(r->violation[q])  ? "constraint violation"
                                                             : NULL;
            if (what)
                return imp_fail(IMP_ERR_NUMERIC,
                                "eval: the %s model's %s is not finite on test trajectory %d at state %d "
                                "(the rollout overflows)", kind, what, i + 1, k);
        }
    return imp_fail(IMP_ERR_NUMERIC, "eval: the %s model's mean errors are not finite (overflow)", kind);
}

/* State k of a rollout is within IMP_CEVAL_IMPACT_WINDOW states of an
 * interval (ending at state j, acted[j]) in which the contact map acted. */
static int near_impact(const int *acted, int T, int k)
{
    for (int j = k - IMP_CEVAL_IMPACT_WINDOW; j <= k + IMP_CEVAL_IMPACT_WINDOW + 1; j++)
        if (j >= 1 && j < T && acted[j]) return 1;
    return 0;
}

/* ---- the impact map alone: the model's and the truth's from the truth's
 * pre-impact states ---- */
typedef struct map_ctx {
    const imp_cmodel *m;
    const double *params;
    imp_csys_work *w;
    double thr; /* a located impact counts when the truth loses more kinetic energy than this */
    imp_ceval_result *res;
    double sum_rel[2], sum_cmp[5];
    int st;
} map_ctx;

static double kinetic(const imp_csys *s, const double *x, const double *v)
{
    return imp_csys_energy(s, x, v) - imp_csys_potential(s, x);
}

/* Accumulates one located impact of the truth's simulator (the hook of
 * imp_chnn_simulate_contact_hook). */
static int map_event(void *user, double t, const double *pre, const double *post, const int *active, int n,
                     int resting)
{
    (void)t;
    map_ctx *c = user;
    const imp_csys *s = &c->m->sys.full;
    imp_ceval_result *r = c->res;
    int N = imp_csys_ndof(s), d = s->d;
    if (resting) {
        r->map_resting++;
        return IMP_OK;
    }
    const double *x = pre, *v = pre + N;
    double Tt = kinetic(s, x, v), lt = Tt - kinetic(s, post, post + N);
    if (!(lt > c->thr)) {
        r->map_elastic++;
        return IMP_OK;
    }
    double vm[IMP_CSYS_MAX_POINTS * 3], kin[2], A[(IMP_CSYS_MAX_CONTACTS * 3) * (IMP_CSYS_MAX_CONTACTS * 3)];
    int st = imp_cmodel_contact_impulse(c->m, c->params, x, v, active, n, vm, kin, A);
    if (st) return c->st = st;
    double ft = lt / Tt;
    double fm[2] = {(kin[0] - kin[1]) / kin[0], (Tt - kinetic(s, x, vm)) / Tt}; /* learned metric, true metric */
    imp_impact_energy *ie[2] = {&r->impact_map, &r->impact_map_true};
    for (int q = 0; q < 2; q++) {
        double rel = fabs(fm[q] - ft) / ft;
        ie[q]->impacts++;
        ie[q]->truth_lost += lt;
        ie[q]->model_lost += fm[q] * Tt;
        c->sum_rel[q] += rel;
        ie[q]->max_rel_error = fmax(ie[q]->max_rel_error, rel);
        if (rel <= 0.05) ie[q]->within_5pct++;
    }
    /* the first contact's compliance, the model's (top-left block of A) and the truth's */
    double J[3 * IMP_CSYS_MAX_POINTS * 3], PJ[3 * IMP_CSYS_MAX_POINTS * 3], At[9], Am[9];
    imp_csys_contact_frame(s, x, active[0], NULL, NULL, J);
    imp_csys_minv_ctx mc = {s, x, c->w};
    if ((st = imp_contact_compliance(At, PJ, J, d, N, imp_csys_contact_minv, &mc))) return c->st = st;
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++) Am[a * d + b] = A[(size_t)a * n * d + b];
    double tt[2] = {0, 0}, nt[2] = {0, 0}, diff = 0, norm = 0;
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++) {
            double um = Am[a * d + b] / Am[0], ut = At[a * d + b] / At[0];
            diff += (um - ut) * (um - ut);
            norm += ut * ut;
            if (a == b && a > 0) tt[0] += um / (d - 1), tt[1] += ut / (d - 1);
            if (a == 0 && b > 0) nt[0] += um * um, nt[1] += ut * ut;
        }
    c->sum_cmp[0] += tt[0];
    c->sum_cmp[1] += tt[1];
    c->sum_cmp[2] += sqrt(nt[0]);
    c->sum_cmp[3] += sqrt(nt[1]);
    c->sum_cmp[4] += sqrt(diff / norm);
    return IMP_OK;
}

/* res->impact_map, impact_map_true and the compliance means: the truth's
 * simulator re-run over every sample interval of the test data from the
 * truth's state at its start, and at each impact it locates (dissipating
 * more than 1e-4 of the trajectory's largest kinetic energy, the threshold
 * of imp_csys_impact_energy) the model's map applied to the same pre-impact
 * state. */
static int contact_impact_map(const imp_cmodel *m, const double *params, const imp_ctraj *test, int n, int T,
                              imp_ceval_result *res)
{
    const imp_csys *s = &m->sys.full;
    int cdim = test->dim, N = cdim / 2;
    map_ctx c = {m, params, imp_csys_work_new(s), 0, res, {0, 0}, {0, 0, 0, 0, 0}, IMP_OK};
    double *two = malloc(2 * (size_t)cdim * sizeof(double));
    int st = c.w && two ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "eval: impact map: out of memory");
    imp_impact_energy_opts io;
    imp_impact_energy_opts_default(&io);
    for (int i = 0; !st && i < n; i++) {
        const double *z = test->z + (size_t)i * test->T * cdim;
        double kmax = 0;
        for (int k = 0; k < T; k++) kmax = fmax(kmax, kinetic(s, z + (size_t)k * cdim, z + (size_t)k * cdim + N));
        c.thr = io.threshold * kmax;
        for (int k = 0; !st && k + 1 < T; k++) {
            st = imp_chnn_simulate_contact_hook(s, z + (size_t)k * cdim, test->dt, 1, NULL, two, NULL, map_event, &c);
            if (st) imp_fail_context(st, "eval: impact map, test trajectory %d, state %d", i + 1, k);
        }
    }
    for (int q = 0; !st && q < 2; q++) {
        imp_impact_energy *ie = q ? &res->impact_map_true : &res->impact_map;
        if (ie->impacts > 0) {
            ie->mean_rel_error = c.sum_rel[q] / ie->impacts;
            ie->rel_error = fabs(ie->model_lost - ie->truth_lost) / ie->truth_lost;
        }
    }
    if (!st && res->impact_map.impacts > 0) {
        double k = res->impact_map.impacts;
        res->compliance_tt_model = c.sum_cmp[0] / k;
        res->compliance_tt_truth = c.sum_cmp[1] / k;
        res->compliance_nt_model = c.sum_cmp[2] / k;
        res->compliance_nt_truth = c.sum_cmp[3] / k;
        res->compliance_rel_error = c.sum_cmp[4] / k;
    }
    imp_csys_work_free(c.w);
    free(two);
    return st;
}

/* The energy lost at the truth's impacts (imp_csys_impact_energy), for
 * one-step predictions from each of the truth's states and for the
 * rollouts yout ((k n + i) dim), each integrated as the rollouts (dop). */
static int contact_impact_energy(const imp_cmodel *m, const double *params, const imp_ctraj *test, int n, int T,
                                 const double *yout, const imp_dopri5_opts *dop,
                                 imp_ceval_result *res)
{
    const imp_csys *s = &m->sys.full;
    int dim = m->dim, cdim = test->dim;
    if (!m->cartesian || dim != cdim || 2 * imp_csys_ndof(s) != cdim)
        return imp_fail(IMP_ERR_SHAPE, "eval: impact energy: state size %d, model %d, system %d", cdim, dim,
                        2 * imp_csys_ndof(s));
    size_t len = (size_t)n * T * cdim;
    double *truth = malloc(len * sizeof(double)), *one = malloc(len * sizeof(double)),
           *roll = malloc(len * sizeof(double)), two[2 * 2 * IMP_CSYS_MAX_POINTS * 3];
    int st = truth && one && roll ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "eval: out of memory");
    if ((size_t)2 * cdim > sizeof two / sizeof two[0] && !st)
        st = imp_fail(IMP_ERR_SHAPE, "eval: impact energy: state size %d too large", cdim);
    for (int i = 0; !st && i < n; i++) {
        memcpy(truth + (size_t)i * T * cdim, test->z + (size_t)i * test->T * cdim, (size_t)T * cdim * sizeof(double));
        memcpy(one + (size_t)i * T * cdim, truth + (size_t)i * T * cdim, (size_t)cdim * sizeof(double));
        for (int k = 0; k < T; k++)
            memcpy(roll + ((size_t)i * T + k) * cdim, yout + ((size_t)k * n + i) * dim, (size_t)cdim * sizeof(double));
        for (int k = 0; !st && k + 1 < T; k++) {
            const double *zk = truth + ((size_t)i * T + k) * cdim;
            int acted[2];
            st = imp_cmodel_contact_rollout_dopri5(m, params, zk, 2, test->dt, dop, two, acted);
            if (st) {
                imp_fail_context(st, "eval: one-step prediction, test trajectory %d, state %d", i + 1, k);
                break;
            }
            memcpy(one + ((size_t)i * T + k + 1) * cdim, two + cdim, (size_t)cdim * sizeof(double));
            if (acted[1]) {
                int N = cdim / 2;
                double H0 = imp_csys_energy(s, zk, zk + N);
                res->map_steps++;
                res->map_truth_lost += H0 - imp_csys_energy(s, zk + cdim, zk + cdim + N);
                res->map_model_lost += H0 - imp_csys_energy(s, two + cdim, two + cdim + N);
                res->map_kinetic += H0 - imp_csys_potential(s, zk);
            }
        }
    }
    imp_impact_energy_opts io;
    imp_impact_energy_opts_default(&io);
    io.one_step = 1;
    if (!st) st = imp_csys_impact_energy(s, truth, one, n, T, &io, &res->impact_one_step, NULL, NULL, 0);
    io.one_step = 0;
    io.window = IMP_CEVAL_IMPACT_WINDOW;
    if (!st) st = imp_csys_impact_energy(s, truth, roll, n, T, &io, &res->impact_rollout, NULL, NULL, 0);
    if (!st) st = contact_impact_map(m, params, test, n, T, res);
    if (!st) res->has_contact = 1;
    free(truth);
    free(one);
    free(roll);
    return st;
}

int imp_ceval(const imp_cmodel *m, const double *params, const imp_ctraj *test,
              const imp_ceval_opts *o, imp_ceval_result *res)
{
    if (!m || !params || !test || !o || !res) return imp_fail(IMP_ERR_INVALID, "eval: NULL argument");
    const imp_csystem *cs = &m->sys;
    int nd = cs->n_points * cs->d, cdim = 2 * nd;
    if (test->dim != cdim)
        return imp_fail(IMP_ERR_SHAPE, "test data: state size %d does not match system %s (%d)", test->dim,
                        cs->name, cdim);
    memset(res, 0, sizeof *res);
    int n = o->n_test > 0 && o->n_test < test->n_traj ? o->n_test : test->n_traj;
    int T = o->steps > 0 && o->steps + 1 < test->T ? o->steps + 1 : test->T;
    int dim = m->dim;
    double t_start = imp_time_now();
    double *y0 = malloc((size_t)n * dim * sizeof(double));
    double *yout = malloc((size_t)T * n * dim * sizeof(double));
    double *t_out = malloc((size_t)T * sizeof(double));
    double *cart = malloc((size_t)cdim * sizeof(double));
    imp_cmodel_work *w = imp_cmodel_work_new(m, n);
    res->geo = malloc((size_t)n * sizeof(double));
    res->rel_err = malloc((size_t)n * T * sizeof(double));
    res->energy_err = malloc((size_t)n * T * sizeof(double));
    res->violation = malloc((size_t)n * T * sizeof(double));
    int st = IMP_OK, *acted = NULL;
    if (!y0 || !yout || !t_out || !cart || !w || !res->geo || !res->rel_err || !res->energy_err ||
        !res->violation) {
        st = imp_fail(IMP_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    res->n_test = n;
    res->T = T;
    for (int i = 0; i < n; i++) {
        const double *z0 = test->z + (size_t)i * test->T * cdim;
        if (m->cartesian) memcpy(y0 + (size_t)i * dim, z0, (size_t)cdim * sizeof(double));
        else if ((st = imp_csystem_to_generalised(cs, z0, y0 + (size_t)i * dim))) goto done;
    }
    for (int k = 0; k < T; k++) t_out[k] = k * test->dt;
    imp_cmodel_binding bind = {m, params, w};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    if (o->max_steps_per_sample < 0 || !(o->max_seconds >= 0)) {
        st = imp_fail(IMP_ERR_INVALID, "eval: max_steps_per_sample %d and max_seconds %g must be >= 0",
                      o->max_steps_per_sample, o->max_seconds);
        goto done;
    }
    int per_sample = o->max_steps_per_sample ? o->max_steps_per_sample : IMP_CEVAL_STEPS_PER_SAMPLE;
    imp_dopri5_opts dop = {o->rtol, o->atol, 0.0, (long)per_sample * (T - 1 > 10 ? T - 1 : 10)};
    timed_ode timed = {&ode, o->max_seconds > 0 ? imp_time_now() + o->max_seconds : 0.0, o->max_seconds, 0};
    imp_ode tode = ode;
    tode.user = &timed;
    tode.rhs = timed_rhs;
    imp_dopri5_stats stats;
    if (m->contact) {
        /* with contact: DOPRI5 over each sample interval (or training's one
         * RK4 step) and the contact map after it, trajectory by trajectory */
        double *one = malloc((size_t)T * dim * sizeof(double));
        acted = malloc((size_t)n * T * sizeof(int));
        imp_dopri5_opts cdop = {o->rtol, o->atol, 0.0, per_sample};
        if (!one || !acted) st = imp_fail(IMP_ERR_NOMEM, "eval: out of memory");
        for (int i = 0; !st && i < n; i++) {
            st = imp_cmodel_contact_rollout_dopri5(m, params, y0 + (size_t)i * dim, T, test->dt,
                                                   o->contact_rk4 ? NULL : &cdop, one, acted + (size_t)i * T);
            if (st) imp_fail_context(st, "eval: test trajectory %d", i + 1);
            for (int k = 0; !st && k < T; k++)
                memcpy(yout + ((size_t)k * n + i) * dim, one + (size_t)k * dim, (size_t)dim * sizeof(double));
        }
        free(one);
        if (!st) st = contact_impact_energy(m, params, test, n, T, yout, o->contact_rk4 ? NULL : &cdop, res);
        if (st) goto done;
    } else if (imp_cmodel_discrete(m)) {
        /* ResNet: its own step, once per sample interval (a non-finite
         * state is named below) */
        if ((st = imp_integrate_fixed(&imp_stepper_euler, &ode, 0.0, test->dt, T - 1, y0, n, yout))) {
            imp_fail_context(st, "eval: the %s model's rollout of %d test trajectories", imp_cmodel_kind_name(m->kind), n);
            goto done;
        }
    } else
        st = imp_dopri5_solve(&tode, &dop, 0.0, y0, n, t_out, T, yout, &stats);
    if (st) {
        st = name_failing_rollout(&tode, &dop, y0, n, dim, t_out, T, yout, m, per_sample);
        goto done;
    }
    double sum_geo = 0, sum_e = 0, sum_v = 0, sum_away = 0, sum_rel = 0, sum_rel_5 = 0;
    double phi[IMP_CSYS_MAX_ROWS], phid[IMP_CSYS_MAX_ROWS];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < T; k++) {
            const double *pred = yout + ((size_t)k * n + i) * dim;
            const double *truth = test->z + ((size_t)i * test->T + k) * cdim;
            if (m->cartesian) memcpy(cart, pred, (size_t)cdim * sizeof(double));
            else if ((st = imp_csystem_from_generalised(cs, pred, cart))) goto done;
            size_t r = (size_t)i * T + k;
            res->rel_err[r] = imp_ceval_rel_err(cart, truth, cdim);
            if (k > 0) sum_rel += res->rel_err[r], sum_rel_5 += k <= 5 ? res->rel_err[r] : 0.0;
            double Hp = imp_csystem_energy(cs, cart), Ht = imp_csystem_energy(cs, truth);
            double den = fabs(Hp) + fabs(Ht);
            res->energy_err[r] = den > 0 ? fabs(Hp - Ht) / den : 0.0;
            imp_csystem_violation(cs, cart, phi, phid);
            double vv = 0;
            for (int c = 0; c < cs->n_rows; c++) vv += phi[c] * phi[c] + phid[c] * phid[c];
            res->violation[r] = sqrt(vv);
            sum_e += res->energy_err[r];
            sum_v += res->violation[r];
            if (acted && !near_impact(acted + (size_t)i * T, T, k)) {
                sum_away += res->violation[r];
                res->violation_away_states++;
            }
        }
        res->geo[i] = imp_ceval_geo_mean(res->rel_err + (size_t)i * T, T);
        sum_geo += res->geo[i];
    }
    res->mean_geo = sum_geo / n;
    res->mean_energy_err = sum_e / ((double)n * T);
    res->mean_violation = sum_v / ((double)n * T);
    res->sum_rel_err_5 = sum_rel_5 / n, res->sum_rel_err = sum_rel / n;
    if (m->contact) res->mean_violation_away = res->violation_away_states ? sum_away / res->violation_away_states : NAN;
    if (!isfinite(res->mean_geo) || !isfinite(res->mean_energy_err) || !isfinite(res->mean_violation)) {
        st = name_non_finite(res, m);
        goto done;
    }
    memcpy(y0, res->geo, (size_t)n * sizeof(double)); /* y0 has >= n doubles */
    qsort(y0, (size_t)n, sizeof(double), cmp_double);
    res->median_geo = n % 2 ? y0[n / 2] : 0.5 * (y0[n / 2 - 1] + y0[n / 2]);
    res->seconds = imp_time_now() - t_start;
done:
    free(acted);
    free(y0);
    free(yout);
    free(t_out);
    free(cart);
    imp_cmodel_work_free(w);
    if (st) imp_ceval_result_free(res);
    return st;
}

int imp_cmodel_rollout(const imp_cmodel *m, const double *params, const double *x0, int n_states, double dt,
                       const imp_ceval_opts *opts, double *out)
{
    if (!m || !params || !x0 || !out) return imp_fail(IMP_ERR_INVALID, "rollout: NULL argument");
    if (n_states < 1) return imp_fail(IMP_ERR_INVALID, "steps: %d states, need at least 1", n_states);
    if (!(dt > 0) || !isfinite(dt)) return imp_fail(IMP_ERR_INVALID, "dt: %g must be positive", dt);
    imp_ceval_opts def;
    imp_ceval_opts_default(&def);
    if (!opts) opts = &def;
    const imp_csystem *cs = &m->sys;
    int cdim = 2 * cs->n_points * cs->d, dim = m->dim;
    int st = imp_check_finite(x0, (size_t)cdim, "initial state");
    if (st) return st;
    double *y0 = malloc((size_t)dim * sizeof(double));
    double *y = malloc((size_t)n_states * dim * sizeof(double));
    double *t = malloc((size_t)n_states * sizeof(double));
    imp_cmodel_work *w = imp_cmodel_work_new(m, 1);
    if (!y0 || !y || !t || !w) st = imp_fail(IMP_ERR_NOMEM, "rollout: out of memory");
    if (!st) {
        if (m->cartesian) memcpy(y0, x0, (size_t)cdim * sizeof(double));
        else st = imp_csystem_to_generalised(cs, x0, y0);
    }
    if (!st) {
        for (int k = 0; k < n_states; k++) t[k] = k * dt;
        imp_cmodel_binding bind = {m, params, w};
        imp_ode ode;
        imp_cmodel_ode(&ode, &bind);
        imp_dopri5_opts dop = {opts->rtol, opts->atol, 0.0, 0};
        imp_dopri5_stats stats;
        st = m->contact               ? imp_cmodel_contact_rollout_dopri5(m, params, y0, n_states, dt,
                                                                          opts->contact_rk4 ? NULL : &dop, y, NULL)
             : imp_cmodel_discrete(m) ? imp_integrate_fixed(&imp_stepper_euler, &ode, 0.0, dt, n_states - 1, y0, 1, y)
                                      : imp_dopri5_solve(&ode, &dop, 0.0, y0, 1, t, n_states, y, &stats);
        if (st) imp_fail_context(st, "rollout of %s", imp_cmodel_kind_name(m->kind));
    }
    for (int k = 0; !st && k < n_states; k++) {
        if (m->cartesian) memcpy(out + (size_t)k * cdim, y + (size_t)k * dim, (size_t)cdim * sizeof(double));
        else st = imp_csystem_from_generalised(cs, y + (size_t)k * dim, out + (size_t)k * cdim);
    }
    if (!st) st = imp_check_finite(out, (size_t)n_states * cdim, "rollout states");
    free(y0);
    free(y);
    free(t);
    imp_cmodel_work_free(w);
    return st;
}
