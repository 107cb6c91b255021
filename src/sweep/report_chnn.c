/* The constrained-network section of a sweep report: Finzi et al. 2020
 * figs 5/7 (mean over test trajectories of the geometric-mean relative
 * error), ours beside the paper's, and the bar chart of the figure. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"
#include "impulse/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_MODELS 5
#define MAX_SYSTEMS 32

static const char *const models[N_MODELS + 1] = {"chnn", "clnn", "hnn", "delan", "node", "gt-pert"};

/* [chnn] reference notes section 4 (recomputed from the CSVs behind the
 * paper's figs 5/7, n_train = 800): CHNN CLNN HNN DeLaN NODE GT+1e-4 pert. */
static const struct {
    const char *system;
    double v[N_MODELS + 1];
} paper[] = {
    {"pendulum-chain:1", {7.46e-5, 7.40e-5, 1.80e-4, 4.21e-4, 1.09e-3, 4.86e-5}},
    {"pendulum-chain:2", {5.26e-4, 1.80e-4, 1.34e-2, 7.08e-3, 1.21e-1, 7.96e-5}},
    {"pendulum-chain:3", {3.34e-3, 1.98e-3, 9.70e-2, 8.72e-2, 2.97e-1, 3.53e-4}},
    {"pendulum-chain:5", {3.61e-3, 4.30e-3, 3.57e-1, 3.50e-1, 4.48e-1, 2.49e-4}},
    {"coupled-pendulums:3", {1.81e-2, 1.89e-2, 8.23e-2, 7.32e-2, 7.86e-2, 1.44e-4}},
    {"magnet-pendulum", {4.31e-2, 4.79e-2, 1.47e-1, 1.68e-1, 1.87e-1, 9.18e-4}},
    {"gyroscope", {2.07e-5, 3.17e-5, 1.84e-2, 2.14e-2, 6.71e-2, 2.68e-5}},
    {"rotor", {6.23e-6, 2.05e-5, 2.79e-1, 3.04e-1, 4.13e-1, 1.33e-4}},
};

static double paper_value(const char *system, int model)
{
    for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++)
        if (!strcmp(paper[i].system, system)) return paper[i].v[model];
    return NAN;
}

static int model_index(const char *name)
{
    for (int i = 0; i <= N_MODELS; i++)
        if (!strcmp(models[i], name)) return i;
    return -1;
}

typedef struct agg {
    double sum, min, max;
    int n, planned;
} agg;

