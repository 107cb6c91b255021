/* Sweep tasks of the planar-impact strand (Fazeli et al. 2017), one per
 * table of the reproduction:
 *   kind=eval convention=stored|corrected: imp_impact_evaluate (Tables 1-2,
 *     mean errors, Best Post Hoc, IRB bound, per-impact errors) and the
 *     energy-ellipse picture of one impact;
 *   kind=p-data: Table 1 identified against the authors' stored impulses
 *     (p_true_data.mat beside the data file), stored convention;
 *   kind=gp source=data|synthetic: the GP learning curves ([CoRL] Fig. 8).
 *     (GP settings of `impulse impact learning-curve`; gp_sizes=10,50,...,
 *     repeats=R, n_test=N, drops=N override the quick/full ones);
 * Common settings: data=FILE quick=0|1 variant=authors|textbook
 * target=contact|irb-velocity|irb-momentum|p-data seed=2017; reps=R and
 * grid=G override the ensemble draws and the identification start grid. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"
#include "impulse/drop.h"
#include "impulse/gp.h"
#include "impulse/impact.h"
#include "impulse/impact_analysis.h"
#include "impulse/impact_models.h"
#include "impulse/impact_reproduce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct impact_settings {
    const char *kind, *data;
    long quick, seed, reps, grid; /* reps, grid: 0 = the quick/full setting */
    imp_impact_variant variant;
    imp_impact_target target;
} impact_settings;

static int read_settings(const imp_sweep_task *t, impact_settings *s)
{
    s->kind = imp_sweep_task_get(t, "kind");
    s->data = imp_sweep_task_get(t, "data");
    if (!s->kind) return imp_fail(IMP_ERR_INVALID, "task '%s': needs kind=", t->id);
    if (!s->data) return imp_fail(IMP_ERR_INVALID, "task '%s': needs data=", t->id);
    const char *v = imp_sweep_task_get(t, "variant"), *g = imp_sweep_task_get(t, "target");
    s->variant = IMP_VARIANT_AUTHORS;
    s->target = IMP_TARGET_CONTACT;
    int st = v ? imp_impact_variant_parse(v, &s->variant, "variant") : IMP_OK;
    if (!st && g) st = imp_impact_target_parse(g, &s->target, "target");
    if (!st) st = imp_sweep_task_int(t, "quick", 0, 0, 1, &s->quick);
    if (!st) st = imp_sweep_task_int(t, "seed", 2017, 0, 2147483647L, &s->seed);
    if (!st) st = imp_sweep_task_int(t, "reps", 0, 0, 100000, &s->reps);
    if (!st) st = imp_sweep_task_int(t, "grid", 0, 0, 1001, &s->grid);
    return st ? imp_fail_context(st, "task '%s'", t->id) : IMP_OK;
}

static imp_impact_eval_options eval_options(const impact_settings *s)
{
    imp_impact_eval_options eo = imp_impact_eval_options_default();
    eo.variant = s->variant;
    eo.target = s->target;
    eo.seed = (uint64_t)s->seed;
    if (s->quick) {
        eo.reps = 5;
        eo.table2_max = 300;
        eo.ident.grid = 11;
    }
    if (s->reps > 0) eo.reps = (size_t)s->reps;
    if (s->grid > 1) eo.ident.grid = (int)s->grid;
    return eo;
}

static int add(imp_npz *z, const char *name, int ndim, const size_t *shape, const double *x)
{
    return imp_npz_add_f64(z, name, ndim, shape, x);
}

static void meta_common(imp_json *j, const imp_sweep_task *t, const impact_settings *s, const imp_impact_set *set)
{
    sweep_meta_begin(j, t);
    imp_json_kv_string(j, "kind", s->kind);
    imp_json_kv_int(j, "quick", s->quick);
    imp_json_kv_string(j, "variant", imp_impact_variant_name(s->variant));
    imp_json_kv_string(j, "target", imp_impact_target_name(s->target));
    if (set) {
        imp_json_kv_int(j, "set_count", (long long)set->count);
        imp_json_kv_number(j, "mass", set->object.mass);
        imp_json_kv_number(j, "kg", set->object.kg);
    }
}

