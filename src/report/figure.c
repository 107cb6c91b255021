/* Figure specs: C describes panels and plot elements; the drawing is done
 * by matplotlib in python/impulse_plot.py. The spec travels as JSON in the
 * "meta" member of <stem>.npz next to the plotted arrays, so the saved
 * .npz alone is enough to redraw or restyle a figure. */
#include "impulse/report.h"
#include "impulse/core.h"
#include "impulse/io.h"
#include "report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIGURE_FORMAT "impulse-figure-1"

typedef struct fig_panel {
    char *title, *xlabel, *ylabel, *zlabel;
    int x_log, y_log, equal, three_d;
    double lim[4]; /* xmin, xmax, ymin, ymax; NaN = automatic */
    char *yticks;  /* JSON [[value, "label"], ...] or NULL */
} fig_panel;

struct imp_figure {
    int rows, cols;
    double width, height;
    char *title;
    fig_panel *panels;
    imp_npz *data;   /* every plotted array, named e<k>_<role> */
    char **elements; /* JSON object text per element */
    size_t n_elem, cap_elem;
};

static char *dup_or_null(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Replace *slot by a copy of s (NULL clears it). */
static int set_text(char **slot, const char *s, const char *what)
{
    char *d = NULL;
    if (s && !(d = dup_or_null(s))) return imp_fail(IMP_ERR_NOMEM, "%s: text", what);
    free(*slot);
    *slot = d;
    return IMP_OK;
}

imp_figure *imp_figure_new(int rows, int cols, double width_in, double height_in)
{
    if (rows < 1 || cols < 1 || rows > 16 || cols > 16) {
        imp_fail(IMP_ERR_INVALID, "figure: grid %dx%d outside 1..16", rows, cols);
        return NULL;
    }
    if (!(width_in > 0.5 && width_in < 100 && height_in > 0.5 && height_in < 100)) {
        imp_fail(IMP_ERR_INVALID, "figure: size %gx%g inches outside (0.5, 100)", width_in, height_in);
        return NULL;
    }
    imp_figure *f = calloc(1, sizeof *f);
    if (!f) goto nomem;
    f->rows = rows;
    f->cols = cols;
    f->width = width_in;
    f->height = height_in;
    f->panels = calloc((size_t)(rows * cols), sizeof *f->panels);
    f->data = imp_npz_new();
    if (!f->panels || !f->data) goto nomem;
    for (int i = 0; i < rows * cols; i++)
        for (int k = 0; k < 4; k++) f->panels[i].lim[k] = NAN;
    return f;
nomem:
    imp_figure_free(f);
    imp_fail(IMP_ERR_NOMEM, "figure: allocation");
    return NULL;
}

void imp_figure_free(imp_figure *fig)
{
    if (!fig) return;
    if (fig->panels)
        for (int i = 0; i < fig->rows * fig->cols; i++) {
            free(fig->panels[i].title);
            free(fig->panels[i].xlabel);
            free(fig->panels[i].ylabel);
            free(fig->panels[i].zlabel);
            free(fig->panels[i].yticks);
        }
    free(fig->panels);
    for (size_t i = 0; i < fig->n_elem; i++) free(fig->elements[i]);
    free(fig->elements);
    imp_npz_free(fig->data);
    free(fig->title);
    free(fig);
}

static int check_panel(const imp_figure *fig, int panel)
{
    if (!fig) return imp_fail(IMP_ERR_INVALID, "figure: NULL");
    if (panel < 0 || panel >= fig->rows * fig->cols)
        return imp_fail(IMP_ERR_INVALID, "panel: %d outside [0, %d)", panel, fig->rows * fig->cols);
    return IMP_OK;
}

int imp_figure_title(imp_figure *fig, const char *title)
{
    if (!fig) return imp_fail(IMP_ERR_INVALID, "figure: NULL");
    return set_text(&fig->title, title, "title");
}

int imp_figure_axes(imp_figure *fig, int panel, const char *title, const char *xlabel, const char *ylabel)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    fig_panel *p = &fig->panels[panel];
    if ((st = set_text(&p->title, title, "panel title"))) return st;
    if ((st = set_text(&p->xlabel, xlabel, "xlabel"))) return st;
    return set_text(&p->ylabel, ylabel, "ylabel");
}

