/* `impulse sweep report`: what is done, what is missing, how long the tasks
 * took and what the sweep would take on N ranks, and each strand's tables
 * and figures from whatever is finished. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"
#include "impulse/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sweep_appendf(char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return imp_fail(IMP_ERR_INVALID, "report: format error");
    char *nb = realloc(*buf, *len + (size_t)n + 1);
    if (!nb) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    va_start(ap, fmt);
    vsnprintf(nb + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *buf = nb;
    *len += (size_t)n;
    return IMP_OK;
}

void sweep_mean_se(const double *x, int n, double *mean, double *se)
{
    double s = 0, s2 = 0;
    for (int i = 0; i < n; i++) s += x[i];
    *mean = s / n;
    *se = 0;
    if (!isfinite(*mean) || n < 2) return;
    for (int i = 0; i < n; i++) s2 += (x[i] - *mean) * (x[i] - *mean);
    *se = sqrt(s2 / (n - 1) / n);
}

void sweep_fmt_mean_se(char *buf, size_t cap, double mean, double se, int n)
{
    if (!isfinite(mean)) snprintf(buf, cap, "diverged");
    else if (n < 2) snprintf(buf, cap, "%.4g", mean);
    else imp_format_mean_se(buf, cap, mean, se);
}

int sweep_row_append(imp_json *j, char **out, size_t *len)
{
    int st = imp_json_text(j) ? sweep_appendf(out, len, "%s\n", imp_json_text(j))
                              : imp_fail(IMP_ERR_NOMEM, "out of memory");
    imp_json_free(j);
    return st;
}

int sweep_rows(const char *dir, const char *what, sweep_row_fn row, void *user, char **jsonl)
{
    if (!dir || !jsonl) return imp_fail(IMP_ERR_INVALID, "%s rows: NULL", what);
    *jsonl = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/plan.txt", dir);
    imp_sweep_plan plan;
    int st = imp_sweep_plan_load(&plan, path);
    if (st) return imp_fail_context(st, "%s is not a sweep folder", dir);
    char *out = NULL;
    size_t len = 0;
    st = sweep_appendf(&out, &len, "%s", "");
    for (int i = 0; i < plan.n_tasks && !st; i++) {
        sweep_result r = {&plan.tasks[i], NULL, NULL};
        if (imp_sweep_task_state(dir, r.task) != IMP_SWEEP_DONE) continue;
        snprintf(path, sizeof path, "%s/tasks/%s/result.npz", dir, r.task->id);
        if (imp_npz_load(&r.z, path) || !(r.meta = imp_npz_meta(r.z)))
            st = imp_fail_context(IMP_ERR_FORMAT, "task '%s': result", r.task->id);
        else
            st = row(&r, user, &out, &len);
        imp_npz_free(r.z);
    }
    imp_sweep_plan_free(&plan);
    if (st) {
        free(out);
        return st;
    }
    *jsonl = out;
    return IMP_OK;
}

int sweep_save_figure(imp_figure *fig, const char *dir, const char *stem, const char *caption, char **md, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, stem);
    int st = imp_figure_save(fig, path);
    imp_figure_free(fig);
    if (st) {
        st = sweep_appendf(md, len, "\n(%s not drawn: %s)\n", caption, imp_last_error());
        imp_clear_error();
        return st;
    }
    return sweep_appendf(md, len, "\n![%s](%s.png)\n", caption, stem);
}

/* Greedy list scheduling of durations (already longest first) on n ranks:
 * what the dynamic runner does when every rank asks for the next task as
 * soon as it is free. */
