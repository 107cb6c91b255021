/* Loss curves from training logs: the JSON-lines files `impulse train` writes
 * (one object per epoch: epoch, loss, its terms by name, lr, seconds,
 * best_epoch). */
#include "impulse/report.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loss terms the training loops report (imp_epoch_info parts after the total). */
static const char *const TERMS[] = {"state", "contact", "l2", "l1"};
#define N_TERMS (sizeof TERMS / sizeof TERMS[0])

typedef struct log_series {
    size_t n, cap;
    double *epoch, *loss, *lr, *term[N_TERMS];
    int has_term[N_TERMS];
} log_series;

static void series_free(log_series *s)
{
    free(s->epoch), free(s->loss), free(s->lr);
    for (size_t k = 0; k < N_TERMS; k++) free(s->term[k]);
}

static int grow(double **a, size_t cap)
{
    double *p = realloc(*a, cap * sizeof(double));
    if (!p) return imp_fail(IMP_ERR_NOMEM, "training log: out of memory");
    *a = p;
    return IMP_OK;
}

static int read_log(const char *path, log_series *s)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    int st = imp_read_file(path, &buf, &len);
    if (st) return st;
    char *line = (char *)buf;
    size_t lineno = 0;
    while (!st && line && *line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        lineno++;
        double ep, loss;
        if (line[0] == '{' && !imp_json_get_number(line, "epoch", &ep) && !imp_json_get_number(line, "loss", &loss)) {
            if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 256;
                st = grow(&s->epoch, cap);
                if (!st) st = grow(&s->loss, cap);
                if (!st) st = grow(&s->lr, cap);
                for (size_t k = 0; k < N_TERMS && !st; k++) st = grow(&s->term[k], cap);
                if (st) break;
                s->cap = cap;
            }
            s->epoch[s->n] = ep, s->loss[s->n] = loss;
            if (imp_json_get_number(line, "lr", &s->lr[s->n])) s->lr[s->n] = NAN;
            for (size_t k = 0; k < N_TERMS; k++) {
                if (imp_json_get_number(line, TERMS[k], &s->term[k][s->n])) s->term[k][s->n] = NAN;
                else s->has_term[k] = 1;
            }
            s->n++;
        }
        imp_clear_error();
        line = nl ? nl + 1 : NULL;
    }
    free(buf);
    if (!st && s->n == 0) st = imp_fail(IMP_ERR_FORMAT, "%s: no epoch lines (JSON objects with epoch and loss)", path);
    return st;
}

/* A log's label: its file name without the folder and the ".log.jsonl" or
 * ".jsonl" ending (written into buf). */
static const char *base_name(const char *p, char *buf, size_t cap)
{
    const char *s = strrchr(p, '/');
    s = s ? s + 1 : p;
    size_t n = strlen(s);
    if (n > 10 && !strcmp(s + n - 10, ".log.jsonl")) n -= 10;
    else if (n > 6 && !strcmp(s + n - 6, ".jsonl")) n -= 6;
    snprintf(buf, cap, "%.*s", (int)n, s);
    return buf;
}

/* A log's curve label: the model written beside it (OUT.log.jsonl next to
 * OUT, whose meta names the model: "cdl", "chnn", ...), else the file name
 * (written into buf). */
static const char *model_name(const char *log, char *buf, size_t cap)
{
    size_t n = strlen(log);
    char path[4096];
    imp_npz *z = NULL;
    buf[0] = '\0';
    if (n > 10 && n - 10 < sizeof path && !strcmp(log + n - 10, ".log.jsonl")) {
        snprintf(path, sizeof path, "%.*s", (int)(n - 10), log);
        const char *meta = NULL;
        if (!imp_npz_load(&z, path) && (meta = imp_npz_meta(z)) &&
            imp_json_get_string(meta, "model", buf, cap))
            buf[0] = '\0';
        imp_npz_free(z);
        imp_clear_error();
    }
    return buf[0] ? buf : base_name(log, buf, cap);
}

/* 1 if the log's learning rate changes over its epochs */
static int lr_varies(const log_series *s)
{
    for (size_t t = 1; t < s->n; t++)
        if (isfinite(s->lr[t]) && isfinite(s->lr[0]) && s->lr[t] != s->lr[0]) return 1;
    return 0;
}

