/* The evaluation behind Tables 1-2 and the error comparisons ([ISRR] sec 3-4,
 * [CoRL] sec 4.3), on one impact set in one tangent-sign convention. */
#include "impulse/core.h"
#include "impulse/impact_reproduce.h"
#include "impulse/drop.h"
#include "impulse/impact.h"
#include "impulse/io.h"
#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

imp_impact_eval_options imp_impact_eval_options_default(void)
{
    imp_impact_eval_options o;
    o.variant = IMP_VARIANT_AUTHORS;
    o.target = IMP_TARGET_CONTACT;
    o.given_targets = NULL;
    o.k = 120;   /* [CoRL] sec 4.3 */
    o.reps = 20; /* [CoRL] sec 4.3 */
    o.seed = 2017;
    o.table2_tol = 0.005;
    o.table2_max = 0;
    o.ident = imp_ident_options_default();
    return o;
}

void imp_impact_eval_free(imp_impact_eval *e)
{
    if (!e) return;
    free(e->errors);
    e->errors = NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void mean_std(const double *x, size_t n, size_t stride, double *mean, double *std)
{
    double s = 0, v = 0;
    for (size_t i = 0; i < n; i++) s += x[i * stride];
    s /= n;
    for (size_t i = 0; i < n; i++) v += (x[i * stride] - s) * (x[i * stride] - s);
    *mean = s;
    *std = n > 1 ? sqrt(v / (n - 1)) : 0;
}

int imp_impact_evaluate(imp_impact_eval *out, const imp_impact_set *s, const imp_impact_eval_options *opt)
{
    imp_impact_eval_options o = opt ? *opt : imp_impact_eval_options_default();
    memset(out, 0, sizeof *out);
    double t0 = imp_time_now();
    if (!(o.table2_tol >= 0 && o.table2_tol < 1)) return imp_fail(IMP_ERR_INVALID, "table2_tol: must be in [0, 1)");
    imp_impact_table t;
    int st = imp_impact_table_build(&t, s);
    if (st) return st;
    size_t n = t.count, k = o.k < n ? o.k : n;
    double *P = malloc(n * 2 * sizeof(double));
    double *err = malloc(n * 9 * sizeof(double)), *e1 = malloc(n * sizeof(double));
    double *bph1 = malloc(n * sizeof(double));
    double *per = malloc(n * 3 * sizeof(double));
    size_t *sub = malloc(n * sizeof(size_t));
    imp_impact_table t2 = {0};
    if (!P || !err || !e1 || !bph1 || !per || !sub) { st = imp_fail(IMP_ERR_NOMEM, "evaluate: out of memory"); goto done; }
    out->convention = s->convention;
    out->variant = o.variant;
    out->target = o.target;
    out->count = n;
    if (o.target == IMP_TARGET_GIVEN) {
        if (!o.given_targets) { st = imp_fail(IMP_ERR_INVALID, "given_targets: missing for target p-data"); goto done; }
        if ((st = imp_check_finite(o.given_targets, 2 * n, "given_targets"))) goto done;
        memcpy(P, o.given_targets, 2 * n * sizeof(double));
    } else if ((st = imp_impact_targets(&t, o.target, P))) goto done;
    for (size_t i = 0; i < n; i++) bph1[i] = INFINITY;
    /* Table 1: ensemble identification; errors at Table 1 and identified parameters */
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        imp_impact_model_result *r = &out->model[m];
        if ((st = imp_impact_identify_ensemble((imp_impact_model)m, o.variant, &t, P, k, o.reps, o.seed + m, &o.ident,
                                               &r->ensemble)))
            goto done;
        imp_impact_law law = {(imp_impact_model)m, o.variant, 0, 0};
        imp_impact_table1(law.model, &law.mu, &law.eps);
        if ((st = imp_impact_evaluate_law(&law, &t, e1, &r->at_table1))) goto done;
        for (size_t i = 0; i < n; i++)
            if (e1[i] < bph1[i]) bph1[i] = e1[i];
        law.mu = r->ensemble.mu_mean;
        law.eps = r->ensemble.eps_mean;
        if ((st = imp_impact_evaluate_law(&law, &t, e1, &r->at_identified))) goto done;
        for (size_t i = 0; i < n; i++) err[9 * i + m] = e1[i];
    }
    /* Best Post Hoc, best / worst shares (at identified parameters) */
    double sb1 = 0, sb = 0;
    for (size_t i = 0; i < n; i++) {
        int best = 0, worst = 0;
        for (int m = 1; m < IMP_IMPACT_MODEL_COUNT; m++) {
            if (err[9 * i + m] < err[9 * i + best]) best = m;
            if (err[9 * i + m] > err[9 * i + worst]) worst = m;
        }
        /* laws that predict the same impulse (e.g. all sticking) share the credit */
        double eb = err[9 * i + best], ew = err[9 * i + worst];
        int nb = 0, nw = 0;
        for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
            nb += err[9 * i + m] <= eb * (1 + 1e-9);
            nw += err[9 * i + m] >= ew * (1 - 1e-9);
        }
        for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
            if (err[9 * i + m] <= eb * (1 + 1e-9)) out->model[m].best_share += 1.0 / n / nb;
            if (err[9 * i + m] >= ew * (1 - 1e-9)) out->model[m].worst_share += 1.0 / n / nw;
        }
        err[9 * i + 6] = err[9 * i + best];
        sb += err[9 * i + best];
        sb1 += bph1[i];
    }
    out->bph_mean_error_identified = sb / n;
    out->bph_mean_error_table1 = sb1 / n;
    /* IRB bounds */
    for (int metric = 0; metric < 2; metric++) {
        if ((st = imp_impact_irb_errors(&t, (imp_irb_metric)metric, e1))) goto done;
        double sum = 0;
        for (size_t i = 0; i < n; i++) { err[9 * i + 7 + metric] = e1[i]; sum += e1[i]; }
        if (metric == 0) out->irb_velocity_mean_error = sum / n;
        else out->irb_momentum_mean_error = sum / n;
    }
    /* the measurements against rigid point contact in this convention */
    {
        size_t gain = 0, lsgain = 0, sep = 0;
        double tau2 = 0;
        for (size_t i = 0; i < n; i++) {
            const imp_contact *c = &t.contact[i];
            double Pm[2] = {P[2 * i], P[2 * i + 1]};
            if (o.target != IMP_TARGET_CONTACT) {
                double du[2] = {c->u_post[0] - c->u[0], c->u_post[1] - c->u[1]};
                Pm[0] = c->Mc[0] * du[0] + c->Mc[1] * du[1];
                Pm[1] = c->Mc[2] * du[0] + c->Mc[3] * du[1];
            }
            gain += imp_contact_ellipse_alpha(c, Pm) > 1 + 1e-9;
            sep += c->u_post[1] >= 0;
            e1[i] = fabs(c->u_post[0]);
            /* momentum least squares: (J J^T) P = J M dv */
            double JJ[4] = {0, 0, 0, 0}, r[2] = {0, 0}, Pl[2];
            for (int k = 0; k < 3; k++) {
                double mdv = (c->v_post[k] - c->v_pre[k]) / c->minv[k];
                JJ[0] += c->J[k] * c->J[k];
                JJ[1] += c->J[k] * c->J[3 + k];
                JJ[3] += c->J[3 + k] * c->J[3 + k];
                r[0] += c->J[k] * mdv;
                r[1] += c->J[3 + k] * mdv;
            }
            double det = JJ[0] * JJ[3] - JJ[1] * JJ[1];
            Pl[0] = (JJ[3] * r[0] - JJ[1] * r[1]) / det;
            Pl[1] = (-JJ[1] * r[0] + JJ[0] * r[1]) / det;
            lsgain += imp_contact_ellipse_alpha(c, Pl) > 1 + 1e-9;
            /* residual torque with P = (m dvx, m dvy) (w_true_data.mat layout) */
            double pt = (c->v_post[0] - c->v_pre[0]) / c->minv[0], pn = (c->v_post[1] - c->v_pre[1]) / c->minv[1];
            double tau = (c->v_post[2] - c->v_pre[2]) / c->minv[2] - (c->J[2] * pt + c->J[5] * pn);
            tau2 += tau * tau;
        }
        qsort(e1, n, sizeof(double), cmp_double);
        out->meas_energy_gain_share = (double)gain / n;
        out->meas_ls_energy_gain_share = (double)lsgain / n;
        out->meas_separating_share = (double)sep / n;
        out->meas_median_post_slip = n % 2 ? e1[n / 2] : 0.5 * (e1[n / 2 - 1] + e1[n / 2]);
        out->residual_torque_rms = sqrt(tau2 / n);
    }
    /* Table 2 on all impacts or a seeded subsample */
    size_t n2 = o.table2_max && o.table2_max < n ? o.table2_max : n;
    for (size_t i = 0; i < n; i++) sub[i] = i;
    if (n2 < n) {
        imp_rng rng;
        imp_rng_seed(&rng, o.seed ^ 0x7ab1e2u);
        imp_rng_shuffle(&rng, sub, n);
    }
    t2.count = n2;
    t2.kg = t.kg;
    t2.convention = t.convention;
    t2.contact = malloc(n2 * sizeof *t2.contact);
    t2.index = malloc(n2 * sizeof *t2.index);
    double *P2 = malloc(n2 * 2 * sizeof(double));
    if (!t2.contact || !t2.index || !P2) { free(P2); st = imp_fail(IMP_ERR_NOMEM, "evaluate: out of memory"); goto done; }
    for (size_t j = 0; j < n2; j++) {
        t2.contact[j] = t.contact[sub[j]];
        t2.index[j] = t.index[sub[j]];
        P2[2 * j] = P[2 * sub[j]];
        P2[2 * j + 1] = P[2 * sub[j] + 1];
    }
    out->table2_count = n2;
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
        imp_impact_model_result *r = &out->model[m];
        st = imp_impact_predictive_fraction((imp_impact_model)m, o.variant, &t2, P2, o.table2_tol, &o.ident,
                                            &r->table2_fraction, per);
        if (st) break;
        mean_std(per, n2, 3, &r->per_impact_mu_mean, &r->per_impact_mu_std);
        mean_std(per + 1, n2, 3, &r->per_impact_eps_mean, &r->per_impact_eps_std);
        size_t zero = 0;
        for (size_t j = 0; j < n2; j++) zero += per[3 * j] < 1e-3;
        r->per_impact_mu_zero_share = (double)zero / n2;
    }
    free(P2);
    if (st) goto done;
    out->errors = err;
    err = NULL;
    out->seconds = imp_time_now() - t0;
