/* bouncing-points:N (src/systems/points_sim.c): event-accurate point masses
 * in a box with e and mu per contact, and the per-pair e and mu of the
 * trajectory format (contact_restitution, contact_friction). */
#include "impulse/contact_systems.h"
#include "impulse/io.h"
#include "test.h"

#include <math.h>
#include <string.h>

/* Every sample interval: in the box, no energy gain, free flight a
 * parabola; every single floor impact follows its pair's law exactly:
 * post-impact normal velocity -e times the pre-impact one, and a
 * tangential impulse within the cone (at its edge when the point slides). */
static void test_motion_and_law(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-points:5", &o));
    o.n_traj = 3;
    o.seed = 7;
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-points:5", &o, &ts));
    const imp_contact_geometry *g = &ts.geom;
    CHECK(g->n_bodies == 5 && g->dim == 2 && g->n_pairs == 20 && g->has_pair_law);
    double gr = o.gravity, dt = o.dt;
    int flights = 0, floor_impacts = 0, bad_box = 0, gains = 0, bad_flight = 0, bad_e = 0, bad_mu = 0, slides = 0;
    for (int n = 0; n < ts.n_traj; n++)
        for (int t = 1; t < ts.n_steps; t++)
            for (int k = 0; k < 5; k++) {
                size_t i0 = ((size_t)n * ts.n_steps + t - 1) * 10 + 2 * k, i1 = i0 + 10;
                const double *q0 = ts.q_clean + i0, *v0 = ts.qdot_clean + i0, *q1 = ts.q_clean + i1,
                             *v1 = ts.qdot_clean + i1;
                double lab0 = ts.contact[((size_t)n * ts.n_steps + t - 1) * 5 + k];
                double lab = ts.contact[((size_t)n * ts.n_steps + t) * 5 + k];
                if (q1[0] < -1e-9 || q1[0] > 2.0 + 1e-9 || q1[1] < -1e-9 || q1[1] > 2.0 + 1e-9) bad_box++;
                double E0 = 0.5 * (v0[0] * v0[0] + v0[1] * v0[1]) + gr * q0[1];
                double E1 = 0.5 * (v1[0] * v1[0] + v1[1] * v1[1]) + gr * q1[1];
                if (E1 > E0 + 1e-9) gains++;
                if (lab == 0.0) {
                    flights++;
                    double px = q0[0] + v0[0] * dt, py = q0[1] + v0[1] * dt - 0.5 * gr * dt * dt;
                    if (fabs(px - q1[0]) > 1e-12 || fabs(py - q1[1]) > 1e-12 || fabs(v1[1] - (v0[1] - gr * dt)) > 1e-12)
                        bad_flight++;
                    continue;
                }
                /* one floor impact in the interval: from the sample before, the floor is hit at
                   t* (the parabola's root) and nothing else; then the post-impact parabola */
                if (lab0 != 0.0 || q0[1] < 1e-6) continue;
                double a = -0.5 * gr, b = v0[1], c = q0[1];
                double ts_ = (-b - sqrt(b * b - 4 * a * c)) / (2 * a);
                if (!(ts_ > 0 && ts_ < dt)) continue;
                double xs = q0[0] + v0[0] * ts_;
                if (xs < 0.05 || xs > 1.95) continue; /* near a wall: another contact may act */
                double vyminus = v0[1] - gr * ts_, vyplus = v1[1] + gr * (dt - ts_);
                double vxminus = v0[0], vxplus = v1[0];
                /* the point must still fly after the impact (not resting, no second event) */
                double yend = vyplus * (dt - ts_) - 0.5 * gr * (dt - ts_) * (dt - ts_);
                if (fabs(yend - q1[1]) > 1e-9 || vyplus <= 0.0) continue;
                floor_impacts++;
                double e = g->pair_e[4 * k], mu = g->pair_mu[4 * k];
                if (fabs(vyplus + e * vyminus) > 1e-11 * fabs(vyminus)) bad_e++;
                double Pn = vyplus - vyminus, Pt = vxplus - vxminus;
                if (fabs(Pt) > mu * Pn * (1 + 1e-9) + 1e-12) bad_mu++;
                if (fabs(vxplus) > 1e-9) {
                    slides++;
                    if (fabs(fabs(Pt) - mu * Pn) > 1e-8 * Pn || Pt * vxplus > 0) bad_mu++;
                }
            }
    CHECK_MSG(bad_box == 0, "%d samples outside the box", bad_box);
    CHECK_MSG(gains == 0, "%d intervals gain energy", gains);
    CHECK_MSG(flights > 1000 && bad_flight == 0, "%d flights, %d not a parabola", flights, bad_flight);
    CHECK_MSG(floor_impacts >= 10, "only %d clean floor impacts", floor_impacts);
    CHECK_MSG(bad_e == 0, "%d floor impacts off Newton's law", bad_e);
    CHECK_MSG(slides > 0 && bad_mu == 0, "%d sliding impacts, %d off Coulomb's law", slides, bad_mu);
    /* heterogeneous: the pairs' e and mu differ */
    double emin = 1, emax = 0;
    for (int p = 0; p < g->n_pairs; p++) emin = fmin(emin, g->pair_e[p]), emax = fmax(emax, g->pair_e[p]);
    CHECK(emax - emin > 0.2);
    /* the true energy: kinetic plus m g y per point */
    double E, Eref = 0;
    const double *q = ts.q_clean + 10 * 17, *v = ts.qdot_clean + 10 * 17;
    for (int k = 0; k < 5; k++) Eref += 0.5 * (v[2 * k] * v[2 * k] + v[2 * k + 1] * v[2 * k + 1]) + gr * q[2 * k + 1];
    CHECK_OK(imp_system_energy("bouncing-points:5", g, gr, NAN, q, v, &E));
    CHECK_CLOSE(E, Eref, 1e-14, 1e-14);
    /* the format keeps e and mu per pair */
    CHECK_OK(imp_trajset_save(&ts, "test_points_sim.npz"));
    imp_trajset back;
    CHECK_OK(imp_trajset_load(&back, "test_points_sim.npz"));
    CHECK(back.geom.has_pair_law && back.geom.n_pairs == 20);
    for (int p = 0; p < 20; p++) CHECK(back.geom.pair_e[p] == g->pair_e[p] && back.geom.pair_mu[p] == g->pair_mu[p]);
    CHECK(isnan(back.geom.restitution));
    imp_trajset_free(&back);
    imp_trajset_free(&ts);
    remove("test_points_sim.npz");
}

