#define _POSIX_C_SOURCE 200809L
/* Named arrays per trajectory from numpy, CSV and HDF5 files (see source.h):
 * name lists and column selections, and the slicing of 3-d arrays and CSV
 * trajectory columns into trajectories. */
#include "io/source.h"
#include "core/num.h"
#include "io/io_internal.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SRC_NPZ, SRC_NPY, SRC_CSV, SRC_H5 };

/* A whole array as doubles (npz, npy, HDF5 root), read once: 3-d arrays
 * are sliced per trajectory from it rather than read again each time. */
typedef struct {
    char *name;
    double *d;
    int nd;
    size_t sh[3];
} full_array;

struct imp_source {
    int kind;
    char path[1024];
    imp_npz *npz;  /* npz: the archive; npy: every loaded file, by path */
    imp_csv csv;
    int traj_col;  /* CSV: -1 none */
    int n_seg;     /* CSV: trajectories */
    size_t *seg;   /* CSV: n_seg + 1 row offsets */
    imp_h5 *h5;
    full_array *full; /* arrays read so far, within the input limit together */
    int n_full;
    size_t full_bytes;
};

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    if (a < b) return 0;
    for (size_t i = 0; i < b; i++)
        if (tolower((unsigned char)s[a - b + i]) != suffix[i]) return 0;
    return 1;
}

const char *imp_source_format(const imp_source *s)
{
    static const char *names[] = {"npz", "npy", "csv", "hdf5"};
    return names[s->kind];
}

static int csv_column(const imp_csv *c, const char *name)
{
    for (int i = 0; i < c->n_cols; i++)
        if (!strcmp(c->names[i], name)) return i;
    return -1;
}

int imp_source_open(imp_source **out, const char *path, const char *traj_key)
{
    *out = NULL;
    imp_source *s = calloc(1, sizeof *s);
    if (!s) return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->traj_col = -1;
    int st = IMP_OK;
    if (ends_with(path, ".npz")) {
        s->kind = SRC_NPZ;
        st = imp_npz_load(&s->npz, path);
        /* float32 members become doubles: twice their bytes, within the limit */
        size_t n32 = 0;
        for (size_t i = 0; !st && i < imp_npz_count(s->npz); i++)
            if (imp_npz_at(s->npz, i)->dtype == IMP_F32) n32 += imp_npz_at(s->npz, i)->count;
        if (!st) st = imp_input_budget(n32, sizeof(double), path);
        if (!st) st = imp_npz_widen_f32(s->npz);
    } else if (ends_with(path, ".npy")) {
        s->kind = SRC_NPY;
        s->npz = imp_npz_new();
        if (!s->npz) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
    } else if (ends_with(path, ".csv")) {
        s->kind = SRC_CSV;
        st = imp_csv_read(&s->csv, path);
        if (!st) {
            if (traj_key) {
                s->traj_col = csv_column(&s->csv, traj_key);
                if (s->traj_col < 0)
                    st = imp_fail(IMP_ERR_NOT_FOUND, "%s: no column '%s' (--traj)", path, traj_key);
            } else {
                const char *keys[] = {"traj", "trajectory", "episode"};
                for (int k = 0; k < 3 && s->traj_col < 0; k++) s->traj_col = csv_column(&s->csv, keys[k]);
            }
        }
        /* a trajectory is a run of rows with the same value in the column */
        size_t R = s->csv.n_rows;
        if (!st && !(s->seg = malloc((R + 1) * sizeof *s->seg))) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
        if (!st) {
            s->seg[0] = 0;
            s->n_seg = 0;
            for (size_t r = 1; r <= R; r++) {
                int C = s->csv.n_cols, tc = s->traj_col;
                if (r == R || (tc >= 0 && s->csv.values[r * C + tc] != s->csv.values[(r - 1) * C + tc]))
                    s->seg[++s->n_seg] = r;
            }
        }
    } else if (ends_with(path, ".h5") || ends_with(path, ".hdf5") || ends_with(path, ".hdf")) {
        s->kind = SRC_H5;
        st = imp_h5_open(&s->h5, path);
    } else {
        st = imp_fail(IMP_ERR_UNSUPPORTED, "%s: unknown format (.npz, .npy, .csv, .h5/.hdf5)", path);
    }
    if (st) {
        imp_source_free(s);
        return st;
    }
    *out = s;
    return IMP_OK;
}

void imp_source_free(imp_source *s)
{
    if (!s) return;
    imp_npz_free(s->npz);
    imp_csv_free(&s->csv);
    free(s->seg);
    imp_h5_close(s->h5);
    for (int i = 0; i < s->n_full; i++) free(s->full[i].name), free(s->full[i].d);
    free(s->full);
    free(s);
}