int imp_figure_axes3d(imp_figure *fig, int panel, const char *title, const char *xlabel, const char *ylabel,
                      const char *zlabel)
{
    int st = imp_figure_axes(fig, panel, title, xlabel, ylabel);
    if (st) return st;
    fig->panels[panel].three_d = 1;
    return set_text(&fig->panels[panel].zlabel, zlabel, "zlabel");
}

int imp_figure_logscale(imp_figure *fig, int panel, int x_log, int y_log)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    fig->panels[panel].x_log = x_log != 0;
    fig->panels[panel].y_log = y_log != 0;
    return IMP_OK;
}

int imp_figure_limits(imp_figure *fig, int panel, double xmin, double xmax, double ymin, double ymax)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    double v[4] = {xmin, xmax, ymin, ymax};
    for (int k = 0; k < 4; k++)
        if (isinf(v[k])) return imp_fail(IMP_ERR_INVALID, "limits: infinite bound (use NAN for automatic)");
    if ((!isnan(xmin) && !isnan(xmax) && !(xmin < xmax)) || (!isnan(ymin) && !isnan(ymax) && !(ymin < ymax)))
        return imp_fail(IMP_ERR_INVALID, "limits: need min < max");
    memcpy(fig->panels[panel].lim, v, sizeof v);
    return IMP_OK;
}

int imp_figure_equal_aspect(imp_figure *fig, int panel)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    fig->panels[panel].equal = 1;
    return IMP_OK;
}

/* ---- element plumbing ---- */

/* Start an element's JSON: kind, panel, label, style. */
static void elem_begin(imp_json *j, const char *kind, int panel, const char *label, const char *style)
{
    imp_json_init(j);
    imp_json_begin_object(j);
    imp_json_kv_string(j, "kind", kind);
    imp_json_kv_int(j, "panel", panel);
    if (label) imp_json_kv_string(j, "label", label);
    if (style) imp_json_kv_string(j, "style", style);
}

/* Store a 1-d copy of x[0..n) as e<k>_<role> and reference it in j. */
static int elem_array(imp_figure *fig, imp_json *j, const char *role, const double *x, size_t n)
{
    char name[64];
    snprintf(name, sizeof name, "e%zu_%s", fig->n_elem, role);
    if (!x) return imp_fail(IMP_ERR_INVALID, "%s: NULL array", role);
    size_t shape[1] = {n};
    int st = imp_npz_add_f64(fig->data, name, 1, shape, x);
    if (st) return st;
    imp_json_kv_string(j, role, name);
    return IMP_OK;
}

/* Finish j and append it; frees j either way. */
static int elem_commit(imp_figure *fig, imp_json *j, int st)
{
    if (st == IMP_OK) {
        imp_json_end_object(j);
        const char *t = imp_json_text(j);
        if (!t) st = imp_fail(IMP_ERR_NOMEM, "figure: element spec");
    }
    if (st == IMP_OK && fig->n_elem == fig->cap_elem) {
        size_t ncap = fig->cap_elem ? 2 * fig->cap_elem : 16;
        char **ne = realloc(fig->elements, ncap * sizeof *ne);
        if (!ne) st = imp_fail(IMP_ERR_NOMEM, "figure: element list");
        else {
            fig->elements = ne;
            fig->cap_elem = ncap;
        }
    }
    if (st == IMP_OK) {
        char *t = dup_or_null(imp_json_text(j));
        if (!t) st = imp_fail(IMP_ERR_NOMEM, "figure: element spec");
        else fig->elements[fig->n_elem++] = t;
    }
    imp_json_free(j);
    return st;
}

static int check_xy(const imp_figure *fig, int panel, const double *x, const double *y, size_t n, const char *what)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    if (n == 0) return imp_fail(IMP_ERR_INVALID, "%s: no points", what);
    if (!x || !y) return imp_fail(IMP_ERR_INVALID, "%s: NULL x or y", what);
    return IMP_OK;
}

static int add_xy(imp_figure *fig, const char *kind, int panel, const double *x, const double *y, size_t n,
                  const char *label, const char *style)
{
    int st = check_xy(fig, panel, x, y, n, kind);
    if (st) return st;
    imp_json j;
    elem_begin(&j, kind, panel, label, style);
    st = elem_array(fig, &j, "x", x, n);
    if (!st) st = elem_array(fig, &j, "y", y, n);
    return elem_commit(fig, &j, st);
}

