/* Typed fields of a file's "meta" JSON, read strictly: each getter fails
 * with a message naming the field and the value as written ("meta: hidden:
 * 1e+18 is out of range [1, 4096]", "meta: activation: JSON value is not a
 * string", "meta: 'dt' is missing"). Integers are parsed from their text
 * (core/num.h), never through a truncating conversion. Internal. */
#ifndef IMPULSE_IO_META_H
#define IMPULSE_IO_META_H

#include <stddef.h>
#include <stdint.h>

int imp_meta_string(const char *meta, const char *key, char *out, size_t cap);
int imp_meta_int(const char *meta, const char *key, int lo, int hi, int *out);
int imp_meta_int64(const char *meta, const char *key, int64_t lo, int64_t hi, int64_t *out);
/* A finite number in [lo, hi]. */
int imp_meta_double(const char *meta, const char *key, double lo, double hi, double *out);

/* FNV-1a 64 over bytes, continuing from h (start with IMP_FNV_START): the
 * checksums of checkpoints and the data fingerprint of training states. */
#define IMP_FNV_START 0xcbf29ce484222325ull
uint64_t imp_fnv1a(const void *data, size_t len, uint64_t h);

#endif
