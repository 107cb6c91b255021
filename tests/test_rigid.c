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


static const double PI = 3.14159265358979323846;

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


/* R(q) v, for building world-frame readings */
static void rotate(const double q[4], const double v[3], double out[3])
{
    double p[4] = {0, v[0], v[1], v[2]}, qc[4] = {q[0], -q[1], -q[2], -q[3]}, t[4], r[4];
    quat_mul(q, p, t);
    quat_mul(t, qc, r);
    for (int i = 0; i < 3; i++) out[i] = r[i + 1];
}

static void test_stats(void)
{
    int64_t lengths[3] = {6, 2, 9};
    double states[17 * 13];
    const double dt = 0.005;
    make_episodes(states, lengths, 3, dt);
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    t.dt = dt;
    CHECK_OK(imp_rigid_traj_set(&t, states, 17, lengths, NULL, 3, 1e-9));
    imp_rigid_stats s;
    CHECK_OK(imp_rigid_traj_stats(&t, &s));
    CHECK(s.n_episodes == 3 && s.n_rows == 17 && s.min_length == 2 && s.max_length == 9);
    CHECK(s.n_diffs == 14); /* pairs inside episodes only */
    CHECK(s.max_quat_norm_error < 1e-12);
    CHECK_MSG(s.lin_max < 1e-9, "%g", s.lin_max);
    CHECK_MSG(s.ang_max < 1e-9, "%g", s.ang_max);
    CHECK_MSG(s.ang_world_median > 0.1, "%g", s.ang_world_median); /* the body frame is told apart */
    CHECK(s.repeated_rows == 0 && s.repeated_angvel == 14 && s.first_angvel_repeated == 3);
    /* rate 3 + k rad/s for dt: the largest step is (3 + 2) dt */
    CHECK_CLOSE(s.max_step_angle, 5 * dt, 1e-9, 0);
    imp_rigid_traj_free(&t);

    /* the same motion with the angular velocity written in the world frame */
    double w[17 * 13];
    memcpy(w, states, sizeof w);
    for (int i = 0; i < 17; i++) rotate(w + i * 13, states + i * 13 + 7, w + i * 13 + 7);
    /* a repeated row (inside episode 2) and a velocity off the positions */
    memcpy(w + 12 * 13, w + 11 * 13, 13 * sizeof *w);
    w[3 * 13 + 10] += 0.5;
    imp_rigid_traj_default(&t);
    t.dt = dt;
    CHECK_OK(imp_rigid_traj_set(&t, w, 17, lengths, NULL, 3, 1e-9));
    CHECK_OK(imp_rigid_traj_stats(&t, &s));
    CHECK_MSG(s.ang_median > 0.1 && s.ang_world_median < 1e-9, "%g %g", s.ang_median, s.ang_world_median);
    CHECK(s.repeated_rows == 1 && s.first_angvel_repeated == 0);
    /* the repeated row: p did not move, v stayed v_11; row 3 is off by 0.5 */
    const double *v11 = w + 11 * 13 + 10;
    double vn = sqrt(v11[0] * v11[0] + v11[1] * v11[1] + v11[2] * v11[2]);
    CHECK_MSG(s.lin_max >= vn - 1e-12 && s.lin_max >= 0.5 - 1e-12 && s.lin_median < 1e-9, "%g %g %g", s.lin_max, vn,
              s.lin_median);
    imp_rigid_traj_free(&t);
}

static void set_pose(double *x, const double q[4], const double p[3])
{
    memset(x, 0, 13 * sizeof *x);
    memcpy(x, q, 4 * sizeof *x);
    memcpy(x + 4, p, 3 * sizeof *x);
}

