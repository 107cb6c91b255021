/* Ground-truth simulators and the CD-Lagrange integrator with the true
 * potential: conservation and impact physics. */
#include "impulse/cdl.h"
#include "impulse/io.h"
#include "nn/mlp_internal.h"
#include "test.h"

#include <stdlib.h>

static void test_pendulum_energy(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("pendulum", &o));
    o.n_steps = 2000; /* 40 s */
    imp_trajset ts;
    CHECK_OK(imp_simulate("pendulum", &o, &ts));
    double e0, e, drift = 0;
    imp_system_energy("pendulum", &ts.geom, 9.81, 1.0, ts.q, ts.qdot, &e0);
    for (int t = 0; t < ts.n_steps; t++) {
        imp_system_energy("pendulum", &ts.geom, 9.81, 1.0, ts.q + t, ts.qdot + t, &e);
        if (fabs(e - e0) > drift) drift = fabs(e - e0);
    }
    printf("pendulum: energy %.6f, max drift over 40 s %.2e\n", e0, drift);
    CHECK(drift < 1e-9);
    CHECK_CLOSE(e0, 9.81 * (1 - cos(1.0)), 1e-12, 0);
    imp_trajset_free(&ts);
}

static void test_ball(double e)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.restitution = e;
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    double qmin = 1e9, apex_after = -1e9;
    int impacts = 0, first = -1, second = -1;
    for (int t = 0; t < ts.n_steps; t++) {
        if (ts.q[t] < qmin) qmin = ts.q[t];
        if (ts.contact[t] > 0.5 && (t == 0 || ts.contact[t - 1] < 0.5)) {
            impacts++;
            if (first < 0) first = t;
            else if (second < 0) second = t;
        }
        if (first >= 0 && t > first && second < 0) apex_after = fmax(apex_after, ts.q[t]);
    }
    CHECK(qmin >= -1e-9); /* the exact simulator never penetrates */
    double t_hit = sqrt(2 * 10.0 / 9.81);
    CHECK(first == (int)ceil(t_hit / ts.dt));
    if (e == 1.0) {
        /* the elastic ball returns to its drop height (sampled apex within g dt^2/8) */
        printf("ball e=1: %d impacts, apex after first bounce %.6f m\n", impacts, apex_after);
        CHECK(fabs(apex_after - 10.0) < 9.81 * ts.dt * ts.dt);
        CHECK(impacts >= 3);
        double E0, E;
        imp_system_energy("bouncing-ball", &ts.geom, 9.81, 1, ts.q, ts.qdot, &E0);
        imp_system_energy("bouncing-ball", &ts.geom, 9.81, 1, ts.q + ts.n_steps - 1, ts.qdot + ts.n_steps - 1, &E);
        CHECK_CLOSE(E, E0, 1e-9, 0);
    } else {
        /* e < 1: apex heights shrink by e^2; the Zeno sequence ends at rest */
        double expect_apex = 10.0 * e * e;
        printf("ball e=%.1f: %d impact events, apex after first bounce %.4f (e^2 h0 = %.4f), final q %.2e v %.2e\n",
               e, impacts, apex_after, expect_apex, ts.q[ts.n_steps - 1], ts.qdot[ts.n_steps - 1]);
        CHECK(fabs(apex_after - expect_apex) < 9.81 * ts.dt * ts.dt + 1e-9);
        CHECK(fabs(ts.q[ts.n_steps - 1]) < 1e-9 && fabs(ts.qdot[ts.n_steps - 1]) < 1e-9);
        CHECK(ts.contact[ts.n_steps - 1] == 1.0);
    }
    imp_trajset_free(&ts);
}

