#define _POSIX_C_SOURCE 200809L /* open_memstream */
/* `impulse impact gp-fit | gp-eval | learning-curve | drop` and the GP part of
 * `impulse reproduce impact` (Fazeli et al. 2017 [CoRL] §4-5, Fig. 8). */
#include "cli.h"
#include "impulse/drop.h"
#include "impulse/gp.h"
#include "impulse/impact.h"
#include "impulse/impact_reproduce.h"
#include "impulse/io.h"
#include "impulse/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------------- */
/* shared option handling                                                 */

typedef struct gp_opts {
    const char *data, *out, *model_path, *npz, *models, *sizes, *set_out;
    imp_tangent_sign conv;
    int conv_given;
    imp_gpi_kind kind;
    imp_impact_law law;
    imp_impact_target target;
    long train, repeats, test, ident, restarts, synthetic, count, grid;
    long seed;
    int quick, all, quiet, json;
    imp_drop_params drop;
} gp_opts;

static void opts_default(gp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->conv = IMP_TANGENT_CORRECTED;
    o->kind = IMP_GPI_X1_IMPULSE;
    o->law.model = IMP_IMPACT_AP_NEWTON;
    o->law.variant = IMP_VARIANT_TEXTBOOK;
    o->target = IMP_TARGET_IRB_VELOCITY;
    o->train = 450;
    o->repeats = 5;
    o->test = 400;
    o->ident = 120;
    o->restarts = 2;
    o->seed = 1;
    o->count = 100;
    o->grid = 21;
    imp_drop_params_default(&o->drop);
}

/* Parse one option at argv[*i]; returns 1 if consumed, 0 if unknown, -1 on a
 * bad value (error recorded). */
static int parse_one(gp_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--quick")) return o->quick = 1;
    if (!strcmp(a, "--all")) return o->all = 1;
    if (!strcmp(a, "--quiet")) return o->quiet = 1;
    if (!strcmp(a, "--json")) return o->json = 1;
    if (*i + 1 >= argc) return 0;
    const char *v = argv[*i + 1];
    int st = IMP_OK, hit = 1;
    double x;
    if (!strcmp(a, "--data")) o->data = v;
    else if (!strcmp(a, "--out")) o->out = v;
    else if (!strcmp(a, "--model-file") || !strcmp(a, "--gp")) o->model_path = v;
    else if (!strcmp(a, "--npz")) o->npz = v;
    else if (!strcmp(a, "--set")) o->set_out = v;
    else if (!strcmp(a, "--models")) o->models = v;
    else if (!strcmp(a, "--sizes")) o->sizes = v;
    else if (!strcmp(a, "--convention")) {
        st = imp_tangent_sign_parse(v, &o->conv, "--convention");
        o->conv_given = 1;
    } else if (!strcmp(a, "--model")) st = imp_gpi_kind_parse(v, &o->kind, "--model");
    else if (!strcmp(a, "--law")) st = imp_impact_model_parse(v, &o->law.model, "--law");
    else if (!strcmp(a, "--variant")) st = imp_impact_variant_parse(v, &o->law.variant, "--variant");
    else if (!strcmp(a, "--target")) st = imp_impact_target_parse(v, &o->target, "--target");
    else if (!strcmp(a, "--train")) st = cli_parse_long(a, v, 2, 20000, &o->train);
    else if (!strcmp(a, "--repeats")) st = cli_parse_long(a, v, 1, 1000, &o->repeats);
    else if (!strcmp(a, "--test")) st = cli_parse_long(a, v, 1, 1000000, &o->test);
    else if (!strcmp(a, "--ident")) st = cli_parse_long(a, v, 1, 1000000, &o->ident);
    else if (!strcmp(a, "--restarts")) st = cli_parse_long(a, v, 0, 100, &o->restarts);
    else if (!strcmp(a, "--grid")) st = cli_parse_long(a, v, 2, 1000, &o->grid);
    else if (!strcmp(a, "--synthetic")) st = cli_parse_long(a, v, 10, 1000000, &o->synthetic);
    else if (!strcmp(a, "--count")) st = cli_parse_long(a, v, 1, 10000000, &o->count);
    else if (!strcmp(a, "--seed")) st = cli_parse_long(a, v, 0, 2147483647L, &o->seed);
#define DROP_OPT(name, field)                                                       \
    else if (!strcmp(a, name)) {                                                    \
        st = cli_parse_double(a, v, -1e300, 1e300, &x);                             \
        o->drop.field = x;                                                          \
    }
    DROP_OPT("--mu", mu)
    DROP_OPT("--k-n", k_n)
    DROP_OPT("--c-n", c_n)
    DROP_OPT("--k-t", k_t)
    DROP_OPT("--c-t", c_t)
    DROP_OPT("--rho-patch", rho_patch)
    DROP_OPT("--noise-pos", noise_pos)
    DROP_OPT("--noise-theta", noise_theta)
    DROP_OPT("--a", a)
    DROP_OPT("--b", b)
    DROP_OPT("--mass", mass)
    DROP_OPT("--kg", kg)
    DROP_OPT("--frame-rate", frame_rate)
    DROP_OPT("--dt", dt)
#undef DROP_OPT
    else hit = 0;
    if (st) return -1;
    if (hit) (*i)++;
    return hit;
}

