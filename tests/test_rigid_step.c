/* The rigid-body time stepper (include/impulse/rigid_model.h): its reverse
 * pass against finite differences through free flight, a one-corner bounce,
 * sticking and sliding on four corners; physics (free flight exact, rest,
 * no penetration, energy). */
#include "impulse/core.h"
#include "impulse/rigid_model.h"
#include "test.h"
#define CLI_TEST_TAG "rigid_step"
#include "cli_test.h"

#include <string.h>

static void quat_axis(double q[4], const double axis[3], double angle)
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    q[0] = cos(angle / 2);
    for (int i = 0; i < 3; i++) q[i + 1] = sin(angle / 2) * axis[i] / n;
}

static imp_rigid_model cube_model(double e, double mu)
{
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    imp_rigid_model m;
    imp_rigid_model_box(&m, &t.body, e, mu, 0.001, 9.81);
    return m;
}

/* L = c . step(s) */
static double loss(const imp_rigid_model *m, double h, const double *s, const double *c, int *n_active)
{
    double out[13];
    imp_rigid_step_trace tr;
    if (imp_rigid_step_forward(m, h, s, out, &tr)) return NAN;
    if (n_active) *n_active = tr.n_active;
    double L = 0;
    for (int i = 0; i < 13; i++) L += c[i] * out[i];
    return L;
}

/* Checks the reverse pass of one step at s against central differences;
 * returns the number of active contacts. */
static int check_grad(const char *what, imp_rigid_model m, double h, const double *s, int expect_branch)
{
    double c[13], out[13];
    for (int i = 0; i < 13; i++) c[i] = 0.3 + 0.1 * i * (i % 2 ? -1 : 1);
    imp_rigid_step_trace tr;
    CHECK_OK(imp_rigid_step_forward(&m, h, s, out, &tr));
    if (expect_branch >= 0) {
        int found = 0;
        for (int k = 0; k < tr.n_active; k++) found |= tr.sol.branch[k] == expect_branch;
        CHECK_MSG(found, "%s: no contact on branch %d (%d active)", what, expect_branch, tr.n_active);
    }
    double sb[13] = {0};
    imp_rigid_model_grad g;
    memset(&g, 0, sizeof g);
    CHECK_OK(imp_rigid_step_backward(&m, &tr, c, sb, &g));
    /* state */
    double num[13], eps = 1e-7;
    for (int i = 0; i < 13; i++) {
        double sp[13], sm[13];
        memcpy(sp, s, sizeof sp), memcpy(sm, s, sizeof sm);
        sp[i] += eps, sm[i] -= eps;
        num[i] = (loss(&m, h, sp, c, NULL) - loss(&m, h, sm, c, NULL)) / (2 * eps);
    }
    double err = test_grad_rel_err(sb, num, 13, 1e-3);
    CHECK_MSG(err < 1e-5, "%s: state gradient rel err %g", what, err);
    /* e, mu, ground, points */
    double an[3 + 24], nu[3 + 24];
    an[0] = g.e, an[1] = g.mu, an[2] = g.ground;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) an[3 + 3 * k + i] = g.points[k][i];
    for (int p = 0; p < 27; p++) {
        imp_rigid_model mp = m, mm = m;
        double *xp = p == 0 ? &mp.e : p == 1 ? &mp.mu : p == 2 ? &mp.ground : &mp.points[(p - 3) / 3][(p - 3) % 3];
        double *xm = p == 0 ? &mm.e : p == 1 ? &mm.mu : p == 2 ? &mm.ground : &mm.points[(p - 3) / 3][(p - 3) % 3];
        *xp += eps, *xm -= eps;
        nu[p] = (loss(&mp, h, s, c, NULL) - loss(&mm, h, s, c, NULL)) / (2 * eps);
    }
    err = test_grad_rel_err(an, nu, 27, 1e-3);
    CHECK_MSG(err < 1e-5, "%s: parameter gradient rel err %g (e %g/%g mu %g/%g ground %g/%g)", what, err, an[0],
              nu[0], an[1], nu[1], an[2], nu[2]);
    return tr.n_active;
}