static void test_cradle(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("newtons-cradle", &o));
    imp_trajset ts;
    CHECK_OK(imp_simulate("newtons-cradle", &o, &ts));
    /* around each impact the velocities are exchanged and momentum conserved */
    int impacts = 0;
    for (int t = 1; t < ts.n_steps; t++) {
        if (!(ts.contact[2 * t] > 0.5)) continue;
        impacts++;
        CHECK(ts.contact[2 * t + 1] > 0.5);
        const double *vb = ts.qdot + 2 * (t - 1), *va = ts.qdot + 2 * t;
        /* smooth motion over one dt changes velocities by O(g dt); the swap is O(2) */
        CHECK(fabs(va[0] - vb[1]) < 0.2 && fabs(va[1] - vb[0]) < 0.2);
        CHECK(fabs((va[0] + va[1]) - (vb[0] + vb[1])) < 0.2);
    }
    double E0, E, drift = 0;
    imp_system_energy("newtons-cradle", &ts.geom, 9.81, 1, ts.q, ts.qdot, &E0);
    for (int t = 0; t < ts.n_steps; t++) {
        imp_system_energy("newtons-cradle", &ts.geom, 9.81, 1, ts.q + 2 * t, ts.qdot + 2 * t, &E);
        drift = fmax(drift, fabs(E - E0));
        CHECK(ts.q[2 * t] - ts.q[2 * t + 1] >= -1e-9); /* no interpenetration */
    }
    printf("cradle: %d impacts, energy drift %.2e\n", impacts, drift);
    CHECK(impacts >= 2);
    CHECK(drift < 1e-9);
    imp_trajset_free(&ts);
}

/* A structured model whose potential is the true one is the CD-Lagrange
 * integrator itself. U(q) = g q exactly: g (softplus(q) - softplus(-q)) = g q. */
static imp_model *true_ball_model(const imp_trajset *ts, int projection)
{
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.hidden = 2;
    cfg.hidden_layers = 1;
    cfg.projection = projection;
    imp_model *m;
    CHECK_OK(imp_model_create(&m, &cfg, &ts->geom, ts->dt, 1));
    double *p = m->params + m->net.w_off[0];
    p[0] = 1.0, p[1] = -1.0;
    m->params[m->net.b_off[0]] = 0.0, m->params[m->net.b_off[0] + 1] = 0.0;
    double *w1 = m->params + m->net.w_off[1];
    w1[0] = 9.81, w1[1] = -9.81;
    return m;
}

static void test_cd_integrator_ball(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    for (int projection = 0; projection <= 1; projection++) {
        imp_model *m = true_ball_model(&ts, projection);
        double *states = malloc(sizeof(double) * 2 * ts.n_steps), *c = malloc(sizeof(double) * ts.n_steps);
        double x0[2] = {10.0, 0.0};
        /* the observed touch signal gates the impulses: the integrator alone */
        CHECK_OK(imp_model_rollout(m, x0, ts.n_steps, ts.contact, states, c));
        double pen = 0, vmax = 0, apex = -1e9, free_err = 0;
        int first = -1;
        for (int t = 0; t < ts.n_steps; t++) {
            pen = fmax(pen, -states[2 * t]);
            vmax = fmax(vmax, fabs(states[2 * t + 1]));
            if (first < 0 && ts.contact[t] > 0.5) first = t;
            if (first < 0) free_err = fmax(free_err, fabs(states[2 * t] - ts.q[t]) + fabs(states[2 * t + 1] - ts.qdot[t]));
            if (first >= 0 && t > first + 5 && t < first + 150) apex = fmax(apex, states[2 * t]);
        }
        printf("CD integrator ball (projection %d): free-flight error %.1e, max penetration %.4f m (h v = %.4f), apex after bounce %.4f\n",
               projection, free_err, pen, ts.dt * vmax, apex);
        /* kick-drift-kick is exact for a constant force */
        CHECK(free_err < 1e-9);
        /* penetration is O(h v) without projection, zero with it */
        if (projection) CHECK(pen < 1e-12);
        else CHECK(pen <= ts.dt * vmax && pen > 0);
        /* e = 1: the bounce returns to the drop height up to O(h v) */
        CHECK(fabs(apex - 10.0) <= ts.dt * vmax);
        free(states), free(c);
        imp_model_free(m);
    }
    imp_trajset_free(&ts);
}

