/* impulse files: .npy / .npz that numpy.load opens with no help from us.
 *
 * An imp_npz is an in-memory, ordered set of named arrays. Writers add arrays
 * (the data are copied) and save atomically (temp file + fsync + rename);
 * readers load a whole file, validating every header, and then ask for
 * arrays by name with an expected dtype and shape.
 *
 * Metadata (system, parameters, seed, tool version, ...) is a JSON text
 * stored as the 0-d unicode array "meta" (dtype '<U<n>'), so that
 * `json.loads(str(np.load(f)["meta"]))` returns it without pickle.
 */
#ifndef IMPULSE_IO_H
#define IMPULSE_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_NPY_MAX_DIMS 8

typedef enum imp_dtype {
    IMP_F64 = 0, /* '<f8' */
    IMP_F32,     /* '<f4' (read, converted to double on request) */
    IMP_I64,     /* '<i8' */
    IMP_I32,     /* '<i4' */
    IMP_U8,      /* '|u1' */
    IMP_BOOL,    /* '|b1' */
    IMP_UNICODE  /* '<U<n>' (UTF-32LE), used for metadata strings */
} imp_dtype;

/* "float64", "float32", "int64", "int32", "uint8", "bool", "unicode string". */
const char *imp_dtype_name(imp_dtype dt);

typedef struct imp_npy_array {
    char *name;                      /* member name without ".npy" */
    imp_dtype dtype;
    size_t item_size;                /* bytes per element */
    int ndim;
    size_t shape[IMP_NPY_MAX_DIMS];
    size_t count;                    /* product of shape (1 for 0-d) */
    void *data;                      /* count * item_size bytes, C order, native little-endian */
} imp_npy_array;

typedef struct imp_npz imp_npz;

imp_npz *imp_npz_new(void);
void imp_npz_free(imp_npz *z);

/* Add a copy of an array; replaces an existing member of the same name. */
int imp_npz_add_f64(imp_npz *z, const char *name, int ndim, const size_t *shape, const double *data);
int imp_npz_add_i64(imp_npz *z, const char *name, int ndim, const size_t *shape, const int64_t *data);
/* Add a 0-d unicode string member (ASCII/UTF-8 input). */
int imp_npz_add_string(imp_npz *z, const char *name, const char *text);
/* Shorthand for imp_npz_add_string(z, "meta", json). */
int imp_npz_set_meta(imp_npz *z, const char *json);

/* Atomic write: path.tmp.<pid> then rename; on failure the old file is intact. */
int imp_npz_save(const imp_npz *z, const char *path);
/* Load a whole .npz (stored or deflated members). Fails with IMP_ERR_FORMAT on
 * truncated or malformed archives or .npy headers, IMP_ERR_IO if unreadable. */
int imp_npz_load(imp_npz **out, const char *path);

size_t imp_npz_count(const imp_npz *z);
const imp_npy_array *imp_npz_at(const imp_npz *z, size_t i);
/* NULL if absent (no error recorded). */
const imp_npy_array *imp_npz_find(const imp_npz *z, const char *name);

/* Fetch a float64 array by name, checking it. `ndim` must match; each
 * expect_shape[i] must match unless it is 0 (any). Integer and f32 arrays are
 * rejected (IMP_ERR_SHAPE, naming the dtype found). NaN/Inf are rejected with
 * IMP_ERR_NUMERIC naming the array. Missing -> IMP_ERR_NOT_FOUND. On success
 * *data points into z (valid until imp_npz_free) and shape_out (may be NULL)
 * receives the shape. */
int imp_npz_get_f64(const imp_npz *z, const char *name, int ndim, const size_t *expect_shape,
                    const double **data, size_t *shape_out);
/* Convert every float32 member to float64 in place (exact), so that the
 * getters above accept arrays a user saved in single precision. */
int imp_npz_widen_f32(imp_npz *z);
/* The same, counting the members converted in *n_widened (may be NULL), for
 * the caller to say that single-precision data were converted. */
int imp_npz_widen_f32_count(imp_npz *z, int *n_widened);
/* Same for int64 (accepts i32/u8/bool too, converting into a new buffer the
 * caller frees). */
int imp_npz_get_i64_copy(const imp_npz *z, const char *name, int ndim, const size_t *expect_shape,
                         int64_t **data, size_t *shape_out);
