/* An HDF5 file built in memory (the core driver, H5Pset_fapl_core) from a
 * byte description, for the structure-aware HDF5 harness (fuzz_hdf5.c) and
 * the seed generator (gen_hdf5.c). Mutating an HDF5 file's bytes mostly
 * gives a file libhdf5 refuses; mutating the description gives valid files
 * with fuzzer-chosen layouts, dtypes, shapes (up to 2^32 and beyond), storage
 * layouts, fill values and values. Reading past the end gives zeros.
 *
 *   byte  layout: bit 0 one group per trajectory (else datasets at the
 *         root), bits 1-2 groups - 1, bit 3 names run<9-g> (natural order
 *         differs from creation order) instead of traj<g>, bit 4 one more
 *         object (a dataset "note" beside the groups, or a group "extra" beside
 *         root datasets)
 *   per group (or once at the root), per dataset qpos, qvel, contact, time:
 *     byte  dtype % 10: absent, f64, f32, i32, u8, i64, u64, enum, string,
 *           big-endian f64
 *     byte  rank % 5 (0: scalar, 4: too many)
 *     rank bytes  dimensions (fuzz_h5_dim)
 *     byte  storage % 4: contiguous, chunked, compact, chunked + deflate;
 *           bit 2: a fill value (next byte, fuzz_h5_value); bit 3: values
 *           written (one byte each, fuzz_h5_value; at most 4096 of them)
 *   byte  import options: bit 0 --finite-differences, bit 1 --dt (next
 *         byte), bits 2-4 the --q name (FUZZ_H5_Q), bits 5-6 --bodies (0: default)
 */
#ifndef IMPULSE_FUZZ_H5_H
#define IMPULSE_FUZZ_H5_H

#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fuzz_bytes {
    const uint8_t *p;
    size_t n;
} fuzz_bytes;

static inline uint8_t fuzz_u8(fuzz_bytes *b)
{
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

/* Small dimensions, and the sizes hostile files declare. */
static inline hsize_t fuzz_h5_dim(uint8_t v)
{
    static const hsize_t big[] = {0, (hsize_t)1 << 32, ((hsize_t)1 << 32) + 1, 100000000, (hsize_t)1 << 31,
                                  65536, (hsize_t)1 << 62, 1000, 3000000};
    return v < 0xF0 ? (hsize_t)(v % 40) : big[(v - 0xF0) % (sizeof big / sizeof big[0])];
}

/* Values in steps of 1/8, and the non-finite and extreme ones. */
static inline double fuzz_h5_value(uint8_t v)
{
    static const double special[] = {NAN, INFINITY, -INFINITY, 1e308, -1e308, 1e-310, 4294967296.0, -1.0};
    return v < 0xF0 ? (v - 120) / 8.0 : special[(v - 0xF0) % 8];
}

static const char *const FUZZ_H5_Q[8] = {NULL, "qpos[0]", "qpos[0:2]", "qpos,qvel", "qpos[1,0]", "time", "qpos[0,0]",
                                         "qvel[0]"};
static const char *const FUZZ_H5_DS[4] = {"qpos", "qvel", "contact", "time"};

static inline hid_t fuzz_h5_type(int k)
{
    switch (k) {
    case 1: return H5Tcopy(H5T_IEEE_F64LE);
    case 2: return H5Tcopy(H5T_IEEE_F32LE);
    case 3: return H5Tcopy(H5T_STD_I32LE);
    case 4: return H5Tcopy(H5T_STD_U8LE);
    case 5: return H5Tcopy(H5T_STD_I64LE);
    case 6: return H5Tcopy(H5T_STD_U64LE);
    case 7: {
        hid_t t = H5Tenum_create(H5T_NATIVE_SCHAR);
        signed char a = 0, b = 1;
        H5Tenum_insert(t, "no", &a);
        H5Tenum_insert(t, "yes", &b);
        return t;
    }
    case 8: {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, 8);
        return t;
    }
    default: return H5Tcopy(H5T_IEEE_F64BE);
    }
}

static inline void fuzz_h5_dataset(hid_t loc, const char *name, fuzz_bytes *b)
{
    int kind = fuzz_u8(b) % 10;
    if (!kind) return;
    int rank = fuzz_u8(b) % 5;
    hsize_t dims[4] = {1, 1, 1, 1}, chunk[4] = {1, 1, 1, 1};
    size_t n = 1;
    int huge = 0;
    for (int i = 0; i < rank; i++) {
        dims[i] = fuzz_h5_dim(fuzz_u8(b));
        chunk[i] = dims[i] ? (dims[i] < 16 ? dims[i] : 16) : 1;
        if (dims[i] > 4096) huge = 1;
        else n *= (size_t)dims[i];
    }
    uint8_t storage = fuzz_u8(b);
    double fill = (storage & 4) ? fuzz_h5_value(fuzz_u8(b)) : 0.0;
    int write = (storage & 8) && !huge && n <= 4096;
    double *vals = NULL;
    if (write && (vals = malloc((n ? n : 1) * sizeof *vals)))
        for (size_t i = 0; i < n; i++) vals[i] = fuzz_h5_value(fuzz_u8(b));
    hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t ty = fuzz_h5_type(kind), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int layout = storage % 4;
    if (layout == 2) H5Pset_layout(dcpl, H5D_COMPACT);
    else if (layout != 0 && rank) {
        H5Pset_chunk(dcpl, rank, chunk);
        if (layout == 3) H5Pset_deflate(dcpl, 1);
    }
    if (storage & 4) H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
    hid_t ds = H5Dcreate2(loc, name, ty, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (ds >= 0 && vals) H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals);
    if (ds >= 0) H5Dclose(ds);
    free(vals);
    H5Pclose(dcpl);
    H5Tclose(ty);
    H5Sclose(sp);
}

/* The file described by b as a malloc'd image (*img, *len); 0 on success. */
static inline int fuzz_h5_build(fuzz_bytes *b, unsigned char **img, size_t *len)
{
    *img = NULL;
    *len = 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 16, 0);
    hid_t f = H5Fcreate("fuzz-in-memory.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f < 0) return -1;
    uint8_t layout = fuzz_u8(b);
    int grouped = layout & 1, n_groups = grouped ? 1 + ((layout >> 1) & 3) : 1;
    for (int g = 0; g < n_groups; g++) {
        char gname[32];
        snprintf(gname, sizeof gname, (layout & 8) ? "run%d" : "traj%d", (layout & 8) ? 9 - g : g);
        hid_t loc = grouped ? H5Gcreate2(f, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : f;
        if (loc < 0) continue;
        for (int k = 0; k < 4; k++) fuzz_h5_dataset(loc, FUZZ_H5_DS[k], b);
        if (loc != f) H5Gclose(loc);
    }
    if (layout & 16) {
        if (grouped) {
            hid_t sp = H5Screate(H5S_SCALAR);
            hid_t ds = H5Dcreate2(f, "note", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (ds >= 0) H5Dclose(ds);
            H5Sclose(sp);
        } else {
            hid_t g = H5Gcreate2(f, "extra", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (g >= 0) H5Gclose(g);
        }
    }
    int st = -1;
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0) {
        ssize_t n = H5Fget_file_image(f, NULL, 0);
        if (n > 0 && (*img = malloc((size_t)n)) && H5Fget_file_image(f, *img, (size_t)n) == n) *len = (size_t)n, st = 0;
    }
    H5Fclose(f);
    if (st) free(*img), *img = NULL;
    return st;
}

#endif
