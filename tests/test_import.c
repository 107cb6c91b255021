/* impulse import and inspect end to end: compliant-ball trajectories (the
 * stand-in for data from elsewhere) written from C as CSV, .npy (float32),
 * .npz and HDF5 (one group per trajectory, as MuJoCo logs), each imported
 * in one command into a file that trains; and every error path of import,
 * one clear line each. */
#define _POSIX_C_SOURCE 200809L
#define CLI_TEST_TAG "imp"
#include "impulse/cdl.h"
#include "impulse/io.h"
#include "impulse/sweep.h"
#include "test.h"
#include "cli_test.h"

#include "io/source.h"

#include <hdf5.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { NT = 2, T = 150 };

static imp_trajset ts; /* the truth the files are written from */

static void write_csv(const char *path, int n_traj, int steps, int bad)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "# compliant ball, written by test_import\ntraj, t, z, vz, touch\n");
    for (int n = 0; n < n_traj; n++)
        for (int t = 0; t < steps - (bad == 3 && n == 1); t++) {
            size_t i = (size_t)n * T + t;
            double time = t * ts.dt + (bad == 1 && t == 40 ? 0.005 : 0.0);
            if (bad == 2 && t == 1) fprintf(f, "%d, %.17g, abc, %.17g, %d\n", n, time, ts.qdot[i], (int)ts.contact[i]);
            else if (bad == 4 && t == 1) fprintf(f, "%d, %.17g, %.17g\n", n, time, ts.q[i]);
            else if (bad == 5 && t == 5) fprintf(f, "%d, %.17g, %.17g, %.17g, 2\n", n, time, ts.q[i], ts.qdot[i]);
            else fprintf(f, "%d, %.17g, %.17g, %.17g, %d\n", n, time, ts.q[i], ts.qdot[i], (int)ts.contact[i]);
        }
    fclose(f);
}

static void write_npy_npz(void)
{
    float *qf = malloc(sizeof(float) * T);
    for (int t = 0; t < T; t++) qf[t] = (float)ts.q[t];
    imp_npy_array a = {.dtype = IMP_F32, .item_size = 4, .ndim = 2, .shape = {T, 1}, .count = T, .data = qf};
    CHECK_OK(imp_npy_save("imp_pos.npy", &a));
    CHECK_OK(imp_npy_save_f64("imp_vel.npy", 1, (size_t[]){T}, ts.qdot));
    free(qf);
    imp_npz *z = imp_npz_new();
    size_t sh[3] = {NT, T, 1};
    CHECK_OK(imp_npz_add_f64(z, "pos", 3, sh, ts.q));
    CHECK_OK(imp_npz_add_f64(z, "vel", 3, sh, ts.qdot));
    unsigned char *b = malloc(NT * T);
    for (int i = 0; i < NT * T; i++) b[i] = ts.contact[i] > 0;
    imp_npy_array c = {.dtype = IMP_BOOL, .item_size = 1, .ndim = 3, .shape = {NT, T, 1}, .count = NT * T, .data = b};
    CHECK_OK(imp_npz_add_array(z, "touch", &c));
    CHECK_OK(imp_npz_save(z, "imp_raw.npz"));
    imp_npz_free(z);
    free(b);
}

