/* Hostile inputs beyond .mat (test_mat.c): numbers in trajectory meta and
 * CLI options that were undefined conversions or misleading messages, the
 * input limit on .npz files, evaluation budgets and non-finite results, and
 * HDF5 files whose datasets declare absurd element sizes (found by
 * tests/fuzz/fuzz_import.c). */
#define _GNU_SOURCE
#include "impulse/cdl.h"
#include "impulse/chnn_models.h"
#include "impulse/contact_systems.h"
#include "impulse/core.h"
#include "impulse/io.h"
#include "test.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(const char *command, char *out, size_t cap) { return test_run_command(command, out, cap); }

/* A copy of the trajectory file with `from` replaced by `to` in its meta. */
static int edit_meta(const char *src, const char *dst, const char *from, const char *to)
{
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, src);
    if (st) return st;
    const char *meta = imp_npz_meta(z), *at = meta ? strstr(meta, from) : NULL;
    if (!at) {
        imp_npz_free(z);
        return -1;
    }
    char text[4096];
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - meta), meta, to, at + strlen(from));
    st = imp_npz_set_meta(z, text);
    if (!st) st = imp_npz_save(z, dst);
    imp_npz_free(z);
    return st;
}

static void expect_load_fails(const char *path, const char *part)
{
    imp_trajset ts;
    imp_clear_error();
    int st = imp_trajset_load(&ts, path);
    CHECK_MSG(st != IMP_OK && strstr(imp_last_error(), part), "%d '%s', want '%s'", st, imp_last_error(), part);
    if (!st) imp_trajset_free(&ts);
}

static void test_trajectory_meta(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.n_steps = 20;
    o.seed = 5;
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    CHECK_OK(imp_trajset_save(&ts, "hostile_ball.npz"));
    imp_trajset_free(&ts);
    CHECK_OK(imp_trajset_load(&ts, "hostile_ball.npz"));
    CHECK(ts.seed == 5);
    imp_trajset_free(&ts);
    /* NaN as Python's json.dumps writes it: said, not "needs numbers" */
    CHECK_OK(edit_meta("hostile_ball.npz", "hostile_bad.npz", "\"dt\":", "\"dt\":NaN,\"x\":"));
    expect_load_fails("hostile_bad.npz", "meta: dt: NaN is not a finite number");
    CHECK_OK(edit_meta("hostile_ball.npz", "hostile_bad.npz", "\"dim\":", "\"dim\":2.5,\"x\":"));
    expect_load_fails("hostile_bad.npz", "meta: dim: 2.5 is not an integer");
    CHECK_OK(edit_meta("hostile_ball.npz", "hostile_bad.npz", "\"dim\":", "\"dim\":\"2\",\"x\":"));
    expect_load_fails("hostile_bad.npz", "dim: JSON value is a string, not a number");
    /* the seed was cast to unsigned: undefined for -5 and 1e300 */
    CHECK_OK(edit_meta("hostile_ball.npz", "hostile_bad.npz", "\"seed\":5", "\"seed\":-5"));
    expect_load_fails("hostile_bad.npz", "meta: seed: -5 is out of range");
    CHECK_OK(edit_meta("hostile_ball.npz", "hostile_bad.npz", "\"seed\":5", "\"seed\":1e300"));
    expect_load_fails("hostile_bad.npz", "meta: seed: 1e+300 is out of range");
    CHECK_OK(edit_meta("hostile_ball.npz", "hostile_bad.npz", "\"seed\":5", "\"seed\":1e-308"));
    expect_load_fails("hostile_bad.npz", "meta: seed: 1e-308 is not an integer");
    char out[1024];
    CHECK(run(IMPULSE_CLI_PATH " eval --model hostile_none.npz --data hostile_bad.npz", out, sizeof out) == 1);
}