/* Read a 0-d unicode member back as a malloc'd UTF-8/ASCII string. */
int imp_npz_get_string(const imp_npz *z, const char *name, char **text);
/* The "meta" JSON, or NULL if absent. Pointer valid until imp_npz_free. */
const char *imp_npz_meta(const imp_npz *z);

/* Add a copy of any array (any supported dtype; a->name is ignored). */
int imp_npz_add_array(imp_npz *z, const char *name, const imp_npy_array *a);
/* Parse / build a whole .npz image in memory (used by load/save and the fuzzer). */
int imp_npz_parse(imp_npz **out, const unsigned char *buf, size_t len, const char *what);
int imp_npz_serialise(const imp_npz *z, unsigned char **out, size_t *out_len);

/* Single .npy files. */
int imp_npy_save(const char *path, const imp_npy_array *a);
int imp_npy_save_f64(const char *path, int ndim, const size_t *shape, const double *data);
int imp_npy_load(imp_npy_array *out, const char *path);
void imp_npy_array_clear(imp_npy_array *a);

/* Parse a .npy image held in memory (used by the npz reader and the fuzzer). */
int imp_npy_parse(imp_npy_array *out, const unsigned char *buf, size_t len, const char *what);

/* Check the structure of a MATLAB level-5 MAT file image before a MAT
 * reader (libmatio) sees it: every element's declared size against the
 * bytes present, each array's dimensions against its data, compressed
 * variables inflated within imp_input_limit(). IMP_ERR_FORMAT names the
 * byte offset ("truncated or corrupt MAT file: ..."); IMP_ERR_UNSUPPORTED
 * for v7.3 (HDF5) files and classes other than numeric, char, cell, struct. */
int imp_mat5_check(const unsigned char *buf, size_t len, const char *what);

/* Write bytes atomically (temp + fsync + rename). */
int imp_write_file_atomic(const char *path, const void *data, size_t len);
/* Read a whole file into a malloc'd buffer (NUL-terminated for convenience). */
int imp_read_file(const char *path, unsigned char **data, size_t *len);

/* ---- Minimal JSON writer, for metadata and `--json` outputs. ----
 * Builds text in a growing buffer; keys and strings are escaped; doubles are
 * printed with the shortest of %.15g/%.16g/%.17g that round-trips exactly
 * (non-finite -> null). */
typedef struct imp_json {
    char *buf;
    size_t len, cap;
    int need_comma;
    int failed;
} imp_json;

void imp_json_init(imp_json *j);
void imp_json_free(imp_json *j);
void imp_json_begin_object(imp_json *j);
void imp_json_end_object(imp_json *j);
void imp_json_begin_array(imp_json *j);
void imp_json_end_array(imp_json *j);
void imp_json_key(imp_json *j, const char *key);
void imp_json_string(imp_json *j, const char *s);
void imp_json_number(imp_json *j, double x);
void imp_json_int(imp_json *j, long long x);
void imp_json_bool(imp_json *j, int b);
void imp_json_null(imp_json *j);
/* key + value shorthands */
void imp_json_kv_string(imp_json *j, const char *key, const char *s);
void imp_json_kv_number(imp_json *j, const char *key, double x);
void imp_json_kv_int(imp_json *j, const char *key, long long x);
/* Insert an already-encoded JSON value (object, array, number...) verbatim,
 * e.g. one produced by another imp_json. The caller vouches for it. */
void imp_json_raw(imp_json *j, const char *json_value);
/* Returns the text (owned by j) or NULL if an allocation failed. */
const char *imp_json_text(const imp_json *j);

/* Tiny JSON reader for our own metadata: find a top-level number or string
 * by key. Returns IMP_ERR_NOT_FOUND if absent. */
int imp_json_get_number(const char *json, const char *key, double *out);
/* A number that must be an integer in [lo, hi] (2.5, 1e300, NaN fail,
 * naming the key and the value as written). */
int imp_json_get_int(const char *json, const char *key, int lo, int hi, int *out);
int imp_json_get_string(const char *json, const char *key, char *out, size_t cap);
/* The text of a top-level scalar value ("2000", "1e18", "true", "null") of
 * `key`, for strict number parsing (core/num.h); IMP_ERR_SHAPE if the value
 * is a string, object or list. */
int imp_json_get_token(const char *json, const char *key, char *out, size_t cap);
/* The whole text is one well-formed JSON object; otherwise IMP_ERR_FORMAT
 * "WHAT: malformed JSON value at byte N ('NaN')". */
int imp_json_check_object(const char *json, const char *what);

#ifdef __cplusplus
}
#endif
#endif