/* A numpy array of the archive as doubles: (rows, cols) or 3-d. */
static int npz_array(imp_source *s, const char *name, double **data, int *ndim, size_t shape[3])
{
    const imp_npy_array *a = imp_npz_find(s->npz, name);
    if (!a && s->kind == SRC_NPY) {
        if (access(name, F_OK) != 0) return imp_fail(IMP_ERR_NOT_FOUND, "%s: no such .npy file", name);
        imp_npy_array arr;
        int st = imp_npy_load(&arr, name);
        if (st) return st;
        if ((st = imp_input_budget(arr.count, sizeof(double), name))) { /* as doubles */
            imp_npy_array_clear(&arr);
            return st;
        }
        st = imp_npz_add_array(s->npz, name, &arr);
        imp_npy_array_clear(&arr);
        if (!st) st = imp_npz_widen_f32(s->npz);
        if (st) return st;
        a = imp_npz_find(s->npz, name);
    }
    if (!a) return imp_fail(IMP_ERR_NOT_FOUND, "%s: no array '%s'", s->path, name);
    if (a->ndim < 1 || a->ndim > 3)
        return imp_fail(IMP_ERR_SHAPE, "%s: '%s' has %d dimensions, need 1 to 3 (steps, columns)", s->path, name, a->ndim);
    *ndim = a->ndim;
    for (int i = 0; i < 3; i++) shape[i] = i < a->ndim ? a->shape[i] : 1;
    int st = imp_input_budget(a->count, sizeof(double), name);
    if (st) return st;
    double *d = malloc((a->count ? a->count : 1) * sizeof *d);
    if (!d) return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", name);
    if (a->dtype == IMP_F64) {
        memcpy(d, a->data, a->count * sizeof *d);
        st = imp_check_finite(d, a->count, name);
    } else {
        int64_t *iv = NULL;
        st = imp_npz_get_i64_copy(s->npz, name, a->ndim, NULL, &iv, NULL);
        for (size_t i = 0; !st && i < a->count; i++) d[i] = (double)iv[i];
        free(iv);
    }
    if (st) {
        free(d);
        return st;
    }
    *data = d;
    return IMP_OK;
}

/* Array `name` whole (npz, npy, HDF5 root), read on first use; the arrays
 * read from one file stay within the input limit together. */
static int full_array_get(imp_source *s, const char *name, const full_array **out)
{
    for (int i = 0; i < s->n_full; i++)
        if (!strcmp(s->full[i].name, name)) return *out = &s->full[i], IMP_OK;
    full_array a = {0};
    int st = s->kind == SRC_H5 ? imp_h5_read(s->h5, 0, name, &a.d, &a.nd, a.sh) : npz_array(s, name, &a.d, &a.nd, a.sh);
    if (st) return st;
    size_t bytes = a.sh[0] * a.sh[1] * a.sh[2] * sizeof(double); /* each read is within the limit */
    if (s->full_bytes > imp_input_limit() || bytes > imp_input_limit() - s->full_bytes)
        st = imp_fail(IMP_ERR_FORMAT, "%s: '%s' brings the arrays read to more than the input limit of %zu bytes "
                      "(IMPULSE_MAX_INPUT_BYTES)", s->path, name, imp_input_limit());
    full_array *nf = st ? NULL : realloc(s->full, (size_t)(s->n_full + 1) * sizeof *nf);
    if (!st && nf) s->full = nf;
    if (!st && (!nf || !(a.name = strdup(name)))) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", name);
    if (st) {
        free(a.d);
        return st;
    }
    s->full[s->n_full] = a;
    s->full_bytes += bytes;
    *out = &s->full[s->n_full++];
    return IMP_OK;
}

/* CSV columns of one base name: N, else N0.., else N_0... */
static int csv_columns(const imp_source *s, const char *base, int *cols, int cap)
{
    int c = csv_column(&s->csv, base);
    if (c >= 0) {
        cols[0] = c;
        return 1;
    }
    for (int form = 0; form < 2; form++) {
        int n = 0;
        for (; n < cap; n++) {
            char nm[300];
            snprintf(nm, sizeof nm, form ? "%s_%d" : "%s%d", base, n);
            if ((cols[n] = csv_column(&s->csv, nm)) < 0) break;
        }
        if (n > 0) return n;
    }
    return 0;
}

