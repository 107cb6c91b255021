/* bouncing-disks:N (src/systems/disks_sim.c): event-accurate disks in a box
 * on the contact module, and the trajectory format's sphere pairs and radii
 * (contact_kinds, radii; docs/data-format.md). */
#include "impulse/contact.h"
#include "impulse/contact_systems.h"
#include "impulse/io.h"
#include "systems/points_sim.h"
#include "test.h"
#define CLI_TEST_TAG "disks"
#include "cli_test.h"

#include <math.h>
#include <string.h>

enum { K = 5, DIM = 3, D = K * DIM };

/* Total energy: translation and spin (M = m I_3 in (x, y, k theta)) plus
 * gravity. */
static double energy(const imp_trajset *ts, const double *q, const double *v)
{
    double E = 0.0;
    for (int k = 0; k < ts->geom.n_bodies; k++) {
        double m = ts->geom.mass[k];
        for (int a = 0; a < DIM; a++) E += 0.5 * m * v[DIM * k + a] * v[DIM * k + a];
        E += m * ts->gravity * q[DIM * k + 1];
    }
    return E;
}

/* Smallest gap over every contact (walls with the radius folded into the
 * offset, disk-disk from the centres) at every sample. */
static double min_gap(const imp_trajset *ts)
{
    double lo = INFINITY;
    for (size_t i = 0; i < (size_t)ts->n_traj * ts->n_steps; i++)
        for (int p = 0; p < ts->geom.n_pairs; p++) lo = fmin(lo, imp_contact_gap(&ts->geom, p, ts->q_clean + i * D));
    return lo;
}

/* e = 1 and mu = 0 everywhere: the total energy (spin included: without
 * friction nothing turns a disk) stays the first sample's to rounding, with
 * many impacts of every kind; no contact penetrates. */
static void test_energy_conserved(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-disks:5", &o));
    o.n_traj = 3;
    o.seed = 11;
    imp_trajset ts;
    CHECK_OK(imp_simulate_disks_law("bouncing-disks:5", &o, 1.0, 0.0, &ts));
    double worst = 0.0;
    int labels = 0;
    for (int tr = 0; tr < ts.n_traj; tr++) {
        size_t i0 = (size_t)tr * ts.n_steps;
        double E0 = energy(&ts, ts.q_clean + i0 * D, ts.qdot_clean + i0 * D);
        for (int t = 1; t < ts.n_steps; t++) {
            size_t i = i0 + t;
            worst = fmax(worst, fabs(energy(&ts, ts.q_clean + i * D, ts.qdot_clean + i * D) - E0) / E0);
            for (int k = 0; k < K; k++) labels += ts.contact[i * K + k] > 0.5;
        }
    }
    double lo = min_gap(&ts);
    printf("e = 1, mu = 0: largest relative energy change %.2e over %d labelled samples; smallest gap %.2e\n", worst,
           labels, lo);
    CHECK(labels > 100);
    CHECK(worst < 1e-9);
    CHECK(lo > -1e-9);
    imp_trajset_free(&ts);
}

/* Disk-disk impacts with the system's e and mu: over a sample in which two
 * flying disks collide away from everything else, their total momentum
 * changes by gravity alone, and their relative motion (a straight line:
 * gravity cancels) meets at the sum of the radii with post-impact normal
 * velocity -e times the pre-impact one (the normal found from the line);
 * the tangential impulse stays within the friction cone. No contact of
 * any data set penetrates by more than 1e-9 m (events detected accurately). */
