/* The CD-Lagrange section of a sweep report (Hochlehnert et al. 2021,
 * section 4 and appendix): per experiment a table of the models' rollout
 * errors (mean +- standard error over the finished seeds), and a figure from
 * the first seed's checkpoints: phase portraits of every body, the learned
 * potential's gradient, the impact times and the true energy of each
 * rollout. Figures go to dir/figures/<experiment>.png. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/cdl.h"
#include "impulse/core.h"
#include "impulse/report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { N_METRICS = 7, MAX_SEEDS = 1000 };

/* The finished result of experiment ei's model `model` with `seed` (the
 * ResNet's shared run included), or NULL. *planned says whether any task
 * of the plan is that run. */
static const sweep_result *find_run(const sweep_result *res, int n, int ei, const char *model, long seed, int *planned)
{
    const sweep_cdl_experiment *e = sweep_cdl_experiment_at(ei);
    int canon = sweep_cdl_canonical(ei, model);
    const char *canon_id = sweep_cdl_experiment_at(canon)->id;
    for (int i = 0; i < n; i++) {
        const imp_sweep_task *t = res[i].task;
        const char *strand = imp_sweep_task_get(t, "strand"), *x = imp_sweep_task_get(t, "experiment"),
                   *m = imp_sweep_task_get(t, "model");
        long s;
        if (strcmp(strand, "cdl") || !x || !m || strcmp(m, model) || (strcmp(x, e->id) && strcmp(x, canon_id)))
            continue;
        if (imp_sweep_task_int(t, "seed", 0, 0, 2147483647L, &s)) {
            imp_clear_error();
            continue;
        }
        if (s != seed) continue;
        if (planned) *planned = 1;
        if (res[i].z) return &res[i];
    }
    return NULL;
}

