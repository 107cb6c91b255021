/* The planar-impact section of a sweep report (Fazeli et al. 2017): per
 * tangent-sign convention Table 1 (ensemble identification), Table 2
 * (predictive-range fractions) and the mean errors beside the paper's
 * values, Table 1 against the authors' stored impulses, the GP learning
 * curves ([CoRL] Fig. 8), and the figures: error densities, the energy
 * ellipse of one impact, the learning curves. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"
#include "impulse/gp.h"
#include "impulse/impact.h"
#include "impulse/impact_analysis.h"
#include "impulse/impact_models.h"
#include "impulse/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double paper_table2[IMP_IMPACT_MODEL_COUNT] = {0.355, 0.357, 0.458, 0.413, 0.455, 0.456};
static const double paper_best[IMP_IMPACT_MODEL_COUNT] = {4, 7, 25, 17, 16, 31};
static const double paper_worst[IMP_IMPACT_MODEL_COUNT] = {11, 6, 0, 43, 10, 30};

enum {
    C_MU, C_MU_SD, C_EPS, C_EPS_SD, C_BEST, C_WORST, C_T2, C_PI_MU, C_PI_MU_SD, C_PI_MU_ZERO, C_PI_EPS, C_PI_EPS_SD,
    C_ERR_T1, C_ERR_ID, C_MED_ID, C_GAIN, C_PEN, C_CONE, C_FAIL_T1, C_FIRST_T1, C_FAIL_ID, C_FIRST_ID, C_K, C_REPS
};

static const double *array_of(const sweep_result *r, const char *name, size_t count)
{
    const imp_npy_array *a = imp_npz_find(r->z, name);
    if (!a || a->dtype != IMP_F64 || (count && a->count != count)) return NULL;
    return a->data;
}

static double meta_num(const char *meta, const char *key)
{
    double v = NAN;
    if (imp_json_get_number(meta, key, &v)) {
        imp_clear_error();
        return NAN;
    }
    return v;
}

static int convention_section(const sweep_result *r, char **md, size_t *len)
{
    const char *meta = r->meta;
    const double *M = array_of(r, "models", IMP_IMPACT_MODEL_COUNT * SWEEP_IMPACT_NCOL), *B = array_of(r, "bounds", 4);
    if (!M || !B) return sweep_appendf(md, len, "\n(task %s: result without its tables)\n", r->task->id);
    char cn[32] = "?", variant[32] = "?", target[32] = "?";
    if (imp_json_get_string(meta, "convention", cn, sizeof cn) ||
        imp_json_get_string(meta, "variant", variant, sizeof variant) ||
        imp_json_get_string(meta, "target", target, sizeof target))
        imp_clear_error();
    int stored = !strcmp(cn, "stored");
    int st = sweep_appendf(md, len, "\n### Convention: %s (d3 %s)\n\n", cn, stored ? "as stored" : "-> -d3");
    if (!st)
        st = sweep_appendf(md, len, "%.0f impacts; laws: %s variant; identification target: %s impulse; %.1f s.\n\n",
                           meta_num(meta, "count"), variant, target, meta_num(meta, "seconds"));
    if (!st)
        st = sweep_appendf(md, len,
                           "Measurements against rigid point contact (%s): contact impulse Mc J dv gains contact "
                           "energy in %.1f%% of impacts, momentum least-squares impulse in %.1f%%; measured un+ >= 0 "
                           "in %.1f%%; median post-impact slip |ut+| %.3f m/s; rms residual torque impulse %.3g N m "
                           "s.\n\n",
                           cn, 100 * meta_num(meta, "meas_energy_gain_share"),
                           100 * meta_num(meta, "meas_ls_energy_gain_share"),
                           100 * meta_num(meta, "meas_separating_share"), meta_num(meta, "meas_median_post_slip"),
                           meta_num(meta, "residual_torque_rms"));
    if (!st)
        st = sweep_appendf(md, len,
                           "#### Table 1 (%s): ensemble identification, k = %.0f, %.0f draws without replacement\n\n"
                           "| model | mu | eps | best %% | worst %% | paper mu | paper eps | paper best/worst %% |\n"
                           "|---|---|---|---|---|---|---|---|\n",
                           cn, M[C_K], M[C_REPS]);
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
        const double *x = M + m * SWEEP_IMPACT_NCOL;
        double mu, eps;
        imp_impact_table1((imp_impact_model)m, &mu, &eps);
        st = sweep_appendf(md, len, "| %s | %.3f +- %.3f | %.3f +- %.3f | %.0f | %.0f | %.3f | %.3f | %.0f / %.0f |\n",
                           imp_impact_model_title((imp_impact_model)m), x[C_MU], x[C_MU_SD], x[C_EPS], x[C_EPS_SD],
                           100 * x[C_BEST], 100 * x[C_WORST], mu, eps, paper_best[m], paper_worst[m]);
    }
    if (!st)
        st = sweep_appendf(md, len,
                           "\n#### Table 2 (%s): predictive-range fraction (residual <= %.2g |P|, %.0f impacts)\n\n"
                           "| model | fraction | paper | per-impact mu (mean +- std) | share mu ~ 0 | per-impact eps |\n"
                           "|---|---|---|---|---|---|\n",
                           cn, meta_num(meta, "table2_tol"), meta_num(meta, "table2_count"));
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
        const double *x = M + m * SWEEP_IMPACT_NCOL;
        st = sweep_appendf(md, len, "| %s | %.3f | %.3f | %.3f +- %.3f | %.2f | %.3f +- %.3f |\n",
                           imp_impact_model_title((imp_impact_model)m), x[C_T2], paper_table2[m], x[C_PI_MU],
                           x[C_PI_MU_SD], x[C_PI_MU_ZERO], x[C_PI_EPS], x[C_PI_EPS_SD]);
    }
    if (!st)
        st = sweep_appendf(md, len,
                           "\n#### Mean errors (%s), m/s, ||(dvx, dvy, kg domega)||, kg = %.5f m\n\n"
                           "| model | at Table 1 params | at identified params | median (identified) | energy gain | "
                           "penetration | cone violation |\n|---|---|---|---|---|---|---|\n",
                           cn, meta_num(meta, "kg"));
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
        const double *x = M + m * SWEEP_IMPACT_NCOL;
        st = sweep_appendf(md, len, "| %s | %.4f | %.4f | %.4f | %.3f | %.3f | %.3f |\n",
                           imp_impact_model_title((imp_impact_model)m), x[C_ERR_T1], x[C_ERR_ID], x[C_MED_ID],
                           x[C_GAIN], x[C_PEN], x[C_CONE]);
    }
    if (!st)
        st = sweep_appendf(md, len,
                           "| Best Post Hoc | %.4f | %.4f | | | | |\n| IRB bound, velocity metric | %.4f | | | | | |\n"
                           "| IRB bound, momentum metric | %.4f | | | | | |\n",
                           B[0], B[1], B[2], B[3]);
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++)
        for (int k = 0; k < 2 && !st; k++) {
            const double *x = M + m * SWEEP_IMPACT_NCOL;
            double fails = x[k ? C_FAIL_ID : C_FAIL_T1], first = x[k ? C_FIRST_ID : C_FIRST_T1];
            if (fails > 0)
                st = sweep_appendf(md, len,
                                   "\nNote: %s has no solution on %.0f impacts at %s parameters (first: impact %.0f); "
                                   "its errors above are over the other impacts.\n",
                                   imp_impact_model_title((imp_impact_model)m), fails, k ? "identified" : "Table 1",
                                   first);
        }
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Error densities (Gaussian kernel) of the six laws, Best Post Hoc and the
 * velocity IRB bound at identified parameters (Fig. 5/8 of the papers). */