static void test_disk_impacts(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-disks:5", &o));
    o.n_traj = 20;
    o.seed = 3;
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-disks:5", &o, &ts));
    const imp_contact_geometry *g = &ts.geom;
    CHECK(g->n_bodies == K && g->dim == DIM && g->n_pairs == 30 && g->has_pair_law && g->has_radii);
    int checked = 0, bad_p = 0, bad_e = 0, bad_cone = 0;
    double dt = ts.dt, grav = ts.gravity;
    for (int tr = 0; tr < ts.n_traj; tr++)
        for (int t = 1; t < ts.n_steps; t++) {
            size_t i1 = (size_t)tr * ts.n_steps + t, i0 = i1 - 1;
            const double *q0 = ts.q_clean + i0 * D, *v0 = ts.qdot_clean + i0 * D, *v1 = ts.qdot_clean + i1 * D;
            const double *q1 = ts.q_clean + i1 * D;
            for (int p = 20; p < g->n_pairs; p++) {
                int a = g->pairs[p].body_i, b = g->pairs[p].body_j;
                if (ts.contact[i1 * K + a] < 0.5 || ts.contact[i1 * K + b] < 0.5) continue;
                /* away from everything else at both samples (two samples' travel) */
                int alone = 1;
                for (int r = 0; r < g->n_pairs && alone; r++) {
                    if (r == p || (g->pairs[r].body_j != a && g->pairs[r].body_j != b && g->pairs[r].body_i != a &&
                                   g->pairs[r].body_i != b))
                        continue;
                    alone = imp_contact_gap(g, r, q0) > 0.1 && imp_contact_gap(g, r, q1) > 0.1;
                }
                if (!alone) continue;
                double ma = g->mass[a], mb = g->mass[b], R = g->radius[a] + g->radius[b];
                for (int c = 0; c < 2; c++) {
                    double dP = ma * (v1[DIM * a + c] - v0[DIM * a + c]) + mb * (v1[DIM * b + c] - v0[DIM * b + c]);
                    double want = c == 1 ? -(ma + mb) * grav * dt : 0.0;
                    bad_p += fabs(dP - want) > 1e-9;
                }
                /* relative line d(s) = d0 + w0 s meets |d| = R at s* */
                double d0[2], w0[2], w1[2];
                for (int c = 0; c < 2; c++) {
                    d0[c] = q0[DIM * b + c] - q0[DIM * a + c];
                    w0[c] = v0[DIM * b + c] - v0[DIM * a + c];
                    w1[c] = v1[DIM * b + c] - v1[DIM * a + c];
                }
                double A = w0[0] * w0[0] + w0[1] * w0[1], B = 2 * (d0[0] * w0[0] + d0[1] * w0[1]);
                double C = d0[0] * d0[0] + d0[1] * d0[1] - R * R, disc = B * B - 4 * A * C;
                if (!(disc > 0.0) || A == 0.0) continue;
                double s = (-B - sqrt(disc)) / (2 * A);
                if (!(s >= 0.0 && s <= dt)) continue;
                double n[2] = {(d0[0] + w0[0] * s) / R, (d0[1] + w0[1] * s) / R}, tg[2] = {n[1], -n[0]};
                double un0 = n[0] * w0[0] + n[1] * w0[1], un1 = n[0] * w1[0] + n[1] * w1[1];
                bad_e += fabs(un1 + g->pair_e[p] * un0) > 1e-7 * (1.0 + fabs(un0));
                /* impulse on b (per unit: mass b times velocity change) within the cone */
                double Pn = mb * (n[0] * (v1[DIM * b] - v0[DIM * b]) + n[1] * (v1[DIM * b + 1] - v0[DIM * b + 1] + grav * dt));
                double Pt = mb * (tg[0] * (v1[DIM * b] - v0[DIM * b]) + tg[1] * (v1[DIM * b + 1] - v0[DIM * b + 1] + grav * dt));
                bad_cone += fabs(Pt) > g->pair_mu[p] * Pn * (1.0 + 1e-7) + 1e-9;
                checked++;
            }
        }
    double lo = min_gap(&ts);
    printf("disk-disk impacts checked %d: momentum off %d, Newton law off %d, outside the cone %d; smallest gap %.2e\n",
           checked, bad_p, bad_e, bad_cone, lo);
    CHECK(checked >= 5);
    CHECK(bad_p == 0 && bad_e == 0 && bad_cone == 0);
    CHECK(lo > -1e-9);
    imp_trajset_free(&ts);
}

/* The trajectory geometry's sphere pair, linearised at a state, gives the
 * contact module's normal and tangent velocities of the same two disks
 * (planar bodies, q = (x, y, theta)): the spin convention of the format
 * (slip = t . (v_j - v_i) + sqrt 2 (s_i + s_j), s = k theta) is the
 * module's rim kinematics. */