static void test_trajset_file(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("newtons-cradle", &o));
    o.n_traj = 3, o.n_steps = 50, o.noise = 0.1, o.seed = 9;
    imp_trajset a, b;
    CHECK_OK(imp_simulate("newtons-cradle", &o, &a));
    CHECK_OK(imp_trajset_save(&a, "test_traj.npz"));
    CHECK_OK(imp_trajset_load(&b, "test_traj.npz"));
    CHECK(b.n_traj == 3 && b.n_steps == 50 && b.geom.n_bodies == 2 && b.geom.n_pairs == 1);
    CHECK(memcmp(a.q, b.q, sizeof(double) * 3 * 50 * 2) == 0);
    CHECK(memcmp(a.contact, b.contact, sizeof(double) * 3 * 50 * 2) == 0);
    CHECK(strcmp(b.system, "newtons-cradle") == 0 && b.dt == a.dt && b.noise == 0.1);
    imp_trajset c;
    CHECK_OK(imp_simulate("newtons-cradle", &o, &c));
    CHECK(memcmp(a.q, c.q, sizeof(double) * 3 * 50 * 2) == 0); /* same seed, same data */
    imp_trajset_free(&a), imp_trajset_free(&b), imp_trajset_free(&c);
    CHECK_FAILS(imp_sim_defaults("double-pendulum", &o), IMP_ERR_NOT_FOUND);
    CHECK_OK(imp_sim_defaults("pendulum", &o));
    o.n_steps = -5;
    CHECK_FAILS(imp_simulate("pendulum", &o, &a), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "steps") != NULL);
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.restitution = 1.5;
    CHECK_FAILS(imp_simulate("bouncing-ball", &o, &a), IMP_ERR_INVALID);
    CHECK_OK(imp_sim_defaults("pendulum", &o));
    o.n_steps = 10;
    CHECK_OK(imp_simulate("pendulum", &o, &a));
    a.q[3] = NAN;
    CHECK_OK(imp_trajset_save(&a, "test_traj_nan.npz"));
    CHECK_FAILS(imp_trajset_load(&b, "test_traj_nan.npz"), IMP_ERR_NUMERIC);
    printf("NaN file: %s\n", imp_last_error());
    imp_trajset_free(&a);
}

/* The bouncing disk: energy never increases; over a sample interval with
 * one impact the impulse is (dvx, dvy + g dt) (gravity acts on vy only),
 * in the friction cone, on its edge (|Pt| = mu Pn) when the slip survives
 * the impact, the spin changes by sqrt(2) Pt (t = (1, 0, sqrt 2)), and the
 * normal velocity reverses with -e (up to gravity over the interval). */