/* One dataset `name` of file type ft and space sp in loc, written from data (memory type mt). */
static void h5_put(hid_t loc, const char *name, hid_t ft, hid_t sp, hid_t mt, const void *data)
{
    hid_t d = H5Dcreate2(loc, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(d);
}

/* Groups run2 and run10 (natural order: run2 is trajectory 0), qpos in
 * float32, qvel in double, contact as integers, time stamps. */
static void write_h5(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const char *groups[NT] = {"run2", "run10"};
    for (int n = 0; n < NT; n++) {
        hid_t g = H5Gcreate2(f, groups[n], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        hsize_t dims[2] = {T, 1};
        hid_t sp = H5Screate_simple(2, dims, NULL), sp1 = H5Screate_simple(1, dims, NULL);
        float qf[T];
        int ci[T];
        double tt[T];
        for (int t = 0; t < T; t++)
            qf[t] = (float)ts.q[(size_t)n * T + t], ci[t] = ts.contact[(size_t)n * T + t] > 0, tt[t] = t * ts.dt;
        h5_put(g, "qpos", H5T_IEEE_F32LE, sp, H5T_NATIVE_FLOAT, qf);
        h5_put(g, "qvel", H5T_IEEE_F64LE, sp, H5T_NATIVE_DOUBLE, ts.qdot + (size_t)n * T);
        h5_put(g, "contact", H5T_STD_I32LE, sp, H5T_NATIVE_INT, ci);
        h5_put(g, "time", H5T_IEEE_F64LE, sp1, H5T_NATIVE_DOUBLE, tt);
        H5Sclose(sp), H5Sclose(sp1), H5Gclose(g);
    }
    H5Fclose(f);
}

/* The imported file against the truth: every trajectory's positions within
 * `tol` (float32 files: rounding), dt, and the label count after onset. */
static void check_imported(const char *path, int n_traj, double tol, int labels)
{
    imp_trajset b;
    CHECK_OK(imp_trajset_load(&b, path));
    if (b.n_traj != n_traj || b.n_steps != T) {
        CHECK_MSG(0, "%s: %d x %d", path, b.n_traj, b.n_steps);
        imp_trajset_free(&b);
        return;
    }
    double err = 0;
    for (int i = 0; i < n_traj * T; i++) err = fmax(err, fabs(b.q[i] - ts.q[i]) / fmax(1.0, fabs(ts.q[i])));
    CHECK_MSG(err <= tol, "%s: position error %g", path, err);
    CHECK_CLOSE(b.dt, ts.dt, 1e-9, 0);
    CHECK(b.has_contact == labels && b.geom.n_pairs == 1 && b.geom.pairs[0].body_i == IMP_WALL);
    if (labels) {
        imp_label_report r;
        CHECK_OK(imp_contact_labels_apply(&b, IMP_LABELS_AUTO, &r));
        CHECK(r.mode == IMP_LABELS_AS_GIVEN && r.multi == 0); /* onset applied on import */
    }
    imp_trajset_free(&b);
}


/* ---- hostile files for the readers behind import (issue 26) ---- */

static double wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Trajectory `name` of a source as rows x cols, or the failing status. */
static int source_get(const char *path, const char *name, double **d, size_t *r, size_t *c)
{
    imp_source *s = NULL;
    *d = NULL;
    int st = imp_source_open(&s, path, NULL);
    if (!st) st = imp_source_get(s, name, 0, d, r, c);
    imp_source_free(s);
    return st;
}

/* Selections pick exactly the columns listed, in the order listed: repeated
 * and decreasing indices included; huge or negative indices are errors. */
static void test_selections(void)
{
    enum { R = 40 };
    FILE *f = fopen("imp_sel.csv", "w");
    fprintf(f, "k, x0, x1, x2\n");
    for (int r = 0; r < R; r++) fprintf(f, "%d, %d, %d, %d\n", r, 10 * r + 1, 10 * r + 2, 10 * r + 3);
    fclose(f);
    struct { const char *name; int n; int col[8]; } cases[] = {
        {"x[0,0,0,0]", 4, {0, 0, 0, 0}},     /* defect 1: repeats wrote past the buffer */
        {"x[2,1,0]", 3, {2, 1, 0}},          /* defect 2: in place, rows [3,2,3] */
        {"x[2,0:2,2]", 4, {2, 0, 1, 2}},
        {"x[1],x[0,2],k[0]", 4, {1, 0, 2, -1}},
        {"x[ 2 , 0 ]", 2, {2, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double *d = NULL;
        size_t r = 0, c = 0;
        CHECK_OK(source_get("imp_sel.csv", cases[k].name, &d, &r, &c));
        CHECK_MSG(d && r == R && c == (size_t)cases[k].n, "%s: %zu x %zu", cases[k].name, r, c);
        int bad = 0;
        for (size_t i = 0; d && r == R && c == (size_t)cases[k].n && i < r; i++)
            for (size_t j = 0; j < c; j++) {
                int col = cases[k].col[j];
                bad += d[i * c + j] != (col < 0 ? (double)i : 10.0 * (double)i + col + 1);
            }
        CHECK_MSG(bad == 0, "%s: %d values not the columns listed", cases[k].name, bad);
        free(d);
    }
    const char *bad[] = {"x[9223372036854775807]", "x[0:9223372036854775807]", "x[18446744073709551617]",
                         "x[99999999999999999999999999]", "x[-1]", "x[3]", "x[0:4]", "x[2:1]", "x[1:1]",
                         "x[]", "x[0,]", "x[a]", "x[0", "x[0]]", "x[+1]", "x[1:-2]", "x[0x1]"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        double *d = NULL;
        size_t r, c;
        imp_clear_error();
        int st = source_get("imp_sel.csv", bad[k], &d, &r, &c);
        CHECK_MSG(st == IMP_ERR_INVALID && strstr(imp_last_error(), "x"), "%s: %d '%s'", bad[k], st, imp_last_error());
        free(d);
    }
    /* the command line: rows of x0 four times, exit 0 */
    char err[4096];
    CHECK(run("import imp_sel.csv --q 'x[2,1,0]' --finite-differences --dt 0.1 -o imp_sel.npz", err, sizeof err) == 0);
    imp_trajset b;
    CHECK_OK(imp_trajset_load(&b, "imp_sel.npz"));
    CHECK(b.n_steps == R && b.geom.dim == 3 && b.q[0] == 3 && b.q[1] == 2 && b.q[2] == 1 && b.q[3 * 7 + 2] == 71);
    imp_trajset_free(&b);
    expect_error("import imp_sel.csv --q 'x[9223372036854775807]' --finite-differences --dt 0.1 -o x.npz", "column");
}

/* An HDF5 file whose root (or group "g" if group) holds `name` declared as
 * dims (no data written: chunked, read back as the fill value). */
static void write_h5_declared(const char *path, int group, const char *name, int nd, const hsize_t *dims, double fill)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t loc = group ? H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : f;
    hsize_t chunk[3] = {1, 1, 1};
    hid_t sp = H5Screate_simple(nd, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(pl, nd, chunk);
    H5Pset_fill_value(pl, H5T_NATIVE_DOUBLE, &fill);
    hid_t d = H5Dcreate2(loc, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    CHECK(d >= 0);
    H5Dclose(d), H5Pclose(pl), H5Sclose(sp);
    if (group) H5Gclose(loc);
    H5Fclose(f);
}

/* Root-level datasets: q (steps, 2) and 3-d qpos (trajectories, steps, 2). */
static void write_h5_root(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    double v[3 * 5 * 2];
    for (int i = 0; i < 30; i++) v[i] = i;
    hsize_t d2[2] = {5, 2}, d3[3] = {3, 5, 2};
    hid_t s2 = H5Screate_simple(2, d2, NULL), s3 = H5Screate_simple(3, d3, NULL);
    h5_put(f, "q", H5T_IEEE_F64LE, s2, H5T_NATIVE_DOUBLE, v);
    h5_put(f, "qpos", H5T_IEEE_F64LE, s3, H5T_NATIVE_DOUBLE, v);
    H5Sclose(s2), H5Sclose(s3), H5Fclose(f);
}

static void expect_source_fails(const char *path, const char *name, const char *part)
{
    double *d = NULL;
    size_t r, c;
    imp_clear_error();
    double t0 = wall_seconds();
    int st = source_get(path, name, &d, &r, &c);
    CHECK_MSG(st != IMP_OK && strstr(imp_last_error(), part), "%s %s: %d '%s', want '%s'", path, name, st,
              imp_last_error(), part);
    CHECK_MSG(wall_seconds() - t0 < 2.0, "%s: %.1f s to fail", path, wall_seconds() - t0);
    free(d);
}

static void test_hdf5_declared(void)
{
    /* defect 6: datasets at the root (qsort of no groups) */
    write_h5_root("imp_root.h5");
    imp_source *s = NULL;
    CHECK_OK(imp_source_open(&s, "imp_root.h5", NULL));
    int n = 0;
    CHECK_OK(imp_source_n_traj(s, "qpos", &n));
    CHECK(n == 3);
    for (int t = 0; t < 3 && s; t++) {
        double *d = NULL;
        size_t r = 0, c = 0;
        CHECK_OK(imp_source_get(s, "qpos[1,0]", t, &d, &r, &c));
        CHECK(d && r == 5 && c == 2 && d[0] == 10 * t + 1 && d[1] == 10 * t && d[9] == 10 * t + 8);
        free(d);
    }
    imp_source_free(s);
    /* data of other files: an external link, a dataset stored in a raw
     * file beside it (external storage), are not read */
    {
        hid_t f = H5Fcreate("imp_links.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        H5Lcreate_external("imp_root.h5", "/q", f, "qpos", H5P_DEFAULT, H5P_DEFAULT);
        FILE *raw = fopen("imp_raw.bin", "wb");
        double v[10] = {0};
        fwrite(v, sizeof v, 1, raw);
        fclose(raw);
        hsize_t d2[2] = {5, 2};
        hid_t sp = H5Screate_simple(2, d2, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_external(pl, "imp_raw.bin", 0, sizeof v);
        hid_t d = H5Dcreate2(f, "qvel", H5T_IEEE_F64LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
        CHECK(d >= 0);
        H5Dclose(d), H5Pclose(pl), H5Sclose(sp), H5Fclose(f);
    }
    expect_source_fails("imp_links.h5", "qpos", "no dataset 'qpos'");
    expect_source_fails("imp_links.h5", "qvel", "outside the file");
    /* defect 4: 2^32 x 2^32 declared, the element count overflowed to 0 */
    hsize_t huge[2] = {(hsize_t)1 << 32, (hsize_t)1 << 32};
    write_h5_declared("imp_huge.h5", 0, "qpos", 2, huge, 0.0);
    expect_source_fails("imp_huge.h5", "qpos", "input limit");
    hsize_t huge3[3] = {(hsize_t)1 << 31, (hsize_t)1 << 31, (hsize_t)1 << 31};
    write_h5_declared("imp_huge3.h5", 1, "qpos", 3, huge3, 0.0);
    expect_source_fails("imp_huge3.h5", "qpos", "qpos");
    /* defect 5: 1e8 x 4 with a fill value: refused before reading */
    hsize_t big[2] = {100000000, 4};
    write_h5_declared("imp_fill.h5", 0, "qpos", 2, big, 1.0);
    expect_source_fails("imp_fill.h5", "qpos", "input limit");
    /* the limit is the one set, not a fixed size: 1e5 x 4 under 1 MiB */
    hsize_t mid[2] = {100000, 4};
    write_h5_declared("imp_mid.h5", 0, "qpos", 2, mid, 1.0);
    imp_set_input_limit(1 << 20);
    expect_source_fails("imp_mid.h5", "qpos", "IMPULSE_MAX_INPUT_BYTES");
    imp_set_input_limit(0);
    /* 2^18 trajectories of 2 steps in one 3-d dataset (4 MiB of fill):
     * read once, not once per trajectory */
    hsize_t many[3] = {(hsize_t)1 << 18, 2, 1};
    write_h5_declared("imp_many.h5", 0, "qpos", 3, many, 1.0);
    /* the 1e8 x 4 file from the command line: a clear error, fast, small
     * (ru_maxrss of children: the largest so far, so this one first) */
    double t0 = wall_seconds();
    expect_error("import imp_fill.h5 --finite-differences --dt 0.1 -o x.npz", "input limit");
    CHECK_MSG(wall_seconds() - t0 < 5.0, "%.1f s", wall_seconds() - t0);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    CHECK_MSG(TEST_UNDER_ASAN || ru.ru_maxrss < 256 * 1024L, "peak %ld KiB", ru.ru_maxrss);
    char err[4096];
    t0 = wall_seconds();
    CHECK(run("import imp_many.h5 --finite-differences --dt 0.1 -o imp_many.npz", err, sizeof err) == 0);
    double secs = wall_seconds() - t0;
    CHECK_MSG(secs < 30.0, "import of 2^18 declared trajectories: %.1f s", secs);
    getrusage(RUSAGE_CHILDREN, &ru);
    CHECK_MSG(TEST_UNDER_ASAN || ru.ru_maxrss < (512 + 256) * 1024L, "peak %ld KiB", ru.ru_maxrss);
}

/* The limit on declared sizes for the other readers: CSV rows, npy/npz
 * arrays widened to doubles. */
static void test_other_limits(void)
{
    imp_set_input_limit(4096);
    FILE *f = fopen("imp_rows.csv", "w");
    fprintf(f, "q\n");
    for (int i = 0; i < 1000; i++) fprintf(f, "1\n"); /* 2 KB of text, 8 KB of doubles */
    fclose(f);
    imp_source *s = NULL;
    imp_clear_error();
    int st = imp_source_open(&s, "imp_rows.csv", NULL);
    CHECK_MSG(st != IMP_OK && strstr(imp_last_error(), "input limit"), "%d %s", st, imp_last_error());
    imp_source_free(s);
    unsigned char *b = calloc(1000, 1);
    imp_npy_array a = {.dtype = IMP_BOOL, .item_size = 1, .ndim = 1, .shape = {1000}, .count = 1000, .data = b};
    imp_set_input_limit(0);
    CHECK_OK(imp_npy_save("imp_bool.npy", &a));
    free(b);
    imp_set_input_limit(4096); /* 1 KB of file, 8 KB as doubles */
    expect_source_fails("imp_bool.npy", "imp_bool.npy", "input limit");
    imp_set_input_limit(0);
    /* float32 members of an .npz, widened to doubles when it is opened */
    float *f32 = calloc(1000, sizeof *f32);
    imp_npy_array fa = {.dtype = IMP_F32, .item_size = 4, .ndim = 1, .shape = {1000}, .count = 1000, .data = f32};
    imp_npz *z = imp_npz_new();
    CHECK_OK(imp_npz_add_array(z, "q", &fa));
    CHECK_OK(imp_npz_save(z, "imp_f32.npz"));
    imp_npz_free(z);
    free(f32);
    imp_set_input_limit(6000); /* 4 KB as float32, 8 KB as doubles */
    s = NULL;
    imp_clear_error();
    st = imp_source_open(&s, "imp_f32.npz", NULL);
    CHECK_MSG(st != IMP_OK && strstr(imp_last_error(), "input limit"), "%d %s", st, imp_last_error());
    imp_source_free(s);
    imp_set_input_limit(0);
}

/* issue 27 item 10: data from elsewhere with gravity get energy metrics
 * without a guessed --system (point masses, height the last coordinate),
 * and an error against the data's energy curve, which the truth itself
 * passes with 0 while its drift from E(0) is large (the ball loses energy). */
static void test_energy_error(void)
{
    char err[4096];
    CHECK(run("import imp_raw.h5 --wall 0:1:0 --gravity 9.81 -o imp_g.npz", err, sizeof err) == 0);
    CHECK_MSG(strstr(err, "point masses") && !strstr(err, "unavailable"), "import: %s", err);
    CHECK(run("eval --model imp_m.npz --data imp_g.npz --json", err, sizeof err) == 0);
    CHECK_MSG(!strstr(err, "not computed"), "eval: %s", err);
    size_t n;
    unsigned char *out = NULL;
    CHECK_OK(imp_read_file("imp_stdout.txt", &out, &n));
    double e_err = NAN, drift_data = NAN;
    const char *p = out ? strstr((char *)out, "\"energy_error\":") : NULL;
    if (p) sscanf(p, "\"energy_error\":%lf", &e_err);
    p = out ? strstr((char *)out, "\"energy_drift_data\":") : NULL;
    if (p) sscanf(p, "\"energy_drift_data\":%lf", &drift_data);
    CHECK_MSG(isfinite(e_err) && e_err > 0 && drift_data > 0.3, "eval --json: %s", out ? (char *)out : "");
    free(out);
    /* the truth scores 0 against itself; the same energies as the named system's */
    imp_trajset g;
    CHECK_OK(imp_trajset_load(&g, "imp_g.npz"));
    double *e = malloc((size_t)g.n_traj * g.n_steps * sizeof(double)), ee, dd, ball;
    int D = g.geom.n_bodies * g.geom.dim;
    for (int i = 0; e && i < g.n_traj * g.n_steps; i++) {
        CHECK_OK(imp_system_energy(g.system, &g.geom, g.gravity, g.length, g.q_clean + (size_t)i * D,
                                   g.qdot_clean + (size_t)i * D, e + i));
        CHECK_OK(imp_system_energy("bouncing-ball", &g.geom, g.gravity, g.length, g.q_clean + (size_t)i * D,
                                   g.qdot_clean + (size_t)i * D, &ball));
        CHECK(e[i] == ball);
    }
    CHECK_OK(imp_eval_energy_error(&g, e, &ee, &dd));
    CHECK(ee == 0 && dd > 0.3);
    free(e);
    imp_trajset_free(&g);
    remove("imp_g.npz");
}

/* issue 27 item 16: --episodes keeps some trajectories, --noise adds noise
 * and keeps the imported values as the clean copy, a wall's last field is
 * its tangent (friction). */
static void test_episodes_noise_tangent(void)
{
    char err[4096];
    CHECK(run("import imp_raw.npz --q pos --qdot vel --dt 0.02 --wall 0:1:0:1 --episodes 1:2 --noise 0.1 --seed 3 "
              "-o imp_ep.npz", err, sizeof err) == 0);
    CHECK_MSG(strstr(err, "noise 0.1") && strstr(err, "clean copy"), "%s", err);
    imp_trajset b;
    CHECK_OK(imp_trajset_load(&b, "imp_ep.npz"));
    CHECK(b.n_traj == 1 && b.n_steps == T && b.noise == 0.1 && b.geom.pairs[0].tangent[0] == 1.0);
    double clean = 0, noisy = 0;
    for (int i = 0; b.n_traj == 1 && i < T; i++) {
        clean = fmax(clean, fabs(b.q_clean[i] - ts.q[T + i]) + fabs(b.qdot_clean[i] - ts.qdot[T + i]));
        noisy = fmax(noisy, fabs(b.q[i] - ts.q[T + i]));
    }
    CHECK_MSG(clean == 0 && noisy > 0.1, "clean copy off by %g, noise %g", clean, noisy);
    imp_trajset_free(&b);
    expect_error("import imp_raw.npz --q pos --qdot vel --dt 0.02 --episodes 1:5 -o x.npz", "has 2 trajectories");
    expect_error("import imp_raw.npz --q pos --qdot vel --dt 0.02 --wall 0:1:0:1,0 -o x.npz", "the tangent has 2");
    remove("imp_ep.npz");
}

int main(void)
{
    imp_blas_init();
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball", &o));
    o.restitution = 0.7, o.noise = 0.2, o.n_traj = NT, o.n_steps = T, o.seed = 3;
    CHECK_OK(imp_simulate("compliant-ball", &o, &ts));
    char err[4096];

    /* each format, one command */
    write_csv("imp_raw.csv", NT, T, 0);
    CHECK(run("import imp_raw.csv --q z --qdot vz --contact touch --wall 0:1:0 --gravity 9.81 --system compliant-ball "
              "-o imp_csv.npz", err, sizeof err) == 0);
    CHECK(strstr(err, "dt = 0.02") && strstr(err, "extra")); /* dt from the time column; the label notice */
    check_imported("imp_csv.npz", NT, 0, 1);
    write_npy_npz();
    CHECK(run("import imp_pos.npy --qdot imp_vel.npy --dt 0.02 --wall 0:1:0 -o imp_npy.npz", err, sizeof err) == 0);
    check_imported("imp_npy.npz", 1, 1e-6, 0);
    CHECK(run("import imp_raw.npz --q pos --qdot vel --contact touch --dt 0.02 --wall 0:1:0 --restitution 0.7 "
              "-o imp_npz.npz", err, sizeof err) == 0);
    check_imported("imp_npz.npz", NT, 0, 1);
    write_h5("imp_raw.h5");
    CHECK(run("import imp_raw.h5 --wall 0:1:0 -o imp_h5.npz", err, sizeof err) == 0);
    check_imported("imp_h5.npz", NT, 1e-6, 1);
    /* column selection and finite-difference velocities */
    CHECK(run("import imp_raw.h5 --q 'qpos[0]' --finite-differences --wall 0:1:0 -o imp_fd.npz", err, sizeof err) == 0);
    CHECK(strstr(err, "finite differences") != NULL);

    /* the imported files train; without labels only without touch feedback, said */
    CHECK(run("train cdl --data imp_h5.npz --epochs 1 --hidden 8 --quiet -o imp_m.npz", err, sizeof err) == 0);
    CHECK(run("train cdl --data imp_npy.npz --epochs 1 --hidden 8 --quiet -o imp_m2.npz", err, sizeof err) == 0);
    CHECK(strstr(err, "notice") && strstr(err, "--no-touch"));
    expect_error("train cdl --data imp_npy.npz --touch --epochs 1 -o x.npz", "no contact labels");
    expect_error("train resnet-contact --data imp_npy.npz --epochs 1 -o x.npz", "no contact labels");
    /* ... or with labels derived from the motion and the geometry, said */
    CHECK(run("train cdl --data imp_npy.npz --contact-labels geometry --epochs 1 --hidden 8 -o imp_m3.npz", err,
              sizeof err) == 0);
    CHECK_MSG(strstr(err, "derived from the motion") && !strstr(err, "--no-touch"), "%s", err);
    expect_error("train cdl --data imp_npy.npz --contact-labels geometry --no-touch --epochs 1 -o x.npz",
                 "--contact-labels geometry");
    CHECK(run("import imp_pos.npy --qdot imp_vel.npy --dt 0.02 --wall 0:1:0 --contact-labels geometry -o imp_geo.npz",
              err, sizeof err) == 0);
    check_imported("imp_geo.npz", 1, 1e-6, 1);
    /* energy without gravity / system: a notice, not a number */
    CHECK(run("eval --model imp_m.npz --data imp_h5.npz --json", err, sizeof err) == 0);
    CHECK(strstr(err, "notice: energy drift not computed") != NULL);
    CHECK(run("inspect imp_csv.npz", err, sizeof err) == 0);
    CHECK(run("inspect imp_raw.h5", err, sizeof err) == 0);
    /* issue 27 item 15: a file with a time dataset needs no --dt (nor --q/--qdot with qpos/qvel) */
    {
        size_t n;
        unsigned char *o = NULL;
        CHECK_OK(imp_read_file("imp_stdout.txt", &o, &n));
        CHECK_MSG(o && strstr((char *)o, "impulse import imp_raw.h5") && !strstr((char *)o, "--dt") &&
                      !strstr((char *)o, "--q NAME") && strstr((char *)o, "dt from its 'time'"),
                  "%s", o ? (char *)o : "");
        free(o);
    }
    test_energy_error();
    test_episodes_noise_tangent();

    /* every error: one line naming what is wrong and how to supply it */
    expect_error("import imp_raw.csv --q nope --qdot vz -o x.npz", "nope");
    expect_error("import imp_raw.csv --q z -o x.npz", "--finite-differences");
    expect_error("import imp_raw.csv --q z --qdot vz --time none --dt 0.02 -o x.npz", "none");
    expect_error("import imp_pos.npy --qdot imp_vel.npy -o x.npz", "--dt");
    expect_error("import imp_raw.csv --q z --qdot vz --dt 0.01 -o x.npz", "contradicts");
    write_csv("imp_uneven.csv", NT, T, 1);
    expect_error("import imp_uneven.csv --q z --qdot vz -o x.npz", "evenly");
    write_csv("imp_nan.csv", NT, T, 2);
    expect_error("import imp_nan.csv --q z --qdot vz -o x.npz", "imp_nan.csv:4: column 'z'");
    write_csv("imp_short.csv", NT, T, 3);
    expect_error("import imp_short.csv --q z --qdot vz -o x.npz", "equal lengths");
    write_csv("imp_fields.csv", NT, T, 4);
    expect_error("import imp_fields.csv --q z --qdot vz -o x.npz", "fields");
    write_csv("imp_label2.csv", NT, T, 5);
    expect_error("import imp_label2.csv --q z --qdot vz --contact touch -o x.npz", "not 0 or 1");
    expect_error("import imp_raw.csv --q z --qdot vz --bodies 2 -o x.npz", "multiple");
    expect_error("import imp_raw.csv --q z --qdot vz --wall 0:0,1:0 -o x.npz", "components");
    expect_error("import imp_raw.csv --q z --qdot vz --wall 0:1 -o x.npz", "--wall");
    expect_error("import imp_raw.csv --q z --qdot vz --contact-labels first -o x.npz", "--contact-labels");
    expect_error("import imp_raw.h5 --q 'qpos[3]' --finite-differences -o x.npz", "columns");
    expect_error("import imp_raw.txt -o x.npz", "unknown format");
    FILE *f = fopen("imp_bad.h5", "w");
    fputs("not hdf5", f);
    fclose(f);
    expect_error("import imp_bad.h5 -o x.npz", "not an HDF5");
    expect_error("import imp_raw.csv --q z --qdot vz", "-o");
    expect_error("train cdl --data imp_csv.npz --contact-labels first -o x.npz", "--contact-labels");
    CHECK(run("reproduce your-data --help", err, sizeof err) == 0);
    expect_error("reproduce your-data --seeds 0", "--seeds");
    expect_error("reproduce your-data --system bouncing-ball", "--system");
    expect_error("reproduce your-data --impact-law bogus", "--impact-law: 'bogus' is not auto, paper or newton");
    /* a results folder is a sweep folder holding its plan: a call with the
     * same settings resumes (nothing left to run), one with other settings
     * is refused, not mixed in; more seeds extend the folder's plan, and
     * fewer run nothing new */
    CHECK(system("rm -rf imp_yd") == 0);
    CHECK(run("reproduce your-data --quick --epochs 1 --seeds 1 --out imp_yd", err, sizeof err) == 0);
    CHECK(access("imp_yd/tasks/your-data.cdl.auto.s0/result.npz", F_OK) == 0);
    CHECK(run("reproduce your-data --quick --epochs 1 --seeds 1 --out imp_yd", err, sizeof err) == 0);
    CHECK_MSG(strstr(err, "(0 run by this process)"), "the same call ran tasks again: %s", err);
    expect_error("reproduce your-data --quick --epochs 2 --seeds 1 --out imp_yd", "imp_yd holds a different plan");
    expect_error("reproduce your-data --quick --epochs 1 --seeds 1 --lr-schedule constant --out imp_yd", "use another --out");
    CHECK(run("reproduce your-data --quick --epochs 1 --seeds 2 --out imp_yd", err, sizeof err) == 0);
    CHECK(access("imp_yd/tasks/your-data.cdl.auto.s1/result.npz", F_OK) == 0);
    {
        imp_sweep_plan grown;
        CHECK_OK(imp_sweep_plan_load(&grown, "imp_yd/plan.txt"));
        CHECK_MSG(grown.n_tasks == 10, "the folder's plan has %d tasks, want 10 (5 models x 2 seeds)", grown.n_tasks);
        imp_sweep_plan_free(&grown);
    }
    CHECK(run("reproduce your-data --quick --epochs 1 --seeds 1 --out imp_yd", err, sizeof err) == 0);
    CHECK_MSG(strstr(err, "(0 run by this process)"), "a plan of fewer seeds ran tasks again: %s", err);
    CHECK(system("rm -rf imp_yd") == 0);
    expect_error("simulate compliant-ball --stiffness -1 -o x.npz", "--stiffness");
    expect_error("inspect imp_raw.txt", "unknown format");
    expect_error("inspect does_not_exist.npz", "does_not_exist.npz");
    imp_trajset_free(&ts);
    test_selections();
    test_hdf5_declared();
    test_other_limits();
    TEST_MAIN_END();
}