/* Per-model columns of an evaluation (report_impact.c reads them by index). */
static void model_row(const imp_impact_model_result *r, double *row)
{
    const double v[SWEEP_IMPACT_NCOL] = {
        r->ensemble.mu_mean, r->ensemble.mu_std, r->ensemble.eps_mean, r->ensemble.eps_std, r->best_share,
        r->worst_share, r->table2_fraction, r->per_impact_mu_mean, r->per_impact_mu_std, r->per_impact_mu_zero_share,
        r->per_impact_eps_mean, r->per_impact_eps_std, r->at_table1.mean_error, r->at_identified.mean_error,
        r->at_identified.median_error, r->at_identified.energy_gain_share, r->at_identified.penetration_share,
        r->at_identified.cone_violation_share, (double)r->at_table1.failures, (double)r->at_table1.first_failure,
        (double)r->at_identified.failures, (double)r->at_identified.first_failure, (double)r->ensemble.k,
        (double)r->ensemble.reps};
    memcpy(row, v, sizeof v);
}

static int exec_eval(const imp_sweep_task *t, const impact_settings *s, imp_npz *z)
{
    const char *conv = imp_sweep_task_get(t, "convention");
    imp_tangent_sign c;
    if (!conv) return imp_fail(IMP_ERR_INVALID, "task '%s': needs convention=", t->id);
    int st = imp_tangent_sign_parse(conv, &c, "convention");
    if (st) return imp_fail_context(st, "task '%s'", t->id);
    imp_impact_set set;
    if ((st = imp_impact_load_any(&set, s->data))) return imp_fail_context(st, "task '%s'", t->id);
    imp_impact_eval_options eo = eval_options(s);
    double *given = NULL;
    if (s->target == IMP_TARGET_GIVEN) {
        if ((st = imp_impact_load_given_targets(s->data, &set, &given))) {
            imp_impact_set_free(&set);
            return imp_fail_context(st, "task '%s'", t->id);
        }
        eo.given_targets = given;
    }
    /* the impact drawn in the ellipse figure: the largest tangential contact
     * speed in the convention as loaded (the same impact in both tasks) */
    size_t pic = 0;
    double best = -1;
    for (size_t i = 0; i < set.count; i++) {
        imp_contact ct;
        if (set.valid[i] && !imp_impact_contact(&set, i, &ct) && fabs(ct.u[0]) > best) {
            best = fabs(ct.u[0]);
            pic = i;
        }
    }
    imp_clear_error();
    imp_impact_set_convention(&set, c);
    imp_impact_eval e;
    st = imp_impact_evaluate(&e, &set, &eo);
    if (st) {
        free(given);
        imp_impact_set_free(&set);
        return imp_fail_context(st, "task '%s'", t->id);
    }
    double rows[IMP_IMPACT_MODEL_COUNT * SWEEP_IMPACT_NCOL];
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) model_row(&e.model[m], rows + m * SWEEP_IMPACT_NCOL);
    double bounds[4] = {e.bph_mean_error_table1, e.bph_mean_error_identified, e.irb_velocity_mean_error,
                        e.irb_momentum_mean_error};
    size_t sm[2] = {IMP_IMPACT_MODEL_COUNT, SWEEP_IMPACT_NCOL}, sb[1] = {4}, se[2] = {e.count, 9};
    st = add(z, "models", 2, sm, rows);
    if (!st) st = add(z, "bounds", 1, sb, bounds);
    if (!st) st = add(z, "errors", 2, se, e.errors);
    enum { NB = 200, NG = 21 };
    double boundary[2 * NB], lines[8], preds[IMP_IMPACT_MODEL_COUNT * NG * NG * 2], meas[2], irb[2];
    imp_contact ct;
    if (!st) st = imp_impact_contact(&set, pic, &ct);
    if (!st)
        st = imp_impact_ellipse_picture(&ct, set.object.kg, eo.variant, NB, NG, eo.ident.mu_cap, boundary, lines, preds,
                                        meas, irb);
    size_t s1[2] = {NB, 2}, s2[2] = {2, 4}, s3[4] = {IMP_IMPACT_MODEL_COUNT, NG, NG, 2}, s4[1] = {2};
    if (!st) st = add(z, "ellipse_boundary", 2, s1, boundary);
    if (!st) st = add(z, "ellipse_lines", 2, s2, lines);
    if (!st) st = add(z, "ellipse_predictions", 4, s3, preds);
    if (!st) st = add(z, "ellipse_measured", 1, s4, meas);
    if (!st) st = add(z, "ellipse_irb", 1, s4, irb);
    if (!st) {
        imp_json j;
        meta_common(&j, t, s, &set);
        imp_json_kv_string(&j, "convention", imp_tangent_sign_name(e.convention));
        imp_json_kv_int(&j, "count", (long long)e.count);
        imp_json_kv_int(&j, "table2_count", (long long)e.table2_count);
        imp_json_kv_number(&j, "table2_tol", eo.table2_tol);
        imp_json_kv_number(&j, "mu_cap", eo.ident.mu_cap);
        imp_json_kv_int(&j, "grid", eo.ident.grid);
        imp_json_kv_number(&j, "ident_tol", eo.ident.tol);
        imp_json_kv_number(&j, "seconds", e.seconds);
        imp_json_kv_number(&j, "meas_energy_gain_share", e.meas_energy_gain_share);
        imp_json_kv_number(&j, "meas_ls_energy_gain_share", e.meas_ls_energy_gain_share);
        imp_json_kv_number(&j, "meas_separating_share", e.meas_separating_share);
        imp_json_kv_number(&j, "meas_median_post_slip", e.meas_median_post_slip);
        imp_json_kv_number(&j, "residual_torque_rms", e.residual_torque_rms);
        imp_json_kv_int(&j, "ellipse_impact", (long long)pic);
        st = sweep_meta_set(z, &j);
    }
    imp_impact_eval_free(&e);
    free(given);
    imp_impact_set_free(&set);
    return st;
}

