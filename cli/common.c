#include "cli.h"
#include "impulse/cdl.h"
#include "impulse/constrained.h"
#include "core/num.h"
#include "impulse/contact_systems.h"
#include "impulse/io.h"

#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_note_widened(const char *verb, const char *path, int n)
{
    if (n > 0)
        fprintf(stderr, "impulse %s: notice: %s: %d float32 array%s converted to float64\n", verb, path, n,
                n == 1 ? "" : "s");
}

int cli_fail(const char *verb)
{
    const char *msg = imp_last_error();
    fprintf(stderr, "impulse %s: error: %s\n", verb, msg[0] ? msg : "unknown failure");
    return 1;
}

int cli_failf(const char *verb, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "impulse %s: error: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

void cli_json_begin(imp_json *j, const char *verb)
{
    imp_json_init(j);
    imp_json_begin_object(j);
    imp_json_kv_string(j, "verb", verb);
}

int cli_json_print(imp_json *j, const char *verb)
{
    imp_json_end_object(j);
    const char *t = imp_json_text(j);
    int rc = 0;
    if (t) {
        printf("%s\n", t);
        if (fflush(stdout)) rc = cli_failf(verb, "standard output: %s", strerror(errno));
    } else {
        rc = cli_failf(verb, "--json: out of memory");
    }
    imp_json_free(j);
    return rc;
}

int cli_json_check_output(const char *verb, int json, const char *out)
{
    if (json && out && !strcmp(out, "-"))
        return cli_failf(verb, "--json and an output of '-' both want standard output: name a file for one of them");
    return 0;
}

void cli_json_kv_array(imp_json *j, const char *key, const double *x, int n)
{
    imp_json_key(j, key);
    imp_json_begin_array(j);
    for (int i = 0; i < n; i++) imp_json_number(j, x[i]);
    imp_json_end_array(j);
}

void cli_json_contact_law(imp_json *j, const struct imp_model *m)
{
    if (m->geom.n_pairs <= 0) return;
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    imp_model_get_contact_law(m, e, mu);
    cli_json_kv_array(j, "restitution", e, m->geom.n_pairs);
    imp_json_kv_string(j, "restitution_source", m->cfg.learn_restitution ? "learned" : "fixed");
    if (m->cfg.friction) cli_json_kv_array(j, "friction", mu, m->geom.n_pairs);
}

void cli_contact_pairs(const imp_contact_geometry *g, const imp_model *m, double tol, const double *min_gap,
                       imp_json *j, FILE *txt)
{
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    if (m) imp_model_get_contact_law(m, e, mu);
    int count[IMP_MAX_BODIES] = {0};
    for (int p = 0; p < g->n_pairs; p++) {
        count[g->pairs[p].body_j]++;
        if (g->pairs[p].body_i != IMP_WALL) count[g->pairs[p].body_i]++;
    }
    if (j) {
        imp_json_key(j, "pairs");
        imp_json_begin_array(j);
    } else if (g->n_pairs > 0) {
        fprintf(txt, "  contact pairs (CD-Lagrange: events per pair; the label or contact network says when, the gap "
                     "at the step's drifted position (at most %.4g) and the closing velocity say which of a body's "
                     "pairs; rollouts stop any pair a body reaches unflagged: the non-penetration guard):\n", tol);
    }
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int fr = m && m->cfg.friction && imp_contact_pair_has_tangent(g, p);
        int shared = count[c->body_j] > 1 || (c->body_i != IMP_WALL && count[c->body_i] > 1);
        if (j) {
            imp_json_begin_object(j);
            imp_json_kv_int(j, "pair", p);
            imp_json_key(j, "body_i");
            if (c->body_i == IMP_WALL) imp_json_null(j);
            else imp_json_int(j, c->body_i);
            imp_json_kv_int(j, "body_j", c->body_j);
            imp_json_kv_string(j, "kind", c->kind == IMP_PAIR_SPHERE ? "sphere" : "plane");
            if (c->kind == IMP_PAIR_SPHERE)
                imp_json_kv_number(j, "radii_sum", g->radius[c->body_i] + g->radius[c->body_j]);
            else
                cli_json_kv_array(j, "normal", c->normal, g->dim), imp_json_kv_number(j, "offset", c->offset);
            if (m) imp_json_kv_number(j, "restitution", e[p]);
            if (fr) imp_json_kv_number(j, "friction", mu[p]);
            imp_json_kv_string(j, "impulse_when", shared ? "gated and in reach" : "gated");
            if (min_gap) imp_json_kv_number(j, "min_gap", min_gap[p]);
            imp_json_end_object(j);
            continue;
        }
        char who[32];
        if (c->body_i == IMP_WALL) snprintf(who, sizeof who, "wall");
        else snprintf(who, sizeof who, "body %d", c->body_i);
        fprintf(txt, "    pair %d: %s -> body %d", p, who, c->body_j);
        if (c->kind == IMP_PAIR_SPHERE) {
            fprintf(txt, ", disks: gap = distance - %g", g->radius[c->body_i] + g->radius[c->body_j]);
        } else {
            fprintf(txt, ", normal (");
            for (int a = 0; a < g->dim; a++) fprintf(txt, "%s%g", a ? ", " : "", c->normal[a]);
            fprintf(txt, "), offset %g", c->offset);
        }
        if (m) fprintf(txt, ", e %.4g (%s)", e[p], m->cfg.learn_restitution ? "learned" : "fixed");
        if (fr) fprintf(txt, ", mu %.4g", mu[p]);
        if (shared)
            fprintf(txt, ": an impulse when its bodies are gated and it is closing and penetrated in the step, or "
                         "within %.4g if no pair of theirs is penetrated (their nearest if none is within%s)", tol,
                    c->kind == IMP_PAIR_SPHERE ? "; a disk pair only when it is both disks' nearest" : "");
        else
            fprintf(txt, ": an impulse whenever body %d is gated (its only pair)", c->body_j);
        if (min_gap) fprintf(txt, "; lowest gap in the rollouts %.4g", min_gap[p]);
        fprintf(txt, "\n");
    }
    if (j) imp_json_end_array(j);
}

