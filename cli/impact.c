/* `impulse impact VERB` and `impulse reproduce impact` (Fazeli et al. 2017).
 * Thin: parses options, calls include/impulse/impact*.h, prints. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "impulse/impact.h"
#include "impulse/impact_analysis.h"
#include "impulse/impact_models.h"
#include "impulse/impact_reproduce.h"
#include "impulse/io.h"
#include "impulse/report.h"

/* ---- options shared by the verbs ---- */
typedef struct impact_opts {
    const char *data;
    const char *out;
    int conv_mask;        /* bit 0 stored, bit 1 corrected */
    int model;            /* -1 = all */
    imp_impact_variant variant;
    double mu, eps;       /* NaN = Table 1 */
    imp_impact_target target;
    long k, reps, seed, grid;
    double tol, mu_cap;
    int per_impact, quick, json;
    int k_given;          /* --k on the command line (else the default 120, capped at the set size) */
} impact_opts;

static void opts_default(impact_opts *o)
{
    memset(o, 0, sizeof *o);
    o->conv_mask = 3;
    o->model = -1;
    o->variant = IMP_VARIANT_AUTHORS;
    o->mu = o->eps = NAN;
    o->target = IMP_TARGET_CONTACT;
    o->k = 120;
    o->reps = 20;
    o->seed = 2017;
    o->grid = 21;
    o->tol = 0.005;
    o->mu_cap = 1.0;
}

/* Parse the options this verb accepts (`allowed` lists the names). Returns
 * 0, 1 for --help, or -1 after recording an error. */
static int parse_opts(int argc, char **argv, const char *allowed, impact_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        if (strncmp(a, "--", 2) || !strstr(allowed, a)) {
            imp_fail(IMP_ERR_INVALID, "unknown option '%s'", a);
            return -1;
        }
        if (!strcmp(a, "--per-impact")) { o->per_impact = 1; continue; }
        if (!strcmp(a, "--quick")) { o->quick = 1; continue; }
        if (!strcmp(a, "--json") && strstr(allowed, "--json")) { o->json = 1; continue; }
        if (i + 1 >= argc) { imp_fail(IMP_ERR_INVALID, "%s: missing value", a); return -1; }
        const char *v = argv[++i];
        int st = IMP_OK;
        if (!strcmp(a, "--data")) o->data = v;
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--convention")) {
            if (!strcmp(v, "both")) o->conv_mask = 3;
            else {
                imp_tangent_sign c;
                st = imp_tangent_sign_parse(v, &c, "--convention");
                if (!st) o->conv_mask = 1 << (int)c;
            }
        } else if (!strcmp(a, "--model")) {
            if (!strcmp(v, "all")) o->model = -1;
            else {
                imp_impact_model m;
                st = imp_impact_model_parse(v, &m, "--model");
                if (!st) o->model = (int)m;
            }
        } else if (!strcmp(a, "--variant")) st = imp_impact_variant_parse(v, &o->variant, "--variant");
        else if (!strcmp(a, "--target")) st = imp_impact_target_parse(v, &o->target, "--target");
        else if (!strcmp(a, "--mu")) st = cli_parse_double(a, v, 0, 10, &o->mu);
        else if (!strcmp(a, "--eps")) st = cli_parse_double(a, v, 0, 1, &o->eps);
        else if (!strcmp(a, "--mu-cap")) st = cli_parse_double(a, v, 1e-3, 10, &o->mu_cap);
        else if (!strcmp(a, "--tol")) st = cli_parse_double(a, v, 0, 0.5, &o->tol);
        else if (!strcmp(a, "--k")) { st = cli_parse_long(a, v, 1, 1000000, &o->k); o->k_given = 1; }
        else if (!strcmp(a, "--reps")) st = cli_parse_long(a, v, 1, 100000, &o->reps);
        else if (!strcmp(a, "--seed")) st = cli_parse_long(a, v, 0, LONG_MAX, &o->seed);
        else if (!strcmp(a, "--grid")) st = cli_parse_long(a, v, 2, 1001, &o->grid);
        else { imp_fail(IMP_ERR_INVALID, "unknown option '%s'", a); return -1; }
        if (st) return -1;
    }
    if (o->json && o->out && !strcmp(o->out, "-")) {
        imp_fail(IMP_ERR_INVALID, "--json and --out - both want standard output: name a file for one of them");
        return -1;
    }
    return 0;
}

static int file_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* The data set: --data, else $IMPULSE_IMPACT_DATA, else ../shared beside the
 * repository (found from the working directory or the executable). */