static double makespan(const double *d, int n_tasks, int ranks)
{
    double *load = calloc((size_t)ranks, sizeof(double));
    if (!load) return -1;
    for (int i = 0; i < n_tasks; i++) {
        int best = 0;
        for (int r = 1; r < ranks; r++)
            if (load[r] < load[best]) best = r;
        load[best] += d[i];
    }
    double m = 0;
    for (int r = 0; r < ranks; r++) m = load[r] > m ? load[r] : m;
    free(load);
    return m;
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Task durations from log.jsonl ("done" lines; the last one per task). */
static void read_durations(const char *dir, const imp_sweep_plan *plan, double *dur)
{
    for (int i = 0; i < plan->n_tasks; i++) dur[i] = -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/log.jsonl", dir);
    unsigned char *buf = NULL;
    size_t len = 0;
    if (imp_read_file(path, &buf, &len)) {
        imp_clear_error();
        return;
    }
    char *save = NULL;
    for (char *ln = strtok_r((char *)buf, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        char id[IMP_SWEEP_ID_MAX], status[32];
        double sec;
        if (imp_json_get_string(ln, "id", id, sizeof id) || imp_json_get_string(ln, "status", status, sizeof status) ||
            imp_json_get_number(ln, "seconds", &sec) || strcmp(status, "done")) {
            imp_clear_error();
            continue;
        }
        for (int i = 0; i < plan->n_tasks; i++)
            if (!strcmp(plan->tasks[i].id, id)) dur[i] = sec;
    }
    free(buf);
}

/* A task's seconds: its runner's wall time (log.jsonl), or, when the task
 * was resumed from a training state written in an earlier run, the
 * training's own total over all runs plus the evaluation (result meta
 * train_seconds + eval_seconds) if that is longer. */
static double task_seconds(double logged, const char *meta)
{
    double tr = NAN, ev = 0;
    if (!meta || imp_json_get_number(meta, "train_seconds", &tr) || !isfinite(tr)) {
        imp_clear_error();
        return logged;
    }
    if (imp_json_get_number(meta, "eval_seconds", &ev) || !isfinite(ev)) {
        imp_clear_error();
        ev = 0;
    }
    return tr + ev > logged ? tr + ev : logged;
}

/* One row per finished task: seconds, the training threads and the plan's
 * estimate (cost), in plan order. */
static int task_table(const imp_sweep_plan *plan, const sweep_result *res, const double *logged, char **md,
                      size_t *len)
{
    int st = sweep_appendf(md, len,
                           "\nPer task (seconds: wall time, a resumed training's over all its runs; threads: the "
                           "training's; estimate: the plan's cost):\n\n| task | seconds | threads | resumed at epoch | "
                           "estimate (s) |\n|---|---|---|---|---|\n");
    for (int i = 0; i < plan->n_tasks && !st; i++) {
        if (logged[i] < 0 || !res[i].meta) continue;
        double thr = NAN, resumed = 0, cost = NAN;
        if (imp_json_get_number(res[i].meta, "threads", &thr)) imp_clear_error();
        if (imp_json_get_number(res[i].meta, "resumed_at_epoch", &resumed)) imp_clear_error(), resumed = 0;
        if (imp_sweep_task_double(&plan->tasks[i], "cost", NAN, 0, 1e300, &cost)) imp_clear_error(), cost = NAN;
        char t[32] = "-", r[32] = "-", c[32] = "-";
        if (isfinite(thr)) snprintf(t, sizeof t, "%.0f", thr);
        if (resumed > 0) snprintf(r, sizeof r, "%.0f", resumed);
        if (isfinite(cost)) snprintf(c, sizeof c, "%.3g", cost);
        st = sweep_appendf(md, len, "| %s | %.0f | %s | %s | %s |\n", plan->tasks[i].id,
                           task_seconds(logged[i], res[i].meta), t, r, c);
    }
    return st;
}

static int timing_section(const char *dir, const imp_sweep_plan *plan, const sweep_result *res, char **md,
                          size_t *len)
{
    double *dur = malloc((size_t)plan->n_tasks * 2 * sizeof(double));
    if (!dur) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    double *logged = dur + plan->n_tasks;
    read_durations(dir, plan, logged);
    int n = 0;
    double total = 0;
    for (int i = 0; i < plan->n_tasks; i++)
        if (logged[i] >= 0) {
            dur[n] = task_seconds(logged[i], res[i].meta);
            total += dur[n++];
        }
    int st = IMP_OK;
    if (n == 0) {
        free(dur);
        return IMP_OK;
    }
    qsort(dur, (size_t)n, sizeof(double), cmp_desc);
    st = sweep_appendf(md, len,
                       "\n## Time\n\n%d finished tasks took %.0f s in all (longest %.0f s, shortest %.1f s; wall time "
                       "of each task as its runner measured it, log.jsonl, or a resumed training's over all its "
                       "runs).\nMakespan of these tasks on N ranks under "
                       "the dynamic runner (greedy, longest first), against the bound max(longest task, total / N):\n\n"
                       "| ranks | makespan (s) | bound (s) | efficiency |\n|---|---|---|---|\n",
                       n, total, dur[0], dur[n - 1]);
    /* powers of two up to the first that runs every task at once or reaches the longest task: more ranks
     * than that cannot finish sooner */
    for (int ranks = 1; !st; ranks *= 2) {
        double m = makespan(dur, n, ranks);
        double bound = total / ranks > dur[0] ? total / ranks : dur[0];
        st = sweep_appendf(md, len, "| %d | %.3g | %.3g | %.0f %% |\n", ranks, m, bound, 100.0 * total / (ranks * m));
        if (ranks >= n || m <= dur[0] || ranks >= 256) break;
    }
    if (!st) st = task_table(plan, res, logged, md, len);
    free(dur);
    return st;
}

static const char *state_name(imp_sweep_state s)
{
    switch (s) {
    case IMP_SWEEP_DONE: return "done";
    case IMP_SWEEP_RUNNING: return "running";
    case IMP_SWEEP_STALE: return "interrupted";
    default: return "pending";
    }
}

int imp_sweep_report(const char *dir, char **markdown)
{
    if (!dir) return imp_fail(IMP_ERR_INVALID, "sweep report: NULL");
    char path[4096];
    snprintf(path, sizeof path, "%s/plan.txt", dir);
    imp_sweep_plan plan;
    int st = imp_sweep_plan_load(&plan, path);
    if (st) return imp_fail_context(st, "%s is not a sweep folder", dir);
    sweep_result *res = calloc((size_t)plan.n_tasks, sizeof *res);
    if (!res) {
        imp_sweep_plan_free(&plan);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    char *md = NULL;
    size_t len = 0;
    int n_done = 0;
    for (int i = 0; i < plan.n_tasks; i++) {
        res[i].task = &plan.tasks[i];
        if (imp_sweep_task_state(dir, &plan.tasks[i]) != IMP_SWEEP_DONE) continue;
        snprintf(path, sizeof path, "%s/tasks/%s/result.npz", dir, plan.tasks[i].id);
        if (imp_npz_load(&res[i].z, path) || !(res[i].meta = imp_npz_meta(res[i].z))) {
            st = imp_fail_context(IMP_ERR_FORMAT, "task '%s': result", plan.tasks[i].id);
            break;
        }
        n_done++;
    }
    if (!st)
        st = sweep_appendf(&md, &len, "# Sweep report\n\n%d of %d tasks done (plan: %s/plan.txt).\n", n_done,
                           plan.n_tasks, dir);
    if (!st && n_done < plan.n_tasks) {
        st = sweep_appendf(&md, &len, "\nNot done:\n\n| task | state | last error |\n|---|---|---|\n");
        for (int i = 0; i < plan.n_tasks && !st; i++) {
            if (res[i].z) continue;
            char err[200] = "";
            unsigned char *buf = NULL;
            size_t n = 0;
            snprintf(path, sizeof path, "%s/tasks/%s/error.txt", dir, plan.tasks[i].id);
            if (!imp_read_file(path, &buf, &n)) {
                snprintf(err, sizeof err, "%s", (char *)buf);
                err[strcspn(err, "\n|")] = 0;
                free(buf);
            }
            imp_clear_error();
            st = sweep_appendf(&md, &len, "| %s | %s | %s |\n", plan.tasks[i].id,
                               state_name(imp_sweep_task_state(dir, &plan.tasks[i])), err);
        }
    }
    if (!st) st = sweep_report_chnn(dir, res, plan.n_tasks, &md, &len);
    if (!st) st = sweep_report_cdl(dir, res, plan.n_tasks, &md, &len);
    if (!st) st = sweep_report_impact(dir, res, plan.n_tasks, &md, &len);
    if (!st) st = sweep_report_your_data(dir, res, plan.n_tasks, &md, &len);
    if (!st) st = sweep_report_cube(dir, res, plan.n_tasks, &md, &len);
    if (!st) st = sweep_report_contact(dir, res, plan.n_tasks, &md, &len);
    if (!st) st = timing_section(dir, &plan, res, &md, &len);
    if (!st) {
        snprintf(path, sizeof path, "%s/report.md", dir);
        st = imp_write_file_atomic(path, md, len);
        /* tables and figures on one page; without Python the report stands alone */
        if (!st && imp_report_index_html(dir, "Sweep report")) imp_clear_error();
    }
    for (int i = 0; i < plan.n_tasks; i++) imp_npz_free(res[i].z);
    free(res);
    imp_sweep_plan_free(&plan);
    if (!st && markdown) {
        *markdown = md;
        md = NULL;
    }
    free(md);
    return st;
}
