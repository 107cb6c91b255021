/* Tests for the .npy/.npz/JSON/atomic-file layer (include/impulse/io.h),
 * including two-way interop with numpy through /usr/bin/python3. numpy is
 * a declared dependency, so a missing numpy FAILS the interop checks. */
#define _GNU_SOURCE
#include "impulse/core.h"
#include "impulse/io.h"
#include "test.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static const char *tpath(const char *name)
{
    static char buf[4][512];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* Run `/usr/bin/python3 script.py args` and return its stdout (static). */
static const char *run_python(const char *script, const char *args)
{
    static char out[8192];
    out[0] = '\0';
    const char *spath = tpath("script.py");
    FILE *f = fopen(spath, "w");
    if (!f) return out;
    fputs(script, f);
    fclose(f);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s 2>&1", spath, args);
    FILE *p = popen(cmd, "r");
    if (!p) return out;
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    pclose(p);
    return out;
}

static int msg_has(const char *needle) { return strstr(imp_last_error(), needle) != NULL; }

/* ---------- round trips of every dtype ---------- */

static void test_roundtrip_all_dtypes(void)
{
    imp_npz *z = imp_npz_new();
    CHECK(z != NULL);
    double f64[6] = {1.5, -2.25, 0.0, 1e-300, -1e300, 3.141592653589793};
    float f32[3] = {1.5f, -0.25f, 3e38f};
    int64_t i64[4] = {INT64_MIN, -1, 0, INT64_MAX};
    int32_t i32[3] = {INT32_MIN, 7, INT32_MAX};
    uint8_t u8[5] = {0, 1, 127, 128, 255};
    uint8_t b1[4] = {1, 0, 0, 1};
    /* '<U3' 1-d array of two strings, UTF-32LE, NUL padded */
    uint32_t u3[6] = {'a', 'b', 'c', 0x3B5 /* epsilon */, 0, 0};
    size_t s23[2] = {2, 3}, s3[1] = {3}, s4[1] = {4}, s5[1] = {5}, s2[1] = {2}, s0[1] = {0};
    double scalar = 42.0;

    CHECK_OK(imp_npz_add_f64(z, "f64", 2, s23, f64));
    CHECK_OK(imp_npz_add_f64(z, "scalar", 0, NULL, &scalar));
    CHECK_OK(imp_npz_add_f64(z, "empty", 1, s0, NULL));
    CHECK_OK(imp_npz_add_i64(z, "i64", 1, s4, i64));
    imp_npy_array a = {0};
    a.ndim = 1;
    a.dtype = IMP_F32, a.item_size = 4, a.shape[0] = 3, a.count = 3, a.data = f32;
    CHECK_OK(imp_npz_add_array(z, "f32", &a));
    a.dtype = IMP_I32, a.item_size = 4, a.shape[0] = 3, a.count = 3, a.data = i32;
    CHECK_OK(imp_npz_add_array(z, "i32", &a));
    a.dtype = IMP_U8, a.item_size = 1, a.shape[0] = 5, a.count = 5, a.data = u8;
    CHECK_OK(imp_npz_add_array(z, "u8", &a));
    a.dtype = IMP_BOOL, a.item_size = 1, a.shape[0] = 4, a.count = 4, a.data = b1;
    CHECK_OK(imp_npz_add_array(z, "b1", &a));
    a.dtype = IMP_UNICODE, a.item_size = 12, a.shape[0] = 2, a.count = 2, a.data = u3;
    CHECK_OK(imp_npz_add_array(z, "u3", &a));
    CHECK_OK(imp_npz_add_string(z, "note", "mu = \xC2\xB5, \"quoted\""));
    CHECK_OK(imp_npz_add_string(z, "blank", ""));
    CHECK_OK(imp_npz_set_meta(z, "{\"seed\": 7}"));
    /* replacing a member keeps one copy */
    CHECK_OK(imp_npz_set_meta(z, "{\"seed\": 42, \"name\": \"\xCE\xB5\"}"));
    CHECK(imp_npz_count(z) == 12);
    CHECK_OK(imp_npz_save(z, tpath("all.npz")));

    imp_npz *r = NULL;
    CHECK_OK(imp_npz_load(&r, tpath("all.npz")));
    if (!r) {
        imp_npz_free(z);
        return;
    }
    CHECK(imp_npz_count(r) == 12);
    for (size_t i = 0; i < imp_npz_count(z); i++) {
        const imp_npy_array *w = imp_npz_at(z, i), *g = imp_npz_find(r, w->name);
        CHECK_MSG(g != NULL, "member %s", w->name);
        if (!g) continue;
        CHECK(g->dtype == w->dtype && g->item_size == w->item_size && g->ndim == w->ndim && g->count == w->count);
        CHECK(memcmp(g->shape, w->shape, sizeof g->shape) == 0);
        CHECK_MSG(memcmp(g->data, w->data, g->count * g->item_size) == 0, "data of %s", w->name);
    }
    const double *d;
    size_t shape[2];
    CHECK_OK(imp_npz_get_f64(r, "f64", 2, s23, &d, shape));
    CHECK(shape[0] == 2 && shape[1] == 3 && d[5] == f64[5] && d[3] == 1e-300);
    CHECK_OK(imp_npz_get_f64(r, "scalar", 0, NULL, &d, NULL));
    CHECK(d[0] == 42.0);
    CHECK_OK(imp_npz_get_f64(r, "empty", 1, NULL, &d, shape));
    CHECK(shape[0] == 0);
    int64_t *iv = NULL;
    CHECK_OK(imp_npz_get_i64_copy(r, "i32", 1, s3, &iv, NULL));
    CHECK(iv && iv[0] == INT32_MIN && iv[2] == INT32_MAX);
    free(iv);
    CHECK_OK(imp_npz_get_i64_copy(r, "b1", 1, s4, &iv, NULL));
    CHECK(iv && iv[0] == 1 && iv[1] == 0 && iv[3] == 1);
    free(iv);
    CHECK_OK(imp_npz_get_i64_copy(r, "u8", 1, s5, &iv, NULL));
    CHECK(iv && iv[4] == 255);
    free(iv);
    CHECK_OK(imp_npz_get_i64_copy(r, "i64", 1, s4, &iv, NULL));
    CHECK(iv && iv[0] == INT64_MIN && iv[3] == INT64_MAX);
    free(iv);
    char *text = NULL;
    CHECK_OK(imp_npz_get_string(r, "note", &text));
    CHECK(text && strcmp(text, "mu = \xC2\xB5, \"quoted\"") == 0);
    free(text);
    CHECK_OK(imp_npz_get_string(r, "blank", &text));
    CHECK(text && text[0] == '\0');
    free(text);
    CHECK(imp_npz_meta(r) && strcmp(imp_npz_meta(r), "{\"seed\": 42, \"name\": \"\xCE\xB5\"}") == 0);
    CHECK_FAILS(imp_npz_get_string(r, "u3", &text), IMP_ERR_SHAPE); /* 1-d, not a 0-d string */
    (void)s2;
    imp_npz_free(r);

    /* identical content -> identical bytes (fixed timestamps) */
    CHECK_OK(imp_npz_save(z, tpath("all2.npz")));
    unsigned char *b1buf, *b2buf;
    size_t l1, l2;
    CHECK_OK(imp_read_file(tpath("all.npz"), &b1buf, &l1));
    CHECK_OK(imp_read_file(tpath("all2.npz"), &b2buf, &l2));
    CHECK(l1 == l2 && memcmp(b1buf, b2buf, l1) == 0);
    free(b1buf);
    free(b2buf);
    imp_npz_free(z);

    /* invalid UTF-8 input is refused */
    z = imp_npz_new();
    CHECK_FAILS(imp_npz_add_string(z, "bad", "\xC3\x28"), IMP_ERR_INVALID);
    CHECK_FAILS(imp_npz_add_f64(z, "", 0, NULL, &scalar), IMP_ERR_INVALID);
    imp_npz_free(z);
}

static void test_npy_single(void)
{
    double x[3] = {1, 2, 3};
    size_t s[1] = {3};
    CHECK_OK(imp_npy_save_f64(tpath("x.npy"), 1, s, x));
    unsigned char *buf;
    size_t len;
    CHECK_OK(imp_read_file(tpath("x.npy"), &buf, &len));
    /* v1.0 header padded so the data start on a 64-byte boundary */
    size_t data_start = 10 + (size_t)(buf[8] | (buf[9] << 8));
    CHECK(buf[6] == 1 && buf[7] == 0);
    CHECK(data_start % 64 == 0 && buf[data_start - 1] == '\n');
    CHECK(len == data_start + 24);
    free(buf);
    imp_npy_array a;
    CHECK_OK(imp_npy_load(&a, tpath("x.npy")));
    CHECK(a.dtype == IMP_F64 && a.ndim == 1 && a.shape[0] == 3 && ((double *)a.data)[2] == 3.0);
    imp_npy_array_clear(&a);
    CHECK_FAILS(imp_npy_load(&a, tpath("missing.npy")), IMP_ERR_IO);
}

/* ---------- numpy interop ---------- */

static const char *py_check_ours =
    "import sys, json\n"
    "import numpy as np\n"
    "f = np.load(sys.argv[1])\n"
    "assert f['f64'].dtype == np.float64 and f['f64'].shape == (2, 3), f['f64']\n"
    "assert f['f64'][1, 2] == 3.141592653589793 and f['f64'][0, 1] == -2.25\n"
    "assert f['scalar'].shape == () and float(f['scalar']) == 42.0\n"
    "assert f['empty'].shape == (0,)\n"
    "assert f['i64'].dtype == np.int64 and f['i64'][0] == np.iinfo(np.int64).min\n"
    "assert f['f32'].dtype == np.float32 and f['f32'][1] == -0.25\n"
    "assert f['i32'].dtype == np.int32 and f['i32'][2] == 2**31 - 1\n"
    "assert f['u8'].dtype == np.uint8 and list(f['u8']) == [0, 1, 127, 128, 255]\n"
    "assert f['b1'].dtype == np.bool_ and list(f['b1']) == [True, False, False, True]\n"
    "assert list(f['u3']) == ['abc', '\\u03b5'], f['u3']\n"
    "assert str(f['note']) == 'mu = \\u00b5, \"quoted\"'\n"
    "assert str(f['blank']) == ''\n"
    "m = json.loads(str(f['meta']))\n"
    "assert m == {'seed': 42, 'name': '\\u03b5'}, m\n"
    "x = np.load(sys.argv[2])\n"
    "assert list(x) == [1.0, 2.0, 3.0]\n"
    "print('OK')\n";

static const char *py_write =
    "import sys, json\n"
    "import numpy as np\n"
    "d = sys.argv[1]\n"
    "arrs = dict(a=np.arange(12.0).reshape(3, 4) / 7, i=np.array([-5, 6], dtype=np.int64),\n"
    "            s=np.float32([0.5, 2.0]), b=np.array([True, False]), u=np.uint8([9]),\n"
    "            k=np.int32([-3]), meta=np.array(json.dumps({'seed': 3, 'who': '\\u00b5'})))\n"
    "np.savez(d + '/np_stored.npz', **arrs)\n"
    "np.savez_compressed(d + '/np_deflated.npz', **arrs)\n"
    "np.save(d + '/np_fortran.npy', np.asfortranarray(np.ones((2, 3))))\n"
    "np.save(d + '/np_big.npy', np.arange(3, dtype='>f8'))\n"
    "np.save(d + '/np_c16.npy', np.zeros(2, dtype=np.complex128))\n"
    "np.savez_compressed(d + '/np_big_deflated.npz', a=np.linspace(0, 1, 5000))\n"
    "import io, zipfile\n"
    "b = io.BytesIO(); np.save(b, np.arange(10.0)); img = b.getvalue()\n"
    "with zipfile.ZipFile(d + '/trunc_member.npz', 'w') as zf: zf.writestr('cut.npy', img[:-5])\n"
    "print('OK')\n";

static void check_numpy_file(const char *name)
{
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, tpath(name)));
    if (!z) return;
    const double *a;
    size_t e34[2] = {3, 4};
    CHECK_OK(imp_npz_get_f64(z, "a", 2, e34, &a, NULL));
    if (a) CHECK(a[11] == 11.0 / 7 && a[5] == 5.0 / 7);
    int64_t *iv = NULL;
    CHECK_OK(imp_npz_get_i64_copy(z, "i", 1, NULL, &iv, NULL));
    CHECK(iv && iv[0] == -5 && iv[1] == 6);
    free(iv);
    CHECK_OK(imp_npz_get_i64_copy(z, "k", 1, NULL, &iv, NULL));
    CHECK(iv && iv[0] == -3);
    free(iv);
    const imp_npy_array *s = imp_npz_find(z, "s");
    CHECK(s && s->dtype == IMP_F32 && ((float *)s->data)[0] == 0.5f);
    const imp_npy_array *b = imp_npz_find(z, "b");
    CHECK(b && b->dtype == IMP_BOOL && ((uint8_t *)b->data)[0] == 1);
    const imp_npy_array *u = imp_npz_find(z, "u");
    CHECK(u && u->dtype == IMP_U8 && ((uint8_t *)u->data)[0] == 9);
    const char *meta = imp_npz_meta(z);
    CHECK(meta != NULL);
    double seed = 0;
    char who[16];
    CHECK_OK(imp_json_get_number(meta, "seed", &seed));
    CHECK(seed == 3);
    CHECK_OK(imp_json_get_string(meta, "who", who, sizeof who));
    CHECK(strcmp(who, "\xC2\xB5") == 0);
    /* f32 is not silently accepted as f64 */
    CHECK_FAILS(imp_npz_get_f64(z, "s", 1, NULL, &a, NULL), IMP_ERR_SHAPE);
    imp_npz_free(z);
}

