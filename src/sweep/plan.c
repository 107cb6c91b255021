/* Sweep plans: parse, print, typed access to a task's settings. */
#define _POSIX_C_SOURCE 200809L
#include "impulse/sweep.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_HEADER "# impulse sweep plan 1\n"

static void task_clear(imp_sweep_task *t)
{
    for (int i = 0; i < t->n_keys; i++) {
        free(t->keys[i]);
        free(t->values[i]);
    }
    t->n_keys = 0;
}

void imp_sweep_plan_free(imp_sweep_plan *plan)
{
    if (!plan) return;
    for (int i = 0; i < plan->n_tasks; i++) task_clear(&plan->tasks[i]);
    free(plan->tasks);
    plan->tasks = NULL;
    plan->n_tasks = 0;
}

const char *imp_sweep_task_get(const imp_sweep_task *t, const char *key)
{
    for (int i = 0; i < t->n_keys; i++)
        if (!strcmp(t->keys[i], key)) return t->values[i];
    return NULL;
}

static int id_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_' || c == ':';
}

/* Parse "key=value key=value ..." (the words after "task") into t. */
static int parse_words(imp_sweep_task *t, const char *words, const char *what, int line)
{
    memset(t, 0, sizeof *t);
    t->line = line;
    t->cost = 1.0;
    const char *p = words;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        const char *w = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        size_t len = (size_t)(p - w);
        const char *eq = memchr(w, '=', len);
        if (!eq || eq == w || eq == w + len - 1) {
            task_clear(t);
            return imp_fail(IMP_ERR_FORMAT, "%s: line %d: '%.*s' is not key=value", what, line, (int)len, w);
        }
        if (t->n_keys == IMP_SWEEP_MAX_KEYS) {
            task_clear(t);
            return imp_fail(IMP_ERR_FORMAT, "%s: line %d: more than %d settings", what, line, IMP_SWEEP_MAX_KEYS);
        }
        char *k = strndup(w, (size_t)(eq - w)), *v = strndup(eq + 1, len - (size_t)(eq - w) - 1);
        if (!k || !v) {
            free(k);
            free(v);
            task_clear(t);
            return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", what);
        }
        for (int i = 0; i < t->n_keys; i++)
            if (!strcmp(t->keys[i], k)) {
                imp_fail(IMP_ERR_FORMAT, "%s: line %d: '%s' given twice", what, line, k);
                free(k);
                free(v);
                task_clear(t);
                return IMP_ERR_FORMAT;
            }
        t->keys[t->n_keys] = k;
        t->values[t->n_keys++] = v;
    }
    const char *id = imp_sweep_task_get(t, "id");
    if (!id) {
        task_clear(t);
        return imp_fail(IMP_ERR_FORMAT, "%s: line %d: task has no id=", what, line);
    }
    size_t n = strlen(id);
    int ok = n < IMP_SWEEP_ID_MAX && strcmp(id, ".") && strcmp(id, "..");
    for (size_t i = 0; ok && i < n; i++) ok = id_char_ok(id[i]);
    if (!ok) {
        imp_fail(IMP_ERR_FORMAT, "%s: line %d: id '%s' must be 1-%d of [A-Za-z0-9._:-]", what, line, id,
                 IMP_SWEEP_ID_MAX - 1);
        task_clear(t);
        return IMP_ERR_FORMAT;
    }
    memcpy(t->id, id, n + 1);
    if (!imp_sweep_task_get(t, "strand")) {
        imp_fail(IMP_ERR_FORMAT, "%s: line %d: task '%s' has no strand=", what, line, t->id);
        task_clear(t);
        return IMP_ERR_FORMAT;
    }
    double cost;
    int st = imp_sweep_task_double(t, "cost", 1.0, 0.0, 1e9, &cost);
    if (st) {
        imp_fail_context(st, "%s: line %d", what, line);
        task_clear(t);
        return st;
    }
    t->cost = cost;
    return IMP_OK;
}

static int plan_push(imp_sweep_plan *plan, imp_sweep_task *t, const char *what)
{
    for (int i = 0; i < plan->n_tasks; i++)
        if (!strcmp(plan->tasks[i].id, t->id)) {
            imp_fail(IMP_ERR_FORMAT, "%s: line %d: id '%s' already used on line %d", what, t->line, t->id,
                     plan->tasks[i].line);
            task_clear(t);
            return IMP_ERR_FORMAT;
        }
    imp_sweep_task *nt = realloc(plan->tasks, (size_t)(plan->n_tasks + 1) * sizeof *nt);
    if (!nt) {
        task_clear(t);
        return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", what);
    }
    plan->tasks = nt;
    plan->tasks[plan->n_tasks++] = *t;
    return IMP_OK;
}

