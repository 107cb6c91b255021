/* Seed generator for the HDF5 fuzz harnesses: writes the byte descriptions
 * of fuzz_h5.h to tests/fuzz/corpus/hdf5/ (seeds of fuzz_hdf5), and to
 * tests/fuzz/corpus/import/ (seeds of fuzz_import) the same descriptions
 * after an options line "f=h5 ..." (NAME.h5desc) and the HDF5 files they
 * build after "f=h5raw ..." (NAME.h5, imported when FUZZ_RAW_HDF5=1; also
 * plain HDF5 files for `impulse import` after the line). Root-level and
 * grouped layouts, float32/64,
 * integer labels, 3-d arrays, chunked and deflated storage, fill values, and
 * the declared sizes of hostile files. Build and run from the source tree:
 *
 *   cc -std=c11 -Wall -I/usr/include/hdf5/serial tests/fuzz/gen_hdf5.c \
 *      -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lm -o /tmp/gen_hdf5
 *   /tmp/gen_hdf5 tests/fuzz/corpus
 */
#include "fuzz_h5.h"

typedef struct desc {
    uint8_t b[4096];
    size_t n;
} desc;

static void put(desc *d, int v) { d->b[d->n++] = (uint8_t)v; }
/* a value v (a multiple of 1/8 in [-15, 14.875]) as fuzz_h5_value reads it */
static void putv(desc *d, double v) { put(d, (int)(v * 8.0 + 120.5)); }

/* dataset header: dtype, rank, dims, storage */
static void ds(desc *d, int dtype, int rank, const int *dims, int storage)
{
    put(d, dtype);
    put(d, rank);
    for (int i = 0; i < rank; i++) put(d, dims[i]);
    put(d, storage);
}

/* a falling ball bouncing on the floor, T samples of 1/8 s, as qpos qvel contact time */
static void ball(desc *d, int T, int qtype, int with_qvel, int storage)
{
    double q[64], v[64];
    int c[64];
    double x = 6.0, u = 0.0, h = 0.125;
    for (int t = 0; t < T; t++) {
        q[t] = x, v[t] = u, c[t] = 0;
        u -= 8.0 * h;
        x += u * h;
        if (x < 0) x = -x, u = -u * 0.75, c[t] = 1;
    }
    int dims[2] = {T, 1};
    ds(d, qtype, 2, dims, storage | 8);
    for (int t = 0; t < T; t++) putv(d, q[t]);
    if (with_qvel) {
        ds(d, 1, 2, dims, 8);
        for (int t = 0; t < T; t++) putv(d, v[t]);
    } else {
        put(d, 0);
    }
    ds(d, 3, 2, dims, 8);
    for (int t = 0; t < T; t++) putv(d, c[t]);
    ds(d, 1, 1, dims, 8);
    for (int t = 0; t < T; t++) putv(d, t * h);
}

static int write_file(const char *dir, const char *sub, const char *name, const void *a, size_t na, const void *b,
                      size_t nb)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f) return perror(path), 1;
    int bad = fwrite(a, 1, na, f) != na || (nb && fwrite(b, 1, nb, f) != nb);
    return (fclose(f) != 0) | bad;
}

/* Both seeds of one description whose options byte is opt (and dt byte). */
static int emit(const char *dir, const char *name, desc *d, int opt, int dtb)
{
    put(d, opt);
    if (opt & 2) put(d, dtb);
    fuzz_bytes b = {d->b, d->n};
    unsigned char *img;
    size_t len;
    if (fuzz_h5_build(&b, &img, &len)) return fprintf(stderr, "%s: not built\n", name), 1;
    char line[256], fname[128];
    int k = snprintf(line, sizeof line, "f=h5raw%s", opt & 1 ? " fd" : "");
    if (opt & 2) k += snprintf(line + k, sizeof line - (size_t)k, " dt=%.17g", (dtb + 1) / 64.0);
    if (FUZZ_H5_Q[(opt >> 2) & 7]) k += snprintf(line + k, sizeof line - (size_t)k, " q=%s", FUZZ_H5_Q[(opt >> 2) & 7]);
    if ((opt >> 5) & 3) k += snprintf(line + k, sizeof line - (size_t)k, " bodies=%d", (opt >> 5) & 3);
    snprintf(line + k, sizeof line - (size_t)k, "\n");
    snprintf(fname, sizeof fname, "%s.h5", name);
    int st = write_file(dir, "hdf5", name, d->b, d->n, NULL, 0) ||
             write_file(dir, "import", fname, line, strlen(line), img, len);
    /* the description after "f=h5 ...": the same options */
    char dline[260];
    snprintf(dline, sizeof dline, "f=h5%s", line + 7);
    snprintf(fname, sizeof fname, "%s.h5desc", name);
    st = st || write_file(dir, "import", fname, dline, strlen(dline), d->b, d->n);
    printf("%s: %zu description bytes, %zu file bytes\n", name, d->n, len);
    free(img);
    return st;
}

int main(int argc, char **argv)
{
    if (argc != 2) return fprintf(stderr, "usage: gen_hdf5 CORPUS_DIR\n"), 2;
    const char *dir = argv[1];
    int st = 0;
    desc d;
    /* root layout: qpos qvel contact time of one trajectory */
    d.n = 0, put(&d, 0), ball(&d, 24, 1, 1, 0), st |= emit(dir, "root_ball", &d, 0, 0);
    /* two groups traj0 traj1, float32 positions, no velocities: finite differences */
    d.n = 0, put(&d, 1 | 2);
    for (int g = 0; g < 2; g++) ball(&d, 16, 2, 0, 1);
    st |= emit(dir, "groups_f32_fd", &d, 1, 0);
    /* run9 run8 run7 (natural order), deflated chunks, a dataset beside the groups, --dt */
    d.n = 0, put(&d, 1 | 4 | 8 | 16);
    for (int g = 0; g < 3; g++) ball(&d, 12, 9, 1, 3);
    st |= emit(dir, "groups_natural_deflate", &d, 2, 7);
    /* root, 3-d qpos (2 trajectories of 10 steps, 2 columns) from a fill value, a column selection */
    {
        int dims[3] = {2, 10, 2};
        d.n = 0, put(&d, 0), ds(&d, 1, 3, dims, 1 | 4), putv(&d, 1.5);
        put(&d, 0), put(&d, 0), put(&d, 0), st |= emit(dir, "root_3d_fill", &d, 1 | 2 | (2 << 2), 15);
    }
    /* hostile: qpos declared 2^32 x 2^32 (chunked, nothing stored) */
    {
        int dims[2] = {0xF1, 0xF1};
        d.n = 0, put(&d, 0), ds(&d, 1, 2, dims, 1), put(&d, 0), put(&d, 0), put(&d, 0);
        st |= emit(dir, "hostile_4g_x_4g", &d, 1 | 2, 7);
    }
    /* hostile: qpos declared 1e8 x 4 with a fill value */
    {
        int dims[2] = {0xF3, 4};
        d.n = 0, put(&d, 0), ds(&d, 1, 2, dims, 4), putv(&d, 0.5), put(&d, 0), put(&d, 0), put(&d, 0);
        st |= emit(dir, "hostile_1e8_fill", &d, 1 | 2, 7);
    }
    /* strings where numbers belong, inside a group */
    {
        int dims[2] = {8, 1};
        d.n = 0, put(&d, 1), ds(&d, 8, 2, dims, 0), put(&d, 0), put(&d, 0), put(&d, 0);
        st |= emit(dir, "group_strings", &d, 1 | 2, 7);
    }
    return st;
}