static void test_disk(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-disk", &o));
    o.n_traj = 6;
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-disk", &o, &ts));
    CHECK(imp_contact_pair_has_tangent(&ts.geom, 0));
    int slides = 0, sticks = 0;
    double worst_gain = -INFINITY;
    for (int tr = 0; tr < ts.n_traj; tr++)
        for (int n = 1; n < ts.n_steps; n++) {
            size_t i = (size_t)tr * ts.n_steps + n;
            const double *v0 = ts.qdot + (i - 1) * 3, *v1 = ts.qdot + i * 3, *q0 = ts.q + (i - 1) * 3, *q1 = ts.q + i * 3;
            double E0, E1;
            CHECK_OK(imp_system_energy("bouncing-disk", &ts.geom, ts.gravity, ts.length, q0, v0, &E0));
            CHECK_OK(imp_system_energy("bouncing-disk", &ts.geom, ts.gravity, ts.length, q1, v1, &E1));
            if (E1 - E0 > worst_gain) worst_gain = E1 - E0;
            if (!(ts.contact[i] > 0.5 && ts.contact[i - 1] < 0.5)) continue;
            double Pt = v1[0] - v0[0], Pn = v1[1] - v0[1] + ts.gravity * ts.dt;
            CHECK_CLOSE(v1[2] - v0[2], sqrt(2.0) * Pt, 1e-9, 1e-9);
            CHECK(Pn > 0 && fabs(Pt) <= o.friction * Pn * (1 + 1e-9));
            double ut1 = v1[0] + sqrt(2.0) * v1[2];
            if (fabs(ut1) > 1e-6) {
                CHECK_CLOSE(fabs(Pt), o.friction * Pn, 1e-9, 1e-12);
                slides++;
            } else {
                sticks++;
            }
            /* un+ = -e un at the impact: the two samples' vy differ from it by g dt at most */
            CHECK(fabs(v1[1] + o.restitution * v0[1]) < 2.0 * ts.gravity * ts.dt);
        }
    printf("bouncing disk: %d sliding, %d sticking impacts, largest energy change per sample %.3g\n", slides, sticks,
           worst_gain);
    CHECK(slides >= 3 && sticks >= 3);
    CHECK(worst_gain < 1e-9);
    /* the file keeps the tangent and the true friction */
    CHECK_OK(imp_trajset_save(&ts, "test_disk.npz"));
    imp_trajset back;
    CHECK_OK(imp_trajset_load(&back, "test_disk.npz"));
    CHECK(back.geom.pairs[0].tangent[2] == ts.geom.pairs[0].tangent[2] && back.friction == o.friction);
    imp_trajset_free(&back);
    imp_trajset_free(&ts);
}

/* A rollout with the contact network in single precision
 * (imp_model_rollout_single): the same contact decisions as the double
 * rollout on a network that makes both, hence bit-identical states (the
 * potential stays double). Random networks of the CDL and ResNetContact
 * kinds, with output biases shifted so that some roll out both decisions. */
static void test_rollout_single_contact(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    const imp_model_kind kinds[2] = {IMP_MODEL_CDL, IMP_MODEL_RESNET_CONTACT};
    int mixed = 0;
    for (int run = 0; run < 6; run++) {
        const int k = run % 2;
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, kinds[k]);
        imp_model *m;
        CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 11));
        const imp_mlp *cn = &m->contact;
        m->params[m->off_contact + cn->b_off[cn->n_layers - 1]] += (k ? 0.2 : 4.0) * (run / 2);
        enum { T = 600 };
        double x0[2] = {10.0, 0.0}, s[2][2 * T], c[2][T];
        CHECK_OK(imp_model_rollout(m, x0, T, NULL, s[0], c[0]));
        CHECK_OK(imp_model_rollout_single(m, x0, T, NULL, 1, s[1], c[1]));
        int ones = 0, flips = 0;
        for (int t = 0; t < T; t++) ones += c[0][t] != 0.0, flips += c[0][t] != c[1][t];
        mixed += ones > 0 && ones < T - 1;
        CHECK_MSG(flips == 0, "single contact rollout (%s): %d of %d decisions differ", imp_model_kind_name(kinds[k]),
                  flips, T);
        CHECK(memcmp(s[0], s[1], sizeof s[0]) == 0);
        printf("rollout with the contact net in single (%s): %d contact steps of %d, states bit-identical\n",
               imp_model_kind_name(kinds[k]), ones, T);
        CHECK_FAILS(imp_model_rollout_single(m, x0, 0, NULL, 1, s[1], c[1]), IMP_ERR_INVALID);
        imp_model_free(m);
    }
    CHECK_MSG(mixed >= 2, "only %d rollouts with both contact decisions", mixed);
    imp_trajset_free(&ts);
}

/* The default rollout (imp_model_rollout: the networks' weights fixed per
 * rollout, one-row kernels of the kernel family) against the batch passes
 * (IMP_ROLLOUT_BLAS: OpenBLAS's products for the contact network), under
 * every instruction-set version the CPU has, over T = 600 steps: the sums
 * differ in order only, so the states must agree to 1e-12 of their scale
 * and the contact decisions exactly. Models: on the ball, random CDL (the
 * contact net's output bias shifted so that some roll out both decisions),
 * ResNetContact and VIN networks and a CDL trained for 30 epochs, also with
 * the observed gates; on Newton's cradle (3 bodies: the potential's
 * gradient with 3 inputs) a random CDL. */
