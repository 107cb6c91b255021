#define _POSIX_C_SOURCE 200809L
/* HDF5 trajectories through Debian's libhdf5: datasets at the root
 * (q of shape (steps, columns) or (trajectories, steps, columns)) or one
 * group per trajectory holding them (/traj0/qpos, /traj1/qpos, ..., the
 * layout of MuJoCo and robot-learning logs). Values are read as doubles
 * (HDF5 converts float32 and integers); HDF5's own error printing is off. */
#include "io/source.h"
#include "impulse/core.h"
#include "io/io_internal.h"

#include <ctype.h>
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct imp_h5 {
    hid_t file;
    int n_groups;
    char **groups;
    char path[512];
};

static herr_t collect(hid_t loc, const char *name, const H5L_info_t *info, void *user)
{
    imp_h5 *h = user;
    H5O_info_t oi;
    if (info->type != H5L_TYPE_HARD) return 0; /* soft and external links are not trajectories */
    if (H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP) return 0;
    char **ng = realloc(h->groups, (size_t)(h->n_groups + 1) * sizeof *ng);
    if (!ng) return -1;
    h->groups = ng;
    if (!(h->groups[h->n_groups] = strdup(name))) return -1;
    h->n_groups++;
    return 0;
}

/* Natural order: digit runs compare as numbers (traj2 < traj10). */
static int natural_cmp(const void *pa, const void *pb)
{
    const char *a = *(char *const *)pa, *b = *(char *const *)pb;
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            char *ea, *eb;
            unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
            if (x != y) return x < y ? -1 : 1;
            a = ea, b = eb;
        } else {
            if (*a != *b) return (unsigned char)*a - (unsigned char)*b;
            a++, b++;
        }
    }
    return (unsigned char)*a - (unsigned char)*b;
}

/* The structure probe: every link of the root and of its groups (one level,
 * the layouts impulse reads), each object's header, each dataset's space,
 * type and creation properties. */
static herr_t probe_link(hid_t loc, const char *name, const H5L_info_t *info, void *user)
{
    int depth = *(const int *)user;
    H5O_info_t oi;
    if (info->type != H5L_TYPE_HARD || H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT) < 0) return 0;
    if (oi.type == H5O_TYPE_GROUP && depth == 0) {
        hid_t g = H5Gopen2(loc, name, H5P_DEFAULT);
        int inner = 1;
        if (g >= 0) H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, probe_link, &inner);
        if (g >= 0) H5Gclose(g);
    } else if (oi.type == H5O_TYPE_DATASET) {
        hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
        if (d < 0) return 0;
        hid_t sp = H5Dget_space(d), ty = H5Dget_type(d), pl = H5Dget_create_plist(d);
        hsize_t dims[H5S_MAX_RANK];
        if (sp >= 0) H5Sget_simple_extent_dims(sp, dims, NULL), H5Sclose(sp);
        if (ty >= 0) H5Tget_size(ty), H5Tclose(ty);
        if (pl >= 0) H5Pget_layout(pl), H5Pclose(pl);
        H5Dclose(d);
    }
    return 0;
}

/* Debian's libhdf5 (1.10) dereferences NULL on some corrupt files instead of
 * failing (a root symbol table whose B-tree sits at the superblock's
 * address, found by fuzz_import; HDF5 issue #584), which would take the
 * calling program down. So the file's structure is first walked in a child
 * process: a child killed by a signal (or ending otherwise than through the
 * walk's _exit(0): a sanitizer's handler exits), or still walking after
 * 10 s, means a file libhdf5 cannot read safely, reported as an error. The child only
 * calls libhdf5 and _exit. Where fork fails the walk is skipped. */
