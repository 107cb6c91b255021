/* The your-data section of a sweep report (docs/your-data.md): per set of
 * settings (system, restitution, noise, held-out trajectories, epochs,
 * learning-rate schedule) a line with the settings and the contact's
 * apparent restitution, and a table with a row per model and label
 * handling: runs, held-out RMSE (reference code's definition) mean ±
 * standard error and median, CD-Lagrange's learned dU/dq at the floor / g
 * and learned e, mean (min .. max). */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/cdl.h"
#include "impulse/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The contact's apparent restitution: rebound over approach speed at the
 * first bounce from the training height, sampled every 1e-4 s; NaN if it
 * cannot be measured. */
static double apparent_restitution(const sweep_yd_settings *s)
{
    double apparent = NAN;
    imp_sim_opts o;
    imp_trajset d;
    if (!imp_sim_defaults(s->system, &o)) {
        o.restitution = s->restitution, o.n_traj = 1, o.dt = 1e-4, o.n_steps = 20000;
        if (!imp_simulate(s->system, &o, &d)) {
            int a = -1, b = -1;
            for (int t = 0; t < d.n_steps && b < 0; t++) {
                if (a < 0 && d.contact[t] > 0) a = t;
                if (a > 0 && d.contact[t] == 0) b = t;
            }
            if (a > 0 && b > a) apparent = -d.qdot_clean[b] / d.qdot_clean[a - 1];
            imp_trajset_free(&d);
        }
    }
    imp_clear_error();
    return apparent;
}