static void add_error_panel(imp_figure *f, int panel, const char *conv, const double *errors, size_t n)
{
    static const char *labels[9] = {"Drumwright-Shell", "AP Poisson", "AP Newton", "Mirtich", "Wang-Mason",
                                    "Whittaker", "Best Post Hoc", "IRB bound (velocity)", "IRB bound (momentum)"};
    /* laws: the plotter's per-label colour and line style; the bounds in black */
    static const char *styles[9] = {NULL, NULL, NULL, NULL, NULL, NULL, "--|k", ":|k", "-.|0.5"};
    enum { NX = 240 };
    double xs[NX], dens[NX], xmax = 0;
    /* the axis up to the largest 99.5th percentile of the drawn errors (the
     * last few impacts would only stretch an empty tail) */
    double *col = malloc(n * sizeof(double));
    for (int k = 0; col && k < 8; k++) {
        for (size_t i = 0; i < n; i++) col[i] = errors[9 * i + k];
        qsort(col, n, sizeof(double), cmp_double);
        double q = col[(size_t)(0.995 * (double)(n - 1))];
        if (q > xmax) xmax = q;
    }
    free(col);
    if (!(xmax > 0)) return;
    xmax *= 1.1;
    char title[96];
    snprintf(title, sizeof title, "%s convention", conv);
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

/* The energy ellipse of one impact as small multiples: a panel per law (panels first..first+5 of a 3-column
 * grid), each with the ellipse, the sticking and maximum-compression lines, the law's predictions over the
 * (mu, eps) box as dots with the curves of eps = 0, 0.5 and 1 across mu, and on top the measured impulse and
 * the IRB impulse. Every panel of a convention has the same axes, so the laws compare by eye. */
static void add_ellipse_panels(imp_figure *f, int first, const char *conv, const sweep_result *r)
{
    const imp_npy_array *ab = imp_npz_find(r->z, "ellipse_boundary"), *ap = imp_npz_find(r->z, "ellipse_predictions");
    const double *lines = array_of(r, "ellipse_lines", 8), *meas = array_of(r, "ellipse_measured", 2),
                 *irb = array_of(r, "ellipse_irb", 2);
    if (!ab || !ap || ab->ndim != 2 || ap->ndim != 4 || !lines || !meas || !irb) return;
    size_t nb = ab->shape[0], ng = ap->shape[1];
    const double *boundary = ab->data, *preds = ap->data;
    size_t cap = nb > ng * ng ? nb : ng * ng;
    double *x = malloc(cap * sizeof(double)), *y = malloc(cap * sizeof(double));
    if (!x || !y || ng < 2) {
        free(x);
        free(y);
        return;
    }
    /* common limits: the ellipse, the two points and every finite prediction, with a margin */
    double lo[2] = {meas[0], meas[1]}, hi[2] = {meas[0], meas[1]};
    for (int k = 0; k < 2; k++) {
        lo[k] = fmin(lo[k], irb[k]), hi[k] = fmax(hi[k], irb[k]);
        for (size_t i = 0; i < nb; i++) lo[k] = fmin(lo[k], boundary[2 * i + k]), hi[k] = fmax(hi[k], boundary[2 * i + k]);
        for (size_t i = 0; i < IMP_IMPACT_MODEL_COUNT * ng * ng; i++)
            if (isfinite(preds[2 * i + k])) lo[k] = fmin(lo[k], preds[2 * i + k]), hi[k] = fmax(hi[k], preds[2 * i + k]);
        double pad = 0.06 * (hi[k] - lo[k]) + 1e-12;
        lo[k] -= pad, hi[k] += pad;
    }
    static const size_t eps_pick[3][2] = {{0, 0}, {1, 2}, {1, 1}}; /* eps index = ng-1 * a / b */
    static const char *eps_label[3] = {"law, $\\varepsilon = 0$", "law, $\\varepsilon = 0.5$", "law, $\\varepsilon = 1$"};
    static const char *eps_style[3] = {"-|C2", "--|C4", "-|C0"};
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        int panel = first + m;
        char title[96];
        snprintf(title, sizeof title, "%s (%s)", imp_impact_model_title((imp_impact_model)m), conv);
        imp_figure_axes(f, panel, title, m >= 3 ? "tangential impulse $P_t$ (N s)" : NULL,
                        m % 3 == 0 ? "normal impulse $P_n$ (N s)" : NULL);
        for (size_t i = 0; i < nb; i++) x[i] = boundary[2 * i], y[i] = boundary[2 * i + 1];
        imp_figure_polygon(f, panel, x, y, nb, 0, "energy ellipse (no energy change)", "-|k");
        double lx[2] = {lines[0], lines[2]}, ly[2] = {lines[1], lines[3]};
        imp_figure_line(f, panel, lx, ly, 2, "sticking line", "--|0.4");
        lx[0] = lines[4], lx[1] = lines[6], ly[0] = lines[5], ly[1] = lines[7];
        imp_figure_line(f, panel, lx, ly, 2, "maximum compression line", ":|0.4");
        const double *P = preds + 2 * (size_t)m * ng * ng;
        for (size_t j = 0; j < ng * ng; j++) x[j] = P[2 * j], y[j] = P[2 * j + 1];
        imp_figure_scatter(f, panel, x, y, ng * ng, "law over the $(\\mu, \\varepsilon)$ box", ".|0.55");
        for (int e = 0; e < 3; e++) {
            size_t je = eps_pick[e][1] ? (ng - 1) * eps_pick[e][0] / eps_pick[e][1] : 0, c = 0;
            for (size_t i = 0; i < ng; i++) /* mu index i, eps index je */
                if (isfinite(P[2 * (i * ng + je)]) && isfinite(P[2 * (i * ng + je) + 1]))
                    x[c] = P[2 * (i * ng + je)], y[c] = P[2 * (i * ng + je) + 1], c++;
            if (c > 1) imp_figure_line(f, panel, x, y, c, eps_label[e], eps_style[e]);
        }
        /* the star under the cross: where they meet, both stay visible */
        imp_figure_scatter(f, panel, irb, irb + 1, 1, "IRB (velocity metric)", "*|C1");
        imp_figure_scatter(f, panel, meas, meas + 1, 1, "measured $M_c J \\Delta v$", "X|k");
        imp_figure_limits(f, panel, lo[0], hi[0], lo[1], hi[1]);
        imp_figure_equal_aspect(f, panel);
    }
    free(x);
    free(y);
}