int sweep_report_chnn(const char *dir, const sweep_result *res, int n, char **md, size_t *len)
{
    const char *systems[MAX_SYSTEMS];
    int n_sys = 0;
    agg cells[MAX_SYSTEMS][N_MODELS + 1];
    memset(cells, 0, sizeof cells);
    int any_model[N_MODELS + 1] = {0};
    for (int i = 0; i < n; i++) {
        const imp_sweep_task *t = res[i].task;
        const char *strand = imp_sweep_task_get(t, "strand"), *sys = imp_sweep_task_get(t, "system"),
                   *model = imp_sweep_task_get(t, "model");
        if (strcmp(strand, "chnn") || !sys || !model) continue;
        int mi = model_index(model);
        if (mi < 0) continue;
        int si = 0;
        while (si < n_sys && strcmp(systems[si], sys)) si++;
        if (si == n_sys) {
            if (n_sys == MAX_SYSTEMS) continue;
            systems[n_sys++] = sys;
        }
        agg *a = &cells[si][mi];
        a->planned++;
        any_model[mi] = 1;
        double v;
        if (!res[i].meta || imp_json_get_number(res[i].meta, "mean_geo_rel_err", &v)) {
            imp_clear_error();
            continue;
        }
        if (a->n == 0 || v < a->min) a->min = v;
        if (a->n == 0 || v > a->max) a->max = v;
        a->sum += v;
        a->n++;
    }
    if (n_sys == 0) return IMP_OK;
    int st = sweep_appendf(md, len,
                           "\n## Constrained networks (Finzi et al. 2020, figs 5/7)\n\n"
                           "Mean over the test trajectories of the geometric-mean relative error of the rollouts; "
                           "each cell ours (mean over the finished seeds; [min, max] when several) / the paper's. "
                           "'-' not planned, 'missing' planned but not finished.\n\n| system |");
    for (int mi = 0; mi <= N_MODELS && !st; mi++)
        if (any_model[mi]) st = sweep_appendf(md, len, " %s |", mi == N_MODELS ? "GT + 1e-4 pert" : models[mi]);
    if (!st) st = sweep_appendf(md, len, "\n|---|");
    for (int mi = 0; mi <= N_MODELS && !st; mi++)
        if (any_model[mi]) st = sweep_appendf(md, len, "---|");
    if (!st) st = sweep_appendf(md, len, "\n");
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_array(&j);
    for (int si = 0; si < n_sys && !st; si++) {
        st = sweep_appendf(md, len, "| %s |", systems[si]);
        for (int mi = 0; mi <= N_MODELS && !st; mi++) {
            if (!any_model[mi]) continue;
            agg *a = &cells[si][mi];
            double p = paper_value(systems[si], mi);
            char ours[96], theirs[32];
            if (!a->planned) snprintf(ours, sizeof ours, "-");
            else if (!a->n) snprintf(ours, sizeof ours, "missing");
            else if (a->n == 1) snprintf(ours, sizeof ours, "%.3g", a->sum);
            else snprintf(ours, sizeof ours, "%.3g [%.2g, %.2g] (%d seeds)", a->sum / a->n, a->min, a->max, a->n);
            if (isfinite(p)) snprintf(theirs, sizeof theirs, " / %.3g", p);
            else theirs[0] = 0;
            st = sweep_appendf(md, len, " %s%s |", ours, a->planned ? theirs : "");
            if (a->n) {
                imp_json_begin_object(&j);
                imp_json_kv_string(&j, "system", systems[si]);
                imp_json_kv_string(&j, "model", models[mi]);
                imp_json_kv_number(&j, "mean_geo_rel_err", a->sum / a->n);
                imp_json_kv_number(&j, "min", a->min);
                imp_json_kv_number(&j, "max", a->max);
                imp_json_kv_int(&j, "seeds", a->n);
                imp_json_kv_number(&j, "paper", p);
                imp_json_end_object(&j);
            }
        }
        if (!st) st = sweep_appendf(md, len, "\n");
    }
    imp_json_end_array(&j);
    char path[4096];
    if (!st) {
        snprintf(path, sizeof path, "%s/chnn_results.json", dir);
        const char *text = imp_json_text(&j);
        st = text ? imp_write_file_atomic(path, text, strlen(text)) : imp_fail(IMP_ERR_NOMEM, "out of memory");
    }
    imp_json_free(&j);
    if (st) return st;
    /* Bar chart of the figure: ours and the paper's, one panel each, the
     * same log axis. */
    const char *groups[N_MODELS + 1];
    int gmap[N_MODELS + 1], ng = 0;
    for (int mi = 0; mi <= N_MODELS; mi++)
        if (any_model[mi]) {
            groups[ng] = mi == N_MODELS ? "GT + 1e-4 pert" : models[mi];
            gmap[ng++] = mi;
        }
    double *vals = calloc((size_t)2 * ng * n_sys, sizeof(double));
    if (!vals) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    for (int g = 0; g < ng; g++)
        for (int si = 0; si < n_sys; si++) {
            agg *a = &cells[si][gmap[g]];
            vals[g * n_sys + si] = a->n ? a->sum / a->n : NAN;
            vals[(size_t)ng * n_sys + g * n_sys + si] = paper_value(systems[si], gmap[g]);
        }
    imp_figure *fig = imp_figure_new(2, 1, 9, 7);
    if (!fig) {
        free(vals);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    imp_figure_axes(fig, 0, "impulse (this sweep)", NULL, "geometric-mean relative error");
    imp_figure_axes(fig, 1, "Finzi et al. 2020, figs 5/7", NULL, "geometric-mean relative error");
    for (int p = 0; p < 2; p++) {
        imp_figure_logscale(fig, p, 0, 1);
        imp_figure_bars(fig, p, systems, (size_t)n_sys, groups, (size_t)ng, vals + (size_t)p * ng * n_sys, NULL);
    }
    snprintf(path, sizeof path, "%s/chnn_bars", dir);
    st = imp_figure_save(fig, path);
    imp_figure_free(fig);
    free(vals);
    /* the tables stand without the figure (matplotlib may be missing) */
    if (st) return sweep_appendf(md, len, "\n(bar chart not drawn: %s)\n", imp_last_error());
    return sweep_appendf(md, len, "\n![bar chart](chnn_bars.png)\n");
}