/* Option values go through the library's checked helper (core/num.h). */
int cli_parse_long(const char *opt, const char *text, long lo, long hi, long *out)
{
    int64_t v;
    int st = imp_num_parse_int64(text, opt, lo, hi, &v);
    if (!st) *out = (long)v;
    return st;
}

int cli_parse_range(const char *opt, const char *text, int *a, int *b)
{
    char tail;
    if (!text || sscanf(text, "%d:%d%c", a, b, &tail) != 2 || *a < 0 || *b <= *a)
        return imp_fail(IMP_ERR_INVALID, "%s: '%s' is not A:B with 0 <= A < B (episodes A..B-1)", opt,
                        text ? text : "(missing)");
    return IMP_OK;
}

int cli_parse_precision(const char *opt, const char *text, int *single)
{
    if (!text || (strcmp(text, "single") && strcmp(text, "double")))
        return imp_fail(IMP_ERR_INVALID, "%s: '%s', want single or double", opt, text ? text : "(missing)");
    *single = !strcmp(text, "single");
    return IMP_OK;
}

int cli_parse_double(const char *opt, const char *text, double lo, double hi, double *out)
{
    double v;
    int st = imp_num_parse_double(text, opt, &v);
    if (st) return st;
    if (v < lo || v > hi) return imp_fail(IMP_ERR_INVALID, "%s: %s is out of range [%g, %g]", opt, text, lo, hi);
    *out = v;
    return IMP_OK;
}

/* The items of a comma-separated list, one at a time, into item (cap). */
static int next_item(const char *opt, const char **p, char *item, size_t cap)
{
    size_t n = strcspn(*p, ",");
    if (n >= cap) return imp_fail(IMP_ERR_INVALID, "%s: item '%.20s...' is too long", opt, *p);
    memcpy(item, *p, n);
    item[n] = '\0';
    *p += n + ((*p)[n] == ',');
    return IMP_OK;
}

/* A comma-separated list, each item through `one` into element k of out. */
static int parse_list(const char *opt, const char *text, int max, int *n,
                      int (*one)(const char *opt, const char *item, void *out, int k), void *out)
{
    *n = 0;
    if (!text || !*text) return imp_fail(IMP_ERR_INVALID, "%s: missing value", opt);
    const char *p = text;
    char item[64];
    while (*p) {
        if (*n >= max) return imp_fail(IMP_ERR_INVALID, "%s: more than %d numbers", opt, max);
        int st = next_item(opt, &p, item, sizeof item);
        if (!st) st = one(opt, item, out, *n);
        if (st) return st;
        (*n)++;
        if (!*p && p[-1] == ',') return imp_fail(IMP_ERR_INVALID, "%s: '%s' ends with a comma", opt, text);
    }
    return IMP_OK;
}

static int one_double(const char *opt, const char *item, void *out, int k)
{
    return imp_num_parse_double(item, opt, (double *)out + k);
}

typedef struct long_range { long lo, hi, *out; } long_range;

static int one_long(const char *opt, const char *item, void *out, int k)
{
    long_range *r = out;
    return cli_parse_long(opt, item, r->lo, r->hi, r->out + k);
}

int cli_parse_double_list(const char *opt, const char *text, double *out, int max, int *n)
{
    return parse_list(opt, text, max, n, one_double, out);
}

int cli_parse_long_list(const char *opt, const char *text, long lo, long hi, long *out, int max, int *n)
{
    long_range r = {lo, hi, out};
    return parse_list(opt, text, max, n, one_long, &r);
}

int cli_progress_enabled(void)
{
    const char *e = getenv("IMPULSE_PROGRESS");
    if (e) return strcmp(e, "0") != 0;
    return isatty(2);
}