static void test_gradients(void)
{
    double h = 1.0 / 148, axis[3] = {0.3, -0.5, 0.8};
    /* free flight, spinning, with a non-cubic inertia (the gyroscopic term) */
    imp_rigid_model m = cube_model(0.5, 0.3);
    m.inertia[1] = 0.0012, m.inertia[2] = 0.0006;
    double s[13] = {0};
    quat_axis(s, axis, 0.7);
    s[4] = 0.1, s[5] = -0.2, s[6] = 0.4;
    s[7] = 3, s[8] = -5, s[9] = 2;
    s[10] = 0.5, s[11] = 0.2, s[12] = -1;
    CHECK(check_grad("flight", m, h, s, -1) == 0);
    /* a tilted box falling onto one corner, spinning: bounce (slides) */
    m = cube_model(0.5, 0.3);
    double tilt[3] = {1, 1, 0};
    quat_axis(s, tilt, 0.6);
    s[4] = 0, s[5] = 0, s[6] = 0.001 + 0.0905 - 0.004; /* the lowest corner about to reach the ground */
    s[7] = 1, s[8] = -2, s[9] = 3;
    s[10] = 0.3, s[11] = 0.1, s[12] = -1.5;
    int na = check_grad("bounce", m, h, s, -1);
    CHECK_MSG(na >= 1, "bounce: %d active", na);
    /* flat on the ground, moving slowly: sticking on four corners */
    m = cube_model(0.2, 0.8);
    memset(s, 0, sizeof s);
    s[0] = 1;
    s[6] = 0.001 + 0.0524 + 1e-5;
    s[10] = 0.02, s[11] = -0.01, s[12] = -0.3;
    s[9] = 0.1;
    na = check_grad("stick", m, h, s, IMP_CONTACT_STICK);
    CHECK_MSG(na == 4, "stick: %d active", na);
    /* on an edge (tilted about x), fast sideways: sliding on two corners */
    double xaxis[3] = {1, 0, 0};
    m = cube_model(0.2, 0.2);
    memset(s, 0, sizeof s);
    quat_axis(s, xaxis, 0.05);
    s[6] = 0.001 + 0.0524 * (cos(0.05) + sin(0.05)) + 1e-5;
    s[10] = 1.5, s[11] = 0.7, s[12] = -0.5;
    s[7] = 0.4, s[9] = 0.5;
    na = check_grad("slide", m, h, s, IMP_CONTACT_SLIDE);
    CHECK_MSG(na == 2, "slide: %d active", na);
    /* on an edge, slowly: sticking on two corners */
    m = cube_model(0.2, 0.9);
    s[10] = 0.03, s[11] = -0.02, s[12] = -0.4;
    s[7] = 0.1, s[9] = 0.05;
    na = check_grad("edge stick", m, h, s, IMP_CONTACT_STICK);
    CHECK_MSG(na == 2, "edge stick: %d active", na);
}

/* Free flight: exact parabola and rotation, energy to rounding. */
static void test_flight(void)
{
    imp_rigid_model m = cube_model(0.3, 0.25);
    double s[13] = {0}, axis[3] = {1, 2, 3}, x[13];
    quat_axis(s, axis, 0.4);
    s[6] = 5.0, s[7] = 4, s[8] = -3, s[9] = 6, s[10] = 1, s[11] = -0.5, s[12] = 2;
    memcpy(x, s, sizeof x);
    double h = 1.0 / 148, E0 = imp_rigid_model_energy(&m, s);
    for (int k = 1; k <= 100; k++) {
        CHECK_OK(imp_rigid_step_forward(&m, h, x, x, NULL));
        double t = k * h;
        CHECK_CLOSE(x[6], s[6] + s[12] * t - 0.5 * 9.81 * t * t, 1e-12, 1e-12);
        CHECK_CLOSE(x[4], s[4] + s[10] * t, 1e-12, 1e-12);
        CHECK_CLOSE(imp_rigid_model_energy(&m, x), E0, 1e-12, 0);
    }
    /* the angle turned about the fixed axis w: |w| t */
    double wn = sqrt(16 + 9 + 36);
    double ang = imp_rigid_quat_angle(s, x);
    double turned = fmod(wn * 100 * h, 2 * 3.14159265358979323846);
    if (turned > 3.14159265358979323846) turned = 2 * 3.14159265358979323846 - turned;
    CHECK_CLOSE(ang, turned, 1e-9, 1e-9);
}

/* Tosses: no penetration beyond the plastic landing's rounding, rest at the
 * end, energy never gained at a contact step where the law guarantees it
 * (e = 0, or mu = 0), and the simulator converges in the step. */