static void test_numpy_interop(void)
{
    /* ours -> numpy (all.npz and x.npy were written by earlier tests) */
    char args[1100];
    snprintf(args, sizeof args, "%s %s", tpath("all.npz"), tpath("x.npy"));
    const char *out = run_python(py_check_ours, args);
    CHECK_MSG(strcmp(out, "OK\n") == 0, "numpy could not read our files:\n%s", out);

    /* numpy -> ours */
    out = run_python(py_write, tmpdir);
    CHECK_MSG(strcmp(out, "OK\n") == 0, "numpy could not write test files:\n%s", out);
    check_numpy_file("np_stored.npz");
    check_numpy_file("np_deflated.npz");

    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, tpath("np_big_deflated.npz")));
    const double *a = NULL;
    size_t e[1] = {5000};
    if (z) CHECK_OK(imp_npz_get_f64(z, "a", 1, e, &a, NULL));
    if (a) CHECK_CLOSE(a[4999], 1.0, 0, 0);
    imp_npz_free(z);

    /* a well-formed zip holding a truncated .npy: the error names the member */
    CHECK_FAILS(imp_npz_load(&z, tpath("trunc_member.npz")), IMP_ERR_FORMAT);
    CHECK(msg_has("cut.npy") && msg_has("truncated"));

    imp_npy_array arr;
    CHECK_FAILS(imp_npy_load(&arr, tpath("np_fortran.npy")), IMP_ERR_UNSUPPORTED);
    CHECK(msg_has("Fortran"));
    CHECK_FAILS(imp_npy_load(&arr, tpath("np_big.npy")), IMP_ERR_UNSUPPORTED);
    CHECK(msg_has("big-endian"));
    CHECK_FAILS(imp_npy_load(&arr, tpath("np_c16.npy")), IMP_ERR_UNSUPPORTED);
    CHECK(msg_has("<c16"));
}