static int default_data_dir(char *buf, size_t cap)
{
    const char *env = getenv("IMPULSE_IMPACT_DATA");
    if (env && *env) { snprintf(buf, cap, "%s", env); return IMP_OK; }
    static const char *rel[] = {"../shared/data/planar-impact", "../../shared/data/planar-impact"};
    char probe[PATH_MAX + 64];
    for (int k = 0; k < 2; k++) {
        snprintf(probe, sizeof probe, "%s/data_ellipse.mat", rel[k]);
        if (file_exists(probe)) { snprintf(buf, cap, "%s", rel[k]); return IMP_OK; }
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        for (int up = 1; up <= 3; up++) {
            char dir[PATH_MAX + 64];
            snprintf(dir, sizeof dir, "%s", exe);
            for (int u = 0; u < up; u++) strncat(dir, "/..", sizeof dir - strlen(dir) - 1);
            /* a path too long for probe is simply not a candidate */
            int len = snprintf(probe, sizeof probe, "%s/shared/data/planar-impact/data_ellipse.mat", dir);
            if (len > 0 && (size_t)len < sizeof probe && file_exists(probe)) {
                snprintf(buf, cap, "%s/shared/data/planar-impact", dir);
                return IMP_OK;
            }
        }
    }
    return imp_fail(IMP_ERR_NOT_FOUND, "data set not found: pass --data FILE or set IMPULSE_IMPACT_DATA "
                                       "(folder with data_ellipse.mat)");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int load_set(imp_impact_set *s, const char *path)
{
    char dir[PATH_MAX], buf[PATH_MAX + 32];
    if (!path) {
        int st = default_data_dir(dir, sizeof dir);
        if (st) return st;
        snprintf(buf, sizeof buf, "%s/data_ellipse.mat", dir);
        path = buf;
    }
    if (ends_with(path, ".npz") || !strcmp(path, "-")) return imp_impact_load_npz(s, path); /* '-': .npz on stdin */
    int st = imp_impact_load_mat(s, path);
    if (st == IMP_ERR_NOT_FOUND) {
        /* not the processed file: maybe the raw 2000-drop file */
        char first[512];
        snprintf(first, sizeof first, "%s", imp_last_error());
        if (imp_impact_load_raw_mat(s, path) == IMP_OK) return IMP_OK;
        return imp_fail(st, "%s", first);
    }
    return st;
}

/* The authors' stored measured impulses (p_true_data.mat, beside the data
 * file) as identification targets, in table order; the set must be the
 * processed one (every impact valid, same count). */
static int load_given_targets(const char *data_path, const imp_impact_set *s, double **P)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    *P = NULL;
    if (data_path) {
        snprintf(dir, sizeof dir, "%s", data_path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else snprintf(dir, sizeof dir, ".");
    } else {
        int st = default_data_dir(dir, sizeof dir);
        if (st) return st;
    }
    snprintf(path, sizeof path, "%s/p_true_data.mat", dir);
    for (size_t i = 0; i < s->count; i++)
        if (!s->valid[i])
            return imp_fail(IMP_ERR_INVALID, "--target p-data: needs the processed set with every impact valid "
                                             "(impact %zu is not)", i);
    size_t r, c;
    int st = imp_impact_load_mat_matrix(path, "p_data", s->count, 2, P, &r, &c);
    if (st) return imp_fail_context(st, "--target p-data");
    return IMP_OK;
}

/* How many rows of a set the analyses use, and why the others are left out
 * (the counts do not depend on the convention). */
typedef struct set_counts {
    size_t impacts, rows, not_impacting, flagged;
} set_counts;

/* Builds the contact table once to check that the set has impacts, and
 * writes the line saying how many rows are used and why the others are left
 * out. Called before anything is printed, so a set without impacts gives
 * only the error line. */
static int set_summary(const imp_impact_set *s, char *line, size_t cap, set_counts *counts)
{
    imp_impact_table t;
    int st = imp_impact_table_build(&t, s);
    if (st) return st;
    snprintf(line, cap, "impacts: %zu of %zu rows (left out: %zu not impacting, un >= 0; %zu flagged invalid)\n\n",
             t.count, t.rows, t.not_impacting, t.flagged);
    if (counts) *counts = (set_counts){t.count, t.rows, t.not_impacting, t.flagged};
    imp_impact_table_free(&t);
    return IMP_OK;
}

/* --json: the set's counts, the same keys in every impact verb. */
static void json_counts(imp_json *j, const set_counts *c)
{
    imp_json_kv_int(j, "impacts", (long long)c->impacts);
    imp_json_kv_int(j, "set_rows", (long long)c->rows);
    imp_json_kv_int(j, "not_impacting", (long long)c->not_impacting);
    imp_json_kv_int(j, "flagged", (long long)c->flagged);
}

/* Where a verb's text goes: standard error when standard output holds
 * its JSON object or its --out file ('-'). */
static FILE *text_stream(const impact_opts *o)
{
    return o->json || (o->out && !strcmp(o->out, "-")) ? stderr : stdout;
}

/* The tables of a verb: on text_stream, or nowhere under --json. */
static void table_printf(const impact_opts *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void table_printf(const impact_opts *o, const char *fmt, ...)
{
    if (o->json) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(text_stream(o), fmt, ap);
    va_end(ap);
}

/* --json of a table verb: the object with "verb", the set's counts (if
 * any) and the "rows" array the verb fills, one object per table row. */
static void rows_begin(const impact_opts *o, imp_json *j, const char *verb, const set_counts *c)
{
    imp_json_init(j);
    if (!o->json) return;
    cli_json_begin(j, verb);
    if (c) json_counts(j, c);
    imp_json_key(j, "rows");
    imp_json_begin_array(j);
}

/* The end of a table verb: the error line after a failure st, else under
 * --json the object printed; returns the exit status. */
static int rows_end(const impact_opts *o, imp_json *j, int st, const char *verb)
{
    if (st) {
        imp_json_free(j);
        return cli_fail(verb);
    }
    if (!o->json) return 0;
    imp_json_end_array(j);
    return cli_json_print(j, verb);
}

/* After a table: the laws that failed on some impacts, each with the first
 * failing impact and the law's own message (the means above are over the
 * other impacts). */
static void print_failure_note(const imp_impact_law *law, const imp_impact_table *t, const imp_law_stats *ls,
                               char *notes, size_t cap)
{
    if (!ls->failures) return;
    double P[2];
    const char *why = "";
    for (size_t i = 0; i < t->count; i++)
        if (t->index[i] == ls->first_failure) {
            if (imp_impact_predict(law, t->contact[i].W, t->contact[i].u, P)) why = imp_last_error();
            break;
        }
    size_t used = strlen(notes);
    if (used + 1 >= cap) return;
    snprintf(notes + used, cap - used,
             "note: %s (%s convention, mu %g, eps %g) has no solution on %zu of %zu impacts (first: impact %zu: %s); "
             "its mean and median are over the other %zu\n",
             imp_impact_model_name(law->model), imp_tangent_sign_name(t->convention), law->mu, law->eps, ls->failures,
             t->count, ls->first_failure, why, t->count - ls->failures);
}

/* ---- list-models ---- */
static int verb_list_models(int argc, char **argv)
{
    impact_opts o;
    opts_default(&o);
    int p = parse_opts(argc, argv, "--json", &o);
    if (p == 1) {
        printf("usage: impulse impact list-models [--json]\n  the six laws, their CLI names, Table 1 parameters and variants\n"
               "  --json: one JSON object (docs/json.md) instead of the table.\n");
        return 0;
    }
    if (p < 0) return cli_fail("impact list-models");
    imp_json j;
    rows_begin(&o, &j, "impact list-models", NULL);
    table_printf(&o, "| name | law | Table 1 mu | Table 1 eps | method |\n|---|---|---|---|---|\n");
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        double mu, eps;
        imp_impact_model mm = (imp_impact_model)m;
        imp_impact_table1(mm, &mu, &eps);
        table_printf(&o, "| %s | %s | %.3f | %.3f | %s |\n", imp_impact_model_name(mm), imp_impact_model_title(mm), mu, eps,
                imp_impact_model_summary(mm));
        if (o.json) {
            imp_json_begin_object(&j);
            imp_json_kv_string(&j, "model", imp_impact_model_name(mm));
            imp_json_kv_string(&j, "title", imp_impact_model_title(mm));
            imp_json_kv_number(&j, "friction", mu);
            imp_json_kv_number(&j, "restitution", eps);
            imp_json_kv_string(&j, "method", imp_impact_model_summary(mm));
            imp_json_end_object(&j);
        }
    }
    table_printf(&o, "\nvariants: authors (the authors' MATLAB, matches p_models.mat; default), textbook\n"
                "  differ for ap-poisson, drumshell (friction during restitution) and mirtich (Coulomb vs slip-proportional)\n"
                "conventions: stored (d as in the .mat files), corrected (d3 -> -d3)\n");
    return rows_end(&o, &j, IMP_OK, "impact list-models");
}

static void law_for(const impact_opts *o, int m, imp_impact_law *law)
{
    law->model = (imp_impact_model)m;
    law->variant = o->variant;
    imp_impact_table1(law->model, &law->mu, &law->eps);
    if (!isnan(o->mu)) law->mu = o->mu;
    if (!isnan(o->eps)) law->eps = o->eps;
}

/* ---- predict ---- */
static int verb_predict(int argc, char **argv)
{
    const char *verb = "impact predict";
    impact_opts o;
    opts_default(&o);
    int p = parse_opts(argc, argv, "--data --model --variant --mu --eps --convention --out --json", &o);
    if (p == 1) {
        printf("usage: impulse impact predict [--data FILE.mat|.npz] [--model NAME|all] [--variant authors|textbook]\n"
               "         [--mu X] [--eps X] [--convention stored|corrected|both] [--out FILE.npz] [--json]\n"
               "  predicts every impact with each law (Table 1 parameters unless --mu/--eps), prints the mean and\n"
               "  median error (m/s; ||(dvx, dvy, kg domega)||) and how often the law gains energy, penetrates or\n"
               "  leaves the friction cone; --out saves impulses P_<convention>_<model> (count x 2);\n"
               "  --json: one JSON object (docs/json.md) instead of the table.\n");
        return 0;
    }
    if (p < 0) return cli_fail(verb);
    imp_impact_set s;
    if (load_set(&s, o.data)) return cli_fail(verb);
    char summary[256];
    set_counts counts;
    if (set_summary(&s, summary, sizeof summary, &counts)) {
        imp_impact_set_free(&s);
        return cli_fail(verb);
    }
    fputs(summary, text_stream(&o));  /* --json: stdout holds the JSON object only */
    imp_npz *z = o.out ? imp_npz_new() : NULL;
    int st = IMP_OK;
    char notes[4096] = "";
    imp_json j;
    rows_begin(&o, &j, verb, &counts);
    if (!o.json) {
        fprintf(text_stream(&o), "| convention | model | variant | mu | eps | mean error | median error | energy gain | penetration | cone violation | failures |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n");
    }
    for (int c = 0; c < 2 && !st; c++) {
        if (!(o.conv_mask & (1 << c))) continue;
        imp_impact_set_convention(&s, (imp_tangent_sign)c);
        imp_impact_table t;
        if ((st = imp_impact_table_build(&t, &s))) break;
        double *P = malloc(t.count * 2 * sizeof(double));
        for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st && P; m++) {
            if (o.model >= 0 && o.model != m) continue;
            imp_impact_law law;
            law_for(&o, m, &law);
            imp_law_stats ls;
            if ((st = imp_impact_evaluate_law(&law, &t, NULL, &ls))) break;
            if (o.json) {
                imp_json_begin_object(&j);
                imp_json_kv_string(&j, "convention", imp_tangent_sign_name(t.convention));
                imp_json_kv_string(&j, "model", imp_impact_model_name(law.model));
                imp_json_kv_string(&j, "variant", imp_impact_variant_name(law.variant));
                imp_json_kv_number(&j, "friction", law.mu);
                imp_json_kv_number(&j, "restitution", law.eps);
                imp_json_kv_int(&j, "impacts", (long long)t.count);
                imp_json_kv_number(&j, "mean_error", ls.mean_error);
                imp_json_kv_number(&j, "median_error", ls.median_error);
                imp_json_kv_number(&j, "energy_gain_share", ls.energy_gain_share);
                imp_json_kv_number(&j, "penetration_share", ls.penetration_share);
                imp_json_kv_number(&j, "cone_violation_share", ls.cone_violation_share);
                imp_json_kv_int(&j, "failures", (long long)ls.failures);
                imp_json_end_object(&j);
            } else
            fprintf(text_stream(&o), "| %s | %s | %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %zu |\n",
                   imp_tangent_sign_name(t.convention), imp_impact_model_name(law.model),
                   imp_impact_variant_name(law.variant), law.mu, law.eps, ls.mean_error, ls.median_error,
                   ls.energy_gain_share, ls.penetration_share, ls.cone_violation_share, ls.failures);
            print_failure_note(&law, &t, &ls, notes, sizeof notes);
            if (z) {
                for (size_t i = 0; i < t.count; i++)
                    if (imp_impact_predict(&law, t.contact[i].W, t.contact[i].u, P + 2 * i)) P[2 * i] = P[2 * i + 1] = NAN;
                char name[96];
                size_t sh[2] = {t.count, 2};
                snprintf(name, sizeof name, "P_%s_%s", imp_tangent_sign_name(t.convention), imp_impact_model_name(law.model));
                st = imp_npz_add_f64(z, name, 2, sh, P);
            }
        }
        if (!P) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
        free(P);
        imp_impact_table_free(&t);
    }
    if (notes[0]) fprintf(text_stream(&o), "\n%s", notes);
    if (!st && z) {
        char meta[256];
        snprintf(meta, sizeof meta, "{\"kind\": \"impact_predictions\", \"variant\": \"%s\", \"tool\": \"impulse %s\"}",
                 imp_impact_variant_name(o.variant), IMP_VERSION_STRING);
        st = imp_npz_set_meta(z, meta);
        if (!st) st = imp_npz_save(z, o.out);
    }
    imp_npz_free(z);
    imp_impact_set_free(&s);
    return rows_end(&o, &j, st, verb);
}