int imp_report_plot_log(const char *const *logs, const char *const *labels, size_t n, const char *path_stem)
{
    if (!logs || n == 0) return imp_fail(IMP_ERR_INVALID, "plot-log: no training log given");
    log_series *s = calloc(n, sizeof *s);
    if (!s) return imp_fail(IMP_ERR_NOMEM, "plot-log: out of memory");
    int st = IMP_OK;
    for (size_t i = 0; i < n && !st; i++) st = read_log(logs[i], &s[i]);
    /* the curves' labels: the model's name, with the file's where two logs hold the same model */
    char(*names)[256] = st ? NULL : calloc(n, sizeof *names);
    if (!st && !names) st = imp_fail(IMP_ERR_NOMEM, "plot-log: out of memory");
    for (size_t i = 0; i < n && !st; i++) {
        if (labels && labels[i]) snprintf(names[i], sizeof names[i], "%s", labels[i]);
        else model_name(logs[i], names[i], sizeof names[i]);
    }
    int *twin = st ? NULL : calloc(n, sizeof *twin);
    if (!st && !twin) st = imp_fail(IMP_ERR_NOMEM, "plot-log: out of memory");
    for (size_t i = 0; i < n && !st; i++)
        for (size_t j = 0; j < n; j++) twin[i] |= j != i && !strcmp(names[i], names[j]);
    for (size_t i = 0; i < n && !st && !labels; i++) {
        char nb[256];
        if (twin[i] && strcmp(names[i], base_name(logs[i], nb, sizeof nb))) {
            char both[256];
            snprintf(both, sizeof both, "%.120s (%.120s)", names[i], nb);
            snprintf(names[i], sizeof names[i], "%s", both);
        }
    }
    /* the learning rate: a panel when it changes over a run; a constant one is said in the title */
    int lr_panel = 0, lr_same = 1;
    for (size_t i = 0; i < n && !st; i++) {
        lr_panel |= lr_varies(&s[i]);
        lr_same &= isfinite(s[i].lr[0]) && s[i].lr[0] == s[0].lr[0];
    }
    imp_figure *fig = st ? NULL : imp_figure_new(lr_panel ? 2 : 1, 2, 11, lr_panel ? 7.4 : 4.0);
    if (!st && !fig) st = imp_fail(IMP_ERR_NOMEM, "plot-log: figure");
    if (!st) {
        char t[300];
        const char *what = n == 1 ? names[0] : "training logs";
        if (!lr_panel && lr_same) snprintf(t, sizeof t, "%s (learning rate %g throughout)", what, s[0].lr[0]);
        else if (!lr_panel && n == 1) snprintf(t, sizeof t, "%s", what);
        else if (!lr_panel) snprintf(t, sizeof t, "%s (constant learning rates, in the legend)", what);
        else snprintf(t, sizeof t, "%s", what);
        imp_figure_title(fig, t);
        imp_figure_axes(fig, 0, "training loss (mean over the epoch's minibatches)", "epoch", "loss");
        imp_figure_axes(fig, 1, "loss terms", "epoch", "loss term");
        if (lr_panel) imp_figure_axes(fig, 2, "learning rate", "epoch", "learning rate");
        imp_figure_logscale(fig, 0, 0, 1);
        imp_figure_logscale(fig, 1, 0, 1);
        if (lr_panel) imp_figure_logscale(fig, 2, 0, 1);
    }
    for (size_t i = 0; i < n && !st; i++) {
        char nb[300];
        const char *name = names[i];
        if (!lr_panel && !lr_same && isfinite(s[i].lr[0])) {
            snprintf(nb, sizeof nb, "%s, lr %g", names[i], s[i].lr[0]);
            name = nb;
        }
        int positive = 1;
        for (size_t t = 0; t < s[i].n; t++) positive &= s[i].loss[t] > 0;
        if (!positive) imp_figure_logscale(fig, 0, 0, 0);
        st = imp_figure_line(fig, 0, s[i].epoch, s[i].loss, s[i].n, name, NULL);
        /* finite points only (positive for the log-scale terms), compacted into tx, ty */
        double *tx = malloc(s[i].n * sizeof(double)), *ty = malloc(s[i].n * sizeof(double));
        if (!tx || !ty) st = imp_fail(IMP_ERR_NOMEM, "plot-log: out of memory");
        for (size_t k = 0; k < N_TERMS && !st; k++) {
            if (!s[i].has_term[k]) continue;
            size_t m = 0;
            for (size_t t = 0; t < s[i].n; t++)
                if (isfinite(s[i].term[k][t]) && s[i].term[k][t] > 0) tx[m] = s[i].epoch[t], ty[m] = s[i].term[k][t], m++;
            char lab[400];
            if (n > 1) snprintf(lab, sizeof lab, "%s: %s", name, TERMS[k]);
            else snprintf(lab, sizeof lab, "%s", TERMS[k]);
            if (m) st = imp_figure_line(fig, 1, tx, ty, m, lab, NULL);
        }
        size_t m = 0;
        for (size_t t = 0; !st && t < s[i].n; t++)
            if (isfinite(s[i].lr[t])) tx[m] = s[i].epoch[t], ty[m] = s[i].lr[t], m++;
        if (!st && m && lr_panel) st = imp_figure_line(fig, 2, tx, ty, m, name, NULL);
        free(tx), free(ty);
    }
    if (!st) st = imp_figure_save(fig, path_stem);
    imp_figure_free(fig);
    free(names);
    free(twin);
    for (size_t i = 0; i < n; i++) series_free(&s[i]);
    free(s);
    return st;
}
