/* Hostile .mat files: every truncation of a small scipy-written file, the
 * compressed bombs (a changed dimension, a declared size beyond the input
 * limit, a huge stream) and an empty file each fail with a clear message,
 * in the library and through `impulse impact export`; never a signal. */
#define _GNU_SOURCE
#include "impulse/core.h"
#include "impulse/impact.h"
#include "impulse/io.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define FIXTURES IMPULSE_SOURCE_DIR "/tests/data"

static unsigned char *slurp(const char *path, size_t *len)
{
    unsigned char *b = NULL;
    if (imp_read_file(path, &b, len)) return NULL;
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t len)
{
    remove(path); /* rewriting through O_TRUNC makes ext4 flush each time */
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(b, 1, len, f);
    fclose(f);
}

/* Run the CLI; stdout+stderr into out; the exit code, or -1 for a signal. */
static int run(const char *command, char *out, size_t cap) { return test_run_command(command, out, cap); }

static int one_error_line(const char *out)
{
    const char *nl = strchr(out, '\n');
    return strncmp(out, "impulse impact export: error: ", 30) == 0 && nl && nl[1] == '\0';
}

static void test_valid(void)
{
    imp_impact_set a, b;
    CHECK_OK(imp_impact_load_mat(&a, FIXTURES "/impact_small.mat"));
    CHECK_OK(imp_impact_load_mat(&b, FIXTURES "/impact_small_z.mat"));
    CHECK(a.count == 20 && b.count == 20);
    if (a.count == 20 && b.count == 20)
        CHECK(memcmp(a.pre, b.pre, 20 * 6 * sizeof(double)) == 0 && memcmp(a.d, b.d, 20 * 3 * sizeof(double)) == 0);
    imp_impact_set_free(&a);
    imp_impact_set_free(&b);
}

/* Every prefix of the file fails (no zeros read in, no crash). */
static void test_truncations(const char *fixture)
{
    size_t len;
    unsigned char *buf = slurp(fixture, &len);
    CHECK(buf != NULL);
    if (!buf) return;
    int accepted = 0, unclear = 0;
    for (size_t L = 0; L < len; L++) {
        spit("test_mat_trunc.mat", buf, L);
        imp_impact_set s;
        imp_clear_error();
        int st = imp_impact_load_mat(&s, "test_mat_trunc.mat");
        if (st == IMP_OK) {
            accepted++;
            imp_impact_set_free(&s);
            continue;
        }
        /* exactly the header: a valid file without variables */
        int ok = L == 128 ? strstr(imp_last_error(), "'data' missing") != NULL
                          : strstr(imp_last_error(), "truncated") != NULL;
        if (!ok && unclear++ < 3) fprintf(stderr, "length %zu: %s\n", L, imp_last_error());
    }
    CHECK_MSG(accepted == 0, "%s: %d truncations accepted", fixture, accepted);
    CHECK_MSG(unclear == 0, "%s: %d truncations without 'truncated' in the message", fixture, unclear);
    /* the lengths that crashed (192-224) and read as zeros (2856-3332) in
     * the outside test, through the CLI */
    static const size_t cuts[] = {192, 200, 224, 2856, 3000, 3332};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        if (cuts[k] >= len) continue;
        spit("test_mat_trunc.mat", buf, cuts[k]);
        char out[1024];
        int rc = run(IMPULSE_CLI_PATH " impact export --data test_mat_trunc.mat --out test_mat_out.npz", out, sizeof out);
        CHECK_MSG(rc == 1 && one_error_line(out) && strstr(out, "truncated"), "cut %zu: rc %d: %s", cuts[k], rc, out);
    }
    free(buf);
}

/* The inflated variable of a compressed fixture, edited, then recompressed. */
static int recompress(const unsigned char *file, size_t len, unsigned char *inflated, size_t ilen, const char *path)
{
    uLongf clen = compressBound(ilen);
    unsigned char *out = malloc(136 + clen);
    if (!out || compress(out + 136, &clen, inflated, ilen) != Z_OK) {
        free(out);
        return -1;
    }
    memcpy(out, file, 128);
    uint32_t tag[2] = {15, (uint32_t)clen};
    memcpy(out + 128, tag, 8);
    spit(path, out, 136 + clen);
    free(out);
    (void)len;
    return 0;
}

static unsigned char *find_i32s(unsigned char *b, size_t n, const int32_t *pat, size_t k)
{
    for (size_t i = 0; i + 4 * k <= n; i++)
        if (memcmp(b + i, pat, 4 * k) == 0) return b + i;
    return NULL;
}