static int p_data_section(const sweep_result *r, char **md, size_t *len)
{
    char why[600];
    if (!imp_json_get_string(r->meta, "skipped", why, sizeof why))
        return sweep_appendf(md, len, "\n(Table 1 against p_true_data.mat skipped: %s)\n", why);
    imp_clear_error();
    const double *T = array_of(r, "table1", IMP_IMPACT_MODEL_COUNT * 4);
    if (!T) return sweep_appendf(md, len, "\n(task %s: result without its table)\n", r->task->id);
    int st = sweep_appendf(md, len,
                           "\n### Table 1 against the stored p_true_data.mat (stored convention, k = %.0f, %.0f "
                           "draws)\n\n| model | mu | eps | paper mu | paper eps |\n|---|---|---|---|---|\n",
                           meta_num(r->meta, "k"), meta_num(r->meta, "reps"));
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++) {
        double mu, eps;
        imp_impact_table1((imp_impact_model)m, &mu, &eps);
        st = sweep_appendf(md, len, "| %s | %.3f +- %.3f | %.3f +- %.3f | %.3f | %.3f |\n",
                           imp_impact_model_title((imp_impact_model)m), T[4 * m], T[4 * m + 1], T[4 * m + 2],
                           T[4 * m + 3], mu, eps);
    }
    return st;
}