static void test_rollout_fixed(void)
{
    imp_sim_opts o;
    imp_trajset ball, cradle;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ball));
    CHECK_OK(imp_sim_defaults("newtons-cradle", &o));
    CHECK_OK(imp_simulate("newtons-cradle", &o, &cradle));
    enum { N = 8, T = 600 };
    static const imp_model_kind kinds[N] = {IMP_MODEL_CDL, IMP_MODEL_CDL, IMP_MODEL_CDL, IMP_MODEL_RESNET_CONTACT,
                                            IMP_MODEL_RESNET_CONTACT, IMP_MODEL_VIN, IMP_MODEL_CDL, IMP_MODEL_CDL};
    imp_model *models[N];
    for (int k = 0; k < N; k++) {
        const imp_trajset *ts = k == N - 1 ? &cradle : &ball;
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, kinds[k]);
        CHECK_OK(imp_model_create(&models[k], &cfg, &ts->geom, ts->dt, 21 + k));
        imp_model *m = models[k];
        if (m->has_contact_net && k < N - 2)
            m->params[m->off_contact + m->contact.b_off[m->contact.n_layers - 1]] +=
                kinds[k] == IMP_MODEL_CDL ? 4.0 * k : 0.2 * (k - 3);
    }
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    to.epochs = 30;
    CHECK_OK(imp_model_train(models[N - 2], &ball, &to, NULL));
    int tested = 0, mixed = 0;
    double worst = 0.0;
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) {
        if (imp_act_force_isa(isa) != IMP_OK) continue;
        tested++;
        for (int k = 0; k < N; k++) {
            const imp_model *m = models[k];
            const imp_trajset *ts = k == N - 1 ? &cradle : &ball;
            const int D = m->D, K = m->K;
            double x0[2 * IMP_MAX_BODIES * IMP_MAX_DIM];
            for (int i = 0; i < D; i++) x0[i] = ts->q[i], x0[D + i] = ts->qdot[i];
            for (int gated = 0; gated <= (k == N - 2); gated++) {
                /* the observed labels of the data's first trajectory, then none */
                double *gates = gated ? calloc((size_t)T * K, sizeof(double)) : NULL;
                for (int i = 0; gated && i < T * K && i < ts->n_steps * K; i++) gates[i] = ts->contact[i];
                double *s[2], *c[2];
                for (int v = 0; v < 2; v++) {
                    s[v] = malloc(sizeof(double) * T * 2 * D);
                    c[v] = malloc(sizeof(double) * T * K);
                }
                CHECK_OK(imp_model_rollout(m, x0, T, gates, s[0], c[0]));
                CHECK_OK(imp_model_rollout_single(m, x0, T, gates, IMP_ROLLOUT_BLAS, s[1], c[1]));
                double scale = 0.0, err = 0.0;
                int ones = 0, flips = 0;
                for (int i = 0; i < T * 2 * D; i++) {
                    scale = fmax(scale, fabs(s[1][i]));
                    err = fmax(err, fabs(s[0][i] - s[1][i]));
                }
                for (int i = 0; i < T * K; i++) ones += c[1][i] != 0.0, flips += c[0][i] != c[1][i];
                mixed += ones > 0 && ones < (T - 1) * K;
                CHECK_MSG(flips == 0, "fixed rollout (%s, model %d %s): %d of %d decisions differ", imp_isa_name(isa),
                          k, imp_model_kind_name(kinds[k]), flips, T * K);
                CHECK_MSG(err <= 1e-12 * scale, "fixed rollout (%s, model %d %s): states differ by %.3g (scale %.3g)",
                          imp_isa_name(isa), k, imp_model_kind_name(kinds[k]), err, scale);
                worst = fmax(worst, err / scale);
                for (int v = 0; v < 2; v++) free(s[v]), free(c[v]);
                free(gates);
            }
        }
    }
    printf("default rollouts against the batch passes: %d models x %d instruction-set versions, %d with both "
           "decisions, worst state difference %.3g of the scale, the same decisions\n",
           N, tested, mixed, worst);
    CHECK(tested >= 1);
    CHECK_MSG(mixed >= 2 * tested, "only %d rollouts with both contact decisions", mixed);
    CHECK_OK(imp_act_force_isa(-1));
    for (int k = 0; k < N; k++) imp_model_free(models[k]);
    imp_trajset_free(&ball);
    imp_trajset_free(&cradle);
}