/* Where a verb's summary goes: standard error when standard output holds
 * one of its files ('-'). */
static FILE *gp_text(const gp_opts *o)
{
    return (o->out && !strcmp(o->out, "-")) || (o->set_out && !strcmp(o->set_out, "-")) ? stderr : stdout;
}

/* Strict parse of argv[2..]: unknown options are errors. */
static int parse_all(gp_opts *o, int argc, char **argv, const char *verb, int *help)
{
    *help = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            *help = 1;
            return 0;
        }
        int r = parse_one(o, argc, argv, &i);
        if (r < 0) return cli_fail(verb);
        if (r == 0) return cli_failf(verb, "unknown or incomplete option '%s' (--help)", argv[i]);
    }
    return cli_json_check_output(verb, o->json, o->out);
}

/* Data set: --data FILE (.mat, impact-set .npz or drop .npz), else
 * $IMPULSE_IMPACT_DATA (folder), else ../shared/data/planar-impact. */
static int load_data(imp_impact_set *s, const char *path)
{
    char buf[4096];
    if (!path) {
        const char *env = getenv("IMPULSE_IMPACT_DATA");
        const char *cands[3] = {env, "../shared/data/planar-impact", "../../shared/data/planar-impact"};
        for (int k = 0; k < 3 && !path; k++) {
            if (!cands[k]) continue;
            snprintf(buf, sizeof buf, "%s/data_ellipse.mat", cands[k]);
            struct stat sb;
            if (stat(buf, &sb) == 0) path = buf;
        }
        if (!path)
            return imp_fail(IMP_ERR_NOT_FOUND, "data set not found: pass --data FILE or set "
                                               "IMPULSE_IMPACT_DATA (folder with data_ellipse.mat)");
    }
    return imp_impact_load_any(s, path);
}

/* --json: the data's counts under the keys of the other impact verbs. */
static void json_set_counts(imp_json *j, const imp_impact_table *t)
{
    imp_json_kv_int(j, "impacts", (long long)t->count);
    imp_json_kv_int(j, "set_rows", (long long)t->rows);
    imp_json_kv_int(j, "not_impacting", (long long)t->not_impacting);
    imp_json_kv_int(j, "flagged", (long long)t->flagged);
}

/* Table of the data (or of freshly simulated drops) in the chosen convention. */
static int load_table(const gp_opts *o, imp_impact_set *s, imp_impact_table *t)
{
    int st;
    if (o->synthetic) {
        imp_drop_sample *ds = malloc((size_t)o->synthetic * sizeof *ds);
        if (!ds) return imp_fail(IMP_ERR_NOMEM, "out of memory for %ld drops", o->synthetic);
        st = imp_drop_generate(&o->drop, (uint64_t)o->seed + 77, (size_t)o->synthetic, ds, NULL);
        if (!st) st = imp_drop_to_impact_set(ds, (size_t)o->synthetic, &o->drop, s);
        free(ds);
        if (st) return st;
        /* drops are simulated in the consistent convention: nothing to switch */
    } else {
        st = load_data(s, o->data);
        if (st) return st;
        imp_impact_set_convention(s, o->conv);
    }
    st = imp_impact_table_build(t, s);
    if (st) imp_impact_set_free(s);
    return st;
}

static imp_gp_options gp_options(const gp_opts *o)
{
    imp_gp_options g;
    imp_gp_options_default(&g);
    g.restarts = (int)o->restarts;
    g.seed = (uint64_t)o->seed;
    return g;
}