/* The GP learning curve of one task: its table, and a panel of the figure. */
static int gp_section(const sweep_result *r, imp_figure *fig, int panel, char **md, size_t *len)
{
    const imp_npy_array *am = imp_npz_find(r->z, "mean"), *as = imp_npz_find(r->z, "std");
    const double *sizes = array_of(r, "sizes", 0), *ref = array_of(r, "ref_mean", IMP_LC_REF_COUNT),
                 *ref_sd = array_of(r, "ref_std", IMP_LC_REF_COUNT), *fit = array_of(r, "fit_seconds", 0),
                 *laws = array_of(r, "law_params", 2 * IMP_IMPACT_MODEL_COUNT);
    if (!am || !as || am->ndim != 2 || !sizes || !ref || !ref_sd || !fit || !laws)
        return sweep_appendf(md, len, "\n(task %s: result without its curve)\n", r->task->id);
    size_t K = am->shape[0], S = am->shape[1];
    const double *mean = am->data, *sd = as->data;
    char source[32] = "", conv[32] = "", target[32] = "", law[48] = "", lv[32] = "";
    if (imp_json_get_string(r->meta, "source", source, sizeof source) ||
        imp_json_get_string(r->meta, "convention", conv, sizeof conv) ||
        imp_json_get_string(r->meta, "gp_target", target, sizeof target) ||
        imp_json_get_string(r->meta, "law", law, sizeof law) ||
        imp_json_get_string(r->meta, "law_variant", lv, sizeof lv))
        imp_clear_error();
    int synthetic = !strcmp(source, "synthetic");
    const char *title = synthetic ? "Learning curve, synthetic drops (impulse impact drop defaults)"
                                  : "Learning curve, MIT planar-impact data";
    /* the models in the order the task wrote them: every kind */
    const char *names[IMP_GPI_KIND_COUNT];
    size_t nk = 0;
    for (int k = 0; k < IMP_GPI_KIND_COUNT && nk < K; k++) names[nk++] = imp_gpi_kind_name((imp_gpi_kind)k);
    int st = sweep_appendf(md, len,
                           "\n### %s (%.0f valid impacts, %s convention, target %s, %.0f test impacts, %.0f s)\n\n"
                           "Mean test error ||(dvx, dvy, k_g dw)|| in m/s, mean +- std over %.0f random splits.\n\n"
                           "| training size |",
                           title, meta_num(r->meta, "valid_impacts"), conv, target, meta_num(r->meta, "n_test"),
                           meta_num(r->meta, "seconds"), meta_num(r->meta, "repeats"));
    for (size_t k = 0; k < nk && !st; k++) st = sweep_appendf(md, len, " %s |", names[k]);
    if (!st) st = sweep_appendf(md, len, "\n|---|");
    for (size_t k = 0; k < nk && !st; k++) st = sweep_appendf(md, len, "---|");
    for (size_t s = 0; s < S && !st; s++) {
        st = sweep_appendf(md, len, "\n| %.0f |", sizes[s]);
        for (size_t k = 0; k < nk && !st; k++)
            st = sweep_appendf(md, len, " %.4f +- %.4f |", mean[k * S + s], sd[k * S + s]);
    }
    if (!st)
        st = sweep_appendf(md, len,
                           "\n\nReferences on the same test sets: Best Post Hoc %.4f +- %.4f, IRB bound %.4f +- %.4f, "
                           "%s (%s, identified) %.4f +- %.4f m/s.\nLaws identified ([CoRL] eq 6) on the first split:",
                           ref[IMP_LC_REF_BEST_POST_HOC], ref_sd[IMP_LC_REF_BEST_POST_HOC], ref[IMP_LC_REF_IRB],
                           ref_sd[IMP_LC_REF_IRB], law, lv, ref[IMP_LC_REF_BASE_LAW], ref_sd[IMP_LC_REF_BASE_LAW]);
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT && !st; m++)
        st = sweep_appendf(md, len, " %s (mu %.3f, eps %.3f)%s", imp_impact_model_name((imp_impact_model)m),
                           laws[2 * m], laws[2 * m + 1], m + 1 < IMP_IMPACT_MODEL_COUNT ? "," : ".\n");
    if (!st) st = sweep_appendf(md, len, "Fitting time per model over the whole curve (s):");
    for (size_t k = 0; k < nk && !st; k++) st = sweep_appendf(md, len, " %s %.1f;", names[k], fit[k]);
    if (!st) st = sweep_appendf(md, len, "\n");
    if (fig) {
        static const char *const styles[IMP_GPI_KIND_COUNT] = {"o-|C0", "s-|C1", "^-|C2", "o--|C3", "^--|C4", "d:|C5"};
        imp_figure_axes(fig, panel, synthetic ? "synthetic drops" : "MIT planar-impact data", "training impacts",
                        "mean error $\\Vert(\\Delta v_x, \\Delta v_y, k_g \\Delta\\omega)\\Vert$ (m/s)");
        imp_figure_logscale(fig, panel, 1, 1);
        for (size_t k = 0; k < nk; k++)
            imp_figure_errorbar(fig, panel, sizes, mean + k * S, sd + k * S, S, names[k], styles[k]);
        imp_figure_refline(fig, panel, 0, ref[IMP_LC_REF_BEST_POST_HOC], "Best Post Hoc", "--|black");
        imp_figure_refline(fig, panel, 0, ref[IMP_LC_REF_IRB], "IRB bound", ":|black");
    }
    return st;
}