/* A rollout with the potential's force in single precision
 * (IMP_ROLLOUT_SINGLE_POTENTIAL, alone and with the contact network),
 * under every instruction-set version the CPU has, against the double
 * rollout of CDL models of the ball: three random ones (the contact net's
 * output bias shifted as above) and one trained for 30 epochs, which
 * bounces. The float sweep's force has relative errors of ~1e-6
 * (tests/test_nn.c), ~1e-5 absolute for forces of ~10; over T = 600 steps
 * of h = 0.02 s the position error they cause is at most T^2 h^2 / 2 =
 * 72 s^2 times that, 7e-4, or 5e-5 of the states' scale (~14): the states
 * must agree to TOL = 1e-4 relative to their scale, the contact decisions
 * exactly, and the states must not be bit-identical (else the float path
 * was not taken). */
static void test_rollout_single_potential(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    enum { T = 600, RANDOM = 3 };
    const double TOL = 1e-4;
    /* three random models, and one trained for 30 epochs that bounces */
    imp_model *models[RANDOM + 1];
    for (int run = 0; run <= RANDOM; run++) {
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
        CHECK_OK(imp_model_create(&models[run], &cfg, &ts.geom, ts.dt, 11 + run));
        const imp_mlp *cn = &models[run]->contact;
        if (run < RANDOM) models[run]->params[models[run]->off_contact + cn->b_off[cn->n_layers - 1]] += 4.0 * run;
    }
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    to.epochs = 30;
    CHECK_OK(imp_model_train(models[RANDOM], &ts, &to, NULL));
    int tested = 0, mixed = 0;
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) {
        if (imp_act_force_isa(isa) != IMP_OK) continue;
        tested++;
        for (int run = 0; run <= RANDOM; run++) {
            const imp_model *m = models[run];
            const double x0[2] = {ts.q[0], ts.qdot[0]}; /* the ball: D = 1 */
            double s[3][2 * T], c[3][T];
            CHECK_OK(imp_model_rollout(m, x0, T, NULL, s[0], c[0]));
            CHECK_OK(imp_model_rollout_single(m, x0, T, NULL, IMP_ROLLOUT_SINGLE_POTENTIAL, s[1], c[1]));
            CHECK_OK(imp_model_rollout_single(m, x0, T, NULL,
                                              IMP_ROLLOUT_SINGLE_POTENTIAL | IMP_ROLLOUT_SINGLE_CONTACT, s[2], c[2]));
            double scale = 0.0;
            for (int i = 0; i < 2 * T; i++) scale = fmax(scale, fabs(s[0][i]));
            int ones = 0;
            for (int t = 0; t < T; t++) ones += c[0][t] != 0.0;
            mixed += ones > 0 && ones < T - 1;
            for (int v = 1; v < 3; v++) {
                double err = 0.0;
                int flips = 0;
                for (int i = 0; i < 2 * T; i++) err = fmax(err, fabs(s[v][i] - s[0][i]));
                for (int t = 0; t < T; t++) flips += c[0][t] != c[v][t];
                CHECK_MSG(flips == 0, "single potential rollout (%s, model %d): %d of %d decisions differ",
                          imp_isa_name(isa), run, flips, T);
                CHECK_MSG(err <= TOL * scale, "single potential rollout (%s, model %d): state error %.3g > %.3g",
                          imp_isa_name(isa), run, err, TOL * scale);
                CHECK_MSG(err > 0.0, "single potential rollout (%s, model %d): states bit-identical to double",
                          imp_isa_name(isa), run);
                printf("rollout with the potential%s in single (%s, %s model): %d contact steps of %d, max state "
                       "error %.3g (scale %.3g)\n",
                       v == 2 ? " and contact net" : "", imp_isa_name(isa), run < RANDOM ? "random" : "trained",
                       ones, T, err, scale);
            }
        }
    }
    for (int run = 0; run <= RANDOM; run++) imp_model_free(models[run]);
    CHECK_OK(imp_act_force_isa(-1));
    CHECK(tested >= 1);
    CHECK_MSG(mixed >= tested, "only %d rollouts with both contact decisions", mixed);
    imp_trajset_free(&ts);
}