static void test_tosses(void)
{
    const double laws[3][2] = {{0.0, 0.5}, {0.5, 0.0}, {0.3, 0.25}};
    for (int l = 0; l < 3; l++) {
        imp_box_toss_opts o;
        imp_box_toss_defaults(&o);
        o.e = laws[l][0], o.mu = laws[l][1];
        imp_rigid_model m;
        imp_rigid_model_box(&m, &o.body, o.e, o.mu, o.ground, o.gravity);
        double h = o.dt / 16, worst_pen = 0, worst_gain = 0;
        for (int k = 0; k < 6; k++) {
            double x[13];
            imp_box_toss_initial(&o, k, x);
            for (int j = 0; j < 148 * 16 * 2; j++) {
                imp_rigid_step_trace tr;
                double E0 = imp_rigid_model_energy(&m, x);
                CHECK_OK(imp_rigid_step_forward(&m, h, x, x, &tr));
                /* the step's energy change: the impulses' (kinetic, at the kicked velocities)
                   must not be positive where the law guarantees it */
                if (tr.n_active > 0 && (o.e == 0 || o.mu == 0)) {
                    double T0 = 0, T1 = 0;
                    for (int i = 0; i < 3; i++) {
                        T0 += 0.5 * m.mass * tr.vm[i] * tr.vm[i] + 0.5 * m.inertia[i] * tr.vm[3 + i] * tr.vm[3 + i];
                        T1 += 0.5 * m.mass * tr.vp[i] * tr.vp[i] + 0.5 * m.inertia[i] * tr.vp[3 + i] * tr.vp[3 + i];
                    }
                    double gain = (T1 - T0) / (E0 + 1e-12);
                    if (gain > worst_gain) worst_gain = gain;
                }
                double pen = -imp_rigid_lowest_corner(x, &o.body, 0.0);
                if (pen > worst_pen) worst_pen = pen;
            }
            /* at rest after 2 s (frictionless: sliding on, at rest vertically) */
            double speed = o.mu > 0 ? sqrt(x[10] * x[10] + x[11] * x[11] + x[12] * x[12]) : fabs(x[12]);
            CHECK_MSG(speed < 1e-3, "law %d toss %d: speed %g after 2 s", l, k, speed);
        }
        CHECK_MSG(worst_pen < 1e-3 * o.body.size[0], "law %d: penetration %g m", l, worst_pen);
        CHECK_MSG(worst_gain < 1e-3, "law %d: relative kinetic energy gain %g at a contact", l, worst_gain);
    }
    /* convergence in the step over the first impacts (0.25 s): the error against
       512 steps per sample falls with the step */
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    imp_rigid_model m;
    imp_rigid_model_box(&m, &o.body, o.e, o.mu, o.ground, o.gravity);
    size_t n = 37;
    double ref[37 * 13], out[37 * 13], err[3] = {0, 0, 0};
    for (int k = 0; k < 10; k++) {
        double x0[13];
        imp_box_toss_initial(&o, k, x0);
        CHECK_OK(imp_rigid_model_rollout(&m, o.dt, 512, x0, n, ref));
        for (int j = 0; j < 3; j++) {
            CHECK_OK(imp_rigid_model_rollout(&m, o.dt, 8 << (2 * j), x0, n, out));
            imp_rigid_metrics mt;
            imp_rigid_metrics_episode(out, ref, n, &o.body, 0.0, &mt);
            err[j] += mt.position_error_pct;
        }
    }
    CHECK_MSG(err[1] < 0.5 * err[0] && err[2] < 0.5 * err[1], "no convergence: %g %g %g (8, 32, 128 steps)", err[0],
              err[1], err[2]);
}

/* rigid-identified recovers e, mu and the ground of tosses made by the same
 * model (a tiny set: 6 tosses of 0.4 s). */
static void test_identify(void)
{
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    o.n_tosses = 6, o.n_samples = 60, o.substeps = 2;
    o.e = 0.45, o.mu = 0.6, o.ground = 0.002;
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    CHECK_OK(imp_box_toss_simulate(&o, &t));
    imp_rigid_ident_opts io;
    imp_rigid_ident_defaults(&io, &t);
    io.substeps = 2, io.max_evals = 150, io.ground0 = 0.0, io.window = 8;
    int ep[6] = {0, 1, 2, 3, 4, 5};
    imp_rigid_model m;
    imp_rigid_ident_result r;
    CHECK_OK(imp_rigid_identify(&t, ep, 6, &io, &m, &r));
    CHECK_MSG(fabs(m.e - o.e) < 0.03 && fabs(m.mu - o.mu) < 0.03 && fabs(m.ground - o.ground) < 2e-4,
              "identified e %g mu %g ground %g (true %g %g %g), loss %g after %d rollouts", m.e, m.mu, m.ground, o.e,
              o.mu, o.ground, r.loss, r.evals);
    imp_rigid_traj_free(&t);
}

/* impulse's learned cube: trained (corners, e, mu, the ground) on rollout
 * windows of tosses made by a body whose contact corners sit 5 % further out
 * than the nominal cube's and whose e, mu are unlike the start's, Adam moves
 * e and mu from the start to within half their distance of the truth and
 * the kept parameters roll the tosses out better than the start. (The
 * corners themselves are not checked: on 8 short tosses they move, but
 * not reliably towards the truth; docs/cube.md.) */