static void test_metrics(void)
{
    imp_rigid_body body = {{0.1, 0.1, 0.1}, 1, {1, 1, 1}};
    double id[4] = {1, 0, 0, 0}, qz[4], qx[4];
    quat_axis(qz, (double[3]){0, 0, 1}, PI / 2);
    quat_axis(qx, (double[3]){1, 0, 0}, PI / 4);
    double pred[3 * 13], meas[3 * 13];
    /* a 90 degree rotation about z at every sample, same positions */
    for (int i = 0; i < 3; i++) {
        set_pose(meas + 13 * i, id, (double[3]){0.1 * i, 0, 1});
        set_pose(pred + 13 * i, qz, (double[3]){0.1 * i, 0, 1});
    }
    imp_rigid_metrics m;
    CHECK_OK(imp_rigid_metrics_episode(pred, meas, 3, &body, 0, &m));
    CHECK_CLOSE(m.rotation_error_deg, 90, 1e-12, 0);
    CHECK_CLOSE(m.position_error_pct, 0, 0, 1e-12);
    CHECK_CLOSE(m.penetration_pct, 0, 0, 1e-12);
    /* q and -q are one orientation */
    double mq[4] = {-qz[0], -qz[1], -qz[2], -qz[3]};
    CHECK_CLOSE(imp_rigid_quat_angle(qz, mq), 0, 0, 1e-12);
    CHECK_CLOSE(imp_rigid_quat_angle(id, qx) * 180 / PI, 45, 1e-12, 0);
    /* a constant offset of (3, 4, 0) mm: 5 mm = 5 % of a 0.1 m width */
    for (int i = 0; i < 3; i++) set_pose(pred + 13 * i, id, (double[3]){0.1 * i + 0.003, 0.004, 1});
    CHECK_OK(imp_rigid_metrics_episode(pred, meas, 3, &body, 0, &m));
    CHECK_CLOSE(m.position_error_pct, 5, 1e-12, 0);
    CHECK_CLOSE(m.rotation_error_deg, 0, 0, 1e-12);
    /* penetration: centre 0.04 over the ground (-0.01 below for the
     * lowest face) at sample 0, resting at 1, tilted 45 deg about x at 2:
     * lowest corner z - 0.05 sqrt 2 */
    set_pose(pred, id, (double[3]){0, 0, 0.04});
    set_pose(pred + 13, id, (double[3]){0, 0, 0.05});
    set_pose(pred + 26, qx, (double[3]){0, 0, 0.06});
    CHECK_CLOSE(imp_rigid_lowest_corner(pred, &body, 0), -0.01, 1e-12, 0);
    CHECK_CLOSE(imp_rigid_lowest_corner(pred + 26, &body, 0), 0.06 - 0.05 * sqrt(2), 1e-12, 0);
    CHECK_OK(imp_rigid_metrics_episode(pred, meas, 3, &body, 0, &m));
    double expect = 100 * (0.01 + 0 + (0.05 * sqrt(2) - 0.06)) / 3 / 0.1;
    CHECK_CLOSE(m.penetration_pct, expect, 1e-10, 0);
    /* a ground 1 cm higher adds 1 cm at each sample */
    CHECK_OK(imp_rigid_metrics_episode(pred, meas, 3, &body, 0.01, &m));
    CHECK_CLOSE(m.penetration_pct, expect + 100 * 0.01 / 0.1, 1e-10, 0);
    CHECK_FAILS(imp_rigid_metrics_episode(pred, meas, 0, &body, 0, &m), IMP_ERR_INVALID);
    pred[5] = NAN;
    CHECK_FAILS(imp_rigid_metrics_episode(pred, meas, 3, &body, 0, &m), IMP_ERR_NUMERIC);
}

static void test_ballistic(void)
{
    /* equal moments: the body-frame rate stays, q(t) = q0 exp(w t / 2);
     * the centre follows the parabola */
    imp_rigid_body cube = {{0.1, 0.1, 0.1}, 0.37, {0.002, 0.002, 0.002}};
    double x0[13], q0[4], w[3] = {1, -2, 3};
    quat_axis(q0, (double[3]){1, 2, 3}, 0.7);
    set_pose(x0, q0, (double[3]){0.1, 0.2, 0.5});
    memcpy(x0 + 7, w, sizeof w);
    x0[10] = 1;
    x0[11] = -0.5;
    x0[12] = 2;
    const size_t n = 40;
    const double dt = 0.01, g = 9.81;
    double out[40 * 13];
    CHECK_OK(imp_rigid_ballistic(x0, n, dt, &cube, g, 3, out));
    double err_q = 0, err_p = 0, wn = sqrt(14);
    for (size_t i = 0; i < n; i++) {
        double t = dt * (double)i, dq[4], q[4];
        quat_axis(dq, w, wn * t);
        quat_mul(q0, dq, q);
        err_q = fmax(err_q, imp_rigid_quat_angle(q, out + 13 * i));
        err_p = fmax(err_p, fabs(out[13 * i + 6] - (0.5 + 2 * t - 0.5 * g * t * t)));
        err_p = fmax(err_p, fabs(out[13 * i + 4] - (0.1 + t)));
    }
    CHECK_MSG(err_q < 1e-12 && err_p < 1e-12, "%g %g", err_q, err_p);
    /* unequal moments: energy and the world-frame angular momentum stay */
    imp_rigid_body box = {{0.1, 0.2, 0.3}, 1, {0.001, 0.002, 0.003}};
    CHECK_OK(imp_rigid_ballistic(x0, n, dt, &box, g, 4, out));
    double L0[3], E0 = 0, Lb[3];
    for (int c = 0; c < 3; c++) {
        Lb[c] = box.inertia[c] * w[c];
        E0 += 0.5 * box.inertia[c] * w[c] * w[c];
    }
    rotate(q0, Lb, L0);
    double dL = 0, dE = 0;
    for (size_t i = 0; i < n; i++) {
        const double *y = out + 13 * i;
        double L[3], E = 0;
        for (int c = 0; c < 3; c++) {
            Lb[c] = box.inertia[c] * y[7 + c];
            E += 0.5 * box.inertia[c] * y[7 + c] * y[7 + c];
        }
        rotate(y, Lb, L);
        for (int c = 0; c < 3; c++) dL = fmax(dL, fabs(L[c] - L0[c]));
        dE = fmax(dE, fabs(E - E0));
    }
    double Ln = sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
    CHECK_MSG(dL < 1e-5 * Ln && dE < 1e-9 * E0, "dL %g (|L| %g) dE %g", dL, Ln, dE);
    CHECK_FAILS(imp_rigid_ballistic(x0, 0, dt, &box, g, 4, out), IMP_ERR_INVALID);
}