static void test_geometry_matches_module(void)
{
    double r[2] = {0.13, 0.19}, m[2] = {0.7, 1.6}, k[2] = {r[0] / sqrt(2.0), r[1] / sqrt(2.0)};
    imp_contact_model cm;
    memset(&cm, 0, sizeof cm);
    cm.dim = 2, cm.n_bodies = 2, cm.n_candidates = 1, cm.gap_tol = 1e-9;
    for (int b = 0; b < 2; b++) {
        cm.bodies[b].kind = IMP_BODY_PLANAR;
        cm.bodies[b].mass = m[b];
        cm.bodies[b].inertia[0] = 0.5 * m[b] * r[b] * r[b];
    }
    cm.cand[0] = (imp_contact_candidate){.kind = IMP_CONTACT_SPHERES, .body_a = 0, .body_b = 1, .radius_a = r[0],
                                        .radius_b = r[1], .e = 0.5, .mu = 0.3};
    CHECK_OK(imp_contact_model_init(&cm));
    imp_contact_geometry g;
    memset(&g, 0, sizeof g);
    g.n_bodies = 2, g.dim = 3, g.restitution = NAN, g.n_pairs = 1, g.has_radii = 1;
    g.mass[0] = m[0], g.mass[1] = m[1], g.radius[0] = r[0], g.radius[1] = r[1];
    g.pairs[0] = (imp_contact_pair){.body_i = 0, .body_j = 1, .kind = IMP_PAIR_SPHERE, .tangent = {0, 0, sqrt(2.0)}};
    CHECK_OK(imp_contact_geometry_check(&g));
    double q[6] = {0.3, 0.4, 0.2, 0.55, 0.71, -0.4}, v[6] = {0.9, -0.3, 0.5, -1.1, 0.2, -0.7};
    double mq[6], mv[6];
    for (int b = 0; b < 2; b++) {
        mq[3 * b] = q[3 * b], mq[3 * b + 1] = q[3 * b + 1], mq[3 * b + 2] = q[3 * b + 2] / k[b];
        mv[3 * b] = v[3 * b], mv[3 * b + 1] = v[3 * b + 1], mv[3 * b + 2] = v[3 * b + 2] / k[b];
    }
    imp_contact_frame f;
    CHECK_OK(imp_contact_detect(&cm, mq, &f));
    double J[2 * 6];
    imp_contact_jacobian(&cm, mq, &f, 0, J);
    double un = 0.0, ut = 0.0;
    for (int i = 0; i < 6; i++) un += J[i] * mv[i], ut += J[6 + i] * mv[i];
    imp_contact_geometry gl;
    imp_contact_geometry_at(&g, q, &gl);
    printf("sphere pair: gap %.6f / %.6f, normal velocity %.6f / %.6f, slip %.6f / %.6f (module / format)\n", f.phi,
           imp_contact_gap(&g, 0, q), un, imp_contact_normal_velocity(&gl, 0, v), ut,
           imp_contact_slip_velocity(&gl, 0, v));
    CHECK_CLOSE(imp_contact_gap(&g, 0, q), f.phi, 1e-12, 0);
    CHECK_CLOSE(imp_contact_gap(&gl, 0, q), f.phi, 1e-12, 0);
    CHECK_CLOSE(imp_contact_normal_velocity(&gl, 0, v), un, 1e-12, 0);
    CHECK_CLOSE(imp_contact_normal_velocity_at(&g, 0, q, v), un, 1e-12, 0);
    CHECK_CLOSE(imp_contact_slip_velocity(&gl, 0, v), ut, 1e-12, 0);
}

/* The format: a bouncing-disks file round-trips its pair kinds and radii;
 * bad geometry and labels give one error naming the field. */