/* ---- identify ---- */
static int verb_identify(int argc, char **argv)
{
    const char *verb = "impact identify";
    impact_opts o;
    opts_default(&o);
    int p = parse_opts(argc, argv,
                       "--data --model --variant --convention --target --k --reps --seed --grid --mu-cap --tol --per-impact --out --json", &o);
    if (p == 1) {
        printf("usage: impulse impact identify [--data FILE] [--model NAME|all] [--variant authors|textbook]\n"
               "         [--convention stored|corrected|both] [--target contact|irb-velocity|irb-momentum|p-data]\n"
               "         [--k 120] [--reps 20] [--seed 2017] [--grid 21] [--mu-cap 1]\n"
               "         [--per-impact [--tol 0.005]] [--out FILE.npz] [--json]\n"
               "  ensemble identification ([CoRL] eq 6): k impacts drawn without replacement, reps draws,\n"
               "  mean +- std of (mu, eps) over 0 <= mu <= mu-cap, 0 <= eps <= 1. --per-impact adds the per-impact\n"
               "  identification under mu <= mu_s ([ISRR] eqs 8-9) and the predictive-range fraction (Table 2):\n"
               "  residual <= tol * |P|. --out saves per-impact (mu, eps, residual).\n"
               "  Targets: contact = Mc J (v+ - v-) from the states (default); irb-* = IRB impulse; p-data = the\n"
               "  authors' stored p_true_data.mat beside the data file (built with the stored d).\n"
               "  --json: one JSON object (docs/json.md) instead of the table.\n");
        return 0;
    }
    if (p < 0) return cli_fail(verb);
    imp_impact_set s;
    if (load_set(&s, o.data)) return cli_fail(verb);
    set_counts counts;
    char summary[256];
    if (set_summary(&s, summary, sizeof summary, &counts)) {
        imp_impact_set_free(&s);
        return cli_fail(verb);
    }
    size_t n_impacts = counts.impacts;
    if ((size_t)o.k > n_impacts && o.k_given) {
        imp_impact_set_free(&s);
        return cli_failf(verb, "--k: %ld exceeds the %zu impacts of the set", o.k, n_impacts);
    }
    fputs(summary, text_stream(&o));
    if ((size_t)o.k > n_impacts) {
        fprintf(text_stream(&o), "k = %zu: every impact (the default k = %ld is more than the set has)\n\n", n_impacts, o.k);
        o.k = (long)n_impacts;
    }
    imp_ident_options io = imp_ident_options_default();
    io.grid = (int)o.grid;
    io.mu_cap = o.mu_cap;
    imp_npz *z = o.out ? imp_npz_new() : NULL;
    int st = IMP_OK;
    imp_json j;
    rows_begin(&o, &j, verb, &counts);
    table_printf(&o, "| convention | model | variant | target | mu (ensemble) | eps (ensemble) |%s\n|---|---|---|---|---|---|%s\n",
           o.per_impact ? " Table 2 fraction | per-impact mu | per-impact eps | share mu~0 |" : "",
           o.per_impact ? "---|---|---|---|" : "");
    for (int c = 0; c < 2 && !st; c++) {
        if (!(o.conv_mask & (1 << c))) continue;
        imp_impact_set_convention(&s, (imp_tangent_sign)c);
        imp_impact_table t;
        if ((st = imp_impact_table_build(&t, &s))) break;
        double *P = malloc(t.count * 2 * sizeof(double)), *per = malloc(t.count * 3 * sizeof(double));
        if (!P || !per) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
        if (!st && o.target == IMP_TARGET_GIVEN) {
            double *G = NULL;
            st = load_given_targets(o.data, &s, &G);
            if (!st) memcpy(P, G, t.count * 2 * sizeof(double));
            free(G);
        } else if (!st) {
            st = imp_impact_targets(&t, o.target, P);
        }
        for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
            if (o.model >= 0 && o.model != m) continue;
            imp_ensemble_result er;
            size_t k = (size_t)o.k;
            if ((st = imp_impact_identify_ensemble((imp_impact_model)m, o.variant, &t, P, k, (size_t)o.reps,
                                                   (uint64_t)o.seed + m, &io, &er)))
                break;
            if (o.json) {
                imp_json_begin_object(&j);
                imp_json_kv_string(&j, "convention", imp_tangent_sign_name(t.convention));
                imp_json_kv_string(&j, "model", imp_impact_model_name((imp_impact_model)m));
                imp_json_kv_string(&j, "variant", imp_impact_variant_name(o.variant));
                imp_json_kv_string(&j, "target", imp_impact_target_name(o.target));
                imp_json_kv_number(&j, "friction", er.mu_mean);
                imp_json_kv_number(&j, "friction_std", er.mu_std);
                imp_json_kv_number(&j, "restitution", er.eps_mean);
                imp_json_kv_number(&j, "restitution_std", er.eps_std);
                imp_json_kv_int(&j, "k", (long long)er.k);
                imp_json_kv_int(&j, "reps", (long long)er.reps);
                imp_json_kv_int(&j, "seed", o.seed + m);
            }
            table_printf(&o, "| %s | %s | %s | %s | %.4f +- %.4f | %.4f +- %.4f |", imp_tangent_sign_name(t.convention),
                   imp_impact_model_name((imp_impact_model)m), imp_impact_variant_name(o.variant),
                   imp_impact_target_name(o.target), er.mu_mean, er.mu_std, er.eps_mean, er.eps_std);
            if (o.per_impact) {
                double frac;
                if ((st = imp_impact_predictive_fraction((imp_impact_model)m, o.variant, &t, P, o.tol, &io, &frac, per)))
                    break;
                double sm = 0, se = 0, z0 = 0;
                for (size_t i = 0; i < t.count; i++) { sm += per[3 * i]; se += per[3 * i + 1]; z0 += per[3 * i] < 1e-3; }
                table_printf(&o, " %.3f | %.4f | %.4f | %.3f |", frac, sm / t.count, se / t.count, z0 / t.count);
                if (o.json) {
                    imp_json_kv_number(&j, "predictive_fraction", frac);
                    imp_json_kv_number(&j, "per_impact_friction", sm / t.count);
                    imp_json_kv_number(&j, "per_impact_restitution", se / t.count);
                    imp_json_kv_number(&j, "zero_friction_share", z0 / t.count);
                }
                if (z) {
                    char name[96];
                    size_t sh[2] = {t.count, 3};
                    snprintf(name, sizeof name, "per_impact_%s_%s", imp_tangent_sign_name(t.convention),
                             imp_impact_model_name((imp_impact_model)m));
                    st = imp_npz_add_f64(z, name, 2, sh, per);
                }
            }
            table_printf(&o, "\n");
            if (o.json) imp_json_end_object(&j);
            fflush(stdout);
        }
        free(P);
        free(per);
        imp_impact_table_free(&t);
    }
    if (!st && z) {
        char meta[256];
        snprintf(meta, sizeof meta,
                 "{\"kind\": \"impact_identification\", \"variant\": \"%s\", \"target\": \"%s\", \"tol\": %g, \"columns\": \"mu, eps, residual\"}",
                 imp_impact_variant_name(o.variant), imp_impact_target_name(o.target), o.tol);
        st = imp_npz_set_meta(z, meta);
        if (!st) st = imp_npz_save(z, o.out);
    }
    imp_npz_free(z);
    imp_impact_set_free(&s);
    return rows_end(&o, &j, st, verb);
}