done:
    free(t2.contact);
    free(t2.index);
    free(P);
    free(err);
    free(e1);
    free(bph1);
    free(per);
    free(sub);
    imp_impact_table_free(&t);
    return st;
}

int imp_impact_ellipse_picture(const imp_contact *c, double kg, imp_impact_variant variant,
                               size_t n_boundary, size_t n_grid, double mu_cap, double *boundary,
                               double *lines, double *preds, double *measured, double *irb)
{
    if (n_boundary < 3 || n_grid < 2) return imp_fail(IMP_ERR_INVALID, "ellipse picture: too few points");
    if (!(c->u[1] < 0)) return imp_fail(IMP_ERR_INVALID, "u: normal contact velocity %g >= 0, not an impact", c->u[1]);
    double ps[2];
    imp_contact_plastic_stick(c, ps);
    double r2 = -(ps[0] * c->u[0] + ps[1] * c->u[1]);
    for (size_t j = 0; j < n_boundary; j++) {
        double th = 2 * 3.14159265358979323846 * j / n_boundary, d[2] = {cos(th), sin(th)};
        double q = d[0] * (c->W[0] * d[0] + c->W[1] * d[1]) + d[1] * (c->W[2] * d[0] + c->W[3] * d[1]);
        double s = sqrt(r2 / q);
        boundary[2 * j] = ps[0] + s * d[0];
        boundary[2 * j + 1] = ps[1] + s * d[1];
    }
    /* sticking line: direction (Wtn, -Wtt); compression line: (Wnn, -Wnt); span the ellipse */
    double dirs[2][2] = {{c->W[1], -c->W[0]}, {c->W[3], -c->W[2]}};
    for (int l = 0; l < 2; l++) {
        double *d = dirs[l];
        double q = d[0] * (c->W[0] * d[0] + c->W[1] * d[1]) + d[1] * (c->W[2] * d[0] + c->W[3] * d[1]);
        double s = 1.2 * sqrt(r2 / q);
        lines[4 * l] = ps[0] - s * d[0];
        lines[4 * l + 1] = ps[1] - s * d[1];
        lines[4 * l + 2] = ps[0] + s * d[0];
        lines[4 * l + 3] = ps[1] + s * d[1];
    }
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++)
        for (size_t i = 0; i < n_grid; i++)
            for (size_t j = 0; j < n_grid; j++) {
                imp_impact_law law = {(imp_impact_model)m, variant, mu_cap * i / (n_grid - 1), (double)j / (n_grid - 1)};
                double *Pq = preds + 2 * ((m * n_grid + i) * n_grid + j);
                if (imp_impact_predict(&law, c->W, c->u, Pq)) Pq[0] = Pq[1] = NAN;
            }
    double du[2] = {c->u_post[0] - c->u[0], c->u_post[1] - c->u[1]};
    measured[0] = c->Mc[0] * du[0] + c->Mc[1] * du[1];
    measured[1] = c->Mc[2] * du[0] + c->Mc[3] * du[1];
    return imp_impact_irb(c, kg, IMP_IRB_VELOCITY, irb, NULL);
}

/* ---- loading the data of a reproduction ---- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

int imp_impact_load_any(imp_impact_set *s, const char *path)
{
    if (!s || !path) return imp_fail(IMP_ERR_INVALID, "impact data: NULL");
    if (ends_with(path, ".npz") || !strcmp(path, "-")) {
        /* an impact set, or drops of `impulse impact drop` ('-': an .npz on
         * standard input, read once and kept, so it can be read twice) */
        imp_npz *z = NULL;
        int st = imp_npz_load(&z, path);
        if (st) return imp_fail_context(st, "%s", path);
        int drop_layout = imp_npz_find(z, "states_i") != NULL;
        imp_npz_free(z);
        return drop_layout ? imp_drop_load_impact_set(s, path) : imp_impact_load_npz(s, path);
    }
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

int imp_impact_load_given_targets(const char *data_file, const imp_impact_set *s, double **P)
{
    if (!data_file || !s || !P) return imp_fail(IMP_ERR_INVALID, "p_true_data: NULL");
    *P = NULL;
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s", data_file);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
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