/* An element of x, y and a third array (role `role`), all checked. */
static int add_xy_and(imp_figure *fig, const char *kind, int panel, const double *x, const double *y,
                      const char *role, const double *v, size_t n, const char *label, const char *style)
{
    imp_json j;
    elem_begin(&j, kind, panel, label, style);
    int st = elem_array(fig, &j, "x", x, n);
    if (!st) st = elem_array(fig, &j, "y", y, n);
    if (!st) st = elem_array(fig, &j, role, v, n);
    return elem_commit(fig, &j, st);
}

int imp_figure_line(imp_figure *fig, int panel, const double *x, const double *y, size_t n, const char *label,
                    const char *style)
{
    return add_xy(fig, "line", panel, x, y, n, label, style);
}

int imp_figure_line3d(imp_figure *fig, int panel, const double *x, const double *y, const double *z, size_t n,
                      const char *label, const char *style)
{
    int st = check_xy(fig, panel, x, y, n, "line3d");
    if (st) return st;
    if (!z) return imp_fail(IMP_ERR_INVALID, "line3d: NULL z");
    fig->panels[panel].three_d = 1;
    return add_xy_and(fig, "line3d", panel, x, y, "z", z, n, label, style);
}

int imp_figure_scatter(imp_figure *fig, int panel, const double *x, const double *y, size_t n,
                       const char *label, const char *style)
{
    return add_xy(fig, "scatter", panel, x, y, n, label, style);
}

int imp_figure_errorbar(imp_figure *fig, int panel, const double *x, const double *y, const double *yerr,
                        size_t n, const char *label, const char *style)
{
    int st = check_xy(fig, panel, x, y, n, "errorbar");
    if (st) return st;
    if (!yerr) return imp_fail(IMP_ERR_INVALID, "errorbar: NULL yerr");
    for (size_t i = 0; i < n; i++)
        if (yerr[i] < 0) return imp_fail(IMP_ERR_INVALID, "errorbar: yerr[%zu] = %g is negative", i, yerr[i]);
    return add_xy_and(fig, "errorbar", panel, x, y, "yerr", yerr, n, label, style);
}

int imp_figure_bars(imp_figure *fig, int panel, const char *const *categories, size_t n_cat,
                    const char *const *groups, size_t n_groups, const double *values, const double *errors)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    if (n_cat == 0 || n_groups == 0 || !categories || !groups || !values)
        return imp_fail(IMP_ERR_INVALID, "bars: need categories, groups and values");
    for (size_t i = 0; i < n_cat; i++)
        if (!categories[i]) return imp_fail(IMP_ERR_INVALID, "bars: category %zu is NULL", i);
    for (size_t g = 0; g < n_groups; g++)
        if (!groups[g]) return imp_fail(IMP_ERR_INVALID, "bars: group %zu is NULL", g);
    size_t n = n_cat * n_groups;
    if (errors)
        for (size_t i = 0; i < n; i++)
            if (errors[i] < 0) return imp_fail(IMP_ERR_INVALID, "bars: errors[%zu] = %g is negative", i, errors[i]);
    imp_json j;
    elem_begin(&j, "bars", panel, NULL, NULL);
    imp_json_key(&j, "categories");
    imp_json_begin_array(&j);
    for (size_t i = 0; i < n_cat; i++) imp_json_string(&j, categories[i]);
    imp_json_end_array(&j);
    imp_json_key(&j, "groups");
    imp_json_begin_array(&j);
    for (size_t g = 0; g < n_groups; g++) imp_json_string(&j, groups[g]);
    imp_json_end_array(&j);
    st = elem_array(fig, &j, "values", values, n);
    if (!st && errors) st = elem_array(fig, &j, "errors", errors, n);
    return elem_commit(fig, &j, st);
}

int imp_figure_histogram(imp_figure *fig, int panel, const double *x, size_t n, int bins, int density,
                         const char *label, const char *style)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    if (n == 0 || !x) return imp_fail(IMP_ERR_INVALID, "histogram: no data");
    if (bins < 1 || bins > 10000) return imp_fail(IMP_ERR_INVALID, "histogram: bins %d outside [1, 10000]", bins);
    imp_json j;
    elem_begin(&j, "histogram", panel, label, style);
    imp_json_kv_int(&j, "bins", bins);
    imp_json_key(&j, "density");
    imp_json_bool(&j, density);
    st = elem_array(fig, &j, "x", x, n);
    return elem_commit(fig, &j, st);
}