/* ---- bounds: IRB and Best Post Hoc ---- */
static int verb_bounds(int argc, char **argv)
{
    const char *verb = "impact bounds";
    impact_opts o;
    opts_default(&o);
    int p = parse_opts(argc, argv, "--data --variant --convention --mu --eps --out --json", &o);
    if (p == 1) {
        printf("usage: impulse impact bounds [--data FILE] [--variant authors|textbook] [--convention stored|corrected|both]\n"
               "         [--mu X --eps X] [--out FILE.npz] [--json]\n"
               "  IRB bound ([ISRR] eq 7: best admissible rigid impulse; velocity and momentum metric) and Best Post Hoc\n"
               "  (per impact the best of the six laws at Table 1 parameters, or at --mu/--eps), mean errors in m/s.\n"
               "  --out saves IRB impulses P_irb_<metric>_<convention> and per-impact errors.\n"
               "  --json: one JSON object (docs/json.md) instead of the table.\n");
        return 0;
    }
    if (p < 0) return cli_fail(verb);
    imp_impact_set s;
    if (load_set(&s, o.data)) return cli_fail(verb);
    char summary[256];
    set_counts counts;
    if (set_summary(&s, summary, sizeof summary, &counts)) {
        imp_impact_set_free(&s);
        return cli_fail(verb);
    }
    fputs(summary, text_stream(&o));
    imp_json j;
    rows_begin(&o, &j, verb, &counts);
    imp_npz *z = o.out ? imp_npz_new() : NULL;
    int st = IMP_OK;
    table_printf(&o, "| convention | IRB velocity metric | IRB momentum metric | Best Post Hoc (%s) | impacts |\n|---|---|---|---|---|\n",
           imp_impact_variant_name(o.variant));
    for (int c = 0; c < 2 && !st; c++) {
        if (!(o.conv_mask & (1 << c))) continue;
        imp_impact_set_convention(&s, (imp_tangent_sign)c);
        imp_impact_table t;
        if ((st = imp_impact_table_build(&t, &s))) break;
        size_t n = t.count;
        double *err = malloc(n * 3 * sizeof(double)), *e = malloc(n * sizeof(double)), *P = malloc(n * 2 * sizeof(double));
        double mean[3] = {0, 0, 0};
        if (!err || !e || !P) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
        for (int metric = 0; metric < 2 && !st; metric++) {
            for (size_t i = 0; i < n && !st; i++) {
                st = imp_impact_irb(&t.contact[i], t.kg, (imp_irb_metric)metric, P + 2 * i, NULL);
                if (!st) err[3 * i + metric] = imp_contact_impulse_error(&t.contact[i], P + 2 * i, t.kg);
            }
            if (!st && z) {
                char name[64];
                size_t sh[2] = {n, 2};
                snprintf(name, sizeof name, "P_irb_%s_%s", imp_irb_metric_name((imp_irb_metric)metric),
                         imp_tangent_sign_name(t.convention));
                st = imp_npz_add_f64(z, name, 2, sh, P);
            }
        }
        for (size_t i = 0; i < n && !st; i++) err[3 * i + 2] = INFINITY;
        for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
            imp_impact_law law;
            law_for(&o, m, &law);
            if ((st = imp_impact_evaluate_law(&law, &t, e, NULL))) break;
            for (size_t i = 0; i < n; i++)
                if (e[i] < err[3 * i + 2]) err[3 * i + 2] = e[i];
        }
        for (size_t i = 0; i < n && !st; i++)
            for (int j = 0; j < 3; j++) mean[j] += err[3 * i + j] / n;
        if (!st) {
            table_printf(&o, "| %s | %.4f | %.4f | %.4f | %zu |\n", imp_tangent_sign_name(t.convention), mean[0], mean[1],
                         mean[2], n);
            static const char *const bound_name[3] = {"irb-velocity", "irb-momentum", "best-post-hoc"};
            for (int b = 0; b < 3 && o.json; b++) {
                imp_json_begin_object(&j);
                imp_json_kv_string(&j, "convention", imp_tangent_sign_name(t.convention));
                imp_json_kv_string(&j, "model", bound_name[b]);
                if (b == 2) imp_json_kv_string(&j, "variant", imp_impact_variant_name(o.variant));
                imp_json_kv_number(&j, "mean_error", mean[b]);
                imp_json_kv_int(&j, "impacts", (long long)n);
                imp_json_end_object(&j);
            }
            if (z) {
                char name[64];
                size_t sh[2] = {n, 3};
                snprintf(name, sizeof name, "errors_%s", imp_tangent_sign_name(t.convention));
                st = imp_npz_add_f64(z, name, 2, sh, err);
            }
        }
        free(err);
        free(e);
        free(P);
        imp_impact_table_free(&t);
    }
    if (!st && z) {
        st = imp_npz_set_meta(z, "{\"kind\": \"impact_bounds\", \"errors_columns\": \"irb_velocity, irb_momentum, best_post_hoc\", \"units\": \"m/s\"}");
        if (!st) st = imp_npz_save(z, o.out);
    }
    imp_npz_free(z);
    imp_impact_set_free(&s);
    return rows_end(&o, &j, st, verb);
}