/* Declared sizes against the input limit: refused before allocation. */
static void test_input_limit(void)
{
    char out[1024];
    int rc = run("IMPULSE_MAX_INPUT_BYTES=1000 " IMPULSE_CLI_PATH " eval --model hostile_ball.npz --data hostile_ball.npz",
                 out, sizeof out);
    CHECK_MSG(rc == 1 && strstr(out, "input limit of 1000 bytes") && strstr(out, "IMPULSE_MAX_INPUT_BYTES"), "%d %s",
              rc, out);
    imp_set_input_limit(1000);
    imp_trajset ts;
    CHECK_FAILS(imp_trajset_load(&ts, "hostile_ball.npz"), IMP_ERR_FORMAT);
    imp_set_input_limit(0);
    CHECK(imp_input_limit() == IMP_INPUT_LIMIT_DEFAULT || getenv("IMPULSE_MAX_INPUT_BYTES"));
    /* a member whose deflated data claim more than the limit */
    imp_npz *z = imp_npz_new();
    size_t shape[1] = {1 << 17};
    double *zeros = calloc(shape[0], sizeof(double));
    CHECK_OK(imp_npz_add_f64(z, "q", 1, shape, zeros));
    unsigned char *img = NULL;
    size_t len = 0;
    CHECK_OK(imp_npz_serialise(z, &img, &len));
    imp_set_input_limit(1 << 19); /* 512 KiB < the 1 MiB member */
    imp_npz *back = NULL;
    imp_clear_error();
    int st = imp_npz_parse(&back, img, len, "big.npz");
    CHECK_MSG(st == IMP_ERR_FORMAT && strstr(imp_last_error(), "input limit"), "%d %s", st, imp_last_error());
    imp_set_input_limit(0);
    CHECK_OK(imp_npz_parse(&back, img, len, "big.npz"));
    imp_npz_free(back);
    imp_npz_free(z);
    free(img);
    free(zeros);
}

static void test_cli_numbers(void)
{
    static const struct { const char *args, *part; } cases[] = {
        {"simulate bouncing-ball --steps 2000000000 -o hostile_x.npz", "--steps: 2000000000 is out of range"},
        {"simulate bouncing-ball --steps 2.5 -o hostile_x.npz", "--steps: 2.5 is not an integer"},
        {"simulate bouncing-ball --steps 12abc -o hostile_x.npz", "--steps: '12abc' is not an integer"},
        {"simulate bouncing-ball --noise nan -o hostile_x.npz", "--noise: 'nan' is not a finite number"},
        {"simulate bouncing-ball --noise 1e999 -o hostile_x.npz", "'1e999' is beyond the range of a double"},
        {"simulate bouncing-ball --seed -5 -o hostile_x.npz", "--seed: -5 is out of range"},
        {"simulate pendulum-chain:1e300 -o hostile_x.npz", "pendulum-chain:N needs N in 1..8"},
        {"rollout --model hostile_none.npz --state 1,nan --steps 3 -o hostile_x.npz", "error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[512], out[1024];
        snprintf(cmd, sizeof cmd, "%s %s", IMPULSE_CLI_PATH, cases[i].args);
        int rc = run(cmd, out, sizeof out);
        const char *nl = strchr(out, '\n');
        CHECK_MSG(rc == 1 && strstr(out, cases[i].part) && strstr(out, ": error: ") && nl && nl[1] == '\0',
                  "%s: rc %d: %s", cases[i].args, rc, out);
    }
    char out[1024];
    CHECK(run(IMPULSE_CLI_PATH " simulate bouncing-ball --steps 1e2 --noise 1e-308 -o hostile_x.npz", out, sizeof out) == 0);
}

/* The rollout budget of imp_ceval: steps per sample interval and wall time. */
static void test_eval_budget(void)
{
    imp_csystem cs;
    imp_cmodel m;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:2"));
    CHECK_OK(imp_cmodel_init(&m, IMP_CMODEL_DELAN, &cs, 16, 3));
    double *params = malloc(m.n_params * sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, 3);
    imp_cmodel_init_params(&m, params, &rng);
    imp_ctraj test;
    CHECK_OK(imp_cexp_test_data(&cs, 3, 30, 2, &test));
    imp_ceval_opts eo;
    imp_ceval_opts_default(&eo);
    CHECK(eo.max_steps_per_sample == IMP_CEVAL_STEPS_PER_SAMPLE && eo.max_seconds == IMP_CEVAL_MAX_SECONDS);
    imp_ceval_result r;
    CHECK_OK(imp_ceval(&m, params, &test, &eo, &r));
    imp_ceval_result_free(&r);
    /* a budget below what the model needs: stops, naming model and trajectory */
    eo.max_steps_per_sample = 1;
    eo.rtol = 1e-12;
    eo.atol = 1e-14;
    imp_clear_error();
    int st = imp_ceval(&m, params, &test, &eo, &r);
    CHECK_MSG(st == IMP_ERR_NUMERIC && strstr(imp_last_error(), "delan model's rollout of test trajector") &&
                  strstr(imp_last_error(), "steps"),
              "%d %s", st, imp_last_error());
    /* the wall-clock budget */
    imp_ceval_opts_default(&eo);
    eo.max_seconds = 1e-9;
    /* enough right-hand-side calls to reach the clock check (every 64): the
     * default DeLaN starts with a constant mass, an easy flow */
    eo.rtol = 1e-12;
    eo.atol = 1e-14;
    imp_clear_error();
    st = imp_ceval(&m, params, &test, &eo, &r);
    CHECK_MSG(st == IMP_ERR_NUMERIC && strstr(imp_last_error(), "wall time"), "%d %s", st, imp_last_error());
    free(params);
    imp_ctraj_free(&test);
}

/* CD-Lagrange strand: weights of 1e150 gave "rmse inf" and exit 0. */
static void test_eval_non_finite(void)
{
    imp_trajset ts;
    CHECK_OK(imp_trajset_load(&ts, "hostile_ball.npz"));
    static const imp_model_kind kinds[] = {IMP_MODEL_CDL, IMP_MODEL_VIN, IMP_MODEL_RESNET};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, kinds[k]);
        cfg.hidden = 8;
        cfg.contact_hidden = 8;
        imp_model *m = NULL;
        CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 1));
        if (!m) continue;
        imp_eval_result res;
        CHECK_OK(imp_model_evaluate(m, &ts, 0, &res, NULL, NULL, NULL));
        for (size_t i = 0; i < m->n_params; i++) m->params[i] = 1e150;
        imp_clear_error();
        int st = imp_model_evaluate(m, &ts, 0, &res, NULL, NULL, NULL);
        CHECK_MSG(st == IMP_ERR_NUMERIC && strstr(imp_last_error(), imp_model_kind_name(kinds[k])), "%s: %d %s",
                  imp_model_kind_name(kinds[k]), st, imp_last_error());
        imp_model_free(m);
    }
    imp_trajset_free(&ts);
}