/* ---------- truncation and corruption ---------- */

static void truncate_every_offset(const char *name)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK_OK(imp_read_file(tpath(name), &buf, &len));
    int bad = 0;
    for (size_t cut = 0; cut < len; cut++) {
        imp_npz *z = NULL;
        imp_clear_error();
        int st = imp_npz_parse(&z, buf, cut, name);
        if (st != IMP_ERR_FORMAT || z != NULL || imp_last_error()[0] == '\0') {
            if (bad++ < 3)
                fprintf(stderr, "%s cut at %zu: status %d, '%s'\n", name, cut, st, imp_last_error());
        }
        imp_npz_free(z);
    }
    CHECK_MSG(bad == 0, "%s: %d truncations not rejected cleanly", name, bad);
    free(buf);
}

static void test_truncation(void)
{
    truncate_every_offset("all.npz");
    truncate_every_offset("np_stored.npz");
    truncate_every_offset("np_deflated.npz");

    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK_OK(imp_read_file(tpath("x.npy"), &buf, &len));
    int bad = 0;
    for (size_t cut = 0; cut < len; cut++) {
        imp_npy_array a;
        imp_clear_error();
        int st = imp_npy_parse(&a, buf, cut, "x.npy");
        if (st != IMP_ERR_FORMAT || a.data != NULL || imp_last_error()[0] == '\0') bad++;
    }
    CHECK_MSG(bad == 0, "x.npy: %d truncations not rejected cleanly", bad);
    /* the message names the member of a truncated member image */
    free(buf);
}