/* ---- export ---- */
static int verb_export(int argc, char **argv)
{
    const char *verb = "impact export";
    impact_opts o;
    opts_default(&o);
    o.conv_mask = 1;
    int p = parse_opts(argc, argv, "--data --convention --out --json", &o);
    if (p == 1) {
        printf("usage: impulse impact export [--data data_ellipse.mat] --out FILE.npz [--convention stored|corrected] [--json]\n"
               "  writes the impact set (pre, post, n, d, valid; meta with convention and object constants) as .npz\n");
        return 0;
    }
    if (p < 0) return cli_fail(verb);
    if (!o.out) return cli_failf(verb, "--out: missing (FILE.npz)");
    if (o.conv_mask == 3) return cli_failf(verb, "--convention: choose stored or corrected for an export");
    imp_impact_set s;
    if (load_set(&s, o.data)) return cli_fail(verb);
    imp_impact_set_convention(&s, o.conv_mask == 2 ? IMP_TANGENT_CORRECTED : IMP_TANGENT_STORED);
    imp_impact_table t;
    int st = imp_impact_table_build(&t, &s); /* a set without one valid impact is not worth writing */
    if (!st) st = imp_impact_save_npz(&s, o.out);
    if (!st && o.json) {
        imp_json j;
        cli_json_begin(&j, verb);
        set_counts c = {t.count, s.count, t.not_impacting, t.flagged};
        json_counts(&j, &c);
        imp_json_kv_string(&j, "convention", imp_tangent_sign_name(s.convention));
        imp_json_kv_string(&j, "output", o.out);
        imp_impact_table_free(&t);
        imp_impact_set_free(&s);
        return cli_json_print(&j, verb);
    }
    if (!st)
        fprintf(text_stream(&o), "wrote %s: %zu rows, %zu valid impacts (left out of analyses: %zu not impacting, un >= 0; %zu flagged "
               "invalid), %s convention\n", o.out, s.count, t.count, t.not_impacting, t.flagged,
               imp_tangent_sign_name(s.convention));
    imp_impact_table_free(&t);
    imp_impact_set_free(&s);
    return st ? cli_fail(verb) : 0;
}

static void impact_usage(FILE *f)
{
    fprintf(f, "usage: impulse impact VERB [options]   (impulse impact VERB --help)\n"
               "  list-models     the six analytical laws and their Table 1 parameters\n"
               "  predict         predict every impact with the laws; errors, energy/penetration violations\n"
               "  identify        ensemble (and per-impact) identification of mu, eps; Table 2 fractions\n"
               "  bounds          IRB bound (velocity/momentum metric) and Best Post Hoc\n"
               "  export          MAT data set -> .npz impact set\n"
               "  gp-fit, gp-eval, learning-curve   Gaussian-process models\n"
               "  drop            synthetic drop simulator\n");
}

int cli_impact(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        impact_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *v = argv[1];
    if (!strcmp(v, "list-models")) return verb_list_models(argc - 1, argv + 1);
    if (!strcmp(v, "predict")) return verb_predict(argc - 1, argv + 1);
    if (!strcmp(v, "identify")) return verb_identify(argc - 1, argv + 1);
    if (!strcmp(v, "bounds")) return verb_bounds(argc - 1, argv + 1);
    if (!strcmp(v, "export")) return verb_export(argc - 1, argv + 1);
    if (!strcmp(v, "gp-fit") || !strcmp(v, "gp-eval") || !strcmp(v, "learning-curve")) return cli_impact_gp(argc, argv);
    if (!strcmp(v, "drop")) return cli_impact_drop(argc, argv);
    return cli_failf("impact", "unknown verb '%s' (impulse impact --help)", v);
}

/* ---- reproduce impact ---- */

static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return imp_fail(IMP_ERR_INVALID, "--out: path too long");
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) && errno != EEXIST) return imp_fail(IMP_ERR_IO, "%s: cannot create (%s)", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) && errno != EEXIST) return imp_fail(IMP_ERR_IO, "%s: cannot create (%s)", buf, strerror(errno));
    return IMP_OK;
}