/* Same table: every setting the table's header line states. */
static int same_group(const sweep_yd_settings *a, const sweep_yd_settings *b)
{
    return !strcmp(a->system, b->system) && a->restitution == b->restitution && a->noise == b->noise &&
           a->heldout == b->heldout && a->epochs == b->epochs && a->lr_schedule == b->lr_schedule;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One table row: the finished runs of (model, labels) in the group of
 * task `first`, in plan order. v has room for n values. */
static int row(const sweep_result *res, const sweep_yd_settings *ys, const int *group, int n, int first,
               const char *model, const char *labels, double *v, char **md, size_t *len, int *missing)
{
    double force = 0, fmin = INFINITY, fmax_ = -INFINITY, es = 0, emin = INFINITY, emax = -INFINITY;
    int got = 0, planned = 0, nf = 0, ne = 0;
    for (int i = 0; i < n; i++) {
        if (group[i] != first || strcmp(ys[i].model, model) || strcmp(ys[i].labels, labels)) continue;
        planned++;
        const imp_npy_array *a = res[i].z ? imp_npz_find(res[i].z, "metrics") : NULL;
        if (!a || a->dtype != IMP_F64 || a->count != SWEEP_YD_NMETRICS) continue;
        const double *m = a->data;
        double fo = m[2], e = m[3];
        v[got++] = m[0];
        if (isfinite(fo)) force += fo, nf++, fmin = fmin < fo ? fmin : fo, fmax_ = fmax_ > fo ? fmax_ : fo;
        if (isfinite(e)) es += e, ne++, emin = emin < e ? emin : e, emax = emax > e ? emax : e;
    }
    *missing += planned - got;
    char runs[32];
    if (got == planned) snprintf(runs, sizeof runs, "%d", got);
    else snprintf(runs, sizeof runs, "%d of %d", got, planned);
    int st = sweep_appendf(md, len, "| %-14s | %-8s | %s |", model, labels, runs);
    if (!st && got) {
        double mean = 0, var = 0;
        for (int i = 0; i < got; i++) mean += v[i] / got;
        for (int i = 0; i < got; i++) var += (v[i] - mean) * (v[i] - mean) / (got > 1 ? got - 1 : 1);
        qsort(v, (size_t)got, sizeof *v, cmp_double);
        double med = got % 2 ? v[got / 2] : 0.5 * (v[got / 2 - 1] + v[got / 2]);
        st = sweep_appendf(md, len, " %.3g ± %.2g | %.3g |", mean, sqrt(var / got), med);
    } else if (!st) {
        st = sweep_appendf(md, len, " n/a | n/a |");
    }
    if (!st && nf) st = sweep_appendf(md, len, " %.3f (%.3f .. %.3f) |", force / nf, fmin, fmax_);
    else if (!st) st = sweep_appendf(md, len, " n/a |");
    if (!st && ne) st = sweep_appendf(md, len, " %.3f (%.3f .. %.3f) |\n", es / ne, emin, emax);
    else if (!st) st = sweep_appendf(md, len, " n/a |\n");
    return st;
}

/* The header line and the table of the group of task `first`. */
static int table(const sweep_result *res, const sweep_yd_settings *ys, const int *group, int n, int first,
                 double *v, char **md, size_t *len)
{
    const sweep_yd_settings *g = &ys[first];
    int n_seeds = 0, law = -2;
    for (int i = 0; i < n; i++) {
        if (group[i] != first) continue;
        int known = 0;
        for (int k = 0; k < i && !known; k++) known = group[k] == first && ys[k].seed == ys[i].seed;
        n_seeds += !known;
        if (ys[i].kind == IMP_MODEL_CDL) law = law == -2 || law == ys[i].impact_law ? ys[i].impact_law : -3;
    }
    /* what auto resolves to, on the first task's training data as the tasks resolve it */
    char law_name[48], lr_name[32];
    int auto_law = IMP_CDL_IMPACT_NEWTON, auto_lr = IMP_LR_COSINE;
    imp_trajset d;
    if (!sweep_your_data_train_set(g, &d)) {
        auto_law = imp_cdl_default_impact_law(&d), auto_lr = imp_train_default_lr_schedule(&d);
        imp_trajset_free(&d);
    }
    imp_clear_error();
    const char *ln = auto_law == IMP_CDL_IMPACT_NEWTON ? "newton" : "paper";
    if (law == -1 || law == -2) snprintf(law_name, sizeof law_name, "auto (%s)", ln);
    else if (law == -3) snprintf(law_name, sizeof law_name, "differs between the tasks");
    else snprintf(law_name, sizeof law_name, "%s", law == IMP_CDL_IMPACT_NEWTON ? "newton" : "paper");
    if (g->lr_schedule == IMP_LR_AUTO) snprintf(lr_name, sizeof lr_name, "auto (%s)", imp_lr_schedule_name(auto_lr));
    else snprintf(lr_name, sizeof lr_name, "%s", imp_lr_schedule_name(g->lr_schedule));
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    int st = sweep_appendf(
        md, len,
        "\n%s, e = %g (apparent restitution of the contact %.4f), noise %g, touch-sensor labels; %ld held-out "
        "trajectories per seed, %ld epochs, %d seeds; CD-Lagrange learns e from the data's estimate, impact law %s; "
        "learning rate %g, schedule %s\n\n"
        "| model          | labels   | runs | RMSE held-out (ref. code def.) | median | learned dU/dq at the floor / g "
        "(min .. max) | learned e (min .. max) |\n| --- | --- | --- | --- | --- | --- | --- |\n",
        g->system, g->restitution, apparent_restitution(g), g->noise, g->heldout, g->epochs, n_seeds, law_name, to.lr,
        lr_name);
    int missing = 0;
    for (int i = 0; i < n && !st; i++) {
        if (group[i] != first) continue;
        int seen = 0; /* a row per (model, labels), in plan order */
        for (int k = 0; k < i && !seen; k++)
            seen = group[k] == first && !strcmp(ys[k].model, ys[i].model) && !strcmp(ys[k].labels, ys[i].labels);
        if (!seen) st = row(res, ys, group, n, first, ys[i].model, ys[i].labels, v, md, len, &missing);
    }
    if (!st && missing)
        st = sweep_appendf(md, len, "\n%d planned run%s not finished (see 'Not done' above).\n", missing,
                           missing == 1 ? "" : "s");
    return st;
}

int sweep_report_your_data(const char *dir, const sweep_result *res, int n, char **md, size_t *len)
{
    (void)dir;
    sweep_yd_settings *ys = calloc((size_t)(n > 0 ? n : 1), sizeof *ys);
    int *group = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!ys || !group || !v) {
        free(ys), free(group), free(v);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    /* group[i]: the first task with task i's settings; -1: not a your-data task */
    int any = 0;
    for (int i = 0; i < n; i++) {
        group[i] = -1;
        if (strcmp(imp_sweep_task_get(res[i].task, "strand"), "your-data")) continue;
        if (sweep_your_data_settings(res[i].task, &ys[i])) { /* its error is listed under 'Not done' */
            imp_clear_error();
            continue;
        }
        group[i] = i;
        for (int k = 0; k < i; k++)
            if (group[k] == k && same_group(&ys[k], &ys[i])) {
                group[i] = k;
                break;
            }
        any = 1;
    }
    int st = IMP_OK;
    if (any)
        st = sweep_appendf(md, len,
                           "\n## Your data: compliant contact with a touch sensor\n\n"
                           "CD-Lagrange, ResNetContact and ResNet trained on `impulse simulate compliant-ball` data "
                           "with the touch sensor's labels handled by default (auto) and as given "
                           "(docs/your-data.md in impulse); RMSE of the rollouts from the held-out "
                           "trajectories' starts, mean ± standard error over the finished seeds, and median; "
                           "dU/dq at the floor / g is the learned potential's slope at height 0 over g (1: "
                           "gravity), e the learned restitution.\n");
    for (int i = 0; i < n && !st; i++)
        if (group[i] == i) st = table(res, ys, group, n, i, v, md, len);
    free(ys), free(group), free(v);
    return st;
}