/* Flip every byte of a small archive: each result is either a clean load or
 * a clean error; every flip inside member bytes is caught (CRC-32). */
static void test_bitflips(void)
{
    imp_npz *z = imp_npz_new();
    double v[4] = {1, 2, 3, 4};
    size_t s[1] = {4};
    CHECK_OK(imp_npz_add_f64(z, "v", 1, s, v));
    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK_OK(imp_npz_serialise(z, &buf, &len));
    imp_npz_free(z);
    if (!buf) return;
    /* member payload: after the 30-byte local header and "v.npy" */
    size_t payload_lo = 30 + 5, payload_hi = payload_lo + (len - 22 - 2 * 5 - 30 - 46);
    int unclean = 0, missed = 0;
    for (size_t i = 0; i < len; i++) {
        buf[i] ^= 0xA5;
        imp_npz *r = NULL;
        imp_clear_error();
        int st = imp_npz_parse(&r, buf, len, "flip");
        if (st == IMP_OK ? r == NULL : (r != NULL || imp_last_error()[0] == '\0')) unclean++;
        if (st == IMP_OK && i >= payload_lo && i < payload_hi) missed++;
        imp_npz_free(r);
        buf[i] ^= 0xA5;
    }
    CHECK(unclean == 0);
    CHECK_MSG(missed == 0, "%d payload corruptions went unnoticed", missed);
    free(buf);
}