int sweep_report_impact(const char *dir, const sweep_result *res, int n, char **md, size_t *len)
{
    const sweep_result *eval[2] = {NULL, NULL}, *pdata = NULL, *gp[2] = {NULL, NULL};
    int any = 0;
    for (int i = 0; i < n; i++) {
        const imp_sweep_task *t = res[i].task;
        if (strcmp(imp_sweep_task_get(t, "strand"), "impact")) continue;
        any = 1;
        if (!res[i].z) continue;
        const char *kind = imp_sweep_task_get(t, "kind"), *conv = imp_sweep_task_get(t, "convention"),
                   *source = imp_sweep_task_get(t, "source");
        if (!kind) continue;
        if (!strcmp(kind, "eval") && conv) eval[strcmp(conv, "stored") ? 1 : 0] = &res[i];
        else if (!strcmp(kind, "p-data")) pdata = &res[i];
        else if (!strcmp(kind, "gp") && source) gp[strcmp(source, "data") ? 1 : 0] = &res[i];
    }
    if (!any) return IMP_OK;
    int st = sweep_appendf(md, len, "\n## Planar impact (Fazeli et al. 2017)\n\n");
    const sweep_result *first = eval[0] ? eval[0] : eval[1];
    if (!st && first)
        st = sweep_appendf(md, len,
                           "impulse %s; data: %.0f impacts; object m = %.4g kg, kg = %.5f m%s.\nIdentification box "
                           "0 <= mu <= %.2g, 0 <= eps <= 1 (grid %.0f + compass search to %.0e).\n",
                           IMP_VERSION_STRING, meta_num(first->meta, "set_count"), meta_num(first->meta, "mass"),
                           meta_num(first->meta, "kg"), meta_num(first->meta, "quick") > 0 ? "; quick settings" : "",
                           meta_num(first->meta, "mu_cap"), meta_num(first->meta, "grid"),
                           meta_num(first->meta, "ident_tol"));
    imp_figure *fig_err = NULL, *fig_ell = NULL;
    if (!st && (eval[0] || eval[1])) {
        int panels = (eval[0] != NULL) + (eval[1] != NULL);
        fig_err = imp_figure_new(1, panels, 6.0 * panels, 4.5);
        fig_ell = imp_figure_new(2 * panels, 3, 12.0, 3.6 * 2 * panels + 0.6); /* a panel per law */
        if (!fig_err || !fig_ell) st = imp_fail(IMP_ERR_NOMEM, "report: out of memory");
        if (!st) {
            imp_figure_title(fig_err, "Error density of the predicted post-impact velocity (laws at identified parameters)");
            imp_figure_title(fig_ell, "Energy ellipse of one impact: each law's predictions over "
                                      "$0 \\leq \\mu \\leq 1$, $0 \\leq \\varepsilon \\leq 1$, a panel per law");
        }
        for (int c = 0, p = 0; c < 2 && !st; c++) {
            if (!eval[c]) continue;
            st = convention_section(eval[c], md, len);
            const char *cn = c ? "corrected" : "stored";
            const imp_npy_array *e = imp_npz_find(eval[c]->z, "errors");
            if (!st && e && e->ndim == 2 && e->shape[1] == 9 && e->shape[0] > 1)
                add_error_panel(fig_err, p, cn, e->data, e->shape[0]);
            if (!st) add_ellipse_panels(fig_ell, 6 * p, cn, eval[c]);
            p++;
        }
    }
    if (!st && pdata) st = p_data_section(pdata, md, len);
    if (!st && fig_err) {
        st = sweep_save_figure(fig_err, dir, "impact_error_density",
                      "Error densities of the six laws, Best Post Hoc and the IRB bound", md, len);
        fig_err = NULL;
    }
    if (!st && fig_ell) {
        st = sweep_save_figure(fig_ell, dir, "impact_energy_ellipse",
                      "Energy ellipse of one impact, a panel per law: the law's predictions over the parameter "
                      "box (dots; curves at eps = 0, 0.5, 1 across mu), the measured impulse (cross) and the IRB "
                      "impulse (star)",
                      md, len);
        fig_ell = NULL;
    }
    imp_figure_free(fig_err);
    imp_figure_free(fig_ell);
    if (!st && (gp[0] || gp[1])) {
        int panels = (gp[0] != NULL) + (gp[1] != NULL);
        imp_figure *fig = imp_figure_new(1, panels, 6.0 * panels, 4.8);
        if (fig) imp_figure_title(fig, "Data-driven impact models: error against training-set size ([CoRL] Fig. 8)");
        st = sweep_appendf(md, len,
                           "\n### Data-driven impact models: learning curves ([CoRL] Fig. 8)\n\nClass I: x1-impulse, "
                           "x2-impulse, x1-wrench; Class II: residual-impulse, residual-wrench (law + GP), param-gp "
                           "(GP -> (mu, eps) -> law).\n");
        for (int k = 0, p = 0; k < 2 && !st; k++)
            if (gp[k]) st = gp_section(gp[k], fig, p++, md, len);
        if (!st && fig) st = sweep_save_figure(fig, dir, "impact_gp_learning_curves", "GP learning curves", md, len);
        else imp_figure_free(fig);
    }
    return st;
}