static imp_ident_options ident_options(const gp_opts *o)
{
    imp_ident_options io = imp_ident_options_default();
    io.grid = (int)o->grid;
    return io;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---------------------------------------------------------------------- */
/* gp-fit                                                                 */

static int verb_fit(int argc, char **argv)
{
    const char *verb = "impact gp-fit";
    gp_opts o;
    opts_default(&o);
    int help;
    if (parse_all(&o, argc, argv, verb, &help)) return 1;
    if (help) {
        printf("usage: impulse impact gp-fit --out MODEL.npz [--data FILE] [--convention corrected|stored]\n"
               "         [--model KIND] [--law NAME] [--variant textbook|authors] [--target T]\n"
               "         [--train N] [--seed S] [--restarts R] [--grid G] [--synthetic N] [--json]\n"
               "Fits one data-driven impact model ([CoRL] sec 4) on N random valid impacts\n"
               "(seeded) and reports its error on the remaining impacts.\n"
               "  KIND: x1-impulse (default), x2-impulse, x1-wrench, residual-impulse,\n"
               "        residual-wrench, param-gp\n"
               "  --law/--variant: analytical law of the Class II models (ap-newton, textbook)\n"
               "  --target: contact | irb-velocity (default) | irb-momentum: impulse the GP learns\n"
               "  --convention: tangent sign of the data (corrected: d3 -> -d3, the default)\n"
               "  --synthetic N: use N simulated drops instead of the data (impulse impact drop)\n"
               "  --json: one JSON object on stdout instead of the summary (docs/json.md)\n");
        return 0;
    }
    if (!o.out) return cli_failf(verb, "--out: missing (file for the fitted model)");
    imp_impact_set s;
    imp_impact_table t;
    if (load_table(&o, &s, &t)) return cli_fail(verb);
    int rc = 1;
    imp_gpi_data d;
    imp_ident_options io = ident_options(&o);
    imp_gp_options go = gp_options(&o);
    size_t *perm = malloc(t.count * sizeof *perm);
    imp_contact *rest = malloc(t.count * sizeof *rest);
    double *v = malloc(t.count * 3 * sizeof *v);
    memset(&d, 0, sizeof d);
    if (!perm || !rest || !v) {
        imp_fail(IMP_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((size_t)o.train >= t.count) {
        imp_fail(IMP_ERR_SHAPE, "--train: %ld leaves no held-out impacts (%zu valid)", o.train, t.count);
        goto done;
    }
    if (imp_gpi_data_build(&d, &t, o.target, &o.law, o.kind == IMP_GPI_PARAMS, &io)) goto done;
    imp_rng rng;
    imp_rng_seed(&rng, (uint64_t)o.seed);
    for (size_t i = 0; i < t.count; i++) perm[i] = i;
    imp_rng_shuffle(&rng, perm, t.count);
    imp_gpi_model m;
    double t0 = imp_time_now();
    if (imp_gpi_fit(&m, o.kind, &d, perm, (size_t)o.train, &go, &io)) goto done;
    double fit_s = imp_time_now() - t0;
    size_t nrest = t.count - (size_t)o.train;
    for (size_t a = 0; a < nrest; a++) rest[a] = t.contact[perm[o.train + a]];
    if (imp_gpi_predict(&m, rest, nrest, v)) {
        imp_gpi_model_free(&m);
        goto done;
    }
    double e = 0.0;
    for (size_t a = 0; a < nrest; a++) e += imp_impact_velocity_error(v + 3 * a, rest[a].v_post, t.kg);
    /* training indices are stored as set indices so that gp-eval can leave them out */
    for (size_t a = 0; a < (size_t)o.train; a++) perm[a] = t.index[perm[a]];
    char extra[256];
    snprintf(extra, sizeof extra, "\"convention\": \"%s\", \"target\": \"%s\", \"seed\": %ld, \"data_count\": %zu",
             imp_tangent_sign_name(t.convention), imp_impact_target_name(o.target), o.seed, s.count);
    int st = imp_gpi_save(&m, perm, (size_t)o.train, extra, o.out);
    if (!st && o.json) {
        imp_json j;
        cli_json_begin(&j, verb);
        imp_json_kv_string(&j, "model", imp_gpi_kind_name(o.kind));
        imp_json_kv_string(&j, "convention", imp_tangent_sign_name(t.convention));
        imp_json_kv_string(&j, "target", imp_impact_target_name(o.target));
        if (o.kind == IMP_GPI_RESIDUAL_IMPULSE || o.kind == IMP_GPI_RESIDUAL_WRENCH) {
            imp_json_kv_string(&j, "law", imp_impact_model_name(m.base.model));
            imp_json_kv_string(&j, "variant", imp_impact_variant_name(m.base.variant));
            imp_json_kv_number(&j, "friction", m.base.mu);
            imp_json_kv_number(&j, "restitution", m.base.eps);
        }
        imp_json_kv_int(&j, "train", o.train);
        imp_json_kv_int(&j, "impacts", (long long)nrest);
        imp_json_kv_number(&j, "mean_error", e / (double)nrest);
        imp_json_kv_number(&j, "seconds", fit_s);
        imp_json_kv_string(&j, "output", o.out);
        rc = cli_json_print(&j, verb);
        st = 1; /* printed */
    }
    if (!st) {
        fprintf(gp_text(&o), "model %s (%s convention, target %s): trained on %ld impacts in %.2f s\n",
               imp_gpi_kind_name(o.kind), imp_tangent_sign_name(t.convention),
               imp_impact_target_name(o.target), o.train, fit_s);
        if (o.kind == IMP_GPI_RESIDUAL_IMPULSE || o.kind == IMP_GPI_RESIDUAL_WRENCH)
            fprintf(gp_text(&o), "base law %s (%s): mu %.4f, eps %.4f identified on the training impacts\n",
                   imp_impact_model_name(m.base.model), imp_impact_variant_name(m.base.variant),
                   m.base.mu, m.base.eps);
        fprintf(gp_text(&o), "held-out error on %zu impacts: mean %.4f m/s\nwrote %s\n", nrest, e / (double)nrest, o.out);
        rc = 0;
    }
    imp_gpi_model_free(&m);
done:
    if (rc) cli_fail(verb);
    imp_gpi_data_free(&d);
    free(perm);
    free(rest);
    free(v);
    imp_impact_table_free(&t);
    imp_impact_set_free(&s);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* gp-eval                                                                */

static int verb_eval(int argc, char **argv)
{
    const char *verb = "impact gp-eval";
    gp_opts o;
    opts_default(&o);
    int help;
    if (parse_all(&o, argc, argv, verb, &help)) return 1;
    if (help) {
        printf("usage: impulse impact gp-eval --gp MODEL.npz [--data FILE] [--convention C] [--all]\n"
               "         [--out ERRORS.npz] [--synthetic N] [--json]\n"
               "Error metric ||(dvx, dvy, kg domega)|| of a fitted model on the valid impacts of\n"
               "the data, leaving out the model's training impacts unless --all (or other data).\n"
               "The convention defaults to the model's. --json: one JSON object on stdout\n"
               "instead of the summary (docs/json.md).\n");
        return 0;
    }
    if (!o.model_path) return cli_failf(verb, "--gp: missing (model written by impulse impact gp-fit)");
    imp_gpi_model m;
    char *meta = NULL;
    size_t *train = NULL, ntrain = 0;
    if (imp_gpi_load(&m, o.model_path, &meta, &train, &ntrain)) return cli_fail(verb);
    char conv[32];
    if (!o.conv_given && meta && imp_json_get_string(meta, "convention", conv, sizeof conv) == IMP_OK)
        imp_tangent_sign_parse(conv, &o.conv, "model convention");
    double data_count = -1;
    if (meta) imp_json_get_number(meta, "data_count", &data_count);
    imp_clear_error();
    imp_impact_set s;
    imp_impact_table t;
    if (load_table(&o, &s, &t)) {
        imp_gpi_model_free(&m);
        free(meta);
        free(train);
        return cli_fail(verb);
    }
    int rc = 1;
    unsigned char *skip = calloc(s.count, 1);
    imp_contact *c = malloc(t.count * sizeof *c);
    double *v = malloc(t.count * 3 * sizeof *v), *err = malloc(t.count * sizeof *err);
    if (!skip || !c || !v || !err) {
        imp_fail(IMP_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* leave the training impacts out when evaluating on the same data set */
    int same_data = data_count == (double)s.count && !o.all;
    for (size_t a = 0; same_data && a < ntrain; a++)
        if (train[a] < s.count) skip[train[a]] = 1;
    size_t k = 0;
    for (size_t i = 0; i < t.count; i++)
        if (!skip[t.index[i]]) c[k++] = t.contact[i];
    if (k == 0) {
        imp_fail(IMP_ERR_SHAPE, "no impacts left to evaluate");
        goto done;
    }
    if (imp_gpi_predict(&m, c, k, v)) goto done;
    double mean = 0.0;
    for (size_t a = 0; a < k; a++) {
        err[a] = imp_impact_velocity_error(v + 3 * a, c[a].v_post, t.kg);
        mean += err[a] / (double)k;
    }
    if (o.out) {
        imp_npz *z = imp_npz_new();
        size_t sh[1] = {k}, sh3[2] = {k, 3};
        int st = z ? imp_npz_add_f64(z, "errors", 1, sh, err) : imp_fail(IMP_ERR_NOMEM, "out of memory");
        if (!st) st = imp_npz_add_f64(z, "v_pred", 2, sh3, v);
        if (!st) st = imp_npz_set_meta(z, meta ? meta : "{}");
        if (!st) st = imp_npz_save(z, o.out);
        imp_npz_free(z);
        if (st) goto done;
    }
    qsort(err, k, sizeof *err, cmp_double);
    double median = k % 2 ? err[k / 2] : 0.5 * (err[k / 2 - 1] + err[k / 2]);
    if (o.json) {
        imp_json j;
        cli_json_begin(&j, verb);
        imp_json_kv_string(&j, "model", imp_gpi_kind_name(m.kind));
        imp_json_kv_string(&j, "convention", imp_tangent_sign_name(t.convention));
        imp_json_kv_int(&j, "impacts", (long long)k);
        imp_json_kv_int(&j, "training_left_out", same_data && ntrain);
        imp_json_kv_number(&j, "mean_error", mean);
        imp_json_kv_number(&j, "median_error", median);
        if (o.out) imp_json_kv_string(&j, "output", o.out);
        rc = cli_json_print(&j, verb);
        goto done_printed;
    }
    fprintf(gp_text(&o), "model %s on %zu impacts (%s convention%s): mean error %.4f m/s, median %.4f m/s\n",
           imp_gpi_kind_name(m.kind), k, imp_tangent_sign_name(t.convention),
           same_data && ntrain ? ", training impacts left out" : "", mean, median);
    if (o.out) fprintf(gp_text(&o), "wrote %s\n", o.out);
    rc = 0;
done:
    if (rc) cli_fail(verb);
done_printed:
    free(skip);
    free(c);
    free(v);
    free(err);
    free(meta);
    free(train);
    imp_gpi_model_free(&m);
    imp_impact_table_free(&t);
    imp_impact_set_free(&s);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* learning curves                                                        */

static int parse_sizes(const char *text, size_t *sizes, size_t *n)
{
    long v[64];
    int k = 0;
    *n = 0;
    int st = cli_parse_long_list("--sizes", text, 2, 100000, v, 64, &k);
    if (st) return st;
    for (int i = 0; i < k; i++) {
        if (i && v[i] <= v[i - 1]) return imp_fail(IMP_ERR_INVALID, "--sizes: sizes must increase ('%s')", text);
        sizes[i] = (size_t)v[i];
    }
    *n = (size_t)k;
    return IMP_OK;
}

static int parse_models(const char *text, unsigned *mask)
{
    *mask = 0;
    if (!text || !strcmp(text, "all")) {
        *mask = (1u << IMP_GPI_KIND_COUNT) - 1;
        return IMP_OK;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        imp_gpi_kind k;
        int st = imp_gpi_kind_parse(tok, &k, "--models");
        if (st) return st;
        *mask |= 1u << k;
    }
    return IMP_OK;
}

/* Markdown table of a learning curve. */
static void write_table(FILE *f, const imp_lc_result *r, const char *title)
{
    fprintf(f, "### %s\n\n", title);
    fprintf(f, "Mean test error ||(dvx, dvy, k_g dw)|| in m/s, mean +- std over %zu random splits.\n\n",
            r->repeats);
    fprintf(f, "| training size |");
    for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
        if (r->kinds & (1u << k)) fprintf(f, " %s |", imp_gpi_kind_name((imp_gpi_kind)k));
    fprintf(f, "\n|---|");
    for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
        if (r->kinds & (1u << k)) fprintf(f, "---|");
    fprintf(f, "\n");
    for (size_t s = 0; s < r->n_sizes; s++) {
        fprintf(f, "| %zu |", r->sizes[s]);
        for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
            if (r->kinds & (1u << k)) fprintf(f, " %.4f +- %.4f |", r->mean[k][s], r->std[k][s]);
        fprintf(f, "\n");
    }
    fprintf(f, "\nReferences on the same test sets: Best Post Hoc %.4f +- %.4f, IRB bound %.4f +- %.4f, "
               "%s (%s, identified) %.4f +- %.4f m/s.\n",
            r->ref_mean[IMP_LC_REF_BEST_POST_HOC], r->ref_std[IMP_LC_REF_BEST_POST_HOC],
            r->ref_mean[IMP_LC_REF_IRB], r->ref_std[IMP_LC_REF_IRB], imp_impact_model_name(r->base.model),
            imp_impact_variant_name(r->base.variant), r->ref_mean[IMP_LC_REF_BASE_LAW],
            r->ref_std[IMP_LC_REF_BASE_LAW]);
    fprintf(f, "Laws identified ([CoRL] eq 6) on the first split:");
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++)
        fprintf(f, " %s (mu %.3f, eps %.3f)%s", imp_impact_model_name((imp_impact_model)m), r->law_mu[m],
                r->law_eps[m], m + 1 < IMP_IMPACT_MODEL_COUNT ? "," : ".\n");
    fprintf(f, "Fitting time per model over the whole curve (s):");
    for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
        if (r->kinds & (1u << k)) fprintf(f, " %s %.1f;", imp_gpi_kind_name((imp_gpi_kind)k), r->fit_seconds[k]);
    fprintf(f, "\n\n");
}

static int save_curve_npz(const imp_lc_result *r, const gp_opts *o, const char *conv, const char *path)
{
    imp_npz *z = imp_npz_new();
    if (!z) return imp_fail(IMP_ERR_NOMEM, "out of memory");
    size_t S = r->n_sizes, K = 0;
    double sizes[64], mean[IMP_GPI_KIND_COUNT * 64], std[IMP_GPI_KIND_COUNT * 64];
    for (size_t s = 0; s < S; s++) sizes[s] = (double)r->sizes[s];
    for (int k = 0; k < IMP_GPI_KIND_COUNT; k++) {
        if (!(r->kinds & (1u << k))) continue; /* rows of the selected models only */
        for (size_t s = 0; s < S; s++) {
            mean[K * S + s] = r->mean[k][s];
            std[K * S + s] = r->std[k][s];
        }
        K++;
    }
    size_t s1[1] = {S}, s2[2] = {K, S}, s3[1] = {IMP_LC_REF_COUNT};
    int st = imp_npz_add_f64(z, "sizes", 1, s1, sizes);
    if (!st) st = imp_npz_add_f64(z, "mean", 2, s2, mean);
    if (!st) st = imp_npz_add_f64(z, "std", 2, s2, std);
    if (!st) st = imp_npz_add_f64(z, "ref_mean", 1, s3, r->ref_mean);
    if (!st) st = imp_npz_add_f64(z, "ref_std", 1, s3, r->ref_std);
    if (!st) {
        imp_json j;
        imp_json_init(&j);
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "kind", "gp_learning_curve");
        imp_json_kv_string(&j, "data", o->synthetic ? "synthetic drops" : (o->data ? o->data : "data_ellipse.mat"));
        imp_json_kv_string(&j, "convention", conv);
        imp_json_kv_string(&j, "target", imp_impact_target_name(o->target));
        imp_json_kv_string(&j, "law", imp_impact_model_name(r->base.model));
        imp_json_kv_string(&j, "variant", imp_impact_variant_name(r->base.variant));
        imp_json_key(&j, "models");
        imp_json_begin_array(&j);
        for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
            if (r->kinds & (1u << k)) imp_json_string(&j, imp_gpi_kind_name((imp_gpi_kind)k));
        imp_json_end_array(&j);
        imp_json_key(&j, "references");
        imp_json_begin_array(&j);
        imp_json_string(&j, "best_post_hoc");
        imp_json_string(&j, "irb_velocity");
        imp_json_string(&j, "base_law");
        imp_json_end_array(&j);
        imp_json_kv_int(&j, "repeats", (long long)r->repeats);
        imp_json_kv_int(&j, "n_test", o->test);
        imp_json_kv_int(&j, "n_ident", o->ident);
        imp_json_kv_int(&j, "seed", o->seed);
        imp_json_kv_string(&j, "tool", "impulse " IMP_VERSION_STRING);
        imp_json_end_object(&j);
        const char *text = imp_json_text(&j);
        st = text ? imp_npz_set_meta(z, text) : imp_fail(IMP_ERR_NOMEM, "meta JSON");
        imp_json_free(&j);
    }
    if (!st) st = imp_npz_save(z, path);
    imp_npz_free(z);
    return st;
}

/* One panel of Fig. 8: each model's mean error with its spread over the
 * splits, Best Post Hoc and the IRB bound as horizontal lines. */
static void add_curve_panel(imp_figure *fig, int panel, const imp_lc_result *r, const char *title)
{
    static const char *const styles[IMP_GPI_KIND_COUNT] = {"o-|C0", "s-|C1", "^-|C2", "o--|C3", "^--|C4", "d:|C5"};
    double x[64];
    for (size_t s = 0; s < r->n_sizes; s++) x[s] = (double)r->sizes[s];
    imp_figure_axes(fig, panel, title, "training impacts", "mean error ||(dvx, dvy, k_g dw)|| (m/s)");
    imp_figure_logscale(fig, panel, 1, 1);
    for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
        if (r->kinds & (1u << k))
            imp_figure_errorbar(fig, panel, x, r->mean[k], r->std[k], r->n_sizes,
                                imp_gpi_kind_name((imp_gpi_kind)k), styles[k]);
    imp_figure_refline(fig, panel, 0, r->ref_mean[IMP_LC_REF_BEST_POST_HOC], "Best Post Hoc", "--|black");
    imp_figure_refline(fig, panel, 0, r->ref_mean[IMP_LC_REF_IRB], "IRB bound", ":|black");
}

/* --json of a learning curve: its facts and one row per model and
 * training size, then one per reference (Best Post Hoc, IRB bound, the
 * base law identified on --ident impacts). */
static void json_curve(imp_json *j, const imp_lc_result *r, const imp_impact_table *t, const gp_opts *o)
{
    json_set_counts(j, t);
    imp_json_kv_string(j, "convention", imp_tangent_sign_name(t->convention));
    imp_json_kv_string(j, "target", imp_impact_target_name(o->target));
    imp_json_kv_int(j, "repeats", (long long)r->repeats);
    imp_json_kv_int(j, "test", o->test);
    imp_json_kv_int(j, "seed", o->seed);
    imp_json_key(j, "rows");
    imp_json_begin_array(j);
    for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
        for (size_t s = 0; (r->kinds & (1u << k)) && s < r->n_sizes; s++) {
            imp_json_begin_object(j);
            imp_json_kv_string(j, "model", imp_gpi_kind_name((imp_gpi_kind)k));
            imp_json_kv_int(j, "train", (long long)r->sizes[s]);
            imp_json_kv_number(j, "mean_error", r->mean[k][s]);
            imp_json_kv_number(j, "error_std", r->std[k][s]);
            imp_json_end_object(j);
        }
    static const char *const ref_name[IMP_LC_REF_COUNT] = {"best-post-hoc", "irb-velocity", "base-law"};
    for (int k = 0; k < IMP_LC_REF_COUNT; k++) {
        imp_json_begin_object(j);
        imp_json_kv_string(j, "model", ref_name[k]);
        if (k == IMP_LC_REF_BASE_LAW) {
            imp_json_kv_string(j, "law", imp_impact_model_name(r->base.model));
            imp_json_kv_string(j, "variant", imp_impact_variant_name(r->base.variant));
            imp_json_kv_int(j, "train", o->ident);
        }
        imp_json_kv_number(j, "mean_error", r->ref_mean[k]);
        imp_json_kv_number(j, "error_std", r->ref_std[k]);
        imp_json_end_object(j);
    }
    imp_json_end_array(j);
}

/* Run one learning curve with options o; appends its table to f (may be NULL)
 * and, unless quiet_table, stdout; a panel to fig (may be NULL); under
 * --json (j not NULL) its members to j. */
static int run_curve(const gp_opts *o_in, FILE *f, const char *title, const char *npz_path,
                     imp_figure *fig, int panel, int quiet_table, imp_json *j)
{
    gp_opts o = *o_in;
    size_t sizes[64], n_sizes;
    int st = parse_sizes(o.sizes ? o.sizes : (o.quick ? "10,50,150" : "10,25,50,100,200,300,450"),
                         sizes, &n_sizes);
    if (st) return st;
    unsigned mask;
    if ((st = parse_models(o.models, &mask))) return st;
    imp_impact_set s;
    imp_impact_table t;
    if ((st = load_table(&o, &s, &t))) return st;
    /* the test set takes what the largest training set leaves, up to --test */
    if (t.count > sizes[n_sizes - 1] && (size_t)o.test > t.count - sizes[n_sizes - 1])
        o.test = (long)(t.count - sizes[n_sizes - 1]);
    if ((size_t)o.ident > t.count - (size_t)o.test) o.ident = (long)(t.count - (size_t)o.test);
    imp_gpi_data d;
    imp_ident_options io = ident_options(&o);
    double t0 = imp_time_now();
    st = imp_gpi_data_build(&d, &t, o.target, &o.law, (mask >> IMP_GPI_PARAMS) & 1u, &io);
    if (!st) {
        imp_lc_options lo = {sizes, n_sizes, (size_t)o.repeats, (size_t)o.test, (size_t)o.ident,
                             (uint64_t)o.seed, mask, gp_options(&o), io};
        imp_lc_result r;
        st = imp_gpi_learning_curve(&d, &lo, &r);
        if (!st) {
            char full[512];
            snprintf(full, sizeof full, "%s (%zu valid impacts, %s convention, target %s, %ld test impacts, %.0f s)",
                     title, t.count, imp_tangent_sign_name(t.convention), imp_impact_target_name(o.target),
                     o.test, imp_time_now() - t0);
            if (!quiet_table) write_table(stdout, &r, full);
            if (f) write_table(f, &r, full);
            if (j) json_curve(j, &r, &t, &o);
            if (npz_path) st = save_curve_npz(&r, &o, imp_tangent_sign_name(t.convention), npz_path);
            if (fig) add_curve_panel(fig, panel, &r, title);
            imp_lc_result_free(&r);
        }
        imp_gpi_data_free(&d);
    }
    imp_impact_table_free(&t);
    imp_impact_set_free(&s);
    return st;
}

static void apply_quick(gp_opts *o)
{
    if (!o->quick) return;
    o->repeats = o->repeats > 2 ? 2 : o->repeats;
    o->test = o->test > 200 ? 200 : o->test;
    o->restarts = 0;
    o->grid = 11;
}

static int verb_curve(int argc, char **argv)
{
    const char *verb = "impact learning-curve";
    gp_opts o;
    opts_default(&o);
    int help;
    if (parse_all(&o, argc, argv, verb, &help)) return 1;
    if (help) {
        printf("usage: impulse impact learning-curve [--data FILE | --synthetic N] [--convention C]\n"
               "         [--models all|LIST] [--sizes 10,25,...] [--repeats R] [--test N] [--ident N]\n"
               "         [--law NAME] [--variant V] [--target T] [--seed S] [--restarts R] [--grid G]\n"
               "         [--quick] [--out TABLE.md] [--npz CURVE.npz] [--json]\n"
               "Error on held-out impacts against training-set size ([CoRL] Fig. 8) for the\n"
               "data-driven models, over seeded random splits, with Best Post Hoc and the IRB\n"
               "bound on the same test sets. Defaults: all six models, sizes 10..450, 5 repeats,\n"
               "400 test impacts, laws identified on 120 impacts. --quick: sizes 10,50,150,\n"
               "2 repeats, 200 test impacts, one GP start. --out: the table also to a file ('-':\n"
               "standard output only); --json: one JSON object on stdout instead (docs/json.md).\n");
        return 0;
    }
    apply_quick(&o);
    /* --out: the table, written atomically at the end ('-': standard output, where it is printed anyway) */
    int to_stdout = o.out && !strcmp(o.out, "-");
    char *table = NULL;
    size_t table_len = 0;
    FILE *f = o.out && !to_stdout ? open_memstream(&table, &table_len) : NULL;
    if (o.out && !to_stdout && !f) return cli_failf(verb, "--out: out of memory");
    imp_json j;
    if (o.json) cli_json_begin(&j, verb);
    int st = run_curve(&o, f, o.synthetic ? "Learning curve, synthetic drops" : "Learning curve", o.npz, NULL, 0,
                       o.json, o.json ? &j : NULL);
    if (f && fclose(f) && !st) st = imp_fail(IMP_ERR_NOMEM, "--out: table");
    if (!st && f) st = imp_write_file_atomic(o.out, table, table_len);
    free(table);
    if (st) {
        if (o.json) imp_json_free(&j);
        return cli_fail(verb);
    }
    if (o.json) {
        if (o.out) imp_json_kv_string(&j, "output", o.out);
        if (o.npz) imp_json_kv_string(&j, "npz_output", o.npz);
        return cli_json_print(&j, verb);
    }
    if (o.out && !to_stdout) printf("wrote %s\n", o.out);
    if (o.npz) printf("wrote %s\n", o.npz);
    return 0;
}

int cli_impact_gp(int argc, char **argv)
{
    if (argc < 2) return cli_failf("impact", "missing verb");
    if (!strcmp(argv[1], "gp-fit")) return verb_fit(argc, argv);
    if (!strcmp(argv[1], "gp-eval")) return verb_eval(argc, argv);
    if (!strcmp(argv[1], "learning-curve")) return verb_curve(argc, argv);
    return cli_failf("impact", "unknown verb '%s'", argv[1]);
}

/* ---------------------------------------------------------------------- */
/* drop                                                                   */

int cli_impact_drop(int argc, char **argv)
{
    const char *verb = "impact drop";
    gp_opts o;
    opts_default(&o);
    int help;
    if (parse_all(&o, argc, argv, verb, &help)) return 1;
    if (help) {
        printf("usage: impulse impact drop --out DROPS.npz [--set SET.npz] [--count N] [--seed S]\n"
               "         [--mu M] [--k-n K] [--c-n C] [--k-t K] [--c-t C] [--rho-patch M]\n"
               "         [--noise-pos M] [--noise-theta R]\n"
               "         [--a M] [--b M] [--mass KG] [--kg M] [--frame-rate HZ] [--dt S] [--json]\n"
               "Simulates N drops of a planar ellipse (default: the data set's object, a = 35 mm,\n"
               "b = 25 mm, m = 36.4 g, k_g = 19.2 mm) onto a plane with Hunt-Crossley normal and\n"
               "elastic-plastic Coulomb tangential contact (optionally a patch rolling resistance\n"
               "--rho-patch, the torque a point contact cannot explain), films them at 250 Hz with pose noise,\n"
               "detects the impact and fits parabolas as the authors did, and writes states_i,\n"
               "states_f, n, d (the data set's layout, consistent tangent convention) plus the\n"
               "true states (use it with --data in gp-fit, gp-eval, learning-curve). --set also\n"
               "writes the impact-set layout (pre, post, n, d, valid) read by predict, identify,\n"
               "bounds. --json: one JSON object on stdout instead of the summary (docs/json.md).\n");
        return 0;
    }
    if (!o.out) return cli_failf(verb, "--out: missing (file for the drops)");
    if (imp_drop_params_check(&o.drop)) return cli_fail(verb);
    size_t n = (size_t)o.count, rej = 0;
    imp_drop_sample *s = malloc(n * sizeof *s);
    if (!s) return cli_failf(verb, "out of memory for %zu drops", n);
    double t0 = imp_time_now();
    int st = imp_drop_generate(&o.drop, (uint64_t)o.seed, n, s, &rej);
    if (!st) st = imp_drop_save_npz(s, n, &o.drop, (uint64_t)o.seed, o.out);
    if (!st && o.set_out) { /* the impact-set layout read by the other impact verbs */
        imp_impact_set set;
        st = imp_drop_to_impact_set(s, n, &o.drop, &set);
        if (!st) {
            st = imp_impact_save_npz(&set, o.set_out);
            imp_impact_set_free(&set);
        }
    }
    if (st) {
        free(s);
        return cli_fail(verb);
    }
    double *e = malloc(n * sizeof *e), dur = 0.0, gain = 0.0;
    for (size_t i = 0; e && i < n; i++) {
        /* Newton restitution of the true velocities at the fitted contact point */
        double un = s[i].true_pre[4] + s[i].true_pre[5] * s[i].n[2];
        double up = s[i].true_post[4] + s[i].true_post[5] * s[i].n[2];
        e[i] = -up / un;
        dur += s[i].duration / (double)n;
        gain = fmax(gain, s[i].energy_gain);
    }
    if (e) qsort(e, n, sizeof *e, cmp_double);
    if (o.json) {
        imp_json j;
        cli_json_begin(&j, verb);
        imp_json_kv_int(&j, "drops", (long long)n);
        imp_json_kv_int(&j, "redrawn", (long long)rej);
        imp_json_kv_int(&j, "seed", o.seed);
        imp_json_kv_number(&j, "mean_contact_s", dur);
        imp_json_kv_number(&j, "median_restitution", e ? e[n / 2] : NAN);
        imp_json_kv_number(&j, "max_energy_rise_j", gain);
        imp_json_kv_number(&j, "seconds", imp_time_now() - t0);
        imp_json_kv_string(&j, "output", o.out);
        if (o.set_out) imp_json_kv_string(&j, "set_output", o.set_out);
        free(e);
        free(s);
        return cli_json_print(&j, verb);
    }
    fprintf(gp_text(&o), "%zu drops (%zu redrawn) in %.2f s: mean contact %.3f ms, median Newton restitution %.3f, "
           "largest energy rise per step %.2g J\nwrote %s\n",
           n, rej, imp_time_now() - t0, dur * 1e3, e ? e[n / 2] : NAN, gain, o.out);
    if (o.set_out) fprintf(gp_text(&o), "wrote %s (impact-set layout)\n", o.set_out);
    free(e);
    free(s);
    return 0;
}