static int exec_p_data(const imp_sweep_task *t, const impact_settings *s, imp_npz *z)
{
    imp_impact_set set;
    int st = imp_impact_load_any(&set, s->data);
    if (st) return imp_fail_context(st, "task '%s'", t->id);
    imp_impact_eval_options eo = eval_options(s);
    imp_impact_set_convention(&set, IMP_TANGENT_STORED);
    double *G = NULL;
    imp_json j;
    meta_common(&j, t, s, &set);
    if (imp_impact_load_given_targets(s->data, &set, &G)) {
        /* no stored impulses beside this data file: a result saying so */
        imp_json_kv_string(&j, "skipped", imp_last_error());
        imp_clear_error();
        imp_impact_set_free(&set);
        return sweep_meta_set(z, &j);
    }
    imp_impact_table tb;
    st = imp_impact_table_build(&tb, &set);
    double tab[IMP_IMPACT_MODEL_COUNT * 4];
    size_t k = 0;
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
        imp_ensemble_result er;
        k = eo.k < tb.count ? eo.k : tb.count;
        st = imp_impact_identify_ensemble((imp_impact_model)m, eo.variant, &tb, G, k, eo.reps, eo.seed + m, &eo.ident,
                                          &er);
        if (st) break;
        double row[4] = {er.mu_mean, er.mu_std, er.eps_mean, er.eps_std};
        memcpy(tab + 4 * m, row, sizeof row);
    }
    size_t sh[2] = {IMP_IMPACT_MODEL_COUNT, 4};
    if (!st) st = add(z, "table1", 2, sh, tab);
    if (tb.contact) imp_impact_table_free(&tb);
    free(G);
    imp_impact_set_free(&set);
    imp_json_kv_int(&j, "k", (long long)k);
    imp_json_kv_int(&j, "reps", (long long)eo.reps);
    if (!st) return sweep_meta_set(z, &j);
    imp_json_free(&j);
    return imp_fail_context(st, "task '%s'", t->id);
}