/* A growing text buffer for the markdown report (printed and saved). */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void tprintf(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void tprintf(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 4096) + (size_t)n;
        char *s = realloc(t->s, cap);
        if (!s) return;
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static const double paper_table2[IMP_IMPACT_MODEL_COUNT] = {0.355, 0.357, 0.458, 0.413, 0.455, 0.456};
static const double paper_best[IMP_IMPACT_MODEL_COUNT] = {4, 7, 25, 17, 16, 31};
static const double paper_worst[IMP_IMPACT_MODEL_COUNT] = {11, 6, 0, 43, 10, 30};

static void report_convention(text *t, const imp_impact_eval *e, const imp_impact_eval_options *o, double kg)
{
    const char *cn = imp_tangent_sign_name(e->convention);
    tprintf(t, "\n## Convention: %s (d3 %s)\n\n", cn, e->convention == IMP_TANGENT_STORED ? "as stored" : "-> -d3");
    tprintf(t, "%zu impacts; laws: %s variant; identification target: %s impulse; %.1f s.\n\n", e->count,
            imp_impact_variant_name(e->variant), imp_impact_target_name(e->target), e->seconds);
    tprintf(t, "Measurements against rigid point contact (%s): contact impulse Mc J dv gains contact energy in %.1f%% of "
               "impacts, momentum least-squares impulse in %.1f%%; measured un+ >= 0 in %.1f%%; median post-impact slip "
               "|ut+| %.3f m/s; rms residual torque impulse %.3g N m s.\n\n",
            cn, 100 * e->meas_energy_gain_share, 100 * e->meas_ls_energy_gain_share, 100 * e->meas_separating_share,
            e->meas_median_post_slip, e->residual_torque_rms);
    tprintf(t, "### Table 1 (%s): ensemble identification, k = %zu, %zu draws without replacement\n\n", cn,
            e->model[0].ensemble.k, e->model[0].ensemble.reps);
    tprintf(t, "| model | mu | eps | best %% | worst %% | paper mu | paper eps | paper best/worst %% |\n"
               "|---|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        const imp_impact_model_result *r = &e->model[m];
        double mu, eps;
        imp_impact_table1((imp_impact_model)m, &mu, &eps);
        tprintf(t, "| %s | %.3f +- %.3f | %.3f +- %.3f | %.0f | %.0f | %.3f | %.3f | %.0f / %.0f |\n",
                imp_impact_model_title((imp_impact_model)m), r->ensemble.mu_mean, r->ensemble.mu_std,
                r->ensemble.eps_mean, r->ensemble.eps_std, 100 * r->best_share, 100 * r->worst_share, mu, eps,
                paper_best[m], paper_worst[m]);
    }
    tprintf(t, "\n### Table 2 (%s): predictive-range fraction (residual <= %.2g |P|, %zu impacts)\n\n", cn,
            o->table2_tol, e->table2_count);
    tprintf(t, "| model | fraction | paper | per-impact mu (mean +- std) | share mu ~ 0 | per-impact eps |\n|---|---|---|---|---|---|\n");
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        const imp_impact_model_result *r = &e->model[m];
        tprintf(t, "| %s | %.3f | %.3f | %.3f +- %.3f | %.2f | %.3f +- %.3f |\n", imp_impact_model_title((imp_impact_model)m),
                r->table2_fraction, paper_table2[m], r->per_impact_mu_mean, r->per_impact_mu_std,
                r->per_impact_mu_zero_share, r->per_impact_eps_mean, r->per_impact_eps_std);
    }
    tprintf(t, "\n### Mean errors (%s), m/s, ||(dvx, dvy, kg domega)||, kg = %.5f m\n\n", cn, kg);
    tprintf(t, "| model | at Table 1 params | at identified params | median (identified) | energy gain | penetration | cone violation |\n"
               "|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        const imp_impact_model_result *r = &e->model[m];
        tprintf(t, "| %s | %.4f | %.4f | %.4f | %.3f | %.3f | %.3f |\n", imp_impact_model_title((imp_impact_model)m),
                r->at_table1.mean_error, r->at_identified.mean_error, r->at_identified.median_error,
                r->at_identified.energy_gain_share, r->at_identified.penetration_share,
                r->at_identified.cone_violation_share);
    }
    tprintf(t, "| Best Post Hoc | %.4f | %.4f | | | | |\n", e->bph_mean_error_table1, e->bph_mean_error_identified);
    tprintf(t, "| IRB bound, velocity metric | %.4f | | | | | |\n", e->irb_velocity_mean_error);
    tprintf(t, "| IRB bound, momentum metric | %.4f | | | | | |\n", e->irb_momentum_mean_error);
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++)
        for (int k = 0; k < 2; k++) {
            const imp_law_stats *ls = k ? &e->model[m].at_identified : &e->model[m].at_table1;
            if (ls->failures)
                tprintf(t, "\nNote: %s has no solution on %zu impacts at %s parameters (first: impact %zu); its "
                        "errors above are over the other impacts.\n", imp_impact_model_title((imp_impact_model)m),
                        ls->failures, k ? "identified" : "Table 1", ls->first_failure);
        }
}

static void add_error_panel(imp_figure *f, int panel, const char *conv, const double *errors, size_t n)
{
    static const char *labels[9] = {"Drumwright-Shell", "AP Poisson", "AP Newton", "Mirtich", "Wang-Mason",
                                    "Whittaker", "Best Post Hoc", "IRB bound (velocity)", "IRB bound (momentum)"};
    /* laws: the plotter's per-label colour and line style; the bounds in black */
    static const char *styles[9] = {NULL, NULL, NULL, NULL, NULL, NULL, "--|k", ":|k", "-.|0.5"};
    enum { NX = 240 };
    double xs[NX], dens[NX], xmax = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 8; k++)
            if (errors[9 * i + k] > xmax) xmax = errors[9 * i + k];
    char title[96];
    snprintf(title, sizeof title, "%s convention (identified parameters)", conv);
    imp_figure_axes(f, panel, title, "error $\\Vert(\\Delta v_x, \\Delta v_y, k_g \\Delta\\omega)\\Vert$ (m/s)",
                    "density (s/m; Gaussian kernel)");
    for (int j = 0; j < NX; j++) xs[j] = xmax * j / (NX - 1);
    for (int k = 0; k < 8; k++) { /* momentum IRB is in the .npz, not drawn: it ignores omega */
        double m = 0, v = 0;
        for (size_t i = 0; i < n; i++) m += errors[9 * i + k] / n;
        for (size_t i = 0; i < n; i++) v += (errors[9 * i + k] - m) * (errors[9 * i + k] - m) / (n - 1);
        double h = 1.06 * sqrt(v) * pow((double)n, -0.2);
        for (int j = 0; j < NX; j++) {
            double sum = 0;
            for (size_t i = 0; i < n; i++) {
                double z = (xs[j] - errors[9 * i + k]) / h;
                sum += exp(-0.5 * z * z);
            }
            dens[j] = sum / (n * h * 2.5066282746310002);
        }
        imp_figure_line(f, panel, xs, dens, NX, labels[k], styles[k]);
    }
}