static void test_split(void)
{
    int tr[128], va[128], te[128], nt, nv, ne;
    CHECK_OK(imp_rigid_split(500, 128, 0, 0.5, 0.25, tr, &nt, va, &nv, te, &ne));
    CHECK(nt == 64 && nv == 32 && ne == 32);
    int seen[500] = {0}, dup = 0;
    for (int i = 0; i < nt; i++) dup += seen[tr[i]]++;
    for (int i = 0; i < nv; i++) dup += seen[va[i]]++;
    for (int i = 0; i < ne; i++) dup += seen[te[i]]++;
    CHECK(dup == 0);
    int tr2[128], va2[128], te2[128];
    CHECK_OK(imp_rigid_split(500, 128, 0, 0.5, 0.25, tr2, &nt, va2, &nv, te2, &ne));
    CHECK(!memcmp(tr, tr2, 64 * sizeof *tr) && !memcmp(te, te2, 32 * sizeof *te));
    CHECK_OK(imp_rigid_split(500, 128, 1, 0.5, 0.25, tr2, &nt, va2, &nv, te2, &ne));
    CHECK(memcmp(tr, tr2, 64 * sizeof *tr) != 0);
    CHECK_OK(imp_rigid_split(500, 8, 0, 0.5, 0.25, tr, &nt, va, &nv, te, &ne));
    CHECK(nt == 4 && nv == 2 && ne == 2);
    CHECK_FAILS(imp_rigid_split(5, 6, 0, 0.5, 0.25, tr, &nt, va, &nv, te, &ne), IMP_ERR_INVALID);
    CHECK_FAILS(imp_rigid_split(5, 4, 0, 0.8, 0.25, tr, &nt, va, &nv, te, &ne), IMP_ERR_INVALID);
}

/* impulse import on a ContactNets-layout file: the checks it prints, the
 * file it writes, and one error line for a bad quaternion. */
