/* The contact section of a sweep report (docs/contact.md): per contact
 * system (strand=contact) a table of rollout RMSE per configuration (mean ±
 * standard error over seeds), in how many seeds CD-Lagrange is first, the
 * lowest gap any rollout reached, and each CD-Lagrange configuration's
 * learned e and mu per contact against the truth with the contact's impacts
 * in the training data; figures of the RMSE and of learned against true e
 * and mu. Then the constrained systems' networks (strand=chnn tasks on the
 * contact plan's constrained systems): relative state error summed over the
 * first 5 steps and over the whole rollout; and the simulated box tosses
 * (strand=cube with simulate=box-toss): fitted e and mu against the truth,
 * position error and penetration. And the same as JSON lines
 * (imp_sweep_contact_rows, impulse reproduce contact --json). */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"
#include "impulse/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E_TOL 0.03   /* issue 24's bar on learned e and mu */
#define E_TOL_CONSTRAINED 0.02 /* issue 25's */
#define MIN_IMPACTS 5 /* contacts with fewer training impacts are not held to it */

/* A finished contact task's arrays. */
typedef struct contact_res {
    int ok;
    sweep_contact_settings s;
    const double *metrics, *e, *mu, *e_true, *mu_true, *impacts, *pairs, *normals; /* the last three may be NULL */
    int P, d;
    double tol; /* the bar on |learned - true| */
} contact_res;

static const double *f64(const imp_npz *z, const char *name, size_t count)
{
    const imp_npy_array *a = z ? imp_npz_find(z, name) : NULL;
    return a && a->dtype == IMP_F64 && a->count == count ? a->data : NULL;
}

static int contact_read(const sweep_result *r, contact_res *c)
{
    memset(c, 0, sizeof *c);
    const char *strand = imp_sweep_task_get(r->task, "strand");
    if (!strand || strcmp(strand, "contact")) return 0;
    if (sweep_contact_read(r->task, &c->s)) { /* its error is listed under 'Not done' */
        imp_clear_error();
        return 0;
    }
    const imp_npy_array *e = r->z ? imp_npz_find(r->z, "e") : NULL, *nm = r->z ? imp_npz_find(r->z, "normals") : NULL;
    if (!e || !nm || nm->ndim != 2) return 1; /* planned, not done */
    c->P = (int)e->count, c->d = (int)nm->shape[1];
    size_t P = (size_t)c->P;
    c->metrics = f64(r->z, "metrics", SWEEP_CONTACT_NMETRICS);
    c->e = f64(r->z, "e", P), c->mu = f64(r->z, "mu", P);
    c->e_true = f64(r->z, "e_true", P), c->mu_true = f64(r->z, "mu_true", P);
    c->impacts = f64(r->z, "impacts", P), c->pairs = f64(r->z, "pairs", 2 * P);
    c->normals = f64(r->z, "normals", P * c->d);
    c->ok = c->P >= 1 && c->P <= IMP_MAX_CONTACTS && c->d >= 1 && c->metrics && c->e && c->mu && c->e_true && c->mu_true && c->impacts && c->pairs && c->normals;
    c->tol = E_TOL;
    return 1;
}

/* A constrained task's learned contact law (a chnn result with the arrays
 * e and e_true per contact, and mu and mu_true where it learns friction;
 * impacts, pairs and normals optional): 1 if it has one. */
static int constrained_law_read(const sweep_result *r, contact_res *c)
{
    memset(c, 0, sizeof *c);
    const imp_npy_array *e = r->z ? imp_npz_find(r->z, "e") : NULL;
    if (!e || e->count < 1 || e->count > IMP_MAX_CONTACTS) return 0;
    size_t P = e->count;
    c->P = (int)P, c->d = 0;
    c->e = f64(r->z, "e", P), c->e_true = f64(r->z, "e_true", P);
    c->mu = f64(r->z, "mu", P), c->mu_true = f64(r->z, "mu_true", P);
    c->impacts = f64(r->z, "impacts", P);
    c->s.system = imp_sweep_task_get(r->task, "system");
    c->s.config = imp_sweep_task_get(r->task, "model");
    c->s.friction = c->mu && c->mu_true;
    c->tol = E_TOL_CONSTRAINED;
    c->ok = c->e && c->e_true && c->s.system && c->s.config;
    return c->ok;
}

