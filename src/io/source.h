/* Named numeric arrays per trajectory from files not written by impulse:
 * .npz/.npy (numpy), .csv (a header row, one row per sample) and HDF5
 * (datasets at the root or one group per trajectory, as MuJoCo and robotics
 * loggers write qpos/qvel). The reader behind `impulse import`.
 *
 * A name is an array name (npz, HDF5), a .npy file path (npy), or for CSV a
 * column name N, or the columns N0, N1, ... (or N_0, N_1, ...), or several
 * names separated by commas. Any name may end in a column selection:
 * NAME[2], NAME[0:3] (half-open), NAME[0,2]. Arrays are (steps, columns),
 * (steps,) or, for one array holding all trajectories, (trajectories,
 * steps, columns). Every value is read as a double (float32, integers and
 * bools widened); NaN and Inf are rejected naming the array. */
#ifndef IMPULSE_IO_SOURCE_H
#define IMPULSE_IO_SOURCE_H

#include <stddef.h>

typedef struct imp_source imp_source;

/* Format by extension: .npz, .npy, .csv, .h5/.hdf5/.hdf. `traj_key` (CSV:
 * a column whose value changes between trajectories; NULL: a column named
 * "traj", "trajectory" or "episode" if there is one) */
int imp_source_open(imp_source **out, const char *path, const char *traj_key);
void imp_source_free(imp_source *s);
/* Number of trajectories (groups of an HDF5 file, values of the CSV
 * trajectory column; 1 or the leading dimension of 3-d arrays otherwise). */
int imp_source_n_traj(imp_source *s, const char *q_name, int *n);
const char *imp_source_format(const imp_source *s);
/* Trajectory i's array `name` as a malloc'd rows x cols matrix (C order).
 * IMP_ERR_NOT_FOUND (message naming it) when absent. */
int imp_source_get(imp_source *s, const char *name, int traj, double **data, size_t *rows, size_t *cols);
/* 1 if the name exists, 0 if not (no error recorded); the status of any
 * other failure (a malformed name, an array beyond the input limit). */
int imp_source_has(imp_source *s, const char *name);
/* One line listing the arrays/columns found (for messages), into buf. */
void imp_source_list(const imp_source *s, char *buf, size_t cap);

/* Format back-ends (src/io/source_csv.c, src/io/source_hdf5.c). */
typedef struct imp_csv {
    int n_cols;
    size_t n_rows;
    char **names;   /* n_cols */
    double *values; /* n_rows x n_cols */
} imp_csv;
int imp_csv_read(imp_csv *out, const char *path);
void imp_csv_free(imp_csv *c);

typedef struct imp_h5 imp_h5;
int imp_h5_open(imp_h5 **out, const char *path);
void imp_h5_close(imp_h5 *h);
/* Trajectory groups (natural order of names: traj2 before traj10); 0 when the
 * datasets are at the root. */
int imp_h5_n_groups(const imp_h5 *h);
/* Dataset `name` of group g (or the root when there are no groups) as
 * doubles, ndim <= 3 with its shape. */
int imp_h5_read(imp_h5 *h, int g, const char *name, double **data, int *ndim, size_t shape[3]);
int imp_h5_has(imp_h5 *h, int g, const char *name);
void imp_h5_list(const imp_h5 *h, char *buf, size_t cap);

#endif