static void test_learn(void)
{
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    o.n_tosses = 8, o.n_samples = 50, o.substeps = 2;
    imp_rigid_model truth;
    imp_rigid_model_box(&truth, &o.body, 0.5, 0.6, 0.0, o.gravity);
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) truth.points[k][i] *= 1.05; /* 2.6 mm further out per axis */
    int64_t lengths[8];
    double *s = malloc((size_t)o.n_tosses * o.n_samples * 13 * sizeof *s);
    for (int k = 0; k < o.n_tosses; k++) {
        double x0[13];
        imp_box_toss_initial(&o, k, x0);
        x0[6] = 0.5 * o.body.size[0] + 0.05; /* low: every toss lands within the window */
        CHECK_OK(imp_rigid_model_rollout(&truth, o.dt, o.substeps, x0, (size_t)o.n_samples, s + (size_t)k * o.n_samples * 13));
        lengths[k] = o.n_samples;
    }
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    CHECK_OK(imp_rigid_traj_set(&t, s, (size_t)o.n_tosses * o.n_samples, lengths, NULL, (size_t)o.n_tosses, 1e-9));
    free(s);
    imp_rigid_model m;
    imp_rigid_model_box(&m, &t.body, 0.3, 0.3, 0.0, t.gravity);
    const imp_rigid_model start = m;
    imp_rigid_learn_opts lo;
    imp_rigid_learn_defaults(&lo);
    lo.substeps = 2, lo.window = 24, lo.batch = 8, lo.steps = 300, lo.eval_every = 10, lo.point_scale = 2e-3;
    lo.fit_evals = 0; /* Adam alone (test_learn_inertia has the full-toss fit) */
    int ep[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    imp_rigid_learn_report rep;
    CHECK_OK(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &m, &rep));
    /* the corners' mean distance from the truth */
    double c0 = 0, c1 = 0;
    for (int k = 0; k < 8; k++) {
        double a = 0, b = 0;
        for (int i = 0; i < 3; i++) {
            a += (start.points[k][i] - truth.points[k][i]) * (start.points[k][i] - truth.points[k][i]);
            b += (m.points[k][i] - truth.points[k][i]) * (m.points[k][i] - truth.points[k][i]);
        }
        c0 += sqrt(a) / 8, c1 += sqrt(b) / 8;
    }
    CHECK_MSG(rep.best_step > 0 && fabs(m.e - truth.e) < 0.5 * fabs(start.e - truth.e) &&
                  fabs(m.mu - truth.mu) < 0.5 * fabs(start.mu - truth.mu),
              "learned corners off by %.3g mm (start %.3g), e %g mu %g (true %g %g), best step %d, %g s", 1e3 * c1,
              1e3 * c0, m.e, m.mu, truth.e, truth.mu, rep.best_step, rep.seconds);
    /* a narrow prior on the corners (sd 1 um) keeps them at the start's, where without it they moved */
    imp_rigid_model mp = start;
    lo.prior_point_sd = 1e-6, lo.steps = 100;
    CHECK_OK(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &mp, &rep));
    double dev_ml = 0, dev_map = 0;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) {
            dev_ml = fmax(dev_ml, fabs(m.points[k][i] - start.points[k][i]));
            dev_map = fmax(dev_map, fabs(mp.points[k][i] - start.points[k][i]));
        }
    CHECK_MSG(dev_ml > 5e-4 && dev_map < 1e-4, "corners moved by %.3g mm without a prior, %.3g mm with sd 1 um",
              1e3 * dev_ml, 1e3 * dev_map);
    lo.prior_point_sd = -1;
    CHECK_FAILS(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &mp, &rep), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "prior_point_sd") != NULL);
    lo.prior_point_sd = 0, lo.steps = 300;
    /* bad options name themselves */
    lo.window = 1;
    CHECK_FAILS(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &m, &rep), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "window") != NULL);
    imp_rigid_traj_free(&t);
}

/* impulse simulate box-toss: a loadable rigid-body file with the asked law
 * and tosses, one error line on bad options. */
static void test_cli(void)
{
    char err[4096];
    int rc = run("simulate box-toss --trajectories 3 --steps 20 --substeps 4 --restitution 0.4 --friction 0.7 "
                 "--seed 5 -o rigid_step_box.npz",
                 err, sizeof err);
    CHECK_MSG(rc == 0, "simulate box-toss: exit %d: %s", rc, err);
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    CHECK_OK(imp_rigid_traj_load(&t, "rigid_step_box.npz"));
    CHECK(t.n_episodes == 3 && t.n_rows == 60);
    CHECK(strstr(t.source, "e 0.4, mu 0.7") != NULL);
    /* the first toss is the simulator's, sample by sample */
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    o.e = 0.4, o.mu = 0.7, o.seed = 5, o.substeps = 4;
    imp_rigid_model m;
    imp_rigid_model_box(&m, &o.body, o.e, o.mu, o.ground, o.gravity);
    double x0[13], out[20 * 13];
    imp_box_toss_initial(&o, 0, x0);
    CHECK_OK(imp_rigid_model_rollout(&m, o.dt, 4, x0, 20, out));
    CHECK(memcmp(out, t.states, sizeof out) == 0);
    imp_rigid_traj_free(&t);
    remove("rigid_step_box.npz");
    expect_error("simulate box-toss --restitution 1.5 -o x.npz", "--restitution");
    expect_error("simulate box-toss --substeps 0 -o x.npz", "--substeps");
    expect_error("simulate box-toss --trajectories 2", "-o");
}