static int read_metrics(const sweep_result *r, double *v)
{
    const imp_npy_array *a = imp_npz_find(r->z, "metrics");
    if (!a || a->dtype != IMP_F64 || a->count != N_METRICS) return -1;
    memcpy(v, a->data, N_METRICS * sizeof(double));
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A model's name in the tables and the figure legends: CDL without its
 * contact input says so. */
static const char *model_label(const sweep_cdl_experiment *e, const char *model)
{
    return !strcmp(model, "cdl") && !e->touch ? "cdl (no touch)" : model;
}

/* Markdown table of one experiment: a row per model, mean +- standard error
 * over the seeds of each metric; missing runs are counted. */
static int table_for(const sweep_result *res, int n, int ei, const long *seeds, int n_seeds, char **md, int *missing)
{
    static const char *headers[] = {"model", "RMSE (paper def.)", "median", "RMSE (ref. code def.)",
                                    "RMSE held-out start (paper def.)", "RMSE forecast 5x (paper def.)",
                                    "energy drift", "contact timing [s]", "train time [s]", "seeds"};
    /* metrics array order: rmse, rmse_code, energy_drift, timing, seconds, heldout, forecast;
     * table order: rmse, rmse_code, heldout, forecast, energy_drift, timing, seconds */
    static const int column_of[N_METRICS] = {0, 1, 5, 6, 2, 3, 4};
    imp_table *t = imp_table_new(N_METRICS + 3, headers);
    if (!t) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    const sweep_cdl_experiment *e = sweep_cdl_experiment_at(ei);
    double *v = malloc(sizeof(double) * N_METRICS * (size_t)n_seeds), *tmp = malloc(sizeof(double) * (size_t)n_seeds);
    if (!v || !tmp) {
        free(v), free(tmp);
        imp_table_free(t);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    for (int mi = 0; e->models[mi]; mi++) {
        int got = 0, planned_runs = 0;
        for (int si = 0; si < n_seeds; si++) {
            int planned = 0;
            const sweep_result *r = find_run(res, n, ei, e->models[mi], seeds[si], &planned);
            planned_runs += planned;
            double m[N_METRICS];
            if (!r || read_metrics(r, m)) continue;
            for (int c = 0; c < N_METRICS; c++) v[(size_t)c * n_seeds + got] = m[column_of[c]];
            got++;
        }
        *missing += planned_runs - got;
        imp_table_cellf(t, "%s", model_label(e, e->models[mi]));
        for (int c = 0; c < N_METRICS; c++) {
            char buf[96] = "n/a";
            double mean, se;
            int finite = 0, diverged = 0;
            for (int i = 0; i < got; i++) {
                double x = v[(size_t)c * n_seeds + i];
                if (isfinite(x)) tmp[finite++] = x;
                diverged += isinf(x) != 0;
            }
            if (finite) {
                sweep_mean_se(tmp, finite, &mean, &se);
                if (c == N_METRICS - 1) snprintf(buf, sizeof buf, "%.1f", mean);
                else imp_format_mean_se(buf, sizeof buf, mean, se);
            }
            if (diverged && (c == 2 || c == 3)) { /* a rollout that blew up counts, and says so */
                size_t len = strlen(buf);
                snprintf(buf + len, sizeof buf - len, " (%d of %d diverged)", diverged, got);
            }
            imp_table_cellf(t, "%s", buf);
            if (c == 0) { /* seeds can be heavy-tailed (one diverging run carries a mean) */
                if (finite) {
                    qsort(tmp, (size_t)finite, sizeof tmp[0], cmp_double);
                    double med = finite % 2 ? tmp[finite / 2] : 0.5 * (tmp[finite / 2 - 1] + tmp[finite / 2]);
                    imp_table_cellf(t, "%.3g", med);
                } else {
                    imp_table_cellf(t, "n/a");
                }
            }
        }
        if (got == planned_runs) imp_table_cellf(t, "%d", got);
        else imp_table_cellf(t, "%d of %d", got, planned_runs);
    }
    free(v), free(tmp);
    int st = imp_table_markdown(t, md);
    imp_table_free(t);
    return st;
}

/* True dU/dq of the known systems along one body's coordinate (unit masses
 * and lengths, as the experiments). */
static double true_dU(const char *system, double q)
{
    return !strcmp(system, "bouncing-ball") ? 9.81 : 9.81 * sin(q);
}

/* One colour and line style per model in every figure of the reproduction
 * (Okabe-Ito colours; the potential-gradient panel's styler gives CDL and VIN
 * the same first two colours): "style|colour", or only the colour. */
static const char *model_style(const char *model, int with_line)
{
    static const struct {
        const char *model, *line, *colour;
    } styles[] = {{"cdl", "-|C0", "C0"}, {"vin", "--|C1", "C1"}, {"resnet", "-.|C2", "C2"},
                  {"resnet-contact", "--|C3", "C3"}};
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++)
        if (!strcmp(styles[i].model, model)) return with_line ? styles[i].line : styles[i].colour;
    return NULL;
}

/* Axis labels with units: angles for the pendulum and the cradle, heights
 * for the ball. */
static void axis_names(const char *system, int body, int K, char *q, char *v, char *g, size_t cap)
{
    int angle = strcmp(system, "bouncing-ball") != 0;
    char who[32] = "";
    if (K > 1) snprintf(who, sizeof who, "_%d", body + 1);
    snprintf(q, cap, angle ? "angle $\\theta%s$ (rad)" : "height $q%s$ (m)", who);
    snprintf(v, cap, angle ? "angular velocity $\\dot\\theta%s$ (rad/s)" : "velocity $\\dot q%s$ (m/s)", who);
    snprintf(g, cap, angle ? "$\\partial U/\\partial\\theta%s$ (N m)" : "$\\partial U/\\partial q%s$ (N)", who);
}

/* A phase portrait's view: the truth's range with margins, widened to hold the model's curve up to 1.5
 * ranges beyond the truth on each side (a diverging model leaves the view there, and *clipped says so). */
static void phase_view(const double *tq, const double *tv, const double *mq, const double *mv, int T, double lim[4],
                       int *clipped)
{
    double lo[2] = {tq[0], tv[0]}, hi[2] = {tq[0], tv[0]};
    for (int t = 0; t < T; t++)
        lo[0] = fmin(lo[0], tq[t]), hi[0] = fmax(hi[0], tq[t]), lo[1] = fmin(lo[1], tv[t]), hi[1] = fmax(hi[1], tv[t]);
    for (int k = 0; k < 2; k++) {
        const double *m = k ? mv : mq;
        double span = hi[k] - lo[k] + 0.1, cap_lo = lo[k] - 1.5 * span, cap_hi = hi[k] + 1.5 * span;
        double a = lo[k], b = hi[k];
        for (int t = 0; m && t < T; t++) {
            if (!isfinite(m[t]) || m[t] < cap_lo || m[t] > cap_hi) {
                *clipped = 1;
                continue;
            }
            a = fmin(a, m[t]), b = fmax(b, m[t]);
        }
        double pad = 0.08 * (b - a) + 0.05;
        lim[2 * k] = a - pad, lim[2 * k + 1] = b + pad;
    }
}

/* The figure of one experiment (the first seed): a phase portrait per model (every body in it, the truth
 * and the noisy observations under the model's curve), the learned potential's gradient along every body's
 * coordinate (CDL, VIN), the impact times (when the system has contacts) and the true energy of each rollout
 * on a linear axis (the truth stays visible after the ball rests, a baseline's energy at or below zero stays
 * on the axis; a diverging one is cut at 3x the truth's largest and the title says so). */
static int figure_for(const char *dir, const sweep_result *res, int n, int ei, long seed, int *drawn)
{
    const sweep_cdl_experiment *e = sweep_cdl_experiment_at(ei);
    *drawn = 0;
    imp_trajset data;
    int st = sweep_cdl_make_data(e, (int)seed, &data);
    if (st) return st;
    int T = data.n_steps, D = data.geom.n_bodies * data.geom.dim, K = data.geom.n_bodies, S = 2 * D;
    int has_contacts = 0;
    for (size_t i = 0; i < (size_t)T * K; i++) has_contacts |= data.contact[i] > 0.5;
    int n_models = 0;
    while (n_models < 4 && e->models[n_models]) n_models++;
    /* panels: a phase portrait per model, the potential gradient, impacts (if any), energy */
    int p_grad = n_models, p_imp = has_contacts ? n_models + 1 : -1, p_energy = n_models + 1 + has_contacts;
    int n_panels = p_energy + 1, cols = n_panels % 3 == 0 ? 3 : 2, rows = (n_panels + cols - 1) / cols;
    imp_figure *fig = imp_figure_new(rows, cols, 5.0 * cols, 3.6 * rows + 0.5);
    double *energy = malloc(sizeof(double) * T), *tt = malloc(sizeof(double) * T);
    double *xs = malloc(sizeof(double) * T), *ys = malloc(sizeof(double) * T);
    double *states = malloc(sizeof(double) * T * S), *contact = malloc(sizeof(double) * T * K);
    double *mq = malloc(sizeof(double) * T), *mv = malloc(sizeof(double) * T);
    if (!fig || !energy || !tt || !xs || !ys || !states || !contact || !mq || !mv) {
        free(energy), free(tt), free(xs), free(ys), free(states), free(contact), free(mq), free(mv);
        imp_figure_free(fig);
        imp_trajset_free(&data);
        return imp_fail(IMP_ERR_NOMEM, "figure: out of memory");
    }
    char title[256], lq[96], lv[96], lg[96];
    snprintf(title, sizeof title, "%s (seed %ld)", e->title, seed);
    imp_figure_title(fig, title);
    for (int t = 0; t < T; t++) tt[t] = t * data.dt;
    axis_names(e->system, 0, 1, lq, lv, lg, sizeof lq);
    imp_figure_axes(fig, p_grad, K > 1 ? "potential gradient per body (others at rest)" : "potential gradient", lq,
                    lg);
    /* the bodies by marker, said in the title: a legend would sit on the rows of markers */
    if (p_imp >= 0)
        imp_figure_axes(fig, p_imp, K > 2 ? "impacts (circle: body 1, square: 2, triangle: 3)"
                                    : K > 1 ? "impacts (circle: body 1, square: body 2)" : "impacts",
                        "time $t$ (s)", NULL);
    /* the truth's energy and impacts */
    double emax = 0, e_lo = 0, e_hi = 0;
    for (int t = 0; t < T; t++) {
        imp_system_energy(data.system, &data.geom, data.gravity, data.length, data.q_clean + (size_t)t * D,
                          data.qdot_clean + (size_t)t * D, &energy[t]);
        emax = fmax(emax, fabs(energy[t]));
        e_lo = fmin(e_lo, energy[t]), e_hi = fmax(e_hi, energy[t]);
    }
    int e_clipped = 0;
    imp_figure_line(fig, p_energy, tt, energy, (size_t)T, "truth", NULL);
    static const char *body_marker[4] = {"o", "s", "^", "D"};
    static const char *body_line[4] = {"-", "--", ":", "-."};
    if (p_imp >= 0)
        for (int k = 0; k < K; k++) {
            size_t c = 0;
            for (int t = 0; t < T; t++)
                if (data.contact[(size_t)t * K + k] > 0.5 && (t == 0 || data.contact[(size_t)(t - 1) * K + k] < 0.5))
                    xs[c] = tt[t], ys[c] = 0.0 - 0.15 * k, c++;
            char sty[16];
            snprintf(sty, sizeof sty, "%s|k", body_marker[k % 4]);
            if (c) imp_figure_scatter(fig, p_imp, xs, ys, c, NULL, sty);
        }
    /* the true potential's gradient over the range of the data */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < (size_t)T * D; i++) lo = fmin(lo, data.q_clean[i]), hi = fmax(hi, data.q_clean[i]);
    enum { NG = 101 };
    double qg[NG], gtrue[NG];
    for (int i = 0; i < NG; i++) qg[i] = lo + (hi - lo) * i / (NG - 1), gtrue[i] = true_dU(e->system, qg[i]);
    imp_figure_line(fig, p_grad, qg, gtrue, NG, "truth", NULL);
    int row = 0;
    /* the impacts panel: a row per model with a contact output, saying so
     * when it predicted none */
    char row_label[5][64];
    snprintf(row_label[0], sizeof row_label[0], "truth");
    for (int mi = 0; mi < n_models && !st; mi++) {
        const sweep_result *r = find_run(res, n, ei, e->models[mi], seed, NULL);
        if (!r) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/tasks/%s/model.npz", dir, r->task->id);
        imp_model *m = NULL;
        if (imp_model_load(&m, path)) {
            imp_clear_error();
            continue;
        }
        (*drawn)++;
        const char *name = e->models[mi], *label = model_label(e, name);
        double x0[2 * IMP_MAX_BODIES * IMP_MAX_DIM];
        memcpy(x0, data.q_clean, D * sizeof(double));
        memcpy(x0 + D, data.qdot_clean, D * sizeof(double));
        int rolled = imp_model_rollout(m, x0, T, NULL, states, contact) == IMP_OK;
        if (!rolled) imp_clear_error();
        /* the model's phase portrait: every body, the truth and the observations under it */
        double view[4] = {INFINITY, -INFINITY, INFINITY, -INFINITY};
        int clipped = 0;
        for (int k = 0; k < K; k++) {
            for (int t = 0; t < T; t++)
                xs[t] = data.q[(size_t)t * D + k * data.geom.dim], ys[t] = data.qdot[(size_t)t * D + k * data.geom.dim];
            imp_figure_scatter(fig, mi, xs, ys, (size_t)T, "noisy observations", ".|0.7");
            for (int t = 0; t < T; t++)
                xs[t] = data.q_clean[(size_t)t * D + k * data.geom.dim],
                ys[t] = data.qdot_clean[(size_t)t * D + k * data.geom.dim];
            imp_figure_line(fig, mi, xs, ys, (size_t)T, "truth", NULL);
            for (int t = 0; rolled && t < T; t++)
                mq[t] = states[(size_t)t * S + k * data.geom.dim], mv[t] = states[(size_t)t * S + D + k * data.geom.dim];
            double lim[4];
            phase_view(xs, ys, rolled ? mq : NULL, rolled ? mv : NULL, T, lim, &clipped);
            view[0] = fmin(view[0], lim[0]), view[1] = fmax(view[1], lim[1]);
            view[2] = fmin(view[2], lim[2]), view[3] = fmax(view[3], lim[3]);
            if (rolled) {
                char lab[64], sty[32];
                snprintf(lab, sizeof lab, K > 1 ? "%s, body %d" : "%s", label, k + 1);
                snprintf(sty, sizeof sty, "%s|%s", body_line[k % 4], model_style(name, 0) ? model_style(name, 0) : "k");
                imp_figure_line(fig, mi, mq, mv, (size_t)T, lab, sty);
            }
        }
        char pt[128];
        axis_names(e->system, 0, 1, lq, lv, lg, sizeof lq);
        snprintf(pt, sizeof pt, "phase portrait: %s%s%s", label, rolled ? "" : " (rollout failed)",
                 clipped ? " (leaves the view)" : "");
        imp_figure_axes(fig, mi, pt, lq, lv);
        imp_figure_limits(fig, mi, view[0], view[1], view[2], view[3]);
        if (rolled) {
            if (p_imp >= 0 && m->has_contact_net && row < 4) {
                row++;
                size_t predicted = 0;
                for (int k = 0; k < K; k++) {
                    size_t c = 0;
                    for (int t = 1; t < T; t++)
                        if (contact[(size_t)t * K + k] > 0.5 && contact[(size_t)(t - 1) * K + k] < 0.5)
                            xs[c] = tt[t], ys[c] = -row - 0.15 * k, c++;
                    char sty[16];
                    snprintf(sty, sizeof sty, "%s|%s", body_marker[k % 4], model_style(name, 0));
                    if (c) imp_figure_scatter(fig, p_imp, xs, ys, c, NULL, sty);
                    predicted += c;
                }
                snprintf(row_label[row], sizeof row_label[row], "%s%s", label, predicted ? "" : " (none)");
            }
            for (int t = 0; t < T; t++)
                imp_system_energy(data.system, &data.geom, data.gravity, data.length, states + (size_t)t * S,
                                  states + (size_t)t * S + D, &energy[t]);
            /* the axis: the truth's range and the model's, cut at 3x the truth's largest */
            size_t c = 0;
            for (int t = 0; t < T; t++) {
                if (!isfinite(energy[t])) {
                    e_clipped = 1;
                    continue;
                }
                if (fabs(energy[t]) > 3 * emax) e_clipped = 1; /* drawn, beyond the axis */
                else e_lo = fmin(e_lo, energy[t]), e_hi = fmax(e_hi, energy[t]);
                xs[c] = tt[t], ys[c] = energy[t], c++;
            }
            if (c) imp_figure_line(fig, p_energy, xs, ys, c, label, model_style(name, 1));
        }
        if (m->cfg.kind == IMP_MODEL_CDL || m->cfg.kind == IMP_MODEL_VIN) {
            double qin[NG * IMP_MAX_BODIES * IMP_MAX_DIM], g[NG * IMP_MAX_BODIES * IMP_MAX_DIM], gl[NG];
            for (int k = 0; k < K; k++) {
                /* other bodies at their initial configuration */
                for (int i = 0; i < NG; i++) {
                    memcpy(qin + (size_t)i * D, data.q_clean, D * sizeof(double));
                    qin[(size_t)i * D + k * data.geom.dim] = qg[i];
                }
                if (imp_model_potential_grad(m, qin, NG, g) == IMP_OK) {
                    for (int i = 0; i < NG; i++) gl[i] = g[(size_t)i * D + k * data.geom.dim];
                    char lab[64];
                    snprintf(lab, sizeof lab, K > 1 ? "%s, body %d" : "%s", label, k + 1);
                    imp_figure_line(fig, p_grad, qg, gl, NG, lab, NULL);
                } else {
                    imp_clear_error();
                }
            }
        }
        imp_model_free(m);
    }
    if (p_imp >= 0) {
        double tv[5];
        const char *tl[5];
        for (int r = 0; r <= row; r++) tv[r] = -r, tl[r] = row_label[r];
        imp_figure_yticks(fig, p_imp, tv, tl, (size_t)row + 1);
        /* margins on both sides: a marker at the first or the last step stays whole */
        double tend = T * data.dt;
        imp_figure_limits(fig, p_imp, -0.03 * tend, 1.03 * tend, -(row + 0.5), 0.5);
    }
    imp_figure_axes(fig, p_energy, e_clipped ? "true energy of the rollout (cut at 3x the truth's)"
                                             : "true energy of the rollout",
                    "time $t$ (s)", "energy $E$ (J)");
    if (e_hi > e_lo) {
        double pad = 0.05 * (e_hi - e_lo);
        imp_figure_limits(fig, p_energy, NAN, NAN, e_lo - pad, e_hi + pad);
    }
    char stem[4096];
    snprintf(stem, sizeof stem, "%s/figures/%s", dir, e->id);
    if (*drawn) st = imp_figure_save(fig, stem);
    imp_figure_free(fig);
    free(energy), free(tt), free(xs), free(ys), free(states), free(contact), free(mq), free(mv);
    imp_trajset_free(&data);
    return st;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int sweep_report_cdl(const char *dir, const sweep_result *res, int n, char **md, size_t *len)
{
    int n_exp = sweep_cdl_n_experiments();
    int *present = calloc((size_t)n_exp, sizeof(int));
    long *seeds = malloc(sizeof(long) * (size_t)(n > 0 ? n : 1));
    if (!present || !seeds) {
        free(present), free(seeds);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    int n_seeds = 0, any = 0;
    const char *settings = "code";
    double total_seconds = 0;
    for (int i = 0; i < n; i++) {
        const imp_sweep_task *t = res[i].task;
        if (strcmp(imp_sweep_task_get(t, "strand"), "cdl")) continue;
        int ei = sweep_cdl_find(imp_sweep_task_get(t, "experiment"));
        long s;
        if (ei < 0 || imp_sweep_task_int(t, "seed", 0, 0, 2147483647L, &s)) {
            imp_clear_error();
            continue;
        }
        any = 1;
        present[ei] = 1;
        if (imp_sweep_task_get(t, "settings")) settings = imp_sweep_task_get(t, "settings");
        int known = 0;
        for (int k = 0; k < n_seeds; k++) known |= seeds[k] == s;
        if (!known) seeds[n_seeds++] = s;
        double m8[N_METRICS];
        if (res[i].z && !read_metrics(&res[i], m8) && isfinite(m8[4])) total_seconds += m8[4];
    }
    if (!any) {
        free(present), free(seeds);
        return IMP_OK;
    }
    qsort(seeds, (size_t)n_seeds, sizeof seeds[0], cmp_long);
    char figdir[4096];
    snprintf(figdir, sizeof figdir, "%s/figures", dir);
    if (mkdir(figdir, 0777) && errno != EEXIST) {
        free(present), free(seeds);
        return imp_fail(IMP_ERR_IO, "%s: cannot create: %s", figdir, strerror(errno));
    }
    int st = sweep_appendf(md, len,
                           "\n## CD-Lagrange networks (Hochlehnert et al. 2021)\n\n"
                           "%s settings; mean ± standard error over the finished seeds (%d planned: each seed new "
                           "noise and initialisation), and the median of the first RMSE; RMSE of the rollout from "
                           "the noise-free first state over the whole trajectory. Training took %.0f s in all.\n",
                           !strcmp(settings, "code") ? "Reference-code" : "Paper", n_seeds, total_seconds);
    for (int ei = 0; ei < n_exp && !st; ei++) {
        if (!present[ei]) continue;
        const sweep_cdl_experiment *e = sweep_cdl_experiment_at(ei);
        char *table = NULL;
        int missing = 0;
        if ((st = table_for(res, n, ei, seeds, n_seeds, &table, &missing))) break;
        st = sweep_appendf(md, len, "\n### %s\n\n%s", e->title, table);
        free(table);
        if (!st && missing)
            st = sweep_appendf(md, len, "\n%d planned run%s not finished (see 'Not done' above).\n", missing,
                               missing == 1 ? "" : "s");
        int drawn = 0;
        if (!st && figure_for(dir, res, n, ei, seeds[0], &drawn)) {
            st = sweep_appendf(md, len, "\n(figure of %s not drawn: %s)\n", e->id, imp_last_error());
            imp_clear_error();
        } else if (!st && drawn) {
            st = sweep_appendf(md, len,
                               "\n![%s: phase portraits, learned potential gradient, impacts and energy of the "
                               "seed-%ld rollouts](figures/%s.png)\n",
                               e->title, seeds[0], e->id);
        }
    }
    free(present), free(seeds);
    return st;
}