static int parse_header(const char *dict, size_t data_bytes, const unsigned char *data)
{
    unsigned char buf[512];
    size_t dl = strlen(dict);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(dl + 1);
    buf[9] = 0;
    memcpy(buf + 10, dict, dl);
    buf[10 + dl] = '\n';
    if (data_bytes) memcpy(buf + 11 + dl, data, data_bytes);
    imp_npy_array a;
    imp_clear_error();
    int st = imp_npy_parse(&a, buf, 11 + dl + data_bytes, "hdr");
    imp_npy_array_clear(&a);
    return st;
}

static void test_corrupt_headers(void)
{
    unsigned char d[64] = {0};
    CHECK_OK(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16, d));
    CHECK_OK(parse_header("{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<i4\"}", 8, d));
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", 16, d),
                IMP_ERR_UNSUPPORTED);
    CHECK_FAILS(parse_header("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", 16, d),
                IMP_ERR_UNSUPPORTED);
    CHECK(msg_has("big-endian"));
    CHECK_FAILS(parse_header("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16, d),
                IMP_ERR_UNSUPPORTED);
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2), }", 16, d), IMP_ERR_FORMAT);
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, }", 16, d), IMP_ERR_FORMAT);
    CHECK(msg_has("shape"));
    CHECK_FAILS(parse_header("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16, d),
                IMP_ERR_FORMAT);
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", 16, d),
                IMP_ERR_FORMAT);
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } junk", 16, d),
                IMP_ERR_FORMAT);
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }", 16, d),
                IMP_ERR_FORMAT);
    /* shape product overflows size_t */
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 16,
                             d),
                IMP_ERR_FORMAT);
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
                             16, d),
                IMP_ERR_FORMAT);
    /* count * 8 overflows */
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3074457345618258603,), }", 16,
                             d),
                IMP_ERR_FORMAT);
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 17, d),
                IMP_ERR_FORMAT); /* trailing byte */
    CHECK_FAILS(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 15, d),
                IMP_ERR_FORMAT); /* short data */
    CHECK(msg_has("hdr") && msg_has("truncated"));
    unsigned char two[2] = {1, 2};
    CHECK_FAILS(parse_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2, two),
                IMP_ERR_FORMAT);
    CHECK_FAILS(parse_header("{'descr': '<U0', 'fortran_order': False, 'shape': (), }", 0, d), IMP_ERR_UNSUPPORTED);
    /* bad magic / version */
    imp_npy_array a;
    CHECK_FAILS(imp_npy_parse(&a, (const unsigned char *)"\x93NUMPX\x01\x00\x00\x00", 10, "m"), IMP_ERR_FORMAT);
    CHECK_FAILS(imp_npy_parse(&a, (const unsigned char *)"\x93NUMPY\x09\x00\x00\x00", 10, "m"), IMP_ERR_FORMAT);
    CHECK_FAILS(imp_npy_parse(&a, (const unsigned char *)"\x93NUMPY\x01\x00\xff\xff", 10, "m"), IMP_ERR_FORMAT);

    /* A zip whose central directory claims more bytes than exist */
    imp_npz *z = imp_npz_new();
    double v[2] = {1, 2};
    size_t s[1] = {2};
    CHECK_OK(imp_npz_add_f64(z, "v", 1, s, v));
    unsigned char *buf = NULL;
    size_t len;
    CHECK_OK(imp_npz_serialise(z, &buf, &len));
    imp_npz_free(z);
    if (!buf) return;
    size_t cd = len - 22 - 46 - 5;
    unsigned char saved[4];
    memcpy(saved, buf + cd + 20, 4);
    buf[cd + 20] = 0xF0; /* compressed size */
    imp_npz *r = NULL;
    CHECK_FAILS(imp_npz_parse(&r, buf, len, "cd"), IMP_ERR_FORMAT);
    memcpy(buf + cd + 20, saved, 4);
    buf[cd + 10] = 12; /* method: bzip2 */
    CHECK_FAILS(imp_npz_parse(&r, buf, len, "cd"), IMP_ERR_UNSUPPORTED);
    buf[cd + 10] = 0;
    buf[cd + 46] = 'w'; /* name differs from the local header */
    CHECK_FAILS(imp_npz_parse(&r, buf, len, "cd"), IMP_ERR_FORMAT);
    CHECK(msg_has("local header"));
    buf[cd + 46] = 'v';
    CHECK_OK(imp_npz_parse(&r, buf, len, "cd"));
    imp_npz_free(r);
    free(buf);
    CHECK_FAILS(imp_npz_load(&r, tpath("x.npy")), IMP_ERR_FORMAT); /* not a zip */
    CHECK_FAILS(imp_npz_load(&r, tpath("nope.npz")), IMP_ERR_IO);
}