/* The window loss's gradient against central differences, over 20 samples
 * of a toss through its first impacts (2 steps per sample); with warm
 * starts (warm = 1) the loss and gradient are the cold start's. */
static void test_window_grad(int warm, double rw)
{
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    o.n_tosses = 1, o.n_samples = 60, o.substeps = 8, o.e = 0.4, o.mu = 0.3;
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    CHECK_OK(imp_box_toss_simulate(&o, &t));
    /* a window around the first contact */
    size_t a = 0;
    for (size_t k = 0; k < 60; k++)
        if (imp_rigid_lowest_corner(t.states + 13 * k, &t.body, 0.0) < 0.01) {
            a = k > 4 ? k - 4 : 0;
            break;
        }
    const double *meas = t.states + 13 * a;
    imp_rigid_model m;
    imp_rigid_model_box(&m, &t.body, 0.3, 0.1, 0.0005, 9.81);
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) m.points[k][i] *= 1.0 + 0.01 * ((k + i) % 3 - 1);
    imp_rigid_model_grad g;
    memset(&g, 0, sizeof g);
    double L, x0b[13];
    CHECK_OK(imp_rigid_window_loss_w(&m, t.dt, 2, meas, 20, 0.1048, rw, &L, &g, x0b));
    if (warm) {
        imp_rigid_model mw = m;
        mw.warm_start = 1;
        imp_rigid_model_grad gw;
        memset(&gw, 0, sizeof gw);
        double Lw, x0bw[13];
        CHECK_OK(imp_rigid_window_loss_w(&mw, t.dt, 2, meas, 20, 0.1048, rw, &Lw, &gw, x0bw));
        CHECK_MSG(fabs(Lw - L) <= 1e-8 * L && fabs(gw.mu - g.mu) <= 1e-6 * fabs(g.mu) &&
                      fabs(gw.e - g.e) <= 1e-6 * fabs(g.e) + 1e-12,
                  "warm start: loss %.12g against %.12g, dL/dmu %g against %g", Lw, L, gw.mu, g.mu);
        m = mw, g = gw, L = Lw;
        /* the gradient with a first-state velocity offset too */
        m.dv0[0] = 0.01, m.dv0[2] = -0.02;
        memset(&g, 0, sizeof g);
        CHECK_OK(imp_rigid_window_loss_w(&m, t.dt, 2, meas, 20, 0.1048, rw, &L, &g, x0b));
    }
    double an[27], nu[27], eps = 1e-7;
    an[0] = g.e, an[1] = g.mu, an[2] = g.ground;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) an[3 + 3 * k + i] = g.points[k][i];
    for (int p = 0; p < 27; p++) {
        imp_rigid_model mp = m, mm = m;
        double *xp = p == 0 ? &mp.e : p == 1 ? &mp.mu : p == 2 ? &mp.ground : &mp.points[(p - 3) / 3][(p - 3) % 3];
        double *xm = p == 0 ? &mm.e : p == 1 ? &mm.mu : p == 2 ? &mm.ground : &mm.points[(p - 3) / 3][(p - 3) % 3];
        *xp += eps, *xm -= eps;
        double Lp, Lm;
        CHECK_OK(imp_rigid_window_loss_w(&mp, t.dt, 2, meas, 20, 0.1048, rw, &Lp, NULL, NULL));
        CHECK_OK(imp_rigid_window_loss_w(&mm, t.dt, 2, meas, 20, 0.1048, rw, &Lm, NULL, NULL));
        nu[p] = (Lp - Lm) / (2 * eps);
    }
    double err = test_grad_rel_err(an, nu, 27, 1e-6);
    CHECK_MSG(err < 1e-4, "window loss: parameter gradient rel err %g (e %g/%g mu %g/%g ground %g/%g)", err, an[0],
              nu[0], an[1], nu[1], an[2], nu[2]);
    CHECK(L > 0);
    /* the window holds a bounce (e acts) and friction acts */
    CHECK_MSG(fabs(g.e) > 1e-6 && fabs(g.mu) > 1e-6, "window without a bounce: dL/de %g, dL/dmu %g", g.e, g.mu);
    /* the rotation weight: L(rw) = L(0) + rw (L(1) - L(0)); rw 1 is imp_rigid_window_loss */
    double L0, L1, L1u;
    CHECK_OK(imp_rigid_window_loss_w(&m, t.dt, 2, meas, 20, 0.1048, 0.0, &L0, NULL, NULL));
    CHECK_OK(imp_rigid_window_loss_w(&m, t.dt, 2, meas, 20, 0.1048, 1.0, &L1, NULL, NULL));
    CHECK_OK(imp_rigid_window_loss(&m, t.dt, 2, meas, 20, 0.1048, &L1u, NULL, NULL));
    CHECK_MSG(L1 == L1u && L0 > 0 && L1 > L0 && fabs(L - (L0 + rw * (L1 - L0))) <= 1e-12 * L,
              "rot_weight %g: loss %.15g, weight 0 %.15g, weight 1 %.15g", rw, L, L0, L1);
    CHECK_FAILS(imp_rigid_window_loss_w(&m, t.dt, 2, meas, 20, 0.1048, -1.0, &L0, NULL, NULL), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "rot_weight") != NULL);
    CHECK_FAILS(imp_rigid_window_loss_w(&m, t.dt, 2, meas, 20, 0.1048, NAN, &L0, NULL, NULL), IMP_ERR_INVALID);
    imp_rigid_traj_free(&t);
}