static void add_ellipse_panel(imp_figure *f, int panel, const char *conv, const double *boundary, size_t nb,
                              const double *lines, const double *preds, size_t ng, const double *meas, const double *irb)
{
    double *x = malloc(ng * ng * sizeof(double)), *y = malloc(ng * ng * sizeof(double));
    if (!x || !y) { free(x); free(y); return; }
    char title[96];
    snprintf(title, sizeof title, "%s convention", conv);
    imp_figure_axes(f, panel, title, "tangential impulse $P_t$ (N s)", "normal impulse $P_n$ (N s)");
    for (size_t i = 0; i < nb; i++) { x[i] = boundary[2 * i]; y[i] = boundary[2 * i + 1]; }
    imp_figure_polygon(f, panel, x, y, nb, 0, "energy ellipse (no energy change)", "-|k");
    double lx[2] = {lines[0], lines[2]}, ly[2] = {lines[1], lines[3]};
    imp_figure_line(f, panel, lx, ly, 2, "sticking line", "--|0.4");
    lx[0] = lines[4]; lx[1] = lines[6]; ly[0] = lines[5]; ly[1] = lines[7];
    imp_figure_line(f, panel, lx, ly, 2, "maximum compression line", ":|0.4");
    static const char *styles[6] = {"o|C0", "s|C1", "^|C2", "v|C3", "D|C4", "P|C5"};
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        for (size_t j = 0; j < ng * ng; j++) {
            x[j] = preds[2 * (m * ng * ng + j)];
            y[j] = preds[2 * (m * ng * ng + j) + 1];
        }
        imp_figure_scatter(f, panel, x, y, ng * ng, imp_impact_model_title((imp_impact_model)m), styles[m]);
    }
    imp_figure_scatter(f, panel, meas, meas + 1, 1, "measured $M_c J \\Delta v$", "X|k");
    imp_figure_scatter(f, panel, irb, irb + 1, 1, "IRB (velocity metric)", "*|0.45");
    imp_figure_equal_aspect(f, panel);
    free(x);
    free(y);
}