/* One base name (no commas, no selection) of trajectory `traj`. */
static int get_base(imp_source *s, const char *base, int traj, double **data, size_t *rows, size_t *cols)
{
    *data = NULL;
    if (s->kind == SRC_CSV) {
        int idx[IMP_NPY_MAX_DIMS * 64];
        int n = csv_columns(s, base, idx, (int)(sizeof idx / sizeof idx[0]));
        if (n == 0) return imp_fail(IMP_ERR_NOT_FOUND, "%s: no column '%s' (nor %s0, %s1, ...)", s->path, base, base, base);
        if (traj >= s->n_seg) return imp_fail(IMP_ERR_INVALID, "%s: no trajectory %d", s->path, traj);
        size_t r0 = s->seg[traj], R = s->seg[traj + 1] - r0;
        double *d = malloc(R * (size_t)n * sizeof *d);
        if (!d) return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", base);
        for (size_t r = 0; r < R; r++)
            for (int j = 0; j < n; j++) d[r * (size_t)n + (size_t)j] = s->csv.values[(r0 + r) * (size_t)s->csv.n_cols + (size_t)idx[j]];
        *data = d, *rows = R, *cols = (size_t)n;
        return IMP_OK;
    }
    size_t sh[3];
    int nd = 0, st;
    if (s->kind == SRC_H5 && imp_h5_n_groups(s->h5)) {
        /* one group per trajectory: read that group's dataset */
        if (traj >= imp_h5_n_groups(s->h5))
            return imp_fail(IMP_ERR_INVALID, "%s: no trajectory group %d", s->path, traj);
        double *d = NULL;
        if ((st = imp_h5_read(s->h5, traj, base, &d, &nd, sh))) return st;
        if (nd == 3) {
            free(d);
            return imp_fail(IMP_ERR_SHAPE, "%s: '%s' is 3-d inside a trajectory group", s->path, base);
        }
        *data = d, *rows = sh[0], *cols = nd == 2 ? sh[1] : 1;
        return IMP_OK;
    }
    const full_array *a = NULL;
    if ((st = full_array_get(s, base, &a))) return st;
    nd = a->nd;
    size_t T = nd == 3 ? a->sh[1] : a->sh[0], C = nd == 3 ? a->sh[2] : nd == 2 ? a->sh[1] : 1;
    if (nd == 3 ? (size_t)traj >= a->sh[0] : traj > 0)
        return imp_fail(IMP_ERR_SHAPE, "%s: '%s' holds %zu trajectories, trajectory %d asked for", s->path, base,
                        nd == 3 ? a->sh[0] : (size_t)1, traj);
    /* T x C is within the array, itself within the limit: no overflow */
    size_t TC = T * C;
    double *d = malloc((TC ? TC : 1) * sizeof *d);
    if (!d) return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", base);
    if (TC) memcpy(d, a->d + (nd == 3 ? (size_t)traj * TC : 0), TC * sizeof *d);
    *data = d, *rows = T, *cols = C;
    return IMP_OK;
}

/* One column number of a selection at *pp (decimal digits, blanks around
 * allowed): its value, or SIZE_MAX when it does not fit; *pp moves past it. */
static int parse_index(const char **pp, size_t *out, const char *name, const char *sel)
{
    const char *p = *pp;
    while (*p == ' ' || *p == '\t') p++;
    if (!isdigit((unsigned char)*p))
        return imp_fail(IMP_ERR_INVALID, "%s: column selection '[%s' is not [i], [i:j] or [i,j,...] (column numbers "
                        "from 0)", name, sel);
    size_t v = 0;
    for (; isdigit((unsigned char)*p); p++)
        v = v > (SIZE_MAX - 9) / 10 ? SIZE_MAX : v * 10 + (size_t)(*p - '0');
    while (*p == ' ' || *p == '\t') p++;
    *pp = p, *out = v;
    return IMP_OK;
}

/* NAME[sel]: the column indices selected, in the order given (repeats and
 * decreasing indices allowed), into idx (at most cap). */
static int parse_selection(const char *sel, size_t ncols, size_t *idx, size_t cap, size_t *n, const char *name)
{
    *n = 0;
    const char *p = sel;
    for (;;) {
        size_t a, b;
        const char *at = p;
        int st = parse_index(&p, &a, name, sel);
        if (st) return st;
        if (a >= ncols)
            return imp_fail(IMP_ERR_INVALID, "%s: column %.*s selected, it has %zu columns", name,
                            (int)(p - at < 40 ? p - at : 40), at, ncols);
        if (*p == ':') {
            at = ++p;
            if ((st = parse_index(&p, &b, name, sel))) return st;
            if (b > ncols || b <= a)
                return imp_fail(IMP_ERR_INVALID, "%s: columns %zu:%.*s selected (half-open, i < j), it has %zu columns",
                                name, a, (int)(p - at < 40 ? p - at : 40), at, ncols);
        } else {
            b = a + 1;
        }
        if (b - a > cap - *n) return imp_fail(IMP_ERR_INVALID, "%s: more than %zu columns selected", name, cap);
        for (size_t i = a; i < b; i++) idx[(*n)++] = i;
        if (*p != ',') break;
        p++;
    }
    if (*p != ']' || p[1]) return imp_fail(IMP_ERR_INVALID, "%s: column selection must end the name with ']'", name);
    return IMP_OK;
}