static int probe_structure(const char *path)
{
    pid_t pid = fork();
    if (pid < 0) return IMP_OK;
    if (pid == 0) {
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        int depth = 0;
        if (f >= 0) H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, NULL, probe_link, &depth);
        _exit(0);
    }
    int status = 0;
    struct timespec tick = {0, 2000000}; /* 2 ms */
    for (int waited = 0;; waited++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0) return IMP_OK; /* reaped elsewhere (a SIGCHLD handler): nothing to say */
        if (waited >= 5000) {     /* 10 s */
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return imp_fail(IMP_ERR_FORMAT, "%s: libhdf5 was still reading the file's structure after 10 s "
                            "(a corrupt HDF5 file?)", path);
        }
        nanosleep(&tick, NULL);
    }
    /* killed by a signal, or (under a sanitizer, whose handler exits) not
     * exiting with the walk's own 0 */
    if (WIFSIGNALED(status))
        return imp_fail(IMP_ERR_FORMAT, "%s: the file's HDF5 structure is corrupt (libhdf5 crashed reading it, "
                        "signal %d)", path, WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return imp_fail(IMP_ERR_FORMAT, "%s: the file's HDF5 structure is corrupt (libhdf5 failed reading it, "
                        "status %d)", path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return IMP_OK;
}

int imp_h5_open(imp_h5 **out, const char *path)
{
    *out = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (H5Fis_hdf5(path) <= 0) return imp_fail(IMP_ERR_FORMAT, "%s: not an HDF5 file (or unreadable)", path);
    int st = probe_structure(path);
    if (st) return st;
    imp_h5 *h = calloc(1, sizeof *h);
    if (!h) return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
    snprintf(h->path, sizeof h->path, "%s", path);
    h->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (h->file < 0) {
        free(h);
        return imp_fail(IMP_ERR_IO, "%s: cannot open as HDF5", path);
    }
    if (H5Literate(h->file, H5_INDEX_NAME, H5_ITER_INC, NULL, collect, h) < 0) {
        imp_h5_close(h);
        return imp_fail(IMP_ERR_FORMAT, "%s: cannot list its groups", path);
    }
    if (h->n_groups > 1) qsort(h->groups, (size_t)h->n_groups, sizeof *h->groups, natural_cmp);
    *out = h;
    return IMP_OK;
}

void imp_h5_close(imp_h5 *h)
{
    if (!h) return;
    for (int i = 0; i < h->n_groups; i++) free(h->groups[i]);
    free(h->groups);
    if (h->file >= 0) H5Fclose(h->file);
    free(h);
}

int imp_h5_n_groups(const imp_h5 *h) { return h->n_groups; }

static hid_t location(imp_h5 *h, int g) { return h->n_groups ? H5Gopen2(h->file, h->groups[g], H5P_DEFAULT) : h->file; }

int imp_h5_has(imp_h5 *h, int g, const char *name)
{
    hid_t loc = location(h, g);
    if (loc < 0) return 0;
    /* a dataset of this file: hard links only (an external link, or a soft
     * one leading to it, would open another file) */
    H5L_info_t li;
    int ok = H5Lexists(loc, name, H5P_DEFAULT) > 0 && H5Lget_info(loc, name, &li, H5P_DEFAULT) >= 0 &&
             li.type == H5L_TYPE_HARD;
    if (ok) {
        H5O_info_t oi;
        ok = H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT) >= 0 && oi.type == H5O_TYPE_DATASET;
    }
    if (loc != h->file) H5Gclose(loc);
    return ok;
}

/* Storage HDF5 would read for the dataset: data in this file only (no
 * external or virtual sources), chunks within the input limit. */
static int storage_check(hid_t ds, int nd, size_t n, size_t esize, const char *what)
{
    hid_t pl = H5Dget_create_plist(ds);
    if (pl < 0) return imp_fail(IMP_ERR_FORMAT, "%s: unreadable dataset properties", what);
    int st = IMP_OK;
    H5D_layout_t lay = H5Pget_layout(pl);
    if (lay == H5D_VIRTUAL || H5Pget_external_count(pl) != 0)
        st = imp_fail(IMP_ERR_UNSUPPORTED, "%s: data stored outside the file (external or virtual dataset)", what);
    else if (lay == H5D_CHUNKED) {
        hsize_t ch[H5S_MAX_RANK];
        int cn = H5Pget_chunk(pl, H5S_MAX_RANK, ch);
        size_t n = 1, ts = 0;
        hid_t ty = H5Dget_type(ds);
        if (ty >= 0) ts = H5Tget_size(ty), H5Tclose(ty);
        if (cn != nd || ts == 0) st = imp_fail(IMP_ERR_FORMAT, "%s: unreadable chunk layout", what);
        for (int i = 0; !st && i < cn; i++)
            if (ch[i] > SIZE_MAX || !imp_size_mul(n, (size_t)ch[i], &n)) n = SIZE_MAX;
        if (!st) st = imp_input_budget(n, ts, what);
    } else if (lay == H5D_COMPACT) {
        /* compact data live in the layout message, written whole at creation:
         * fewer bytes than the shape needs made libhdf5 copy from NULL */
        hsize_t have = H5Dget_storage_size(ds);
        if (n > SIZE_MAX / esize || have != (hsize_t)(n * esize))
            st = imp_fail(IMP_ERR_FORMAT, "%s: compact storage holds %llu bytes, the shape needs %zu x %zu", what,
                          (unsigned long long)have, n, esize);
    } else if (lay < 0) {
        st = imp_fail(IMP_ERR_FORMAT, "%s: unreadable dataset layout", what);
    }
    H5Pclose(pl);
    return st;
}