int cli_reproduce_impact(int argc, char **argv)
{
    const char *verb = "reproduce impact";
    impact_opts o;
    opts_default(&o);
    o.out = "results/impact";
    int p = parse_opts(argc, argv, "--quick --out --data --variant --target --seed", &o);
    if (p == 1) {
        printf("usage: impulse reproduce impact [--quick] [--out DIR] [--data FILE] [--variant authors|textbook]\n"
               "         [--target contact|irb-velocity|irb-momentum|p-data] [--seed N]\n"
               "  Fazeli et al. 2017 on the MIT planar-impact data, under the stored and the corrected tangent sign:\n"
               "  Table 1 (ensemble mu, eps; best/worst shares), Table 2 (predictive-range fractions), mean errors of\n"
               "  the six laws, Best Post Hoc and the IRB bound; figure data; then the GP learning curves.\n"
               "  Writes DIR/impact_report.md, DIR/impact_results.npz, DIR/impact_figures.npz.\n"
               "  --quick: 5 draws instead of 20, Table 2 on 300 impacts, 11x11 start grid.\n");
        return 0;
    }
    if (p < 0) return cli_fail(verb);
    if (mkdir_p(o.out)) return cli_fail(verb);
    imp_impact_set s;
    if (load_set(&s, o.data)) return cli_fail(verb);
    imp_impact_eval_options eo = imp_impact_eval_options_default();
    eo.variant = o.variant;
    eo.target = o.target;
    eo.seed = (uint64_t)o.seed;
    double *given = NULL;
    if (o.target == IMP_TARGET_GIVEN) {
        if (load_given_targets(o.data, &s, &given)) { imp_impact_set_free(&s); return cli_fail(verb); }
        eo.given_targets = given;
    }
    if (o.quick) {
        eo.reps = 5;
        eo.table2_max = 300;
        eo.ident.grid = 11;
    }
    text t = {0};
    tprintf(&t, "# Planar impact reproduction (Fazeli et al. 2017)\n\n");
    tprintf(&t, "impulse %s, `impulse reproduce impact%s`; data: %zu impacts; object m = %.4g kg, kg = %.5f m.\n",
            IMP_VERSION_STRING, o.quick ? " --quick" : "", s.count, s.object.mass, s.object.kg);
    tprintf(&t, "Identification box 0 <= mu <= %.2g, 0 <= eps <= 1 (grid %d + compass search to %.0e).\n",
            eo.ident.mu_cap, eo.ident.grid, eo.ident.tol);
    imp_npz *z = imp_npz_new();
    int st = IMP_OK;
    double t0 = imp_time_now();
    /* Fig. 5/8-style error densities and the energy-ellipse picture, one panel per convention */
    imp_figure *fig_err = imp_figure_new(1, 2, 12, 4.5), *fig_ell = imp_figure_new(1, 2, 12, 5.5);
    if (fig_err) imp_figure_title(fig_err, "Error density of the predicted post-impact velocity");
    if (fig_ell) imp_figure_title(fig_ell, "Energy ellipse of one impact and each law's predictions over $0 \\leq \\mu \\leq 1$, $0 \\leq \\varepsilon \\leq 1$");
    /* the impact drawn in the ellipse figure: the largest tangential contact speed (stored) */
    size_t pic = 0;
    {
        double best = -1;
        for (size_t i = 0; i < s.count; i++) {
            imp_contact ct;
            if (s.valid[i] && !imp_impact_contact(&s, i, &ct) && fabs(ct.u[0]) > best) { best = fabs(ct.u[0]); pic = i; }
        }
    }
    for (int c = 0; c < 2 && !st; c++) {
        imp_impact_set_convention(&s, (imp_tangent_sign)c);
        if (cli_progress_enabled()) fprintf(stderr, "reproduce impact: %s convention...\n", imp_tangent_sign_name(s.convention));
        imp_impact_eval e;
        if ((st = imp_impact_evaluate(&e, &s, &eo))) break;
        report_convention(&t, &e, &eo, s.object.kg);
        /* tables as arrays: rows = models; columns documented in meta */
        double tab[IMP_IMPACT_MODEL_COUNT * 10];
        for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
            const imp_impact_model_result *r = &e.model[m];
            double row[10] = {r->ensemble.mu_mean, r->ensemble.mu_std, r->ensemble.eps_mean, r->ensemble.eps_std,
                              r->best_share, r->worst_share, r->table2_fraction, r->at_table1.mean_error,
                              r->at_identified.mean_error, r->at_identified.energy_gain_share};
            memcpy(tab + 10 * m, row, sizeof row);
        }
        double bounds[4] = {e.bph_mean_error_table1, e.bph_mean_error_identified, e.irb_velocity_mean_error,
                            e.irb_momentum_mean_error};
        char name[64];
        size_t sh[2] = {IMP_IMPACT_MODEL_COUNT, 10}, sb[1] = {4}, se[2] = {e.count, 9};
        snprintf(name, sizeof name, "tables_%s", imp_tangent_sign_name(s.convention));
        st = imp_npz_add_f64(z, name, 2, sh, tab);
        snprintf(name, sizeof name, "bounds_%s", imp_tangent_sign_name(s.convention));
        if (!st) st = imp_npz_add_f64(z, name, 1, sb, bounds);
        snprintf(name, sizeof name, "errors_%s", imp_tangent_sign_name(s.convention));
        if (!st) st = imp_npz_add_f64(z, name, 2, se, e.errors);
        /* energy-ellipse picture of the first impact */
        if (!st) {
            imp_contact ct;
            enum { NB = 200, NG = 21 };
            double boundary[2 * NB], lines[8], preds[IMP_IMPACT_MODEL_COUNT * NG * NG * 2], meas[2], irb[2];
            st = imp_impact_contact(&s, pic, &ct);
            if (!st) st = imp_impact_ellipse_picture(&ct, s.object.kg, eo.variant, NB, NG, eo.ident.mu_cap, boundary,
                                                     lines, preds, meas, irb);
            size_t s1[2] = {NB, 2}, s2[2] = {2, 4}, s3[4] = {IMP_IMPACT_MODEL_COUNT, NG, NG, 2}, s4[1] = {2};
            const char *cn = imp_tangent_sign_name(s.convention);
            snprintf(name, sizeof name, "ellipse_boundary_%s", cn);
            if (!st) st = imp_npz_add_f64(z, name, 2, s1, boundary);
            snprintf(name, sizeof name, "ellipse_lines_%s", cn);
            if (!st) st = imp_npz_add_f64(z, name, 2, s2, lines);
            snprintf(name, sizeof name, "ellipse_predictions_%s", cn);
            if (!st) st = imp_npz_add_f64(z, name, 4, s3, preds);
            snprintf(name, sizeof name, "ellipse_measured_%s", cn);
            if (!st) st = imp_npz_add_f64(z, name, 1, s4, meas);
            snprintf(name, sizeof name, "ellipse_irb_%s", cn);
            if (!st) st = imp_npz_add_f64(z, name, 1, s4, irb);
            if (!st && fig_ell) add_ellipse_panel(fig_ell, c, cn, boundary, NB, lines, preds, NG, meas, irb);
        }
        if (!st && fig_err) add_error_panel(fig_err, c, imp_tangent_sign_name(s.convention), e.errors, e.count);
        imp_impact_eval_free(&e);
    }
    /* Table 1 against the authors' own measured impulses (p_true_data.mat),
     * stored convention: the procedure that reproduces their Table 1 */
    if (!st && o.target != IMP_TARGET_GIVEN) {
        double *G = NULL;
        imp_impact_set_convention(&s, IMP_TANGENT_STORED);
        imp_clear_error();
        if (load_given_targets(o.data, &s, &G) == IMP_OK) {
            imp_impact_table tb;
            st = imp_impact_table_build(&tb, &s);
            tprintf(&t, "\n## Table 1 against the stored p_true_data.mat (stored convention, k = %zu, %zu draws)\n\n"
                        "| model | mu | eps | paper mu | paper eps |\n|---|---|---|---|---|\n", eo.k, eo.reps);
            double tab[IMP_IMPACT_MODEL_COUNT * 4];
            for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
                imp_ensemble_result er;
                st = imp_impact_identify_ensemble((imp_impact_model)m, eo.variant, &tb, G, eo.k < tb.count ? eo.k : tb.count,
                                                  eo.reps, eo.seed + m, &eo.ident, &er);
                if (st) break;
                double mu, eps;
                imp_impact_table1((imp_impact_model)m, &mu, &eps);
                tprintf(&t, "| %s | %.3f +- %.3f | %.3f +- %.3f | %.3f | %.3f |\n", imp_impact_model_title((imp_impact_model)m),
                        er.mu_mean, er.mu_std, er.eps_mean, er.eps_std, mu, eps);
                double row[4] = {er.mu_mean, er.mu_std, er.eps_mean, er.eps_std};
                memcpy(tab + 4 * m, row, sizeof row);
            }
            size_t sh[2] = {IMP_IMPACT_MODEL_COUNT, 4};
            if (!st) st = imp_npz_add_f64(z, "table1_p_data_stored", 2, sh, tab);
            if (tb.contact) imp_impact_table_free(&tb);
            free(G);
        } else {
            tprintf(&t, "\n(Table 1 against p_true_data.mat skipped: %s)\n", imp_last_error());
        }
    }
    if (!st) {
        tprintf(&t, "\n## Figures\n\n![Error densities of the six laws, Best Post Hoc and the IRB bound under both "
                    "tangent-sign conventions](impact_error_density.png)\n\n"
                    "![Energy ellipse of one impact with every law's predictions over the parameter box, the "
                    "measured impulse and the IRB bound](impact_energy_ellipse.png)\n\n"
                    "Gaussian-process learning curves: [impact_gp_learning_curves.md](impact_gp_learning_curves.md)\n\n"
                    "![GP learning curves](impact_gp_learning_curves.png)\n");
        tprintf(&t, "\nTotal analysis time %.1f s.\n", imp_time_now() - t0);
        fputs(t.s ? t.s : "", stdout);
        fflush(stdout);
        char path[PATH_MAX + 64], meta[1024];
        snprintf(path, sizeof path, "%s/impact_report.md", o.out);
        st = imp_write_file_atomic(path, t.s, t.len);
        snprintf(meta, sizeof meta,
                 "{\"kind\": \"impact_reproduction\", \"variant\": \"%s\", \"target\": \"%s\", \"quick\": %d, "
                 "\"tables_columns\": \"mu_mean, mu_std, eps_mean, eps_std, best_share, worst_share, table2_fraction, "
                 "mean_error_table1, mean_error_identified, energy_gain_share_identified\", "
                 "\"tables_rows\": \"drumshell, ap-poisson, ap-newton, mirtich, wang-mason, whittaker\", "
                 "\"bounds\": \"bph_table1, bph_identified, irb_velocity, irb_momentum\", "
                 "\"errors_columns\": \"six laws at identified params, best_post_hoc, irb_velocity, irb_momentum\", "
                 "\"ellipse_impact\": %zu, \"ellipse\": \"boundary alpha=1, lines [sticking; max compression] as (x0,y0,x1,y1), "
                 "predictions [model, mu in 0..mu_cap, eps in 0..1, (Pt, Pn)]\", \"tool\": \"impulse %s\"}",
                 imp_impact_variant_name(eo.variant), imp_impact_target_name(eo.target), o.quick, pic, IMP_VERSION_STRING);
        if (!st) st = imp_npz_set_meta(z, meta);
        snprintf(path, sizeof path, "%s/impact_results.npz", o.out);
        if (!st) st = imp_npz_save(z, path);
        if (!st) printf("\nwrote %s/impact_report.md and %s/impact_results.npz\n", o.out, o.out);
    }
    if (!st) {
        char stem[PATH_MAX + 64];
        snprintf(stem, sizeof stem, "%s/impact_error_density", o.out);
        if (!fig_err || imp_figure_save(fig_err, stem)) cli_fail("reproduce impact (figure, continuing)");
        else printf("wrote %s.png/.svg/.npz\n", stem);
        snprintf(stem, sizeof stem, "%s/impact_energy_ellipse", o.out);
        if (!fig_ell || imp_figure_save(fig_ell, stem)) cli_fail("reproduce impact (figure, continuing)");
        else printf("wrote %s.png/.svg/.npz\n", stem);
    }
    imp_figure_free(fig_err);
    imp_figure_free(fig_ell);
    free(given);
    free(t.s);
    imp_npz_free(z);
    imp_impact_set_free(&s);
    if (st) return cli_fail(verb);
    fflush(stdout);
    /* learning curves of the GP models (other strand); failure is reported, not fatal */
    if (cli_reproduce_impact_gp(argc, argv, o.out, o.quick) != 0)
        fprintf(stderr, "impulse reproduce impact: note: GP learning curves did not run (see the error line above)\n");
    if (imp_report_index_html(o.out, "Planar impact reproduction"))
        fprintf(stderr, "impulse reproduce impact: warning: %s\n", imp_last_error());
    else
        printf("wrote %s/index.html\n", o.out);
    return 0;
}