int imp_source_get(imp_source *s, const char *name, int traj, double **data, size_t *rows, size_t *cols)
{
    *data = NULL;
    char buf[1024];
    if (strlen(name) >= sizeof buf) return imp_fail(IMP_ERR_INVALID, "name: longer than %zu bytes", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", name);
    double *acc = NULL;
    size_t R = 0, C = 0;
    int st = IMP_OK;
    char *part = buf;
    while (part && !st) {
        /* split at a comma outside brackets */
        char *q = part;
        int depth = 0;
        while (*q && !(*q == ',' && depth == 0)) depth += (*q == '[') - (*q == ']'), q++;
        char *next = *q ? q + 1 : NULL;
        *q = '\0';
        char *br = strchr(part, '[');
        if (br) *br = '\0';
        double *d = NULL;
        size_t r = 0, c = 0;
        st = get_base(s, part, traj, &d, &r, &c);
        /* 0 columns: nothing to read, however many rows are declared */
        if (!st && c == 0) st = imp_fail(IMP_ERR_SHAPE, "%s: '%s' has no columns (%zu x 0)", s->path, part, r);
        if (!st && br) {
            size_t idx[256], n = 0;
            double *sd = NULL;
            st = parse_selection(br + 1, c, idx, 256, &n, part);
            if (!st) st = imp_input_budget(r < SIZE_MAX / n ? r * n : SIZE_MAX, sizeof *sd, part);
            if (!st && !(sd = malloc((r ? r * n : 1) * sizeof *sd))) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", part);
            if (!st) {
                for (size_t i = 0; i < r; i++)
                    for (size_t j = 0; j < n; j++) sd[i * n + j] = d[i * c + idx[j]];
                free(d);
                d = sd, c = n;
            }
        }
        if (!st && acc && r != R)
            st = imp_fail(IMP_ERR_SHAPE, "%s: '%s' has %zu samples, the names before it %zu", s->path, part, r, R);
        if (!st) st = imp_input_budget(r < SIZE_MAX / (C + c + 1) ? r * (C + c) : SIZE_MAX, sizeof(double), name);
        if (!st) {
            double *na = malloc((r && C + c ? r * (C + c) : 1) * sizeof *na);
            if (!na) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", name);
            for (size_t i = 0; !st && i < r; i++) {
                if (C) memcpy(na + i * (C + c), acc + i * C, C * sizeof *na);
                memcpy(na + i * (C + c) + C, d + i * c, c * sizeof *na);
            }
            if (!st) free(acc), acc = na, R = r, C += c;
        }
        free(d);
        part = next;
    }
    if (st) {
        free(acc);
        return st;
    }
    *data = acc, *rows = R, *cols = C;
    return IMP_OK;
}

int imp_source_has(imp_source *s, const char *name)
{
    double *d = NULL;
    size_t r = 0, c = 0;
    int st = imp_source_get(s, name, 0, &d, &r, &c);
    free(d);
    if (st != IMP_ERR_NOT_FOUND) return st ? st : 1;
    imp_clear_error();
    return 0;
}

int imp_source_n_traj(imp_source *s, const char *q_name, int *n)
{
    if (s->kind == SRC_CSV) return *n = s->n_seg, IMP_OK;
    if (s->kind == SRC_H5 && imp_h5_n_groups(s->h5)) return *n = imp_h5_n_groups(s->h5), IMP_OK;
    /* the leading dimension of a 3-d q (its first listed name) */
    char base[1024];
    snprintf(base, sizeof base, "%s", q_name);
    base[strcspn(base, ",[")] = '\0';
    const full_array *a = NULL;
    int st = full_array_get(s, base, &a);
    if (st) return st;
    *n = a->nd == 3 ? (int)(a->sh[0] < 1u << 24 ? a->sh[0] : 1u << 24) : 1;
    return IMP_OK;
}

void imp_source_list(const imp_source *s, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
    if (s->kind == SRC_H5) {
        imp_h5_list(s->h5, buf, cap);
        return;
    }
    if (s->kind == SRC_CSV) {
        k += (size_t)snprintf(buf, cap, "columns: ");
        for (int i = 0; i < s->csv.n_cols && k < cap; i++)
            k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", s->csv.names[i]);
        return;
    }
    k += (size_t)snprintf(buf, cap, "arrays: ");
    for (size_t i = 0; i < imp_npz_count(s->npz) && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", imp_npz_at(s->npz, i)->name);
}