static void test_import_cli(void)
{
    int64_t lengths[2] = {6, 9}, ids[2] = {7, 8};
    double states[15 * 13];
    make_episodes(states, lengths, 2, 0.01);
    imp_npz *z = imp_npz_new();
    size_t sh[2] = {15, 13}, eh[1] = {2};
    CHECK_OK(imp_npz_add_f64(z, "states", 2, sh, states));
    CHECK_OK(imp_npz_add_i64(z, "lengths", 1, eh, lengths));
    CHECK_OK(imp_npz_add_i64(z, "toss", 1, eh, ids));
    CHECK_OK(imp_npz_save(z, tmp("cn.npz")));
    states[3 * 13 + 1] += 0.01; /* a quaternion off unit norm */
    CHECK_OK(imp_npz_add_f64(z, "states", 2, sh, states));
    CHECK_OK(imp_npz_save(z, tmp("cn_bad.npz")));
    imp_npz_free(z);
    char cmd[2048], out[8192];
    snprintf(cmd, sizeof cmd, "%s import %s --dt 0.01 --size 0.2 --mass 2 --ground -0.5 -o %s", IMPULSE_CLI_PATH,
             tmp("cn.npz"), tmp("cn_out.npz"));
    int rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "%s", out);
    CHECK_MSG(strstr(out, "2 episodes, 15 samples (6 to 9 per episode)") != NULL, "%s", out);
    CHECK(strstr(out, "max | |q| - 1 |") && strstr(out, "angular velocity (body frame)") && strstr(out, "repeated rows"));
    CHECK(strstr(out, "ballistic flight"));
    imp_rigid_traj t;
    CHECK_OK(imp_rigid_traj_load(&t, tmp("cn_out.npz")));
    CHECK(t.n_rows == 15 && t.ids && t.ids[1] == 8 && t.dt == 0.01 && t.body.size[1] == 0.2 && t.body.mass == 2);
    CHECK_CLOSE(t.body.inertia[0], 2 * (0.04 + 0.04) / 12, 1e-12, 0);
    CHECK(t.ground_height == -0.5);
    imp_rigid_traj_free(&t);
    /* --json: the checks as numbers */
    snprintf(cmd, sizeof cmd, "%s import %s --rigid --dt 0.01 --json -o %s 2>/dev/null", IMPULSE_CLI_PATH,
             tmp("cn.npz"), tmp("cn_out.npz"));
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0 && strstr(out, "\"episodes\":2") && strstr(out, "\"repeated_rows\":0"), "%s", out);
    /* a wrong dt shows in the velocity check */
    snprintf(cmd, sizeof cmd, "%s import %s --dt 0.02 --json -o %s 2>/dev/null", IMPULSE_CLI_PATH, tmp("cn.npz"),
             tmp("cn_out.npz"));
    rc = test_run_command(cmd, out, sizeof out);
    const char *k = strstr(out, "\"linear_velocity_error_median\":");
    CHECK_MSG(rc == 0 && k && atof(k + 32) > 0.1, "%s", out);
    /* errors: one line naming the problem, exit 1 */
    snprintf(cmd, sizeof cmd, "%s import %s -o %s", IMPULSE_CLI_PATH, tmp("cn_bad.npz"), tmp("cn_out2.npz"));
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 1 && strstr(out, "impulse import: error:") && strstr(out, "quaternion norm") &&
                  !strchr(strchr(out, '\n') + 1, '\n'),
              "%s", out);
    snprintf(cmd, sizeof cmd, "%s import %s --rigid --size 0,1 -o %s", IMPULSE_CLI_PATH, tmp("cn.npz"),
             tmp("cn_out2.npz"));
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 1 && strstr(out, "--size"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s import %s --rigid --states toss -o %s", IMPULSE_CLI_PATH, tmp("cn.npz"),
             tmp("cn_out2.npz"));
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 1 && strstr(out, "toss: a 1-d array"), "%s", out);
    CHECK(access(tmp("cn_out2.npz"), F_OK) != 0);
    /* --episodes A:B keeps episodes A..B-1 with their ids and states */
    snprintf(cmd, sizeof cmd, "%s import %s --dt 0.01 --episodes 1:2 -o %s", IMPULSE_CLI_PATH, tmp("cn.npz"),
             tmp("cn_ep.npz"));
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0 && strstr(out, "1 episodes, 9 samples (9 to 9 per episode)"), "%s", out);
    CHECK_OK(imp_rigid_traj_load(&t, tmp("cn_ep.npz")));
    CHECK(t.n_episodes == 1 && t.n_rows == 9 && t.lengths[0] == 9 && t.ids && t.ids[0] == 8);
    CHECK(!memcmp(t.states, states + 6 * 13, 9 * 13 * sizeof *states));
    imp_rigid_traj_free(&t);
    const char *bad_ranges[3] = {"0:3", "1:1", "1:x"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "%s import %s --episodes %s -o %s", IMPULSE_CLI_PATH, tmp("cn.npz"), bad_ranges[i],
                 tmp("cn_out2.npz"));
        rc = test_run_command(cmd, out, sizeof out);
        CHECK_MSG(rc == 1 && strstr(out, "impulse import: error: --episodes"), "%s: %s", bad_ranges[i], out);
    }
    CHECK(access(tmp("cn_out2.npz"), F_OK) != 0);
    /* impulse inspect: the rigid file's facts, and the way to import the raw one */
    snprintf(cmd, sizeof cmd, "%s inspect %s", IMPULSE_CLI_PATH, tmp("cn_out.npz"));
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0 && strstr(out, "rigid-body trajectories (docs/cube.md): 2 episodes, 15 samples"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s inspect %s", IMPULSE_CLI_PATH, tmp("cn.npz"));
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0 && strstr(out, "--rigid"), "%s", out);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/impulse_test_rigid_%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", tmpdir);
    if (system(cmd)) return 1;
    test_roundtrip();
    test_hostile();
    test_stats();
    test_metrics();
    test_ballistic();
    test_split();
    test_import_cli();
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) return 1;
    TEST_MAIN_END();
}