/* A contact pair's name: a wall by its normal, else the two bodies. */
static void pair_name(const contact_res *c, int p, char *buf, size_t cap)
{
    if (!c->pairs || !c->normals) {
        snprintf(buf, cap, "contact %d", p);
        return;
    }
    int i = (int)c->pairs[2 * p], j = (int)c->pairs[2 * p + 1];
    const double *n = c->normals + (size_t)p * c->d;
    if (i >= 0) {
        snprintf(buf, cap, "bodies %d-%d", i, j);
        return;
    }
    const char *wall = "wall";
    if (c->d >= 2) {
        double nx = n[0], ny = n[c->d - 1];
        wall = ny > 0.9 ? "floor" : ny < -0.9 ? "ceiling" : nx > 0.9 ? "left wall" : nx < -0.9 ? "right wall" : "wall";
    }
    snprintf(buf, cap, "body %d, %s", j, wall);
}

static int is_cdl(const contact_res *c) { return c->s.kind == IMP_MODEL_CDL; }

/* A task's setting, "" when absent (a hand-written plan may leave one out). */
static const char *key(const sweep_result *r, const char *k)
{
    const char *v = imp_sweep_task_get(r->task, k);
    return v ? v : "";
}

/* The per-contact table of one configuration's learned contact law on a system. */
static int law_table(const contact_res *c, int n, const char *system, const char *config, char **md, size_t *len,
                     const char *dir, const char *stem)
{
    int first = -1, runs = 0;
    for (int i = 0; i < n; i++)
        if (c[i].ok && !strcmp(c[i].s.system, system) && !strcmp(c[i].s.config, config)) {
            if (first < 0) first = i;
            runs += c[i].P == c[first].P;
        }
    if (first < 0) return IMP_OK;
    const int P = c[first].P;
    const int fr = c[first].s.friction != 0;
    const double tol = c[first].tol;
    double *v = malloc(sizeof(double) * (size_t)(runs * 2 + 1) + 1);
    double *fig = malloc(sizeof(double) * (size_t)P * 6 + 1);
    if (!v || !fig) {
        free(v), free(fig);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    int st = sweep_appendf(md, len,
                           "\n%s on %s: learned e%s per contact, mean ± standard error over %d run%s; worst: the "
                           "largest |learned - true| over the runs (✓ within %.2f); impacts: labelled impacts of the "
                           "contact in the training data\n\n| pair | contact | impacts | e true | e learned | worst "
                           "|e err| |%s\n|---|---|---|---|---|---|%s\n",
                           config, system, fr ? " and mu" : "", runs, runs == 1 ? "" : "s", tol,
                           fr ? " mu true | mu learned | worst |mu err| |" : "", fr ? "---|---|---|" : "");
    int held = 0, e_ok = 0, mu_ok = 0;
    char e_list[512] = "", mu_list[512] = "", few[1024] = "";
    for (int p = 0; p < P && !st; p++) {
        double worst[2] = {0, 0}, mean[2], se[2];
        for (int q = 0; q < 1 + fr; q++) {
            int k = 0;
            for (int i = 0; i < n; i++) {
                if (!c[i].ok || strcmp(c[i].s.system, system) || strcmp(c[i].s.config, config) || c[i].P != P) continue;
                double x = q ? c[i].mu[p] : c[i].e[p], truth = q ? c[i].mu_true[p] : c[i].e_true[p];
                v[k++] = x;
                double err = fabs(x - truth);
                if (!(err <= worst[q])) worst[q] = err; /* NaN stays */
            }
            sweep_mean_se(v, k, &mean[q], &se[q]);
        }
        char name[64], cell[2][64];
        pair_name(&c[first], p, name, sizeof name);
        for (int q = 0; q < 1 + fr; q++) sweep_fmt_mean_se(cell[q], sizeof cell[q], mean[q], se[q], runs);
        double imp = c[first].impacts ? c[first].impacts[p] : NAN;
        int enough = !(imp < MIN_IMPACTS); /* unknown: held to the bar */
        char imps[32];
        if (isnan(imp)) snprintf(imps, sizeof imps, "n/a");
        else snprintf(imps, sizeof imps, "%.0f%s", imp, enough ? "" : " (< 5)");
        st = sweep_appendf(md, len, "| %d | %s | %s | %.3f | %s | %.3f%s |", p, name, imps, c[first].e_true[p], cell[0],
                           worst[0], worst[0] <= tol ? " ✓" : "");
        if (!st && fr)
            st = sweep_appendf(md, len, " %.3f | %s | %.3f%s |", c[first].mu_true[p], cell[1], worst[1],
                               worst[1] <= tol ? " ✓" : "");
        if (!st) st = sweep_appendf(md, len, "\n");
        if (enough) {
            held++;
            if (worst[0] <= tol) e_ok++, snprintf(e_list + strlen(e_list), sizeof e_list - strlen(e_list), "%s%d", e_ok > 1 ? ", " : "", p);
            if (fr && worst[1] <= tol) mu_ok++, snprintf(mu_list + strlen(mu_list), sizeof mu_list - strlen(mu_list), "%s%d", mu_ok > 1 ? ", " : "", p);
        } else {
            size_t l = strlen(few);
            snprintf(few + l, sizeof few - l, "%s%d (%s: %.0f)", l ? ", " : "", p, name, imp);
        }
        fig[p] = c[first].e_true[p], fig[P + p] = mean[0], fig[2 * P + p] = se[0];
        fig[3 * P + p] = fr ? c[first].mu_true[p] : NAN, fig[4 * P + p] = fr ? mean[1] : NAN;
        fig[5 * P + p] = fr ? se[1] : NAN;
    }
    if (!st && c[first].impacts)
        st = sweep_appendf(md, len,
                           "\nContacts with at least %d training impacts: %d of %d; e within %.2f in every run: %d of "
                           "them (%s)",
                           MIN_IMPACTS, held, P, tol, e_ok, e_ok ? e_list : "none");
    else if (!st) /* impacts not counted: every contact is held to the bar */
        st = sweep_appendf(md, len, "\n%d contacts; e within %.2f in every run: %d of them (%s)", P, tol, e_ok,
                           e_ok ? e_list : "none");
    if (!st && fr) st = sweep_appendf(md, len, "; mu within %.2f in every run: %d of them (%s)", tol, mu_ok, mu_ok ? mu_list : "none");
    if (!st && c[first].impacts) st = sweep_appendf(md, len, ". Fewer than %d impacts: %s.\n", MIN_IMPACTS, few[0] ? few : "none");
    else if (!st) st = sweep_appendf(md, len, ".\n");
    /* the figure: learned against true, the diagonal */
    imp_figure *f = st ? NULL : imp_figure_new(1, 1 + fr, fr ? 9 : 4.5, 4);
    if (f) {
        static const double diag[2] = {0, 1};
        for (int q = 0; q < 1 + fr && !st; q++) {
            double hi = 1;
            for (int p = 0; p < P; p++) hi = fmax(hi, fmax(fig[3 * q * P + p], fig[(3 * q + 1) * P + p]));
            double dg[2] = {0, q ? hi : 1};
            st = imp_figure_axes(f, q, q ? "friction mu" : "restitution e", "true", "learned");
            if (!st) st = imp_figure_line(f, q, q ? dg : diag, q ? dg : diag, 2, "learned = true", "k--");
            /* the contacts held to the bar, and the others (fewer training impacts) */
            for (int few_ = 0; few_ < 2 && !st; few_++) {
                double y[IMP_MAX_CONTACTS];
                for (int p = 0; p < P; p++) {
                    int held_ = !(c[first].impacts && c[first].impacts[p] < MIN_IMPACTS);
                    y[p] = held_ != few_ ? fig[(3 * q + 1) * P + p] : NAN;
                }
                st = imp_figure_errorbar(f, q, fig + 3 * q * P, y, fig + (3 * q + 2) * P, (size_t)P,
                                         few_ ? "fewer than 5 impacts" : "at least 5 impacts", few_ ? "s" : "o");
            }
        }
        char title[256];
        snprintf(title, sizeof title, "%s on %s: learned against true per contact (mean ± s.e.)", config, system);
        if (!st) st = imp_figure_title(f, title);
        if (st) imp_figure_free(f);
        else st = sweep_save_figure(f, dir, stem, title, md, len);
    }
    free(v), free(fig);
    return st;
}

/* The RMSE table, the first-in-seeds line, the per-contact tables and the
 * figures of one system (tasks idx[0..m-1] of c). */
static int system_section(const char *dir, const contact_res *c, int n, const char *system, char **md, size_t *len)
{
    /* configurations in plan order */
    const char *configs[16];
    int nc = 0, first = -1;
    for (int i = 0; i < n; i++) {
        if (!c[i].s.system || strcmp(c[i].s.system, system)) continue;
        if (first < 0) first = i;
        int seen = 0;
        for (int k = 0; k < nc; k++) seen |= !strcmp(configs[k], c[i].s.config);
        if (!seen && nc < 16) configs[nc++] = c[i].s.config;
    }
    const sweep_contact_settings *g = &c[first].s;
    int st = sweep_appendf(md, len,
                           "\n### %s\n\n%ld training trajectories (noise %g), %ld noise-free test trajectories, %ld "
                           "epochs. Rollout RMSE over the test trajectories from their first states, mean ± standard "
                           "error over the seeds done; lowest gap: the lowest any rollout of the configuration "
                           "reached between a body and a wall or the floor (below 0: inside it).\n\n"
                           "| configuration | runs | rollout RMSE | per seed | lowest gap |\n|---|---|---|---|---|\n",
                           system, g->n_train, g->noise, g->n_test, g->epochs);
    double v[64], bars[16], errs[16];
    for (int k = 0; k < nc && !st; k++) {
        int got = 0, planned = 0;
        double low = INFINITY;
        char per[512] = "";
        for (int i = 0; i < n; i++) {
            if (!c[i].s.system || strcmp(c[i].s.system, system) || strcmp(c[i].s.config, configs[k])) continue;
            planned++;
            if (!c[i].ok || got == 64) continue;
            v[got++] = c[i].metrics[0];
            low = fmin(low, c[i].metrics[2]);
            size_t l = strlen(per);
            snprintf(per + l, sizeof per - l, "%s%.3f", l ? ", " : "", c[i].metrics[0]);
        }
        double mean = NAN, se = 0;
        char cell[64] = "n/a", runs[32];
        if (got) sweep_mean_se(v, got, &mean, &se), sweep_fmt_mean_se(cell, sizeof cell, mean, se, got);
        if (got == planned) snprintf(runs, sizeof runs, "%d", got);
        else snprintf(runs, sizeof runs, "%d of %d", got, planned);
        bars[k] = isfinite(mean) ? mean : NAN, errs[k] = se;
        st = sweep_appendf(md, len, "| %s | %s | %s | %s | %.3g |\n", configs[k], runs, cell, per[0] ? per : "n/a",
                           got ? low : NAN);
    }
    /* CD-Lagrange first: in how many seeds with every configuration done a CD-Lagrange
     * configuration's RMSE is below every baseline's */
    for (int k = 0; k < nc && !st; k++) {
        int ck = -1;
        for (int i = 0; i < n && ck < 0; i++)
            if (c[i].s.system && !strcmp(c[i].s.system, system) && !strcmp(c[i].s.config, configs[k])) ck = i;
        if (!is_cdl(&c[ck])) continue;
        int complete = 0, wins = 0;
        for (int i = 0; i < n; i++) {
            if (!c[i].ok || strcmp(c[i].s.system, system) || strcmp(c[i].s.config, configs[k])) continue;
            int all = 1, win = 1;
            for (int b = 0; b < nc; b++) {
                for (int q = 0; q < n; q++) {
                    if (!c[q].s.system || strcmp(c[q].s.system, system) || strcmp(c[q].s.config, configs[b]) ||
                        c[q].s.seed != c[i].s.seed || is_cdl(&c[q]))
                        continue;
                    if (!c[q].ok) all = 0;
                    else if (!(c[i].metrics[0] < c[q].metrics[0])) win = 0;
                }
            }
            complete += all;
            wins += all && win;
        }
        st = sweep_appendf(md, len, "%s%s first (below every baseline) in %d of %d seeds with every baseline done.\n",
                           k ? "" : "\n", configs[k], wins, complete);
    }
    /* the figure of the RMSE */
    imp_figure *f = st ? NULL : imp_figure_new(1, 1, 1.2 * nc + 2, 3.5);
    if (f) {
        char title[256], stem[256];
        const char *groups[1] = {system};
        snprintf(title, sizeof title, "%s: rollout RMSE (mean ± s.e. over seeds)", system);
        st = imp_figure_axes(f, 0, NULL, NULL, "rollout RMSE");
        if (!st) st = imp_figure_bars(f, 0, configs, (size_t)nc, groups, 1, bars, errs);
        if (!st) st = imp_figure_title(f, title);
        snprintf(stem, sizeof stem, "contact_rmse_%.*s", (int)strcspn(system, ":"), system);
        if (st) imp_figure_free(f);
        else st = sweep_save_figure(f, dir, stem, title, md, len);
    }
    for (int k = 0; k < nc && !st; k++) {
        int ck = -1;
        for (int i = 0; i < n && ck < 0; i++)
            if (c[i].s.system && !strcmp(c[i].s.system, system) && !strcmp(c[i].s.config, configs[k])) ck = i;
        if (!is_cdl(&c[ck])) continue;
        char stem[256];
        snprintf(stem, sizeof stem, "contact_law_%.*s_%s", (int)strcspn(system, ":"), system, configs[k]);
        st = law_table(c, n, system, configs[k], md, len, dir, stem);
    }
    return st;
}

/* ---- the constrained systems (strand=chnn) ---- */

/* Relative state error summed over the first 5 steps and over the rollout
 * (steps 1.., the start left out), mean over the test trajectories: imp_ceval's
 * sum_rel_err_5 and sum_rel_err from the result's meta; a result written
 * before they were recorded sums its mean error curve over the same steps. */
static int chnn_sums(const sweep_result *r, double *first5, double *all)
{
    if (r->meta && !imp_json_get_number(r->meta, "sum_rel_err_5", first5) &&
        !imp_json_get_number(r->meta, "sum_rel_err", all))
        return 1;
    imp_clear_error();
    const imp_npy_array *a = r->z ? imp_npz_find(r->z, "mean_rel_err") : NULL;
    if (!a || a->dtype != IMP_F64 || a->count < 1) return 0;
    const double *x = a->data;
    *first5 = *all = 0;
    for (size_t k = 1; k < a->count; k++) {
        if (k <= 5) *first5 += x[k];
        *all += x[k];
    }
    return 1;
}

static int constrained_task(const sweep_result *r)
{
    const char *strand = imp_sweep_task_get(r->task, "strand");
    return strand && !strcmp(strand, "chnn") && sweep_contact_constrained_system(imp_sweep_task_get(r->task, "system"));
}

/* One row of the constrained table: a system's model and its means over the seeds done. */
typedef struct crow {
    const char *sys, *model;
    int got;
    double m[2]; /* first 5 steps, whole rollout */
} crow;

static int with_contact(const char *model)
{
    size_t l = strlen(model), s = strlen("-contact");
    return l > s && !strcmp(model + l - s, "-contact");
}

/* Per system: the model with the lowest mean for each measure, and whether
 * each network with contact is below every network without it (the rows
 * with results). */
static int first_lines(const crow *rows, int nr, char **md, size_t *len)
{
    int st = sweep_appendf(md, len, "\nLowest mean per system (over the seeds done; networks with contact against "
                                    "every model without contact):\n\n");
    for (int i = 0; i < nr && !st; i++) {
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = !strcmp(rows[k].sys, rows[i].sys);
        if (seen) continue;
        st = sweep_appendf(md, len, "- %s:", rows[i].sys);
        for (int q = 0; q < 2 && !st; q++) {
            int best = -1;
            double base = INFINITY; /* the lowest mean of the models without contact */
            for (int k = i; k < nr; k++) {
                if (strcmp(rows[k].sys, rows[i].sys) || !rows[k].got) continue;
                if (best < 0 || rows[k].m[q] < rows[best].m[q]) best = k;
                if (!with_contact(rows[k].model) && rows[k].m[q] < base) base = rows[k].m[q];
            }
            st = sweep_appendf(md, len, "%s %s first", q ? "; whole rollout:" : " first 5 steps:",
                               best >= 0 ? rows[best].model : "n/a");
            for (int k = i; k < nr && !st; k++)
                if (!strcmp(rows[k].sys, rows[i].sys) && rows[k].got && with_contact(rows[k].model))
                    st = sweep_appendf(md, len, ", %s %s", rows[k].model,
                                       isinf(base) ? "(no model without contact done)"
                                       : rows[k].m[q] < base ? "below all without contact"
                                                             : "not below all without contact");
        }
        if (!st) st = sweep_appendf(md, len, "\n");
    }
    return st;
}

static int constrained_section(const char *dir, const sweep_result *res, int n, char **md, size_t *len)
{
    int any = 0, st = IMP_OK;
    for (int i = 0; i < n; i++) any |= constrained_task(&res[i]);
    if (!any) return IMP_OK;
    st = sweep_appendf(md, len,
                       "\n### Constrained systems with contact\n\nThe constrained networks trained on trajectories "
                       "of the systems with contact (chnn-contact, clnn-contact: e and mu learned per contact; chnn, clnn, "
                       "node and resnet know no contact); relative state error "
                       "|z_pred - z| / (|z_pred| + |z|) averaged over the test trajectories at each step, summed over "
                       "the first 5 steps and over the whole rollout (the start left out); mean ± standard error over the "
                       "seeds done.\n\n"
                       "| system | model | runs | test trajectories | error, first 5 steps | error, whole rollout |\n"
                       "|---|---|---|---|---|---|\n");
    double *a = malloc(sizeof(double) * 2 * (size_t)n + 1);
    crow *rows = calloc((size_t)n + 1, sizeof *rows);
    int nr = 0;
    if (!a || !rows) {
        free(a);
        free(rows);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    for (int i = 0; i < n && !st; i++) {
        if (!constrained_task(&res[i])) continue;
        const char *sys = key(&res[i], "system"), *model = key(&res[i], "model");
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = constrained_task(&res[k]) && !strcmp(key(&res[k], "system"), sys) && !strcmp(key(&res[k], "model"), model);
        if (seen) continue;
        int got = 0, planned = 0;
        long n_test = 0;
        for (int k = i; k < n; k++) {
            if (!constrained_task(&res[k]) || strcmp(key(&res[k], "system"), sys) || strcmp(key(&res[k], "model"), model))
                continue;
            planned++;
            if (imp_sweep_task_int(res[k].task, "n_test", 100, 1, 100000, &n_test)) imp_clear_error();
            if (chnn_sums(&res[k], &a[got], &a[n + got])) got++;
        }
        char c5[64] = "n/a", ca[64] = "n/a", runs[32];
        double m, se;
        crow *r = &rows[nr++];
        r->sys = sys, r->model = model, r->got = got;
        if (got) {
            sweep_mean_se(a, got, &m, &se), sweep_fmt_mean_se(c5, sizeof c5, m, se, got), r->m[0] = m;
            sweep_mean_se(a + n, got, &m, &se), sweep_fmt_mean_se(ca, sizeof ca, m, se, got), r->m[1] = m;
        }
        if (got == planned) snprintf(runs, sizeof runs, "%d", got);
        else snprintf(runs, sizeof runs, "%d of %d", got, planned);
        st = sweep_appendf(md, len, "| %s | %s | %s | %ld | %s | %s |\n", sys, model, runs, n_test, c5, ca);
    }
    if (!st) st = first_lines(rows, nr, md, len);
    free(a);
    free(rows);
    /* the models that learn a contact law: e and mu per contact against the simulator's */
    contact_res *c = calloc((size_t)n + 1, sizeof *c);
    if (!c) return st ? st : imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    for (int i = 0; i < n; i++)
        if (constrained_task(&res[i])) constrained_law_read(&res[i], &c[i]);
    for (int i = 0; i < n && !st; i++) {
        if (!c[i].ok) continue;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = c[k].ok && !strcmp(c[k].s.system, c[i].s.system) && !strcmp(c[k].s.config, c[i].s.config);
        if (seen) continue;
        char stem[256];
        snprintf(stem, sizeof stem, "contact_law_%.*s_%s", (int)strcspn(c[i].s.system, ":"), c[i].s.system,
                 c[i].s.config);
        st = law_table(c, n, c[i].s.system, c[i].s.config, md, len, dir, stem);
    }
    free(c);
    return st;
}

/* ---- the simulated box tosses (strand=cube, simulate=box-toss) ---- */

static int box_task(const sweep_result *r)
{
    const char *strand = imp_sweep_task_get(r->task, "strand");
    return strand && !strcmp(strand, "cube") && imp_sweep_task_get(r->task, "simulate");
}

static int box_section(const sweep_result *res, int n, char **md, size_t *len)
{
    int any = 0, st = IMP_OK;
    for (int i = 0; i < n; i++) any |= box_task(&res[i]);
    if (!any) return IMP_OK;
    st = sweep_appendf(md, len,
                       "\n### Box tosses (simulated)\n\nThe box's e and mu fitted or learned on simulated tosses "
                       "(impulse simulate box-toss) against the simulator's; full-toss rollouts (1 s) of the "
                       "held-out tosses: position error and penetration in %% of the box's width; mean ± standard "
                       "error over the seeds done (each its own simulated tosses).\n\n"
                       "| model | training tosses | runs | e true | e | mu true | mu | position error %% | "
                       "penetration %% |\n|---|---|---|---|---|---|---|---|---|\n");
    double *a = malloc(sizeof(double) * 4 * (size_t)n + 1);
    if (!a) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    static const char *const keys[4] = {"e", "mu", "position_error_pct", "penetration_pct"};
    for (int i = 0; i < n && !st; i++) {
        if (!box_task(&res[i])) continue;
        const char *model = key(&res[i], "model"), *tosses = key(&res[i], "tosses");
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = box_task(&res[k]) && !strcmp(key(&res[k], "model"), model) && !strcmp(key(&res[k], "tosses"), tosses);
        if (seen) continue;
        int got = 0, planned = 0;
        double e_true = NAN, mu_true = NAN;
        for (int k = i; k < n; k++) {
            if (!box_task(&res[k]) || strcmp(key(&res[k], "model"), model) || strcmp(key(&res[k], "tosses"), tosses))
                continue;
            planned++;
            if (!res[k].meta) continue;
            int ok = 1;
            for (int q = 0; q < 4 && ok; q++) ok = !imp_json_get_number(res[k].meta, keys[q], &a[q * n + got]);
            if (ok && !imp_json_get_number(res[k].meta, "e_true", &e_true) &&
                !imp_json_get_number(res[k].meta, "mu_true", &mu_true))
                got++;
            imp_clear_error();
        }
        char cell[4][64] = {"n/a", "n/a", "n/a", "n/a"}, runs[32];
        for (int q = 0; q < 4 && got; q++) {
            double m, se;
            sweep_mean_se(a + q * n, got, &m, &se);
            sweep_fmt_mean_se(cell[q], sizeof cell[q], m, se, got);
        }
        if (got == planned) snprintf(runs, sizeof runs, "%d", got);
        else snprintf(runs, sizeof runs, "%d of %d", got, planned);
        st = sweep_appendf(md, len, "| %s | %s | %s | %.3g | %s | %.3g | %s | %s | %s |\n", model, tosses, runs, e_true,
                           cell[0], mu_true, cell[1], cell[2], cell[3]);
    }
    free(a);
    return st;
}

int sweep_report_contact(const char *dir, const sweep_result *res, int n, char **md, size_t *len)
{
    contact_res *c = calloc((size_t)(n > 0 ? n : 1), sizeof *c);
    if (!c) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    int any = 0, st = IMP_OK;
    for (int i = 0; i < n; i++) any |= contact_read(&res[i], &c[i]);
    for (int i = 0; i < n && !any; i++) any = constrained_task(&res[i]) || box_task(&res[i]);
    if (any)
        st = sweep_appendf(md, len,
                           "\n## Contact\n\nThe contact comparisons of impulse reproduce contact (docs/contact.md in "
                           "impulse): models trained on simulated multi-contact systems, rolled out from held-out "
                           "starts, and their learned contact laws against the simulators'.\n");
    for (int i = 0; i < n && !st; i++) {
        if (!c[i].s.system) continue;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = c[k].s.system && !strcmp(c[k].s.system, c[i].s.system);
        if (!seen) st = system_section(dir, c, n, c[i].s.system, md, len);
    }
    if (!st) st = constrained_section(dir, res, n, md, len);
    if (!st) st = box_section(res, n, md, len);
    free(c);
    return st;
}

/* ---- JSON lines ---- */

static void kv_array(imp_json *j, const char *key, const double *x, int n)
{
    imp_json_key(j, key);
    imp_json_begin_array(j);
    for (int i = 0; i < n; i++) imp_json_number(j, x[i]);
    imp_json_end_array(j);
}

/* A task's numeric setting (NaN when absent or not a number). */
static double task_number(const imp_sweep_task *t, const char *key)
{
    double x = NAN;
    if (imp_sweep_task_double(t, key, NAN, -1e300, 1e300, &x)) imp_clear_error();
    return x;
}

static int contact_row(const sweep_result *r, void *user, char **out, size_t *len)
{
    (void)user;
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    contact_res c;
    double a, b;
    if (contact_read(r, &c) && c.ok) {
        imp_json_kv_string(&j, "part", "model");
        imp_json_kv_string(&j, "system", c.s.system);
        imp_json_kv_string(&j, "config", c.s.config);
        imp_json_kv_string(&j, "model", c.s.model);
        imp_json_kv_int(&j, "seed", c.s.seed);
        imp_json_kv_number(&j, "rmse", c.metrics[0]);
        imp_json_kv_number(&j, "min_gap", c.metrics[2]);
        imp_json_kv_number(&j, "seconds", c.metrics[3]);
        kv_array(&j, "e", c.e, c.P);
        kv_array(&j, "mu", c.mu, c.P);
        kv_array(&j, "e_true", c.e_true, c.P);
        kv_array(&j, "mu_true", c.mu_true, c.P);
        kv_array(&j, "impacts", c.impacts, c.P);
    } else if (constrained_task(r) && chnn_sums(r, &a, &b)) {
        imp_json_kv_string(&j, "part", "constrained");
        imp_json_kv_string(&j, "system", key(r, "system"));
        imp_json_kv_string(&j, "model", key(r, "model"));
        imp_json_kv_number(&j, "seed", task_number(r->task, "seed"));
        imp_json_kv_number(&j, "n_test", task_number(r->task, "n_test"));
        imp_json_kv_number(&j, "rel_err_first5", a);
        imp_json_kv_number(&j, "rel_err_rollout", b);
    } else if (box_task(r)) {
        imp_json_kv_string(&j, "part", "box-toss");
        imp_json_kv_string(&j, "model", key(r, "model"));
        imp_json_kv_number(&j, "tosses", task_number(r->task, "tosses"));
        imp_json_kv_number(&j, "seed", task_number(r->task, "seed"));
        static const char *const keys[] = {"e", "mu", "e_true", "mu_true", "position_error_pct", "penetration_pct"};
        for (size_t q = 0; q < sizeof keys / sizeof keys[0]; q++) {
            double x = NAN;
            if (imp_json_get_number(r->meta, keys[q], &x)) imp_clear_error();
            imp_json_kv_number(&j, keys[q], x);
        }
    } else {
        imp_json_free(&j);
        return IMP_OK;
    }
    imp_json_end_object(&j);
    return sweep_row_append(&j, out, len);
}

int imp_sweep_contact_rows(const char *dir, char **jsonl)
{
    return sweep_rows(dir, "contact", contact_row, NULL, jsonl);
}
