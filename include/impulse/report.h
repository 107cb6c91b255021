/* impulse report layer: figures (PNG + SVG through matplotlib) and tables
 * (markdown + CSV).
 *
 * Figures are described in C as a grid of panels holding plot elements.
 * imp_figure_save(fig, stem) writes stem.npz (every plotted array plus the
 * JSON spec as its "meta" string, so anyone can restyle the figure with
 * numpy/matplotlib) and then runs python/impulse_plot.py, which draws the
 * spec with matplotlib's Agg backend and writes stem.png and stem.svg
 * atomically. Nothing is rasterised or laid out by hand in C.
 *
 * Python interpreter: env IMPULSE_PYTHON, else /usr/bin/python3.
 * Script directory: env IMPULSE_PYTHON_DIR, else <source dir>/python, else
 * <install prefix>/share/impulse/python.
 *
 * Style strings are matplotlib format strings ("-", "--", ":", "o", "s-",
 * "x") optionally followed by "|<color>" with any matplotlib color
 * ("--|tab:red", "o|C2", "|#333333"). NULL or "" means the default. */
#ifndef IMPULSE_REPORT_H
#define IMPULSE_REPORT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imp_figure imp_figure;

/* rows x cols panels, numbered row-major from 0; size in inches. NULL on
 * bad arguments or allocation failure (message in imp_last_error()). */
imp_figure *imp_figure_new(int rows, int cols, double width_in, double height_in);
void imp_figure_free(imp_figure *fig);

int imp_figure_title(imp_figure *fig, const char *title);
/* Panel decorations; any string may be NULL. */
int imp_figure_axes(imp_figure *fig, int panel, const char *title, const char *xlabel, const char *ylabel);
/* A 3-D panel (imp_figure_line3d makes one too) with its axis labels. */
int imp_figure_axes3d(imp_figure *fig, int panel, const char *title, const char *xlabel, const char *ylabel,
                      const char *zlabel);
int imp_figure_logscale(imp_figure *fig, int panel, int x_log, int y_log);
/* Axis limits; pass NAN for "automatic" on either end. */
int imp_figure_limits(imp_figure *fig, int panel, double xmin, double xmax, double ymin, double ymax);
/* Equal scaling of x and y (trajectories, contact geometry). */
int imp_figure_equal_aspect(imp_figure *fig, int panel);
/* Write dir/index.html: every Markdown report of dir (results.md,
 * impact_report.md, report.md, ...) as HTML with its figures inline, plus any
 * PNG of dir or dir/figures no report embeds (python/impulse_html.py, standard
 * library only). */
int imp_report_index_html(const char *dir, const char *title);
/* Loss curves of training logs (the JSON lines of `impulse train`: epoch,
 * loss, its terms, lr per line): total loss, its terms and the learning rate
 * over epochs, one curve per log (labels may be NULL: the file names), to
 * path_stem.{png,svg,npz}. */
int imp_report_plot_log(const char *const *logs, const char *const *labels, size_t n, const char *path_stem);
/* Named ticks on a panel's y axis (categories, e.g. one row per model). */
int imp_figure_yticks(imp_figure *fig, int panel, const double *values, const char *const *labels, size_t n);

/* Plot elements. `label` (may be NULL) goes into the panel's legend.
 * Arrays are copied; NaN entries make gaps as in matplotlib. */
int imp_figure_line(imp_figure *fig, int panel, const double *x, const double *y, size_t n, const char *label,
                    const char *style);
/* A path through (x[i], y[i], z[i]) on a 3-D panel (its style as a line's). */
int imp_figure_line3d(imp_figure *fig, int panel, const double *x, const double *y, const double *z, size_t n,
                      const char *label, const char *style);
int imp_figure_scatter(imp_figure *fig, int panel, const double *x, const double *y, size_t n,
                       const char *label, const char *style);
/* Points with symmetric vertical error bars yerr[i] >= 0. */
int imp_figure_errorbar(imp_figure *fig, int panel, const double *x, const double *y, const double *yerr,
                        size_t n, const char *label, const char *style);
/* Grouped bar chart: values and errors (may be NULL) are n_groups x n_cat,
 * row-major; one colour per group, one tick per category. */
int imp_figure_bars(imp_figure *fig, int panel, const char *const *categories, size_t n_cat,
                    const char *const *groups, size_t n_groups, const double *values, const double *errors);
/* Histogram of x with `bins` equal bins; density != 0 normalises to a pdf. */
int imp_figure_histogram(imp_figure *fig, int panel, const double *x, size_t n, int bins, int density,
                         const char *label, const char *style);
/* Shaded band between y_lo and y_hi (e.g. mean +- 2 sd); alpha in (0, 1]. */
int imp_figure_fill_between(imp_figure *fig, int panel, const double *x, const double *y_lo,
                            const double *y_hi, size_t n, const char *label, const char *style, double alpha);
/* Horizontal (vertical == 0) or vertical reference line at `value`. */
int imp_figure_refline(imp_figure *fig, int panel, int vertical, double value, const char *label,
                       const char *style);
/* Closed polygon through (x[i], y[i]); filled with alpha if fill != 0. */
int imp_figure_polygon(imp_figure *fig, int panel, const double *x, const double *y, size_t n, int fill,
                       const char *label, const char *style);
/* Ellipse outline centred at (cx, cy), full axes width x height, rotated
 * angle_deg counter-clockwise. */
int imp_figure_ellipse(imp_figure *fig, int panel, double cx, double cy, double width, double height,
                       double angle_deg, const char *label, const char *style);
/* Text at data coordinates. */
int imp_figure_text(imp_figure *fig, int panel, double x, double y, const char *text);

/* Write path_stem.npz, path_stem.png and path_stem.svg. Fails with
 * IMP_ERR_UNSUPPORTED if python/matplotlib or the script is missing and
 * IMP_ERR_IO if the script fails; the message carries the script's last
 * stderr line. */
int imp_figure_save(const imp_figure *fig, const char *path_stem);

/* ---- Tables ---- */

typedef struct imp_table imp_table;

/* ncols columns with the given header texts (copied). */
imp_table *imp_table_new(size_t ncols, const char *const *headers);
void imp_table_free(imp_table *t);
/* Column alignment in markdown: 'l' (default), 'r' or 'c'. */
int imp_table_align(imp_table *t, size_t col, char align);
/* Append a whole row of ncols cells (copied). */
int imp_table_add_row(imp_table *t, const char *const *cells);
/* Append one printf-formatted cell; a new row starts when the current one
 * is full. */
int imp_table_cellf(imp_table *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
size_t imp_table_rows(const imp_table *t);
/* Render into a malloc'd string. Markdown columns are padded to equal
 * width ('|' in cells escaped); CSV follows RFC 4180 quoting with '\n'
 * line ends. Incomplete last rows are padded with empty cells. */
int imp_table_markdown(const imp_table *t, char **out);
int imp_table_csv(const imp_table *t, char **out);
/* Atomic file writers. */
int imp_table_save_markdown(const imp_table *t, const char *path);
int imp_table_save_csv(const imp_table *t, const char *path);

/* "mean ± se" with se rounded to two significant digits and the mean to
 * the same decimal place: (0.123456, 0.00234) -> "0.1235 ± 0.0023";
 * very large or small magnitudes use a shared exponent:
 * "(1.500 ± 0.023)e-05". se == 0 prints the mean with 6 significant
 * digits. Returns the snprintf-style length (truncated if cap is short). */
int imp_format_mean_se(char *buf, size_t cap, double mean, double se);

#ifdef __cplusplus
}
#endif
#endif