/* Imports path with velocities by finite differences at dt (q: a column
 * selection or path, NULL for the default names; bodies 0: one) and
 * returns the status, the imported set freed. */
static int import_fd(const char *path, const char *q, double dt, int bodies)
{
    imp_import_opts o;
    imp_import_opts_default(&o);
    o.q = q, o.finite_differences = 1, o.dt = dt, o.bodies = bodies;
    imp_trajset ts;
    imp_import_notes nt;
    int st = imp_trajset_import(path, &o, &ts, &nt);
    if (st == IMP_OK) imp_trajset_free(&ts);
    return st;
}

/* A 24 x 1 float32 qpos whose datatype message is patched to declare
 * 4294967287-byte numbers (found by fuzz_import): libhdf5 allocated a 4 GB
 * conversion buffer in H5Dread. The import must refuse the element size
 * before reading, naming the dataset. */
static void test_hdf5_element_size(void)
{
    const char *path = "hostile_elsize.h5";
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {24, 1};
    float q[24];
    for (int i = 0; i < 24; i++) q[i] = (float)i;
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, "qpos", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0 && H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, q) >= 0);
    H5Dclose(d), H5Sclose(sp), H5Fclose(f);
    /* the float datatype message: version 1 class 1, bit fields 0x20 0x1f 0x00, size 4 */
    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK_OK(imp_read_file(path, &buf, &len));
    static const unsigned char msg[8] = {0x11, 0x20, 0x1f, 0x00, 0x04, 0x00, 0x00, 0x00};
    int patched = 0;
    for (size_t i = 0; buf && i + 8 <= len; i++)
        if (!memcmp(buf + i, msg, 8)) {
            memcpy(buf + i + 4, "\xf7\xff\xff\xff", 4);
            patched++;
        }
    CHECK(patched == 1);
    CHECK_OK(imp_write_file_atomic(path, buf, len));
    free(buf);
    int st = import_fd(path, NULL, 0.1, 0);
    CHECK_MSG(st != IMP_OK && strstr(imp_last_error(), "qpos") && strstr(imp_last_error(), "4294967287"), "%d %s", st,
              imp_last_error());
    remove(path);
}