static volatile sig_atomic_t stop_requested_ = 0;
static void on_stop_signal(int sig)
{
    stop_requested_ = 1;
    signal(sig, SIG_DFL);
}
void cli_catch_stop_signals(void)
{
    signal(SIGINT, on_stop_signal);
    signal(SIGTERM, on_stop_signal);
}
int cli_stop_requested(void)
{
    return stop_requested_ != 0;
}

int cli_handle_labels(const char *verb, imp_trajset *ts, const char *mode_name, int quiet, char *note, size_t cap)
{
    note[0] = 0;
    imp_label_mode mode;
    if (imp_label_mode_from_name(mode_name ? mode_name : "auto", &mode)) return cli_fail(verb);
    if (!ts->has_contact && mode != IMP_LABELS_GEOMETRY) return 0;
    imp_label_report r;
    if (imp_contact_labels_apply(ts, mode, &r)) return cli_fail(verb);
    int odd = r.multi || r.no_change || r.no_pair;
    if (quiet && !odd) return 0;
    const char *why = mode != IMP_LABELS_AUTO ? "as asked"
                      : r.mode == IMP_LABELS_AS_GIVEN ? "default for meta labels \"impact\", \"onset\" or \"as-given\""
                                                      : "default for data whose meta labels are not \"impact\", \"onset\" or \"as-given\"";
    snprintf(note, cap,
            "impulse %s: %s: contact labels%s: %d in %d intervals, %d impacts (velocity reversals); %d impacts carry "
            "several labels (%d extra, %d while separating), %d labels show no velocity change, %d resting, "
            "%d on bodies without a contact pair (rest: |u| <= %.3g); handling %s (%s): %d labels kept%s",
            verb, odd ? "notice" : "info",
            r.mode == IMP_LABELS_GEOMETRY ? " (derived from the motion and the geometry)" : "", r.labels, r.intervals,
            r.impacts, r.multi, r.extra, r.separating,
            r.no_change, r.resting, r.no_pair, r.v_rest, imp_label_mode_name(r.mode), why, r.kept,
            r.mode != IMP_LABELS_AS_GIVEN && r.interior ? ", one per impact at its first sample" : "");
    if (r.mode != IMP_LABELS_AS_GIVEN && r.interior) {
        size_t n = strlen(note);
        snprintf(note + n, cap - n, "; %d samples inside impacts (the bodies still touch) left out of the loss",
                 r.interior);
    }
    return 0;
}

int cli_checkpoint_kind(const char *path, char *kind, size_t cap, int *constrained)
{
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return imp_fail_context(st, "--model");
    const char *meta = imp_npz_meta(z);
    st = meta && !imp_json_get_string(meta, "model", kind, cap) ? IMP_OK
         : imp_fail(IMP_ERR_FORMAT, "%s: no model kind in its meta (not an impulse checkpoint?)", path);
    char fmt[32];
    *constrained = 0;
    if (!st) {
        *constrained = !imp_json_get_string(meta, "format", fmt, sizeof fmt) && !strcmp(fmt, "impulse-cmodel");
        imp_clear_error();
    }
    imp_npz_free(z);
    return st;
}

int cli_parse_list(const char *opt, const char *text, int n, const char *what, double *out)
{
    int k = 0;
    int st = cli_parse_double_list(opt, text, out, n, &k);
    if (st == IMP_OK && k != n)
        st = imp_fail(IMP_ERR_INVALID, "%s: needs %d comma-separated numbers (%s), got %d", opt, n, what, k);
    return st;
}

void cli_chnn_data_meta(imp_json *j, const char *tool, const imp_csys *s, const char *system_file)
{
    imp_json_init(j);
    imp_json_begin_object(j);
    imp_json_kv_string(j, "format", "impulse-chnn-trajectories");
    imp_json_kv_string(j, "tool", tool);
    imp_json_kv_string(j, "version", IMP_VERSION_STRING);
    imp_json_kv_string(j, "system", s->name);
    if (system_file) {
        imp_json_kv_string(j, "system_file", system_file);
        imp_json_kv_string(j, "system_text", s->source);
    }
    imp_json_kv_int(j, "d", s->d);
    imp_json_kv_int(j, "n_points", s->n_points);
    imp_json_kv_int(j, "n_bodies", s->n_bodies);
    imp_json_kv_int(j, "n_constraint_rows", s->n_rows);
}

int cli_npz_save_with_meta(imp_npz *z, imp_json *j, int st, const char *out)
{
    if (!st) {
        imp_json_end_object(j);
        const char *text = imp_json_text(j);
        st = text ? imp_npz_set_meta(z, text) : imp_fail(IMP_ERR_NOMEM, "meta");
    }
    imp_json_free(j);
    if (!st) st = imp_npz_save(z, out);
    imp_npz_free(z);
    return st;
}