int imp_figure_fill_between(imp_figure *fig, int panel, const double *x, const double *y_lo,
                            const double *y_hi, size_t n, const char *label, const char *style, double alpha)
{
    int st = check_xy(fig, panel, x, y_lo, n, "fill_between");
    if (st) return st;
    if (!y_hi) return imp_fail(IMP_ERR_INVALID, "fill_between: NULL y_hi");
    if (!(alpha > 0 && alpha <= 1)) return imp_fail(IMP_ERR_INVALID, "fill_between: alpha %g outside (0, 1]", alpha);
    imp_json j;
    elem_begin(&j, "fill_between", panel, label, style);
    imp_json_kv_number(&j, "alpha", alpha);
    st = elem_array(fig, &j, "x", x, n);
    if (!st) st = elem_array(fig, &j, "y_lo", y_lo, n);
    if (!st) st = elem_array(fig, &j, "y_hi", y_hi, n);
    return elem_commit(fig, &j, st);
}

int imp_figure_refline(imp_figure *fig, int panel, int vertical, double value, const char *label,
                       const char *style)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    if (!isfinite(value)) return imp_fail(IMP_ERR_INVALID, "refline: value %g is not finite", value);
    imp_json j;
    elem_begin(&j, "refline", panel, label, style);
    imp_json_key(&j, "vertical");
    imp_json_bool(&j, vertical);
    imp_json_kv_number(&j, "value", value);
    return elem_commit(fig, &j, IMP_OK);
}

int imp_figure_polygon(imp_figure *fig, int panel, const double *x, const double *y, size_t n, int fill,
                       const char *label, const char *style)
{
    int st = check_xy(fig, panel, x, y, n, "polygon");
    if (st) return st;
    if (n < 3) return imp_fail(IMP_ERR_INVALID, "polygon: %zu vertices, need at least 3", n);
    imp_json j;
    elem_begin(&j, "polygon", panel, label, style);
    imp_json_key(&j, "fill");
    imp_json_bool(&j, fill);
    st = elem_array(fig, &j, "x", x, n);
    if (!st) st = elem_array(fig, &j, "y", y, n);
    return elem_commit(fig, &j, st);
}

int imp_figure_ellipse(imp_figure *fig, int panel, double cx, double cy, double width, double height,
                       double angle_deg, const char *label, const char *style)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    if (!isfinite(cx) || !isfinite(cy) || !isfinite(angle_deg))
        return imp_fail(IMP_ERR_INVALID, "ellipse: centre and angle must be finite");
    if (!(width > 0 && height > 0 && isfinite(width) && isfinite(height)))
        return imp_fail(IMP_ERR_INVALID, "ellipse: axes %g x %g must be positive", width, height);
    imp_json j;
    elem_begin(&j, "ellipse", panel, label, style);
    imp_json_kv_number(&j, "cx", cx);
    imp_json_kv_number(&j, "cy", cy);
    imp_json_kv_number(&j, "width", width);
    imp_json_kv_number(&j, "height", height);
    imp_json_kv_number(&j, "angle", angle_deg);
    return elem_commit(fig, &j, IMP_OK);
}

int imp_figure_text(imp_figure *fig, int panel, double x, double y, const char *text)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    if (!text) return imp_fail(IMP_ERR_INVALID, "text: NULL");
    if (!isfinite(x) || !isfinite(y)) return imp_fail(IMP_ERR_INVALID, "text: position must be finite");
    imp_json j;
    elem_begin(&j, "text", panel, NULL, NULL);
    imp_json_kv_number(&j, "x", x);
    imp_json_kv_number(&j, "y", y);
    imp_json_kv_string(&j, "text", text);
    return elem_commit(fig, &j, IMP_OK);
}

/* ---- saving ---- */