static void test_format(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-disks:3", &o));
    o.n_traj = 2;
    o.n_steps = 100;
    imp_trajset ts, back;
    CHECK_OK(imp_simulate("bouncing-disks:3", &o, &ts));
    CHECK_OK(imp_trajset_save(&ts, "test_disks_sim.npz"));
    CHECK_OK(imp_trajset_load(&back, "test_disks_sim.npz"));
    int same = back.geom.has_radii && back.geom.n_pairs == ts.geom.n_pairs;
    for (int p = 0; same && p < ts.geom.n_pairs; p++)
        same = back.geom.pairs[p].kind == ts.geom.pairs[p].kind &&
               back.geom.pairs[p].tangent[2] == ts.geom.pairs[p].tangent[2];
    for (int k = 0; same && k < 3; k++) same = back.geom.radius[k] == ts.geom.radius[k];
    CHECK(same);
    imp_trajset_free(&back);

    /* geometry errors, one per field */
    const char *fields[] = {"radii[1]", "contact_kinds[12]", "contact_normals[12]", "contact_pairs[12]",
                            "contact_kinds[13]"};
    for (int c = 0; c < 5; c++) {
        imp_contact_geometry g = ts.geom;
        if (c == 0) g.radius[1] = 0.0;
        if (c == 1) g.pairs[12].body_i = IMP_WALL;                        /* a sphere pair with a wall */
        if (c == 2) g.pairs[12].normal[0] = 1.0;                          /* a sphere pair's normal is not data */
        if (c == 3) g.pairs[12].body_j = 7;                               /* an unknown body */
        if (c == 4) g.pairs[13].kind = 2;                                 /* an unknown kind */
        CHECK_FAILS(imp_contact_geometry_check(&g), IMP_ERR_INVALID);
        CHECK_MSG(strstr(imp_last_error(), fields[c]) != NULL, "case %d: '%s'", c, imp_last_error());
    }
    imp_contact_geometry g = ts.geom;
    g.has_radii = 0;
    CHECK_FAILS(imp_contact_geometry_check(&g), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "radii") != NULL);
    g = ts.geom;
    g.pairs[0].normal[0] = g.pairs[0].normal[1] = 0.0; /* a degenerate plane normal */
    CHECK_FAILS(imp_contact_geometry_check(&g), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "contact_normals[0]") != NULL);

    /* through files and the CLI: one line each */
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, "test_disks_sim.npz"));
    imp_npz *bad = imp_npz_new();
    for (size_t i = 0; z && i < imp_npz_count(z); i++) {
        const imp_npy_array *a = imp_npz_at(z, i);
        if (strcmp(a->name, "radii")) CHECK_OK(imp_npz_add_array(bad, a->name, a));
    }
    CHECK_OK(imp_npz_add_f64(bad, "radii", 1, (size_t[]){3}, (double[]){0.1, -0.2, 0.15}));
    CHECK_OK(imp_npz_save(bad, "test_disks_bad_radii.npz"));
    imp_npz_free(bad);
    imp_npz_free(z);
    expect_error("train cdl --data test_disks_bad_radii.npz --epochs 1 -o test_disks_model.npz", "radii[1]");

    /* a label on a disk far from everything it can touch */
    int far_t = -1;
    for (int t = 0; t < ts.n_steps && far_t < 0; t++) {
        const double *q = ts.q + (size_t)t * 9;
        int far = 1;
        for (int p = 0; p < ts.geom.n_pairs; p++)
            if (ts.geom.pairs[p].body_j == 0 || ts.geom.pairs[p].body_i == 0) far &= imp_contact_gap(&ts.geom, p, q) > 0.3;
        if (far) far_t = t;
    }
    CHECK(far_t >= 0);
    ts.contact[(size_t)far_t * 3] = 1.0;
    CHECK_OK(imp_trajset_save(&ts, "test_disks_bad_labels.npz"));
    CHECK_FAILS(imp_trajset_load(&back, "test_disks_bad_labels.npz"), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "labels inconsistent with the geometry") != NULL);
    expect_error("train cdl --data test_disks_bad_labels.npz --epochs 1 -o test_disks_model.npz",
                 "labels inconsistent with the geometry");
    remove("test_disks_sim.npz"), remove("test_disks_bad_radii.npz"), remove("test_disks_bad_labels.npz");
    imp_trajset_free(&ts);
}

int main(void)
{
    imp_blas_init();
    test_energy_conserved();
    test_disk_impacts();
    test_geometry_matches_module();
    test_format();
    TEST_MAIN_END();
}