/* A 128-byte float64 .npy declaring `shape` and holding no data. */
static void write_empty_npy(const char *path, const char *shape)
{
    char hdr[129];
    int n = snprintf(hdr + 10, sizeof hdr - 10, "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shape);
    memset(hdr + 10 + n, ' ', (size_t)(117 - n));
    hdr[127] = '\n';
    memcpy(hdr, "\x93NUMPY\x01\x00\x76\x00", 10);
    CHECK_OK(imp_write_file_atomic(path, hdr, 128));
}

/* The import of an empty .npy of `shape` as positions of `bodies` bodies
 * must fail at once with `code` and a message holding `part`. */
static void expect_npy_import_fails(const char *shape, int bodies, int code, const char *part)
{
    const char *path = "hostile_empty.npy";
    write_empty_npy(path, shape);
    double t0 = imp_time_now();
    int st = import_fd(path, path, 0.1, bodies);
    CHECK_MSG(st == code && strstr(imp_last_error(), part), "shape %s: %d %s", shape, st, imp_last_error());
    CHECK(imp_time_now() - t0 < 2.0);
    remove(path);
}

/* Arrays of 0 columns and up to 2^40 rows (found by fuzz_hdf5): the import
 * looped over every declared row for minutes. They are refused at once,
 * naming the array. Arrays of 0 rows and 2^32 columns (found by fuzz_hdf5):
 * the coordinates per body were converted to int (-2^31) and multiplied by
 * the bodies, a signed overflow. */
static void test_import_empty_shapes(void)
{
    expect_npy_import_fails("(67108864, 0)", 0, IMP_ERR_SHAPE, "no columns");
    expect_npy_import_fails("(1099511627776, 0)", 0, IMP_ERR_SHAPE, "no columns");
    expect_npy_import_fails("(0, 4294967296)", 2, IMP_ERR_SHAPE, "2147483648 coordinates per body");
}

/* A compact 24 x 1 qpos whose layout message holds 0 bytes of data (found
 * by fuzz_import): libhdf5 copied 192 bytes from a NULL buffer (SIGSEGV). */
static void test_hdf5_compact_size(void)
{
    const char *path = "hostile_compact.h5";
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {24, 1};
    double q[24];
    for (int i = 0; i < 24; i++) q[i] = i;
    hid_t sp = H5Screate_simple(2, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_layout(pl, H5D_COMPACT);
    hid_t d = H5Dcreate2(f, "qpos", H5T_IEEE_F64LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    CHECK(d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, q) >= 0);
    H5Dclose(d), H5Pclose(pl), H5Sclose(sp), H5Fclose(f);
    /* the layout message: version 3, class 0 (compact), 192 bytes of data */
    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK_OK(imp_read_file(path, &buf, &len));
    static const unsigned char msg[4] = {0x03, 0x00, 0xc0, 0x00};
    int patched = 0;
    for (size_t i = 0; buf && i + 4 <= len; i++)
        if (!memcmp(buf + i, msg, 4)) {
            buf[i + 2] = 0;
            patched++;
        }
    CHECK(patched == 1);
    CHECK_OK(imp_write_file_atomic(path, buf, len));
    free(buf);
    int st = import_fd(path, NULL, 0.1, 0);
    CHECK_MSG(st == IMP_ERR_FORMAT && strstr(imp_last_error(), "qpos") && strstr(imp_last_error(), "compact"), "%d %s",
              st, imp_last_error());
    remove(path);
}

/* A root symbol table whose B-tree sits at address 0 (found by fuzz_import,
 * tests/fuzz/libhdf5/root_stab_btree_at_0: an options line, then the file):
 * Debian's libhdf5 1.10 reads through NULL in H5Literate, which took
 * `impulse import` down with SIGSEGV; the structure is now walked in a child
 * process first and the file refused. */
static void test_hdf5_libhdf5_crash(void)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK_OK(imp_read_file(IMPULSE_SOURCE_DIR "/tests/fuzz/libhdf5/root_stab_btree_at_0", &buf, &len));
    const unsigned char *nl = buf ? memchr(buf, '\n', len) : NULL;
    CHECK(nl != NULL);
    if (!nl) {
        free(buf);
        return;
    }
    const char *path = "hostile_stab.h5";
    CHECK_OK(imp_write_file_atomic(path, nl + 1, len - (size_t)(nl + 1 - buf)));
    free(buf);
    int st = import_fd(path, "qpos[0:2]", 0.25, 0);
    CHECK_MSG(st == IMP_ERR_FORMAT && strstr(imp_last_error(), "corrupt"), "%d %s", st, imp_last_error());
    remove(path);
}

/* Positions of +-1e308 (finite) whose central differences overflow (found
 * by fuzz_hdf5's check that an imported set loads again): --finite-differences
 * wrote velocities of -inf, a set that train and eval then refuse. The
 * import fails instead, naming the sample. */
static void test_import_fd_overflow(void)
{
    const char *path = "hostile_fd.npy";
    double q[4] = {0.0, 1e308, -1e308, 0.0};
    CHECK_OK(imp_npy_save_f64(path, 2, (size_t[]){4, 1}, q));
    int st = import_fd(path, path, 0.1, 0);
    CHECK_MSG(st == IMP_ERR_NUMERIC && strstr(imp_last_error(), "finite differences") &&
                  strstr(imp_last_error(), "sample 0,"), "%d %s", st, imp_last_error());
    remove(path);
}

int main(void)
{
    test_trajectory_meta();
    test_input_limit();
    test_cli_numbers();
    test_eval_budget();
    test_eval_non_finite();
    test_hdf5_element_size();
    test_import_empty_shapes();
    test_hdf5_compact_size();
    test_hdf5_libhdf5_crash();
    test_import_fd_overflow();
    remove("hostile_ball.npz");
    remove("hostile_bad.npz");
    remove("hostile_x.npz");
    TEST_MAIN_END();
}