/* The ball in a box, rigid (ball-box): with e = 1 the energy is conserved
 * over every trajectory (several wall and floor impacts); with e = 0.8 the
 * first trajectory (from (0, 3) with vx = 1.4) matches the analytic motion:
 * floor impact at t_f = sqrt(2 q0 / g), right wall at t_w = W / vx, each
 * labelled at the first sample after it, the ball never leaves the box, and
 * only the normal velocity of the pair hit changes (by -e). */
static void test_ball_box(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("ball-box", &o));
    CHECK(o.restitution == 0.8 && o.n_steps == 400 && o.dt == 0.02);
    o.n_traj = 8;
    o.restitution = 1.0;
    imp_trajset ts;
    CHECK_OK(imp_simulate("ball-box", &o, &ts));
    CHECK(ts.geom.n_pairs == 3 && ts.geom.dim == 2 && !strcmp(ts.labels, "impact"));
    double drift = 0.0, lo = INFINITY;
    int wall_hits = 0;
    for (int tr = 0; tr < ts.n_traj; tr++) {
        const double *q = ts.q + (size_t)tr * ts.n_steps * 2, *v = ts.qdot + (size_t)tr * ts.n_steps * 2;
        double E0, E;
        CHECK_OK(imp_system_energy("ball-box", &ts.geom, ts.gravity, ts.length, q, v, &E0));
        for (int n = 0; n < ts.n_steps; n++) {
            CHECK_OK(imp_system_energy("ball-box", &ts.geom, ts.gravity, ts.length, q + 2 * n, v + 2 * n, &E));
            drift = fmax(drift, fabs(E - E0) / E0);
            for (int p = 0; p < 3; p++) lo = fmin(lo, imp_contact_gap(&ts.geom, p, q + 2 * n));
            if (n > 0 && v[2 * n] * v[2 * n - 2] < 0.0) wall_hits++;
        }
    }
    printf("ball-box e=1: %d trajectories, %d wall impacts, relative energy drift %.2e, lowest gap %.2e\n", ts.n_traj,
           wall_hits, drift, lo);
    CHECK(drift < 1e-9);
    CHECK(lo >= -1e-9);
    CHECK(wall_hits >= 2 * ts.n_traj);
    imp_trajset_free(&ts);

    o.restitution = 0.8;
    o.n_traj = 1;
    o.v0 = 1.4;
    CHECK_OK(imp_simulate("ball-box", &o, &ts));
    double g = ts.gravity, W = IMP_BALL_BOX_HALF_WIDTH, tf = sqrt(2.0 * o.q0 / g), tw = W / o.v0;
    int nf = (int)ceil(tf / ts.dt), nw = (int)ceil(tw / ts.dt), first_labels[2] = {-1, -1}, k = 0;
    for (int n = 0; n < ts.n_steps && k < 2; n++)
        if (ts.contact[n] > 0.5) first_labels[k++] = n;
    CHECK(first_labels[0] == nf && first_labels[1] == nw);
    for (int n = nw; n < nw + 10; n++) { /* after both impacts, before the second floor impact */
        double t = n * ts.dt, vy = 0.8 * g * tf;
        CHECK_CLOSE(ts.q[2 * n], W - 0.8 * o.v0 * (t - tw), 0, 1e-9);
        CHECK_CLOSE(ts.qdot[2 * n], -0.8 * o.v0, 0, 1e-9);
        CHECK_CLOSE(ts.q[2 * n + 1], vy * (t - tf) - 0.5 * g * (t - tf) * (t - tf), 0, 1e-9);
        CHECK_CLOSE(ts.qdot[2 * n + 1], vy - g * (t - tf), 0, 1e-9);
    }
    for (int n = 1; n < nw; n++) CHECK_CLOSE(ts.qdot[2 * n], o.v0, 0, 1e-12); /* the floor keeps vx */
    imp_trajset_free(&ts);
}