int imp_figure_yticks(imp_figure *fig, int panel, const double *values, const char *const *labels, size_t n)
{
    int st = check_panel(fig, panel);
    if (st) return st;
    if (n > 0 && (!values || !labels)) return imp_fail(IMP_ERR_INVALID, "yticks: NULL values or labels");
    if ((st = imp_check_finite(values, n, "yticks"))) return st;
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        imp_json_begin_array(&j);
        imp_json_number(&j, values[i]);
        imp_json_string(&j, labels[i] ? labels[i] : "");
        imp_json_end_array(&j);
    }
    imp_json_end_array(&j);
    char *text = imp_json_text(&j) ? dup_or_null(imp_json_text(&j)) : NULL;
    imp_json_free(&j);
    if (!text) return imp_fail(IMP_ERR_NOMEM, "yticks");
    free(fig->panels[panel].yticks);
    fig->panels[panel].yticks = text;
    return IMP_OK;
}

static void kv_opt_string(imp_json *j, const char *key, const char *s)
{
    imp_json_key(j, key);
    if (s) imp_json_string(j, s);
    else imp_json_null(j);
}

static char *figure_spec(const imp_figure *fig)
{
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "format", FIGURE_FORMAT);
    imp_json_kv_int(&j, "rows", fig->rows);
    imp_json_kv_int(&j, "cols", fig->cols);
    imp_json_kv_number(&j, "width", fig->width);
    imp_json_kv_number(&j, "height", fig->height);
    kv_opt_string(&j, "title", fig->title);
    imp_json_key(&j, "panels");
    imp_json_begin_array(&j);
    for (int i = 0; i < fig->rows * fig->cols; i++) {
        const fig_panel *p = &fig->panels[i];
        imp_json_begin_object(&j);
        kv_opt_string(&j, "title", p->title);
        kv_opt_string(&j, "xlabel", p->xlabel);
        kv_opt_string(&j, "ylabel", p->ylabel);
        imp_json_key(&j, "x_log");
        imp_json_bool(&j, p->x_log);
        imp_json_key(&j, "y_log");
        imp_json_bool(&j, p->y_log);
        imp_json_key(&j, "equal");
        imp_json_bool(&j, p->equal);
        if (p->three_d) {
            imp_json_key(&j, "three_d");
            imp_json_bool(&j, 1);
            kv_opt_string(&j, "zlabel", p->zlabel);
        }
        imp_json_key(&j, "limits"); /* NaN -> null = automatic */
        imp_json_begin_array(&j);
        for (int k = 0; k < 4; k++) imp_json_number(&j, p->lim[k]);
        imp_json_end_array(&j);
        if (p->yticks) {
            imp_json_key(&j, "yticks");
            imp_json_raw(&j, p->yticks);
        }
        imp_json_end_object(&j);
    }
    imp_json_end_array(&j);
    imp_json_key(&j, "elements");
    imp_json_begin_array(&j);
    for (size_t i = 0; i < fig->n_elem; i++) imp_json_raw(&j, fig->elements[i]);
    imp_json_end_array(&j);
    imp_json_end_object(&j);
    char *out = imp_json_text(&j) ? dup_or_null(imp_json_text(&j)) : NULL;
    imp_json_free(&j);
    return out;
}

int imp_figure_save(const imp_figure *fig, const char *path_stem)
{
    if (!fig) return imp_fail(IMP_ERR_INVALID, "figure: NULL");
    if (!path_stem || !path_stem[0]) return imp_fail(IMP_ERR_INVALID, "figure: empty output path");
    char *spec = figure_spec(fig);
    if (!spec) return imp_fail(IMP_ERR_NOMEM, "figure: spec");
    /* fig is logically const; the spec is a derived cache in its archive */
    int st = imp_npz_set_meta(fig->data, spec);
    free(spec);
    if (st) return st;
    size_t n = strlen(path_stem) + 5;
    char *npz = malloc(n);
    if (!npz) return imp_fail(IMP_ERR_NOMEM, "figure: path");
    snprintf(npz, n, "%s.npz", path_stem);
    st = imp_npz_save(fig->data, npz);
    if (!st) {
        const char *args[2] = {npz, path_stem};
        st = imp_python_run("impulse_plot.py", args, 2);
    }
    if (st) imp_fail_context(st, "figure %s", path_stem);
    free(npz);
    return st;
}

int imp_report_index_html(const char *dir, const char *title)
{
    if (!dir || !dir[0]) return imp_fail(IMP_ERR_INVALID, "index.html: empty folder");
    const char *args[2] = {dir, title ? title : ""};
    int st = imp_python_run("impulse_html.py", args, title ? 2 : 1);
    return st ? imp_fail_context(st, "%s/index.html", dir) : IMP_OK;
}