int imp_sweep_plan_add(imp_sweep_plan *plan, const char *words)
{
    if (!plan || !words) return imp_fail(IMP_ERR_INVALID, "sweep plan: NULL");
    imp_sweep_task t;
    int st = parse_words(&t, words, "plan", plan->n_tasks + 1);
    return st ? st : plan_push(plan, &t, "plan");
}

int imp_sweep_plan_parse(imp_sweep_plan *plan, const char *text, const char *what)
{
    if (!plan || !text) return imp_fail(IMP_ERR_INVALID, "sweep plan: NULL");
    memset(plan, 0, sizeof *plan);
    int line = 0;
    const char *p = text;
    while (*p) {
        line++;
        /* a line ends at LF, CRLF, a lone CR or the end of the text */
        size_t len = strcspn(p, "\r\n");
        const char *next = p + len;
        if (*next == '\r') next++;
        if (*next == '\n') next++;
        char *ln = strndup(p, len);
        if (!ln) {
            imp_sweep_plan_free(plan);
            return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", what);
        }
        char *s = ln;
        while (*s == ' ' || *s == '\t') s++;
        int st = IMP_OK;
        if (*s && *s != '#') {
            if (strncmp(s, "task", 4) || (s[4] != ' ' && s[4] != '\t')) {
                st = imp_fail(IMP_ERR_FORMAT, "%s: line %d: expected 'task key=value ...', got '%.40s'", what, line,
                              s);
            } else {
                imp_sweep_task t;
                st = parse_words(&t, s + 5, what, line);
                if (!st) st = plan_push(plan, &t, what);
            }
        }
        free(ln);
        if (st) {
            imp_sweep_plan_free(plan);
            return st;
        }
        p = next; /* past the end of line: at least one byte on while *p */
    }
    if (plan->n_tasks == 0) return imp_fail(IMP_ERR_FORMAT, "%s: no tasks", what);
    return IMP_OK;
}

int imp_sweep_plan_load(imp_sweep_plan *plan, const char *path)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    int st = imp_read_file(path, &buf, &len);
    if (st) return st;
    if (memchr(buf, 0, len)) {
        free(buf);
        return imp_fail(IMP_ERR_FORMAT, "%s: not a text file", path);
    }
    st = imp_sweep_plan_parse(plan, (const char *)buf, path);
    free(buf);
    return st;
}

int imp_sweep_plan_text(const imp_sweep_plan *plan, char **text)
{
    size_t cap = sizeof PLAN_HEADER;
    for (int i = 0; i < plan->n_tasks; i++) {
        cap += 6;
        for (int k = 0; k < plan->tasks[i].n_keys; k++)
            cap += strlen(plan->tasks[i].keys[k]) + strlen(plan->tasks[i].values[k]) + 2;
    }
    char *out = malloc(cap), *w = out;
    if (!out) return imp_fail(IMP_ERR_NOMEM, "sweep plan: out of memory");
    w += sprintf(w, "%s", PLAN_HEADER);
    for (int i = 0; i < plan->n_tasks; i++) {
        w += sprintf(w, "task");
        for (int k = 0; k < plan->tasks[i].n_keys; k++)
            w += sprintf(w, " %s=%s", plan->tasks[i].keys[k], plan->tasks[i].values[k]);
        *w++ = '\n';
    }
    *w = 0;
    *text = out;
    return IMP_OK;
}

int imp_sweep_plan_save(const imp_sweep_plan *plan, const char *path)
{
    char *text = NULL;
    int st = imp_sweep_plan_text(plan, &text);
    if (!st) st = imp_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

int imp_sweep_task_double(const imp_sweep_task *t, const char *key, double dflt, double lo, double hi,
                          double *out)
{
    const char *v = imp_sweep_task_get(t, key);
    if (!v) {
        *out = dflt;
        return IMP_OK;
    }
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno == ERANGE || !isfinite(x))
        return imp_fail(IMP_ERR_FORMAT, "task '%s': %s=%s is not a finite number", t->id, key, v);
    if (x < lo || x > hi)
        return imp_fail(IMP_ERR_INVALID, "task '%s': %s=%s out of [%g, %g]", t->id, key, v, lo, hi);
    *out = x;
    return IMP_OK;
}

int imp_sweep_task_int(const imp_sweep_task *t, const char *key, long dflt, long lo, long hi, long *out)
{
    const char *v = imp_sweep_task_get(t, key);
    if (!v) {
        *out = dflt;
        return IMP_OK;
    }
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno == ERANGE)
        return imp_fail(IMP_ERR_FORMAT, "task '%s': %s=%s is not an integer", t->id, key, v);
    if (x < lo || x > hi)
        return imp_fail(IMP_ERR_INVALID, "task '%s': %s=%s out of [%ld, %ld]", t->id, key, v, lo, hi);
    *out = x;
    return IMP_OK;
}