int imp_h5_read(imp_h5 *h, int g, const char *name, double **data, int *ndim, size_t shape[3])
{
    *data = NULL;
    const char *where = h->n_groups ? h->groups[g] : "/";
    if (!imp_h5_has(h, g, name))
        return imp_fail(IMP_ERR_NOT_FOUND, "%s: no dataset '%s' in %s", h->path, name, where);
    hid_t loc = location(h, g);
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT), sp = ds >= 0 ? H5Dget_space(ds) : -1;
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : -1;
    int st = IMP_OK;
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    H5T_class_t cls = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
    hsize_t dims[3] = {1, 1, 1};
    if (nd < 0) st = imp_fail(IMP_ERR_FORMAT, "%s: %s/%s: unreadable dataset", h->path, where, name);
    else if (nd < 1 || nd > 3)
        st = imp_fail(IMP_ERR_SHAPE, "%s: %s/%s: %d dimensions, need 1 to 3 (steps, columns)", h->path, where, name, nd);
    else if (cls != H5T_FLOAT && cls != H5T_INTEGER && cls != H5T_ENUM)
        st = imp_fail(IMP_ERR_SHAPE, "%s: %s/%s: not numbers (HDF5 class %d)", h->path, where, name, (int)cls);
    size_t n = 1;
    char what[600];
    snprintf(what, sizeof what, "%s: %s%s%s", h->path, h->n_groups ? where : "", h->n_groups ? "/" : "", name);
    if (!st && H5Sget_simple_extent_dims(sp, dims, NULL) < 0) st = imp_fail(IMP_ERR_FORMAT, "%s: unreadable shape", what);
    /* a stored number's size: libhdf5 sizes its conversion buffer by it */
    size_t esize = st ? 0 : H5Tget_size(ty);
    if (!st && (esize == 0 || esize > 16))
        st = imp_fail(IMP_ERR_FORMAT, "%s: numbers of %zu bytes each (a number takes 1 to 16)", what, esize);
    /* the declared size, before anything is read or allocated */
    for (int i = 0; !st && i < nd; i++)
        if (dims[i] > SIZE_MAX || !imp_size_mul(n, (size_t)dims[i], &n)) n = SIZE_MAX;
    if (!st) st = imp_input_budget(n, sizeof(double), what);
    if (!st) st = storage_check(ds, nd, n, esize, what);
    double *d = NULL;
    if (!st && !(d = malloc((n ? n : 1) * sizeof *d))) st = imp_fail(IMP_ERR_NOMEM, "%s/%s: out of memory", where, name);
    if (!st && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d) < 0)
        st = imp_fail(IMP_ERR_FORMAT, "%s: %s/%s: cannot read as numbers", h->path, where, name);
    if (!st) st = imp_check_finite(d, n, name);
    if (ty >= 0) H5Tclose(ty);
    if (sp >= 0) H5Sclose(sp);
    if (ds >= 0) H5Dclose(ds);
    if (loc >= 0 && loc != h->file) H5Gclose(loc);
    if (st) {
        free(d);
        return st;
    }
    *data = d;
    *ndim = nd;
    for (int i = 0; i < 3; i++) shape[i] = i < nd ? (size_t)dims[i] : 1;
    return IMP_OK;
}

static herr_t list_names(hid_t loc, const char *name, const H5L_info_t *info, void *user)
{
    (void)loc, (void)info;
    char *buf = user;
    size_t l = strlen(buf);
    if (l + strlen(name) + 3 < 400) snprintf(buf + l, 400 - l, "%s%s", l ? ", " : "", name);
    return 0;
}

void imp_h5_list(const imp_h5 *h, char *buf, size_t cap)
{
    char names[400] = "";
    hid_t loc = h->n_groups ? H5Gopen2(h->file, h->groups[0], H5P_DEFAULT) : h->file;
    if (loc >= 0) H5Literate(loc, H5_INDEX_NAME, H5_ITER_INC, NULL, list_names, names);
    if (loc >= 0 && loc != h->file) H5Gclose(loc);
    if (h->n_groups) snprintf(buf, cap, "%d groups (%s, ...), datasets in %s: %s", h->n_groups, h->groups[0], h->groups[0], names);
    else snprintf(buf, cap, "datasets: %s", names);
}