static void test_format_errors(void)
{
    imp_contact_geometry g;
    memset(&g, 0, sizeof g);
    g.n_bodies = 1, g.dim = 2, g.restitution = NAN, g.n_pairs = 1;
    g.mass[0] = 1;
    g.pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {0, 1}};
    g.has_pair_law = 1, g.pair_e[0] = 1.5, g.pair_mu[0] = 0.1;
    CHECK_FAILS(imp_contact_geometry_check(&g), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "contact_restitution[0]") != NULL);
    g.pair_e[0] = 0.5, g.pair_mu[0] = -0.1;
    CHECK_FAILS(imp_contact_geometry_check(&g), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "contact_friction[0]") != NULL);
    g.pair_mu[0] = 0.1;
    CHECK_OK(imp_contact_geometry_check(&g));
    /* one of the two arrays without the other */
    imp_npz *z = imp_npz_new();
    double m = 1, nrm[2] = {0, 1}, off = 0, e = 0.5;
    int64_t pr[2] = {-1, 0};
    CHECK_OK(imp_npz_add_f64(z, "masses", 1, (size_t[]){1}, &m));
    CHECK_OK(imp_npz_add_i64(z, "contact_pairs", 2, (size_t[]){1, 2}, pr));
    CHECK_OK(imp_npz_add_f64(z, "contact_normals", 2, (size_t[]){1, 2}, nrm));
    CHECK_OK(imp_npz_add_f64(z, "contact_offsets", 1, (size_t[]){1}, &off));
    CHECK_OK(imp_npz_add_f64(z, "contact_restitution", 1, (size_t[]){1}, &e));
    imp_contact_geometry back;
    CHECK_FAILS(imp_contact_geometry_from_npz(z, "{\"dim\": 2}", &back), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "contact_restitution") && strstr(imp_last_error(), "contact_friction"));
    imp_npz_free(z);
    /* names */
    imp_sim_opts o;
    CHECK_FAILS(imp_sim_defaults("bouncing-points:0", &o), IMP_ERR_NOT_FOUND);
    CHECK_FAILS(imp_sim_defaults("bouncing-points:9", &o), IMP_ERR_NOT_FOUND);
    CHECK_FAILS(imp_sim_defaults("bouncing-points:3x", &o), IMP_ERR_NOT_FOUND);
    CHECK_OK(imp_sim_defaults("bouncing-points:8", &o));
}

int main(void)
{
    test_motion_and_law();
    test_format_errors();
    TEST_MAIN_END();
}