/* Rollouts with warm-started impulse solves follow the cold-started ones:
 * 6 tosses of 1 s that bounce, slide and come to rest on a face (where
 * the warm start acts), 4 steps per sample. */
static void test_warm_rollout(void)
{
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    imp_rigid_model m, mw;
    imp_rigid_model_box(&m, &o.body, 0.2, 0.3, 0.0, o.gravity);
    mw = m;
    mw.warm_start = 1;
    const size_t n = 148;
    double *a = malloc(2 * n * 13 * sizeof *a), *b = a + n * 13, worst = 0, worst_rot = 0;
    int same = 0;
    for (int k = 0; k < 6; k++) {
        double x0[13], w0 = worst, r0 = worst_rot;
        worst = worst_rot = 0;
        imp_box_toss_initial(&o, k, x0);
        CHECK_OK(imp_rigid_model_rollout(&m, o.dt, 4, x0, n, a));
        CHECK_OK(imp_rigid_model_rollout(&mw, o.dt, 4, x0, n, b));
        for (size_t r = 0; r < n; r++) {
            for (int i = 4; i < 7; i++) worst = fmax(worst, fabs(a[13 * r + i] - b[13 * r + i]));
            worst_rot = fmax(worst_rot, imp_rigid_quat_angle(a + 13 * r, b + 13 * r));
        }
        same += worst < 1e-9 && worst_rot < 1e-9;
        worst = fmax(worst, w0), worst_rot = fmax(worst_rot, r0);
    }
    /* most tosses agree to rounding; where a nearly redundant solve (a box almost
       flat) lands on another of its solutions within the tolerance, by little */
    CHECK_MSG(same >= 4 && worst < 1e-3 && worst_rot < 1e-2,
              "warm start: %d of 6 tosses agree; positions differ by %g m, orientations by %g rad", same, worst,
              worst_rot);
    mw.warm_start = 2;
    CHECK_FAILS(imp_rigid_model_check(&mw), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "warm_start") != NULL);
    /* dv0: the rollout from the state with the offset velocity, its first row the given state */
    mw.warm_start = 0, mw.dv0[0] = 0.05, mw.dv0[2] = -0.03;
    double x0[13], x1[13];
    imp_box_toss_initial(&o, 0, x0);
    memcpy(x1, x0, sizeof x1);
    x1[10] += 0.05, x1[12] -= 0.03;
    CHECK_OK(imp_rigid_model_rollout(&mw, o.dt, 2, x0, 30, a));
    CHECK_OK(imp_rigid_model_rollout(&m, o.dt, 2, x1, 30, b));
    CHECK(memcmp(a, x0, sizeof x0) == 0 && memcmp(a + 13, b + 13, 29 * 13 * sizeof(double)) == 0);
    mw.dv0[1] = NAN;
    CHECK_FAILS(imp_rigid_model_check(&mw), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "dv0[1]") != NULL);
    free(a);
}

/* n simulated tosses of the nominal box with its moments times inertia_scale,
 * e 0.2 and mu 0.4, 60 samples each, into t */
static void inertia_tosses(double inertia_scale, int n, imp_rigid_traj *t)
{
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    o.n_tosses = n, o.n_samples = 60, o.substeps = 2;
    imp_rigid_model truth;
    imp_rigid_model_box(&truth, &o.body, 0.2, 0.4, 0.0, o.gravity);
    for (int i = 0; i < 3; i++) truth.inertia[i] *= inertia_scale;
    int64_t lengths[16];
    double *s = malloc((size_t)o.n_tosses * o.n_samples * 13 * sizeof *s);
    for (int k = 0; k < o.n_tosses; k++) {
        double x0[13];
        imp_box_toss_initial(&o, k, x0);
        x0[6] = 0.5 * o.body.size[0] + 0.05;
        CHECK_OK(imp_rigid_model_rollout(&truth, o.dt, o.substeps, x0, (size_t)o.n_samples,
                                         s + (size_t)k * o.n_samples * 13));
        lengths[k] = o.n_samples;
    }
    imp_rigid_traj_default(t);
    CHECK_OK(imp_rigid_traj_set(t, s, (size_t)o.n_tosses * o.n_samples, lengths, NULL, (size_t)o.n_tosses, 1e-9));
    free(s);
}