static void expect_fail(const char *path, const char *part)
{
    imp_impact_set s;
    imp_clear_error();
    int st = imp_impact_load_mat(&s, path);
    CHECK_MSG(st != IMP_OK && strstr(imp_last_error(), part), "%s: %d '%s', want '%s'", path, st, imp_last_error(), part);
    if (!st) imp_impact_set_free(&s);
}

static void test_bombs(void)
{
    size_t len;
    unsigned char *file = slurp(FIXTURES "/impact_small_z.mat", &len);
    CHECK(file != NULL);
    if (!file) return;
    uint32_t clen;
    memcpy(&clen, file + 132, 4);
    uLongf ilen = 1 << 16;
    unsigned char *inflated = malloc(ilen);
    CHECK(clen <= len - 136 && uncompress(inflated, &ilen, file + 136, clen) == Z_OK);

    /* states_i declares 2^31-1 rows (its 20x6 data stay) */
    unsigned char *copy = malloc(ilen);
    memcpy(copy, inflated, ilen);
    unsigned char *d = find_i32s(copy, ilen, (const int32_t[]){5, 8, 20, 6}, 4);
    CHECK(d != NULL);
    if (d) {
        int32_t big = INT32_MAX;
        memcpy(d + 8, &big, 4);
        recompress(file, len, copy, ilen, "test_mat_bomb.mat");
        expect_fail("test_mat_bomb.mat", "declares");
    }
    /* the struct 'data' declares 2^31-1 x 2^31-1 elements (it crashed libmatio) */
    memcpy(copy, inflated, ilen);
    d = find_i32s(copy, ilen, (const int32_t[]){5, 8, 1, 1}, 4);
    CHECK(d != NULL);
    if (d) {
        int32_t big[2] = {INT32_MAX, INT32_MAX};
        memcpy(d + 8, big, 8);
        recompress(file, len, copy, ilen, "test_mat_bomb.mat");
        expect_fail("test_mat_bomb.mat", "declares");
    }
    free(copy);

    /* a compressed variable of 64 MiB of zeros (consistent sizes) against a
     * limit of 8 MiB: refused from its tag, before inflating */
    size_t n = (size_t)8 << 20, zbytes = 8 * n;
    unsigned char head[64];
    uint32_t w[] = {14, 0, 6, 8, 6, 0, 5, 8, 1, (uint32_t)n, (4u << 16) | 1u, 0, 9, (uint32_t)zbytes};
    memcpy(head, w, sizeof w);
    memcpy(head + 44, "data", 4);
    uint32_t mlen = (uint32_t)(sizeof w - 8 + zbytes);
    memcpy(head + 4, &mlen, 4);
    unsigned char *zeros = calloc(1, zbytes + sizeof w);
    memcpy(zeros, head, sizeof w);
    uLongf zl = compressBound(zbytes + sizeof w);
    unsigned char *zout = malloc(136 + zl);
    CHECK(compress2(zout + 136, &zl, zeros, zbytes + sizeof w, 1) == Z_OK);
    memcpy(zout, file, 128);
    uint32_t tag[2] = {15, (uint32_t)zl};
    memcpy(zout + 128, tag, 8);
    spit("test_mat_zeros.mat", zout, 136 + zl);
    imp_set_input_limit((size_t)8 << 20);
    expect_fail("test_mat_zeros.mat", "input limit");
    imp_set_input_limit(0);
    char out[1024];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = run("IMPULSE_MAX_INPUT_BYTES=8388608 " IMPULSE_CLI_PATH
                 " impact export --data test_mat_zeros.mat --out test_mat_out.npz", out, sizeof out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK_MSG(rc == 1 && one_error_line(out) && strstr(out, "input limit"), "rc %d: %s", rc, out);
    CHECK_MSG(secs < 5, "%.1f s", secs);
    free(zeros);
    free(zout);
    free(inflated);
    free(file);
}

static void test_empty(void)
{
    expect_fail(FIXTURES "/impact_empty.mat", "data.states_i: empty");
    spit("test_mat_trunc.mat", (const unsigned char *)"", 0);
    expect_fail("test_mat_trunc.mat", "truncated or not a MAT file: 0 bytes");
}

int main(void)
{
    test_valid();
    test_truncations(FIXTURES "/impact_small.mat");
    test_truncations(FIXTURES "/impact_small_z.mat");
    test_bombs();
    test_empty();
    remove("test_mat_trunc.mat");
    remove("test_mat_bomb.mat");
    remove("test_mat_zeros.mat");
    remove("test_mat_out.npz");
    TEST_MAIN_END();
}