/* ---------- typed getters ---------- */

static void test_getters(void)
{
    imp_npz *z = imp_npz_new();
    double good[6] = {1, 2, 3, 4, 5, 6}, bad[3] = {1, NAN, 3}, inf[2] = {INFINITY, 0};
    int64_t ints[2] = {1, 2};
    size_t s23[2] = {2, 3}, s3[1] = {3}, s2[1] = {2};
    CHECK_OK(imp_npz_add_f64(z, "good", 2, s23, good));
    CHECK_OK(imp_npz_add_f64(z, "bad", 1, s3, bad));
    CHECK_OK(imp_npz_add_f64(z, "inf", 1, s2, inf));
    CHECK_OK(imp_npz_add_i64(z, "ints", 1, s2, ints));
    const double *d = NULL;
    size_t any3[2] = {0, 3}, wrong[2] = {3, 2};
    CHECK_OK(imp_npz_get_f64(z, "good", 2, any3, &d, NULL));
    CHECK_FAILS(imp_npz_get_f64(z, "good", 2, wrong, &d, NULL), IMP_ERR_SHAPE);
    CHECK(msg_has("good") && msg_has("(3, 2)") && msg_has("(2, 3)"));
    CHECK_FAILS(imp_npz_get_f64(z, "good", 1, NULL, &d, NULL), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_npz_get_f64(z, "ints", 1, NULL, &d, NULL), IMP_ERR_SHAPE);
    CHECK(msg_has("ints") && msg_has("int64"));
    CHECK_FAILS(imp_npz_get_f64(z, "bad", 1, NULL, &d, NULL), IMP_ERR_NUMERIC);
    CHECK(msg_has("bad"));
    CHECK_FAILS(imp_npz_get_f64(z, "inf", 1, NULL, &d, NULL), IMP_ERR_NUMERIC);
    CHECK_FAILS(imp_npz_get_f64(z, "absent", 1, NULL, &d, NULL), IMP_ERR_NOT_FOUND);
    CHECK(msg_has("absent"));
    CHECK_FAILS(imp_npz_get_f64(z, "good", 99, NULL, &d, NULL), IMP_ERR_INVALID);
    int64_t *iv = NULL;
    CHECK_FAILS(imp_npz_get_i64_copy(z, "good", 2, NULL, &iv, NULL), IMP_ERR_SHAPE);
    CHECK(iv == NULL);
    CHECK(imp_npz_find(z, "absent") == NULL);
    CHECK(imp_npz_meta(z) == NULL);
    imp_npz_free(z);
}

/* ---------- atomic writes ---------- */

static int count_temp_files(void)
{
    DIR *dir = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (dir && (e = readdir(dir)))
        if (strstr(e->d_name, ".tmp.")) n++;
    if (dir) closedir(dir);
    return n;
}