/* The ball in a box with spring-damper contact (compliant-ball-box): touch
 * labels over the samples in contact with any wall (one body), the
 * apparent restitution of a wall (no force along it but the contact's) is
 * e, the energy without the contact spring is conserved outside contact
 * with e = 1, and the ball penetrates a little (it is compliant). */
static void test_compliant_ball_box(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball-box", &o));
    CHECK(o.restitution == 0.8 && o.stiffness == IMP_COMPLIANT_STIFFNESS);
    o.v0 = 1.4;
    imp_trajset ts;
    CHECK_OK(imp_simulate("compliant-ball-box", &o, &ts));
    CHECK(!strcmp(ts.labels, "touch") && ts.geom.n_pairs == 3);
    double tw = IMP_BALL_BOX_HALF_WIDTH / o.v0;
    int nw = (int)ceil(tw / ts.dt), after = -1;
    CHECK(ts.contact[nw] > 0.5);
    for (int n = nw; n < ts.n_steps && after < 0; n++)
        if (ts.qdot[2 * n] < 0.0 && ts.contact[n] < 0.5) after = n;
    CHECK(after > nw);
    if (after > nw) CHECK_CLOSE(ts.qdot[2 * after], -0.8 * o.v0, 1e-3, 0); /* the analytic e, to integration */
    double lo = INFINITY;
    for (int n = 0; n < ts.n_steps; n++) lo = fmin(lo, ts.q[2 * n + 1]);
    CHECK(lo < 0.0 && lo > -0.1);
    imp_trajset_free(&ts);

    o.restitution = 1.0;
    o.n_traj = 4;
    CHECK_OK(imp_simulate("compliant-ball-box", &o, &ts));
    double drift = 0.0;
    int free_samples = 0;
    for (int tr = 0; tr < ts.n_traj; tr++) {
        const double *q = ts.q + (size_t)tr * ts.n_steps * 2, *v = ts.qdot + (size_t)tr * ts.n_steps * 2;
        double E0, E;
        CHECK_OK(imp_system_energy("compliant-ball-box", &ts.geom, ts.gravity, ts.length, q, v, &E0));
        for (int n = 0; n < ts.n_steps; n++) {
            int free = 1;
            for (int p = 0; p < 3; p++) free &= imp_contact_gap(&ts.geom, p, q + 2 * n) > 0.0;
            if (!free) continue;
            free_samples++;
            CHECK_OK(imp_system_energy("compliant-ball-box", &ts.geom, ts.gravity, ts.length, q + 2 * n, v + 2 * n, &E));
            drift = fmax(drift, fabs(E - E0) / E0);
        }
    }
    printf("compliant-ball-box e=1: energy drift outside contact %.2e over %d samples\n", drift, free_samples);
    CHECK(drift < 1e-7);
    imp_trajset_free(&ts);
}

int main(void)
{
    imp_blas_init();
    test_pendulum_energy();
    test_ball(1.0);
    test_ball(0.7);
    test_cradle();
    test_cd_integrator_ball();
    test_rollout_single_contact();
    test_rollout_single_potential();
    test_rollout_fixed();
    test_trajset_file();
    test_disk();
    test_ball_box();
    test_compliant_ball_box();
    TEST_MAIN_END();
}