/* The full-toss fit with the inertia learned: on 8 tosses made with the
 * moments 1.5 times the nominal ones, e 0.2 and mu 0.4, the fit from the
 * nominal cube with e = mu = 0.3 (no Adam steps) finds the moments within
 * 15 % and lowers the training loss below the start's; the selection
 * against the fit with the nominal moments (on the training tosses, there
 * being no validation tosses) keeps the learned moments. */
static void test_learn_inertia(void)
{
    imp_rigid_traj t;
    inertia_tosses(1.5, 8, &t);
    imp_rigid_model m;
    imp_rigid_model_box(&m, &t.body, 0.3, 0.3, 0.0, t.gravity);
    m.warm_start = 1;
    imp_rigid_learn_opts lo;
    imp_rigid_learn_defaults(&lo);
    CHECK(lo.select_inertia == 0);
    lo.substeps = 2, lo.steps = 0, lo.fit_evals = 200, lo.learn_inertia = 1, lo.select_inertia = 1;
    int ep[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    imp_rigid_learn_report rep;
    CHECK_OK(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &m, &rep));
    imp_rigid_model start;
    imp_rigid_model_box(&start, &t.body, 0.3, 0.3, 0.0, t.gravity);
    imp_rigid_model_ctx rc = {&start, t.dt, 2};
    imp_rigid_metrics ms;
    CHECK_OK(imp_rigid_eval_rollouts(&t, ep, 8, imp_rigid_model_rollout_fn, &rc, 0.0, &ms));
    double r = m.inertia[0] / t.body.inertia[0];
    CHECK_MSG(fabs(r - 1.5) < 0.15 * 1.5 && m.inertia[1] == m.inertia[0] && m.inertia[2] == m.inertia[0] &&
                  rep.inertia_kept == 1 && rep.fit_valid_inertia < rep.fit_valid_nominal &&
                  rep.fit_evals > 0 && rep.fit_evals <= 2 * 200 &&
                  rep.fit_loss < ms.position_error_pct + ms.rotation_error_deg,
              "inertia fit: moments %.3g x nominal (true 1.5), e %.3g mu %.3g, loss %g (start %g), %d rollouts, "
              "kept %d (scores %g nominal, %g learned)", r, m.e, m.mu, rep.fit_loss,
              ms.position_error_pct + ms.rotation_error_deg, rep.fit_evals, rep.inertia_kept, rep.fit_valid_nominal,
              rep.fit_valid_inertia);
    lo.learn_inertia = 2;
    CHECK_FAILS(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &m, &rep), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "learn_inertia") != NULL);
    lo.learn_inertia = 1, lo.select_inertia = 2;
    CHECK_FAILS(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &m, &rep), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "select_inertia") != NULL);
    lo.select_inertia = 1, lo.learn_dv0 = 2;
    CHECK_FAILS(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &m, &rep), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "learn_dv0") != NULL);
    /* the velocity offset too: the tosses have none, the fit finds little */
    lo.learn_dv0 = 1, lo.fit_evals = 300;
    imp_rigid_model_box(&m, &t.body, 0.3, 0.3, 0.0, t.gravity);
    CHECK_OK(imp_rigid_learn(&t, ep, 8, NULL, 0, &lo, &m, &rep));
    r = m.inertia[0] / t.body.inertia[0];
    CHECK_MSG(fabs(m.dv0[2]) < 0.01 && m.dv0[0] == 0 && m.dv0[1] == 0 && fabs(r - 1.5) < 0.15 * 1.5,
              "dv0 fit: %g m/s (none in the tosses), moments %.3g x nominal (true 1.5)", m.dv0[2], r);
    imp_rigid_traj_free(&t);
}

/* The selection of the inertia by the validation tosses: on tosses made
 * with the nominal moments, 2 for training and 6 for validation, the fit with
 * the moments learned moves them off the nominal ones (select_inertia 0), and
 * with select_inertia 1 the validation tosses choose the fit with the
 * nominal moments, which rolls them out better. */
static void test_select_inertia(void)
{
    imp_rigid_traj t;
    inertia_tosses(1.0, 8, &t);
    imp_rigid_learn_opts lo;
    imp_rigid_learn_defaults(&lo);
    lo.substeps = 2, lo.steps = 0, lo.fit_evals = 150, lo.learn_inertia = 1, lo.select_inertia = 0;
    int train[2] = {0, 1}, valid[6] = {2, 3, 4, 5, 6, 7};
    imp_rigid_learn_report rep;
    imp_rigid_model free_fit, sel;
    imp_rigid_model_box(&free_fit, &t.body, 0.3, 0.3, 0.0, t.gravity);
    free_fit.warm_start = 1;
    sel = free_fit;
    CHECK_OK(imp_rigid_learn(&t, train, 2, valid, 6, &lo, &free_fit, &rep));
    CHECK(rep.inertia_kept == 1 && isnan(rep.fit_valid_nominal) && isnan(rep.fit_valid_inertia));
    const double r_free = free_fit.inertia[0] / t.body.inertia[0], score_free = rep.valid_score;
    lo.select_inertia = 1;
    CHECK_OK(imp_rigid_learn(&t, train, 2, valid, 6, &lo, &sel, &rep));
    CHECK_MSG(fabs(r_free - 1) > 1e-3 && rep.inertia_kept == 0 && memcmp(sel.inertia, t.body.inertia, sizeof sel.inertia) == 0 &&
                  rep.fit_valid_nominal <= rep.fit_valid_inertia && rep.valid_score < score_free,
              "selection: free fit %.4g x nominal (validation %g); kept %d, scores %g nominal, %g learned, kept %g",
              r_free, score_free, rep.inertia_kept, rep.fit_valid_nominal, rep.fit_valid_inertia, rep.valid_score);
    imp_rigid_traj_free(&t);
}