/* The GP learning curve's settings of `impulse impact learning-curve` with
 * the reproduction's sizes; quick: 2 splits, 200 test impacts, one GP start,
 * 11x11 identification grid. */
static int exec_gp(const imp_sweep_task *t, const impact_settings *s, imp_npz *z)
{
    const char *source = imp_sweep_task_get(t, "source");
    if (!source || (strcmp(source, "data") && strcmp(source, "synthetic")))
        return imp_fail(IMP_ERR_INVALID, "task '%s': needs source=data|synthetic", t->id);
    int synthetic = !strcmp(source, "synthetic");
    long gp_seed;
    int st = imp_sweep_task_int(t, "gp_seed", 1, 0, 2147483647L, &gp_seed);
    if (st) return st;
    static const size_t full_sizes[] = {10, 25, 50, 100, 200, 300, 450}, quick_sizes[] = {10, 50, 150};
    size_t sizes[16], n_sizes = s->quick ? 3 : 7;
    memcpy(sizes, s->quick ? quick_sizes : full_sizes, n_sizes * sizeof sizes[0]);
    long repeats, n_test_l, drops;
    if (!st) st = imp_sweep_task_int(t, "repeats", s->quick ? 2 : 5, 1, 1000, &repeats);
    if (!st) st = imp_sweep_task_int(t, "n_test", s->quick ? 200 : 400, 1, 1000000, &n_test_l);
    if (!st) st = imp_sweep_task_int(t, "drops", s->quick ? 600 : 1718, 10, 1000000, &drops);
    const char *gs = imp_sweep_task_get(t, "gp_sizes");
    if (!st && gs) { /* increasing training-set sizes, comma separated */
        n_sizes = 0;
        const char *p = gs;
        while (!st && *p) {
            char *end = NULL;
            long v = strtol(p, &end, 10);
            if (end == p || (*end && *end != ',') || v < 2 || n_sizes == 16 || (n_sizes && (size_t)v <= sizes[n_sizes - 1]))
                st = imp_fail(IMP_ERR_INVALID, "task '%s': gp_sizes=%s: up to 16 increasing sizes >= 2", t->id, gs);
            else sizes[n_sizes++] = (size_t)v;
            p = *end ? end + 1 : end;
        }
    }
    if (st) return st;
    size_t n_test = (size_t)n_test_l, n_ident = 120;
    imp_impact_law law = {0};
    law.model = IMP_IMPACT_AP_NEWTON;
    law.variant = IMP_VARIANT_TEXTBOOK;
    imp_impact_target target = IMP_TARGET_IRB_VELOCITY;
    imp_impact_set set;
    imp_drop_params dp;
    imp_drop_params_default(&dp);
    if (synthetic) {
        size_t count = (size_t)drops;
        imp_drop_sample *ds = malloc(count * sizeof *ds);
        if (!ds) return imp_fail(IMP_ERR_NOMEM, "task '%s': out of memory", t->id);
        st = imp_drop_generate(&dp, (uint64_t)gp_seed + 77, count, ds, NULL);
        if (!st) st = imp_drop_to_impact_set(ds, count, &dp, &set);
        free(ds);
        /* drops are simulated in the consistent convention: nothing to switch */
    } else {
        st = imp_impact_load_any(&set, s->data);
        if (!st) imp_impact_set_convention(&set, IMP_TANGENT_CORRECTED);
    }
    if (st) return imp_fail_context(st, "task '%s'", t->id);
    imp_impact_table tb;
    if ((st = imp_impact_table_build(&tb, &set))) {
        imp_impact_set_free(&set);
        return imp_fail_context(st, "task '%s'", t->id);
    }
    /* the test set takes what the largest training set leaves, up to n_test */
    if (tb.count > sizes[n_sizes - 1] && n_test > tb.count - sizes[n_sizes - 1]) n_test = tb.count - sizes[n_sizes - 1];
    if (n_ident > tb.count - n_test) n_ident = tb.count - n_test;
    imp_ident_options io = imp_ident_options_default();
    io.grid = s->quick ? 11 : 21;
    imp_gp_options gp;
    imp_gp_options_default(&gp);
    gp.restarts = s->quick ? 0 : 2;
    gp.seed = (uint64_t)gp_seed;
    unsigned mask = (1u << IMP_GPI_KIND_COUNT) - 1;
    imp_gpi_data d;
    double t0 = imp_time_now();
    st = imp_gpi_data_build(&d, &tb, target, &law, (mask >> IMP_GPI_PARAMS) & 1u, &io);
    imp_lc_result r;
    int have_r = 0;
    if (!st) {
        imp_lc_options lo = {sizes, n_sizes, (size_t)repeats, n_test, n_ident, (uint64_t)gp_seed, mask, gp, io};
        st = imp_gpi_learning_curve(&d, &lo, &r);
        have_r = !st;
        imp_gpi_data_free(&d);
    }
    if (!st) {
        size_t S = r.n_sizes, K = 0;
        double xs[64], mean[IMP_GPI_KIND_COUNT * 64], sd[IMP_GPI_KIND_COUNT * 64], fit[IMP_GPI_KIND_COUNT];
        double laws[IMP_IMPACT_MODEL_COUNT * 2];
        for (size_t i = 0; i < S; i++) xs[i] = (double)r.sizes[i];
        for (int k = 0; k < IMP_GPI_KIND_COUNT; k++) {
            if (!(r.kinds & (1u << k))) continue;
            for (size_t i = 0; i < S; i++) mean[K * S + i] = r.mean[k][i], sd[K * S + i] = r.std[k][i];
            fit[K] = r.fit_seconds[k];
            K++;
        }
        for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) laws[2 * m] = r.law_mu[m], laws[2 * m + 1] = r.law_eps[m];
        size_t s1[1] = {S}, s2[2] = {K, S}, s3[1] = {IMP_LC_REF_COUNT}, s4[1] = {K}, s5[2] = {IMP_IMPACT_MODEL_COUNT, 2};
        st = add(z, "sizes", 1, s1, xs);
        if (!st) st = add(z, "mean", 2, s2, mean);
        if (!st) st = add(z, "std", 2, s2, sd);
        if (!st) st = add(z, "ref_mean", 1, s3, r.ref_mean);
        if (!st) st = add(z, "ref_std", 1, s3, r.ref_std);
        if (!st) st = add(z, "fit_seconds", 1, s4, fit);
        if (!st) st = add(z, "law_params", 2, s5, laws);
        if (!st) {
            imp_json j;
            meta_common(&j, t, s, NULL);
            imp_json_kv_string(&j, "source", source);
            imp_json_kv_string(&j, "data", synthetic ? "synthetic drops" : s->data);
            imp_json_kv_string(&j, "convention", imp_tangent_sign_name(tb.convention));
            imp_json_kv_string(&j, "gp_target", imp_impact_target_name(target));
            imp_json_kv_string(&j, "law", imp_impact_model_name(r.base.model));
            imp_json_kv_string(&j, "law_variant", imp_impact_variant_name(r.base.variant));
            imp_json_key(&j, "models");
            imp_json_begin_array(&j);
            for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
                if (r.kinds & (1u << k)) imp_json_string(&j, imp_gpi_kind_name((imp_gpi_kind)k));
            imp_json_end_array(&j);
            imp_json_kv_int(&j, "valid_impacts", (long long)tb.count);
            imp_json_kv_int(&j, "repeats", (long long)r.repeats);
            imp_json_kv_int(&j, "n_test", (long long)n_test);
            imp_json_kv_int(&j, "n_ident", (long long)n_ident);
            imp_json_kv_int(&j, "gp_seed", gp_seed);
            imp_json_kv_number(&j, "seconds", imp_time_now() - t0);
            st = sweep_meta_set(z, &j);
        }
    }
    if (have_r) imp_lc_result_free(&r);
    imp_impact_table_free(&tb);
    imp_impact_set_free(&set);
    return st ? imp_fail_context(st, "task '%s'", t->id) : IMP_OK;
}