static void test_atomic(void)
{
    const char *p = tpath("atomic.txt");
    CHECK_OK(imp_write_file_atomic(p, "old", 3));
    CHECK_OK(imp_write_file_atomic(p, "newer", 5));
    unsigned char *b;
    size_t n;
    CHECK_OK(imp_read_file(p, &b, &n));
    CHECK(n == 5 && memcmp(b, "newer", 5) == 0);
    free(b);

    CHECK_FAILS(imp_write_file_atomic(tpath("no/such/dir/f.npz"), "x", 1), IMP_ERR_IO);
    imp_npz *z = imp_npz_new();
    CHECK_FAILS(imp_npz_save(z, tpath("no/such/dir/f.npz")), IMP_ERR_IO);
    imp_npz_free(z);

    /* rename onto a non-empty directory fails after the temp was written:
     * the temp must be removed and the directory untouched */
    const char *d = tpath("occupied");
    mkdir(d, 0755);
    char inner[600];
    snprintf(inner, sizeof inner, "%s/keep", d);
    CHECK_OK(imp_write_file_atomic(inner, "k", 1));
    CHECK_FAILS(imp_write_file_atomic(d, "data", 4), IMP_ERR_IO);
    CHECK(msg_has("rename"));
    struct stat st;
    CHECK(stat(d, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(access(inner, F_OK) == 0);
    CHECK(count_temp_files() == 0);

    /* failed save over an existing good file leaves it loadable */
    imp_npz *bad = imp_npz_new();
    double v = 1;
    CHECK_OK(imp_npz_add_f64(bad, "v", 0, NULL, &v));
    CHECK_OK(imp_npz_save(bad, tpath("keep.npz")));
    CHECK_FAILS(imp_npz_save(bad, tpath("keep.npz/inside")), IMP_ERR_IO);
    imp_npz *r = NULL;
    CHECK_OK(imp_npz_load(&r, tpath("keep.npz")));
    imp_npz_free(r);
    imp_npz_free(bad);
}

/* "-" reads standard input once and keeps it: a second read (a verb that
 * peeks at a file's kind, then loads it) gets the same bytes, an .npz too. */
static void test_stdin(void)
{
    imp_npz *z = imp_npz_new();
    double v[3] = {1.5, -2, 3};
    size_t sh[1] = {3};
    CHECK_OK(imp_npz_add_f64(z, "v", 1, sh, v));
    CHECK_OK(imp_npz_save(z, tpath("stdin.npz")));
    imp_npz_free(z);
    unsigned char *want, *a, *b;
    size_t nw, na, nb;
    CHECK_OK(imp_read_file(tpath("stdin.npz"), &want, &nw));
    if (!freopen(tpath("stdin.npz"), "rb", stdin)) {
        CHECK_MSG(0, "cannot redirect stdin");
        free(want);
        return;
    }
    CHECK_OK(imp_read_file("-", &a, &na));
    CHECK_OK(imp_read_file("-", &b, &nb));
    CHECK(na == nw && nb == nw && !memcmp(a, want, nw) && !memcmp(b, want, nw) && a != b);
    imp_npz *r = NULL;
    CHECK_OK(imp_npz_load(&r, "-"));
    const imp_npy_array *arr = r ? imp_npz_find(r, "v") : NULL;
    CHECK(arr && arr->shape[0] == 3 && ((const double *)arr->data)[1] == -2);
    imp_npz_free(r);
    free(want);
    free(a);
    free(b);
}

/* ---------- JSON ---------- */

static void test_json(void)
{
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "name", "a \"q\"\n\\ \x01");
    imp_json_kv_number(&j, "x", 0.1);
    imp_json_kv_number(&j, "third", 1.0 / 3.0);
    imp_json_kv_number(&j, "nan", NAN);
    imp_json_kv_int(&j, "n", -12);
    imp_json_key(&j, "list");
    imp_json_begin_array(&j);
    imp_json_number(&j, 1e300);
    imp_json_bool(&j, 1);
    imp_json_null(&j);
    imp_json_begin_object(&j);
    imp_json_kv_number(&j, "x", 99);
    imp_json_end_object(&j);
    imp_json_end_array(&j);
    imp_json_key(&j, "inner");
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "deep", "v");
    imp_json_end_object(&j);
    imp_json_kv_string(&j, "deep", "top");
    imp_json_end_object(&j);
    const char *t = imp_json_text(&j);
    const char *want = "{\"name\":\"a \\\"q\\\"\\n\\\\ \\u0001\",\"x\":0.1,\"third\":0.3333333333333333,"
                       "\"nan\":null,\"n\":-12,\"list\":[1e+300,true,null,{\"x\":99}],"
                       "\"inner\":{\"deep\":\"v\"},\"deep\":\"top\"}";
    CHECK_MSG(t && strcmp(t, want) == 0, "got %s", t ? t : "(null)");
    double x;
    char s[64];
    CHECK_OK(imp_json_get_number(t, "x", &x));
    CHECK(x == 0.1);
    CHECK_OK(imp_json_get_number(t, "third", &x));
    CHECK(x == 1.0 / 3.0);
    CHECK_OK(imp_json_get_number(t, "n", &x));
    CHECK(x == -12);
    CHECK_OK(imp_json_get_string(t, "name", s, sizeof s));
    CHECK(strcmp(s, "a \"q\"\n\\ \x01") == 0);
    CHECK_OK(imp_json_get_string(t, "deep", s, sizeof s)); /* nested "deep" must not shadow */
    CHECK(strcmp(s, "top") == 0);
    CHECK_FAILS(imp_json_get_number(t, "missing", &x), IMP_ERR_NOT_FOUND);
    CHECK_FAILS(imp_json_get_number(t, "name", &x), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_json_get_string(t, "x", s, sizeof s), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_json_get_string(t, "name", s, 4), IMP_ERR_INVALID);
    CHECK_FAILS(imp_json_get_number("[1]", "x", &x), IMP_ERR_FORMAT);
    CHECK_FAILS(imp_json_get_number("{\"a\": [1, 2", "x", &x), IMP_ERR_FORMAT);
    CHECK_OK(imp_json_get_string("{\"u\": \"\\u00b5\\ud83d\\ude00\"}", "u", s, sizeof s));
    CHECK(strcmp(s, "\xC2\xB5\xF0\x9F\x98\x80") == 0);
    /* the reader checks what it skips: literals, numbers by JSON's grammar, no raw control characters in
     * strings, and names the value, byte, line and column of the innermost fault (user meta grows nested) */
    static const char *const bad[] = {"{\"a\": 1, \"b\": eee}", "{\"a\": 1, \"b\": tru}", "{\"a\": 01}",
                                      "{\"a\": \"x\ny\"}", "{\"a\": 1.}", "{\"a\": -}",
                                      "{\"walls\": [{\"offset\": 1.5e}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(imp_json_check_object(bad[i], "meta") == IMP_ERR_FORMAT, "accepted %s", bad[i]);
    CHECK_FAILS(imp_json_check_object("{\"a\": 1,\n \"walls\": [{\"offset\": 1.5e}]}", "meta"), IMP_ERR_FORMAT);
    CHECK_MSG(msg_has("'walls'") && msg_has("byte 31") && msg_has("line 2, column 23"), "%s", imp_last_error());
    /* Python's json.dumps writes NaN: a document holding one stays readable, the value itself is refused */
    CHECK_OK(imp_json_check_object("{\"a\": NaN, \"b\": [1e-3, -0.5E+2, true, false, null]}", "meta"));
    CHECK_OK(imp_json_get_number("{\"a\": NaN, \"b\": 2}", "b", &x));
    CHECK_FAILS(imp_json_get_number("{\"a\": NaN, \"b\": 2}", "a", &x), IMP_ERR_NUMERIC);

    /* python's json parses our output */
    imp_npz *z = imp_npz_new();
    CHECK_OK(imp_npz_set_meta(z, t));
    CHECK_OK(imp_npz_save(z, tpath("json.npz")));
    imp_npz_free(z);
    const char *out = run_python("import sys, json, numpy as np\n"
                                 "m = json.loads(str(np.load(sys.argv[1])['meta']))\n"
                                 "assert m['name'] == 'a \"q\"\\n\\\\ \\x01' and m['x'] == 0.1\n"
                                 "assert m['list'][0] == 1e300 and m['nan'] is None\n"
                                 "print('OK')\n",
                                 tpath("json.npz"));
    CHECK_MSG(strcmp(out, "OK\n") == 0, "python json.loads failed:\n%s", out);
    imp_json_free(&j);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/impulse_test_io_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot create temp dir\n");
        return 1;
    }
    test_roundtrip_all_dtypes();
    test_npy_single();
    test_numpy_interop();
    test_truncation();
    test_bitflips();
    test_corrupt_headers();
    test_getters();
    test_atomic();
    test_stdin();
    test_json();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    TEST_MAIN_END();
}