/* The MAP full-toss fit: on 8 tosses made with the moments 1.5 times the
 * nominal ones, the fit without priors moves the moments and the ground
 * (started 2 mm above the tosses' ground) towards the truth; with a narrow
 * prior on the log inertia and on the ground the fit keeps both near the
 * start. The report's fit_loss stays the plain training loss of the fit and
 * the validation errors add up to the validation score. */
static void test_fit_prior(void)
{
    imp_rigid_traj t;
    inertia_tosses(1.5, 8, &t);
    imp_rigid_learn_opts lo;
    imp_rigid_learn_defaults(&lo);
    CHECK(lo.prior_ground_sd == 0.002 && fabs(lo.prior_inertia_sd - log(4.0)) < 1e-15 && lo.prior_point_sd == 0);
    lo.substeps = 2, lo.steps = 0, lo.fit_evals = 150, lo.learn_inertia = 1;
    lo.prior_ground_sd = 0, lo.prior_inertia_sd = 0; /* the plain fit */
    int train[6] = {0, 1, 2, 3, 4, 5}, valid[2] = {6, 7};
    imp_rigid_learn_report rep;
    imp_rigid_model ml, mp;
    imp_rigid_model_box(&ml, &t.body, 0.3, 0.3, 0.002, t.gravity);
    ml.warm_start = 1;
    mp = ml;
    CHECK_OK(imp_rigid_learn(&t, train, 6, valid, 2, &lo, &ml, &rep));
    const double r_ml = ml.inertia[0] / t.body.inertia[0];
    CHECK_MSG(fabs(rep.valid_position_pct + rep.valid_rotation_deg - rep.valid_score) <= 1e-12 * rep.valid_score,
              "validation errors %g + %g, score %g", rep.valid_position_pct, rep.valid_rotation_deg, rep.valid_score);
    lo.prior_inertia_sd = 0.01, lo.prior_ground_sd = 1e-5;
    CHECK_OK(imp_rigid_learn(&t, train, 6, valid, 2, &lo, &mp, &rep));
    const double r_map = mp.inertia[0] / t.body.inertia[0];
    CHECK_MSG(fabs(r_ml - 1.5) < 0.25 && fabs(ml.ground) < 0.001 && fabs(r_map - 1) < 0.03 &&
                  fabs(mp.ground - 0.002) < 1e-4,
              "prior: moments %.4g x nominal without, %.4g with a narrow prior; ground %.3g mm without, %.3g mm with",
              r_ml, r_map, 1e3 * ml.ground, 1e3 * mp.ground);
    imp_rigid_model_ctx rc = {&mp, t.dt, 2};
    imp_rigid_metrics mt;
    CHECK_OK(imp_rigid_eval_rollouts(&t, train, 6, imp_rigid_model_rollout_fn, &rc, mp.ground, &mt));
    CHECK_MSG(fabs(rep.fit_loss - (mt.position_error_pct + mt.rotation_error_deg)) <= 1e-9 * rep.fit_loss,
              "MAP fit: fit_loss %g, its training loss %g", rep.fit_loss, mt.position_error_pct + mt.rotation_error_deg);
    lo.prior_ground_sd = -1;
    CHECK_FAILS(imp_rigid_learn(&t, train, 6, valid, 2, &lo, &mp, &rep), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "prior_ground_sd") != NULL);
    lo.prior_ground_sd = 0, lo.rot_weight = NAN;
    CHECK_FAILS(imp_rigid_learn(&t, train, 6, valid, 2, &lo, &mp, &rep), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "rot_weight") != NULL);
    imp_rigid_traj_free(&t);
}

int main(void)
{
    test_gradients();
    test_flight();
    test_tosses();
    test_identify();
    test_learn();
    test_cli();
    test_window_grad(0, 1.0);
    test_window_grad(1, 1.0);
    test_window_grad(1, IMP_RIGID_ROT_WEIGHT_DEG_PCT);
    test_warm_rollout();
    test_learn_inertia();
    test_select_inertia();
    test_fit_prior();
    TEST_MAIN_END();
}
