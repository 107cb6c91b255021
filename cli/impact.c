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
#include "impulse/sweep.h"

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

/* The data file: path, else data_ellipse.mat in the default folder. */
static int data_path(const char *path, char *buf, size_t cap, const char **out)
{
    if (path) { *out = path; return IMP_OK; }
    char dir[PATH_MAX];
    int st = default_data_dir(dir, sizeof dir);
    if (st) return st;
    snprintf(buf, cap, "%s/data_ellipse.mat", dir);
    *out = buf;
    return IMP_OK;
}

static int load_set(imp_impact_set *s, const char *path)
{
    char buf[PATH_MAX + 32];
    int st = data_path(path, buf, sizeof buf, &path);
    return st ? st : imp_impact_load_any(s, path);
}

/* The authors' stored measured impulses (p_true_data.mat, beside the data
 * file) as identification targets, in table order. */
static int load_given_targets(const char *path, const imp_impact_set *s, double **P)
{
    char buf[PATH_MAX + 32];
    int st = data_path(path, buf, sizeof buf, &path);
    return st ? st : imp_impact_load_given_targets(path, s, P);
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

/* The start of a verb on the set: its options (defaults, then the command
 * line; the usage on --help), the set loaded and checked for impacts, the
 * summary line made. Returns -1 to go on (the set is then the caller's to
 * free), else the exit status. */
static int verb_begin(int argc, char **argv, const char *verb, const char *allowed, const char *usage,
                      impact_opts *o, imp_impact_set *s, char *summary, size_t cap, set_counts *counts)
{
    opts_default(o);
    int p = parse_opts(argc, argv, allowed, o);
    if (p == 1) {
        fputs(usage, stdout);
        return 0;
    }
    if (p < 0 || load_set(s, o->data)) return cli_fail(verb);
    if (set_summary(s, summary, cap, counts)) {
        imp_impact_set_free(s);
        return cli_fail(verb);
    }
    return -1;
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
    imp_impact_set s;
    char summary[256];
    set_counts counts;
    int rc = verb_begin(argc, argv, verb, "--data --model --variant --mu --eps --convention --out --json",
                        "usage: impulse impact predict [--data FILE.mat|.npz] [--model NAME|all] [--variant authors|textbook]\n"
                        "         [--mu X] [--eps X] [--convention stored|corrected|both] [--out FILE.npz] [--json]\n"
                        "  predicts every impact with each law (Table 1 parameters unless --mu/--eps), prints the mean and\n"
                        "  median error (m/s; ||(dvx, dvy, kg domega)||) and how often the law gains energy, penetrates or\n"
                        "  leaves the friction cone; --out saves impulses P_<convention>_<model> (count x 2);\n"
                        "  --json: one JSON object (docs/json.md) instead of the table.\n",
                        &o, &s, summary, sizeof summary, &counts);
    if (rc >= 0) return rc;
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
    imp_impact_set s;
    char summary[256];
    set_counts counts;
    int rc = verb_begin(argc, argv, verb,
                        "--data --model --variant --convention --target --k --reps --seed --grid --mu-cap --tol "
                        "--per-impact --out --json",
                        "usage: impulse impact identify [--data FILE] [--model NAME|all] [--variant authors|textbook]\n"
                        "         [--convention stored|corrected|both] [--target contact|irb-velocity|irb-momentum|p-data]\n"
                        "         [--k 120] [--reps 20] [--seed 2017] [--grid 21] [--mu-cap 1]\n"
                        "         [--per-impact [--tol 0.005]] [--out FILE.npz] [--json]\n"
                        "  ensemble identification ([CoRL] eq 6): k impacts drawn without replacement, reps draws,\n"
                        "  mean +- std of (mu, eps) over 0 <= mu <= mu-cap, 0 <= eps <= 1. --per-impact adds the per-impact\n"
                        "  identification under mu <= mu_s ([ISRR] eqs 8-9) and the predictive-range fraction (Table 2):\n"
                        "  residual <= tol * |P|. --out saves per-impact (mu, eps, residual).\n"
                        "  Targets: contact = Mc J (v+ - v-) from the states (default); irb-* = IRB impulse; p-data = the\n"
                        "  authors' stored p_true_data.mat beside the data file (built with the stored d).\n"
                        "  --json: one JSON object (docs/json.md) instead of the table.\n",
                        &o, &s, summary, sizeof summary, &counts);
    if (rc >= 0) return rc;
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
    imp_impact_set s;
    char summary[256];
    set_counts counts;
    int rc = verb_begin(argc, argv, verb, "--data --variant --convention --mu --eps --out --json",
                        "usage: impulse impact bounds [--data FILE] [--variant authors|textbook] [--convention stored|corrected|both]\n"
                        "         [--mu X --eps X] [--out FILE.npz] [--json]\n"
                        "  IRB bound ([ISRR] eq 7: best admissible rigid impulse; velocity and momentum metric) and Best Post Hoc\n"
                        "  (per impact the best of the six laws at Table 1 parameters, or at --mu/--eps), mean errors in m/s.\n"
                        "  --out saves IRB impulses P_irb_<metric>_<convention> and per-impact errors.\n"
                        "  --json: one JSON object (docs/json.md) instead of the table.\n",
                        &o, &s, summary, sizeof summary, &counts);
    if (rc >= 0) return rc;
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
        double *rows = malloc(n * 12 * sizeof(double)); /* d, n, v_pre, v_post of the table's impacts, n x 3 each */
        int32_t *status = malloc(n * sizeof(int32_t));
        double mean[3] = {0, 0, 0};
        if (!err || !e || !P || !rows || !status) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < n && !st; i++) {
            size_t r = t.index[i];
            memcpy(rows + 3 * i, s.d + 3 * r, 3 * sizeof(double));
            memcpy(rows + 3 * (n + i), s.n + 3 * r, 3 * sizeof(double));
            memcpy(rows + 3 * (2 * n + i), s.pre + 6 * r + 3, 3 * sizeof(double));
            memcpy(rows + 3 * (3 * n + i), s.post + 6 * r + 3, 3 * sizeof(double));
        }
        for (int metric = 0; metric < 2 && !st; metric++) {
            size_t failed = 0;
            st = imp_impact_irb_batch((imp_irb_metric)metric, n, rows, rows + 3 * n, rows + 6 * n, rows + 9 * n,
                                      s.object.mass, s.object.mass * t.kg * t.kg, t.kg, P, e, NULL, status, &failed);
            if (!st && failed) st = IMP_ERR_NUMERIC; /* imp_last_error() names the first failed impact */
            for (size_t i = 0; i < n && !st; i++) err[3 * i + metric] = e[i];
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
        free(rows);
        free(status);
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

/* Fazeli et al. 2017 as a sweep plan (src/sweep/task_impact.c): one task
 * per table, run in --out by the sweep runner and reported
 * (src/sweep/report_impact.c). */
int cli_reproduce_impact(int argc, char **argv)
{
    const char *verb = "reproduce impact";
    impact_opts o;
    opts_default(&o);
    o.out = "reproduce-impact";
    const char *plan_out = NULL;
    long jobs = 1;
    /* --plan and --jobs are this verb's own; the rest are the impact options */
    char **rest = malloc((size_t)(argc + 1) * sizeof *rest);
    if (!rest) return cli_failf(verb, "out of memory");
    int n = 0;
    rest[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plan") && i + 1 < argc) plan_out = argv[++i];
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
            if (cli_parse_long("--jobs", argv[i + 1], 1, 64, &jobs)) { free(rest); return cli_fail(verb); }
            i++;
        } else rest[n++] = argv[i];
    }
    int p = parse_opts(n, rest, "--quick --out --data --variant --target --seed", &o);
    free(rest);
    if (p == 1) {
        printf("usage: impulse reproduce impact [--quick] [--out DIR] [--data FILE] [--variant authors|textbook]\n"
               "         [--target contact|irb-velocity|irb-momentum|p-data] [--seed N] [--jobs J] [--plan FILE]\n"
               "  Fazeli et al. 2017 on the MIT planar-impact data, under the stored and the corrected tangent sign:\n"
               "  Table 1 (ensemble mu, eps; best/worst shares), Table 2 (predictive-range fractions), mean errors of\n"
               "  the six laws, Best Post Hoc and the IRB bound; Table 1 against p_true_data.mat; the GP learning\n"
               "  curves ([CoRL] Fig. 8) on the data and on synthetic drops. One task per table, run in DIR (a sweep\n"
               "  folder: DIR/tasks/<id>/result.npz); writes DIR/report.md, DIR/index.html and the figures\n"
               "  DIR/impact_error_density, impact_energy_ellipse, impact_gp_learning_curves (.png/.svg/.npz).\n"
               "  --quick: 5 draws instead of 20, Table 2 on 300 impacts, 11x11 start grid, 2 GP splits.\n"
               "  --seed, --variant, --target: the tables' (the GP curves keep their own settings).\n"
               "  --jobs J: processes sharing the tasks (default 1). --plan FILE: write the plan and stop.\n"
               "  --out DIR: the sweep folder (default reproduce-impact). Run again to resume: a finished task is\n"
               "  never rerun.\n");
        return 0;
    }
    if (p < 0) return cli_fail(verb);
    char dir[PATH_MAX], file[PATH_MAX + 32], abs_file[PATH_MAX];
    if (!o.data) {
        if (default_data_dir(dir, sizeof dir)) return cli_fail(verb);
        snprintf(file, sizeof file, "%s/data_ellipse.mat", dir);
        o.data = file;
    }
    /* the plan may be run from another folder: an absolute path */
    if (realpath(o.data, abs_file)) o.data = abs_file;
    imp_sweep_impact_opts io;
    imp_sweep_impact_opts_default(&io);
    io.data = o.data;
    io.quick = o.quick;
    io.variant = imp_impact_variant_name(o.variant);
    io.target = imp_impact_target_name(o.target);
    io.seed = o.seed;
    imp_sweep_plan plan;
    if (imp_sweep_plan_impact(&plan, &io)) return cli_fail(verb);
    int rc = cli_reproduce_sweep(verb, &plan, plan_out, o.out, CLI_DEFAULT_THREADS, (int)jobs);
    imp_sweep_plan_free(&plan);
    return rc;
}
