/* Reading the MIT planar-impact MAT v5 files with Debian's libmatio. */
#include "impulse/impact.h"
#include "impulse/core.h"

#include <math.h>
#include <matio.h>
#include <stdlib.h>
#include <string.h>

/* Copy a 2-D real double matvar into a row-major buffer (MATLAB stores
 * column-major). `what` names the variable in messages. */
static int matvar_matrix(matvar_t *v, const char *what, size_t expect_rows, size_t expect_cols,
                         double **out, size_t *rows, size_t *cols)
{
    *out = NULL;
    if (v->class_type != MAT_C_DOUBLE || v->data_type != MAT_T_DOUBLE || v->isComplex)
        return imp_fail(IMP_ERR_SHAPE, "%s: expected a real double matrix (class %d)", what, (int)v->class_type);
    if (v->rank != 2) return imp_fail(IMP_ERR_SHAPE, "%s: expected 2 dimensions, found %d", what, v->rank);
    size_t r = v->dims[0], c = v->dims[1];
    if ((expect_rows && r != expect_rows) || (expect_cols && c != expect_cols) || r == 0 || c == 0)
        return imp_fail(IMP_ERR_SHAPE, "%s: shape %zux%zu, expected %zux%zu", what, r, c, expect_rows, expect_cols);
    if (!v->data) return imp_fail(IMP_ERR_FORMAT, "%s: no data", what);
    double *buf = malloc(r * c * sizeof(double));
    if (!buf) return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", what);
    const double *src = v->data;
    for (size_t j = 0; j < c; j++)
        for (size_t i = 0; i < r; i++) {
            double x = src[j * r + i];
            if (!isfinite(x)) {
                free(buf);
                return imp_fail(IMP_ERR_NUMERIC, "%s: non-finite value at row %zu, column %zu", what, i, j);
            }
            buf[i * c + j] = x;
        }
    *out = buf;
    if (rows) *rows = r;
    if (cols) *cols = c;
    return IMP_OK;
}

static mat_t *open_mat(const char *path, int *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) { *st = imp_fail(IMP_ERR_IO, "%s: cannot open", path); return NULL; }
    fclose(f);
    mat_t *m = Mat_Open(path, MAT_ACC_RDONLY);
    if (!m) *st = imp_fail(IMP_ERR_FORMAT, "%s: not a readable MAT file", path);
    return m;
}

int imp_impact_load_mat_matrix(const char *path, const char *name, size_t expect_rows,
                               size_t expect_cols, double **data, size_t *rows, size_t *cols)
{
    int st = IMP_OK;
    *data = NULL;
    mat_t *m = open_mat(path, &st);
    if (!m) return st;
    matvar_t *v = Mat_VarRead(m, name);
    if (!v) st = imp_fail(IMP_ERR_NOT_FOUND, "%s: variable '%s' missing", path, name);
    else st = matvar_matrix(v, name, expect_rows, expect_cols, data, rows, cols);
    if (st && v) imp_fail_context(st, "%s", path);
    Mat_VarFree(v);
    Mat_Close(m);
    return st;
}

int imp_impact_load_mat(imp_impact_set *s, const char *path)
{
    static const char *fields[4] = {"states_i", "states_f", "n", "d"};
    static const size_t ncols[4] = {6, 6, 3, 3};
    int st = IMP_OK;
    memset(s, 0, sizeof *s);
    mat_t *m = open_mat(path, &st);
    if (!m) return st;
    matvar_t *v = Mat_VarRead(m, "data");
    double *arr[4] = {NULL, NULL, NULL, NULL};
    size_t rows = 0;
    if (!v) { st = imp_fail(IMP_ERR_NOT_FOUND, "%s: variable 'data' missing", path); goto done; }
    if (v->class_type != MAT_C_STRUCT) {
        st = imp_fail(IMP_ERR_SHAPE, "%s: 'data' is not a struct", path);
        goto done;
    }
    for (int k = 0; k < 4; k++) {
        matvar_t *f = Mat_VarGetStructFieldByName(v, fields[k], 0);
        char what[64];
        snprintf(what, sizeof what, "data.%s", fields[k]);
        if (!f) { st = imp_fail(IMP_ERR_NOT_FOUND, "%s: field '%s' missing", path, what); goto done; }
        size_t r, c;
        st = matvar_matrix(f, what, k ? rows : 0, ncols[k], &arr[k], &r, &c);
        if (st) { imp_fail_context(st, "%s", path); goto done; }
        rows = r;
    }
    if ((st = imp_impact_set_alloc(s, rows))) goto done;
    memcpy(s->pre, arr[0], rows * 6 * sizeof(double));
    memcpy(s->post, arr[1], rows * 6 * sizeof(double));
    memcpy(s->n, arr[2], rows * 3 * sizeof(double));
    memcpy(s->d, arr[3], rows * 3 * sizeof(double));
    st = imp_impact_set_validate(s, NULL);
    if (st) { imp_fail_context(st, "%s", path); imp_impact_set_free(s); }
done:
    for (int k = 0; k < 4; k++) free(arr[k]);
    Mat_VarFree(v);
    Mat_Close(m);
    return st;
}
