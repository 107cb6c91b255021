/* Rigid-body trajectories: the file reader/writer (also on hostile
 * shapes), the data checks behind `impulse import`, the full-toss metrics,
 * ballistic flight and splits (include/impulse/rigid_traj.h). */
#define _GNU_SOURCE
#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/rigid_traj.h"
#include "test.h"

#include <stdint.h>
#include <unistd.h>


static char tmpdir[256];

static const char *tmp(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void quat_axis(double q[4], const double axis[3], double angle)
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    q[0] = cos(angle / 2);
    for (int i = 0; i < 3; i++) q[i + 1] = sin(angle / 2) * axis[i] / n;
}

static void quat_mul(const double a[4], const double b[4], double r[4])
{
    r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* Episodes whose velocities are exact backward differences of the poses:
 * constant body-frame rate w about a fixed body axis, a parabola for p. */
static void make_episodes(double *states, const int64_t *lengths, int n_ep, double dt)
{
    size_t row = 0;
    for (int k = 0; k < n_ep; k++) {
        double axis[3] = {1, 0.5 * k - 1, 2}, q0[4], an = 0;
        for (int i = 0; i < 3; i++) an += axis[i] * axis[i];
        an = sqrt(an);
        quat_axis(q0, (double[3]){0, 1, 1}, 0.3 + k);
        double rate = 3.0 + k;
        for (int64_t i = 0; i < lengths[k]; i++, row++) {
            double *x = states + row * 13, dq[4], t = dt * (double)i;
            quat_axis(dq, axis, rate * t);
            quat_mul(q0, dq, x);
            double p[3], pp[3];
            for (int c = 0; c < 3; c++) {
                p[c] = 0.1 * c + (0.5 + c) * t - (c == 2 ? 4.905 * t * t : 0);
                double tp = t - dt;
                pp[c] = 0.1 * c + (0.5 + c) * tp - (c == 2 ? 4.905 * tp * tp : 0);
            }
            for (int c = 0; c < 3; c++) {
                x[4 + c] = p[c];
                x[7 + c] = rate * axis[c] / an;
                x[10 + c] = (p[c] - pp[c]) / dt;
            }
        }
    }
}

static void test_roundtrip(void)
{
    int64_t lengths[3] = {5, 1, 7}, ids[3] = {10, 11, 12};
    double states[13 * 13];
    make_episodes(states, lengths, 3, 0.01);
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    t.dt = 0.01;
    t.body.size[2] = 0.2;
    t.body.mass = 2.5;
    t.body.inertia[1] = 0.004;
    t.ground_height = -0.001;
    snprintf(t.source, sizeof t.source, "test");
    CHECK_OK(imp_rigid_traj_set(&t, states, 13, lengths, ids, 3, 1e-9));
    CHECK_OK(imp_rigid_traj_save(&t, tmp("r.npz")));
    imp_rigid_traj u;
    CHECK_OK(imp_rigid_traj_load(&u, tmp("r.npz")));
    CHECK(u.n_rows == 13 && u.n_episodes == 3);
    CHECK(u.states && !memcmp(u.states, states, sizeof states));
    CHECK(u.lengths && u.lengths[2] == 7 && u.ids && u.ids[1] == 11);
    CHECK(u.dt == 0.01 && u.body.size[2] == 0.2 && u.body.mass == 2.5 && u.body.inertia[1] == 0.004);
    CHECK(u.ground_height == -0.001 && u.gravity == 9.81 && !strcmp(u.source, "test"));
    CHECK(imp_rigid_traj_offset(&u, 2) == 6 && imp_rigid_traj_offset(&u, 3) == 13);
    imp_rigid_traj_free(&u);

    /* the ContactNets layout: states + lengths (+ toss) with no meta */
    imp_npz *z = imp_npz_new();
    size_t sh[2] = {13, 13}, eh[1] = {3};
    CHECK_OK(imp_npz_add_f64(z, "states", 2, sh, states));
    CHECK_OK(imp_npz_add_i64(z, "lengths", 1, eh, lengths));
    CHECK_OK(imp_npz_add_i64(z, "toss", 1, eh, ids));
    CHECK_OK(imp_npz_save(z, tmp("raw.npz")));
    imp_npz_free(z);
    imp_rigid_traj_default(&u);
    CHECK_OK(imp_rigid_traj_read_arrays(&u, tmp("raw.npz"), "states", "lengths", "toss", 1e-9));
    CHECK(u.n_rows == 13 && u.ids && u.ids[0] == 10 && u.body.mass == 0.37);
    imp_rigid_traj_free(&u);
    /* a rigid-trajectory loader refuses a file without its meta */
    CHECK_FAILS(imp_rigid_traj_load(&u, tmp("raw.npz")), IMP_ERR_NOT_FOUND);
    CHECK(strstr(imp_last_error(), "meta") != NULL);
    imp_rigid_traj_free(&t);
}

/* Write states (rows x cols) and lengths as an .npz and read it back with
 * the ContactNets reader: returns its status. */
static int read_hostile(const double *states, size_t rows, size_t cols, const int64_t *lengths, size_t n_ep)
{
    imp_npz *z = imp_npz_new();
    size_t sh[2] = {rows, cols}, eh[1] = {n_ep};
    int st = imp_npz_add_f64(z, "states", 2, sh, states);
    if (!st) st = imp_npz_add_i64(z, "lengths", 1, eh, lengths);
    if (!st) st = imp_npz_save(z, tmp("h.npz"));
    imp_npz_free(z);
    if (st) return 99;
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    imp_clear_error();
    st = imp_rigid_traj_read_arrays(&t, tmp("h.npz"), "states", "lengths", NULL, 1e-6);
    CHECK(st == IMP_OK || (t.states == NULL && t.n_rows == 0));
    imp_rigid_traj_free(&t);
    return st;
}

static void test_hostile(void)
{
    int64_t lengths[2] = {4, 3};
    double states[7 * 13];
    make_episodes(states, lengths, 2, 0.01);
    CHECK(read_hostile(states, 7, 13, lengths, 2) == IMP_OK);
    /* lengths not summing to the rows, zero, negative, huge */
    int64_t bad[][2] = {{4, 4}, {4, 2}, {0, 7}, {-1, 8}, {INT64_MAX, 7}, {INT64_MIN, 3}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int st = read_hostile(states, 7, 13, bad[i], 2);
        CHECK_MSG(st == IMP_ERR_SHAPE && strstr(imp_last_error(), "lengths"), "case %zu: %d %s", i, st,
                  imp_last_error());
    }
    /* no episodes, no rows */
    CHECK(read_hostile(states, 0, 13, lengths, 0) == IMP_ERR_SHAPE);
    /* wrong column count */
    CHECK(read_hostile(states, 7, 12, lengths, 2) == IMP_ERR_SHAPE);
    CHECK(strstr(imp_last_error(), "(N, 13)") != NULL);
    /* NaN, infinity: named with episode and sample */
    double s2[7 * 13];
    memcpy(s2, states, sizeof s2);
    s2[5 * 13 + 8] = NAN;
    CHECK(read_hostile(s2, 7, 13, lengths, 2) == IMP_ERR_NUMERIC);
    memcpy(s2, states, sizeof s2);
    s2[5 * 13 + 8] = INFINITY;
    CHECK(read_hostile(s2, 7, 13, lengths, 2) == IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "states") != NULL);
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    CHECK_FAILS(imp_rigid_traj_set(&t, s2, 7, lengths, NULL, 2, 1e-6), IMP_ERR_NUMERIC);
    CHECK_MSG(strstr(imp_last_error(), "episode 1 sample 1") != NULL, "%s", imp_last_error());
    /* a quaternion off unit norm */
    memcpy(s2, states, sizeof s2);
    s2[2 * 13 + 0] *= 1.001;
    CHECK(read_hostile(s2, 7, 13, lengths, 2) == IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "quaternion norm") != NULL);
    memset(s2, 0, sizeof s2); /* zero quaternions */
    CHECK(read_hostile(s2, 7, 13, lengths, 2) == IMP_ERR_NUMERIC);
    /* lengths of the wrong rank or dtype */
    imp_npz *z = imp_npz_new();
    size_t sh[2] = {7, 13}, lh[2] = {1, 2};
    CHECK_OK(imp_npz_add_f64(z, "states", 2, sh, states));
    CHECK_OK(imp_npz_add_i64(z, "lengths", 2, lh, lengths));
    CHECK_OK(imp_npz_save(z, tmp("h2.npz")));
    imp_npz_free(z);
    imp_rigid_traj_default(&t);
    CHECK_FAILS(imp_rigid_traj_read_arrays(&t, tmp("h2.npz"), "states", "lengths", NULL, 1e-6), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_rigid_traj_read_arrays(&t, tmp("h2.npz"), "states", "missing", NULL, 1e-6), IMP_ERR_NOT_FOUND);
    CHECK_FAILS(imp_rigid_traj_read_arrays(&t, tmp("nonexistent.npz"), "states", "lengths", NULL, 1e-6), IMP_ERR_IO);
    /* bad meta fields */
    t.dt = 0;
    CHECK_FAILS(imp_rigid_traj_read_arrays(&t, tmp("h2.npz"), "states", "lengths", NULL, 1e-6), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "dt") != NULL);
    imp_rigid_traj_default(&t);
    t.body.size[1] = -1;
    CHECK_FAILS(imp_rigid_traj_set(&t, states, 7, lengths, NULL, 2, 1e-6), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "size y") != NULL);
    /* sizes against the input limit before allocation */
    imp_rigid_traj_default(&t);
    imp_set_input_limit(7 * 13 * 8 - 1);
    CHECK_FAILS(imp_rigid_traj_set(&t, states, 7, lengths, NULL, 2, 1e-6), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "input limit") != NULL && t.states == NULL);
    imp_set_input_limit(0);
    /* a saved file whose meta was tampered with */
    CHECK_OK(imp_rigid_traj_set(&t, states, 7, lengths, NULL, 2, 1e-6));
    CHECK_OK(imp_rigid_traj_save(&t, tmp("m.npz")));
    imp_npz *m = NULL;
    CHECK_OK(imp_npz_load(&m, tmp("m.npz")));
    CHECK_OK(imp_npz_set_meta(m, "{\"kind\": \"rigid-trajectories\", \"dt\": -1, \"mass\": 1, \"ground_height\": 0, "
                                 "\"gravity\": 9.81, \"shape\": \"box\"}"));
    CHECK_OK(imp_npz_save(m, tmp("m2.npz")));
    CHECK_OK(imp_npz_set_meta(m, "{\"kind\": \"rigid-trajectories\", \"dt\": 0.01, \"mass\": 1, \"ground_height\": 0, "
                                 "\"gravity\": 9.81, \"shape\": \"sphere\"}"));
    CHECK_OK(imp_npz_save(m, tmp("m3.npz")));
    size_t two[1] = {2};
    CHECK_OK(imp_npz_add_f64(m, "body_size", 1, two, (double[2]){1, 1}));
    CHECK_OK(imp_npz_set_meta(m, "{\"kind\": \"rigid-trajectories\", \"dt\": 0.01, \"mass\": 1, \"ground_height\": 0, "
                                 "\"gravity\": 9.81, \"shape\": \"box\"}"));
    CHECK_OK(imp_npz_save(m, tmp("m4.npz")));
    imp_npz_free(m);
    imp_rigid_traj u;
    CHECK_FAILS(imp_rigid_traj_load(&u, tmp("m2.npz")), IMP_ERR_INVALID);
    CHECK_FAILS(imp_rigid_traj_load(&u, tmp("m3.npz")), IMP_ERR_UNSUPPORTED);
    CHECK_FAILS(imp_rigid_traj_load(&u, tmp("m4.npz")), IMP_ERR_SHAPE);
    CHECK(strstr(imp_last_error(), "body_size") != NULL);
    imp_rigid_traj_free(&t);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/impulse_test_rigid_%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", tmpdir);
    if (system(cmd)) return 1;
    test_roundtrip();
    test_hostile();
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) return 1;
    TEST_MAIN_END();
}