int sweep_exec_impact(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result)
{
    (void)task_dir;
    (void)o;
    impact_settings s;
    int st = read_settings(t, &s);
    if (st) return st;
    if (!strcmp(s.kind, "eval")) return exec_eval(t, &s, result);
    if (!strcmp(s.kind, "p-data")) return exec_p_data(t, &s, result);
    if (!strcmp(s.kind, "gp")) return exec_gp(t, &s, result);
    return imp_fail(IMP_ERR_INVALID, "task '%s': kind=%s unknown (eval, p-data, gp)", t->id, s.kind);
}

/* ---- plans ---- */

void imp_sweep_impact_opts_default(imp_sweep_impact_opts *o)
{
    memset(o, 0, sizeof *o);
    o->variant = "authors";
    o->target = "contact";
    o->seed = 2017;
    o->gp = 1;
}

int imp_sweep_plan_impact(imp_sweep_plan *plan, const imp_sweep_impact_opts *o)
{
    if (!plan || !o) return imp_fail(IMP_ERR_INVALID, "impact plan: NULL");
    memset(plan, 0, sizeof *plan);
    if (!o->data || !*o->data) return imp_fail(IMP_ERR_INVALID, "impact plan: data file not given");
    if (strpbrk(o->data, " \t\n"))
        return imp_fail(IMP_ERR_INVALID, "impact plan: data path '%s' has a blank (plans are key=value words)", o->data);
    imp_impact_variant v;
    imp_impact_target g;
    const char *variant = o->variant ? o->variant : "authors", *target = o->target ? o->target : "contact";
    int st = imp_impact_variant_parse(variant, &v, "impact plan: variant");
    if (!st) st = imp_impact_target_parse(target, &g, "impact plan: target");
    if (st) return st;
    if (o->seed < 0) return imp_fail(IMP_ERR_INVALID, "impact plan: seed %ld < 0", o->seed);
    char common[4400], words[4600];
    snprintf(common, sizeof common, "data=%s quick=%d variant=%s target=%s seed=%ld", o->data,
             o->quick ? 1 : 0, imp_impact_variant_name(v), imp_impact_target_name(g), o->seed);
    /* costs: seconds of the quick run here (one core), x 4 for the full one */
    double f = o->quick ? 1.0 : 4.0;
    static const char *const conv[2] = {"stored", "corrected"};
    for (int c = 0; c < 2 && !st; c++) {
        snprintf(words, sizeof words, "id=impact.%s strand=impact kind=eval convention=%s %s cost=%g", conv[c], conv[c], common,
                 1.2 * f);
        st = imp_sweep_plan_add(plan, words);
    }
    /* with target p-data the tables above already use the stored impulses */
    if (!st && g != IMP_TARGET_GIVEN) {
        snprintf(words, sizeof words, "id=impact.p-data strand=impact kind=p-data %s cost=%g", common, 0.4 * f);
        st = imp_sweep_plan_add(plan, words);
    }
    for (int k = 0; k < 2 && o->gp && !st; k++) {
        snprintf(words, sizeof words, "id=impact.gp-%s strand=impact kind=gp source=%s %s cost=%g", k ? "synthetic" : "data",
                 k ? "synthetic" : "data", common, (k ? 3.0 : 1.5) * f);
        st = imp_sweep_plan_add(plan, words);
    }
    if (st) imp_sweep_plan_free(plan);
    return st;
}
