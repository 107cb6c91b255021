/* The end-to-end baseline of the cube tosses (src/models/rigid_e2e.c):
 * the rollout-window loss's gradient by finite differences (through the
 * steps, the quaternion's normalisation and its sign), its invariances
 * (translation in x, y; the quaternion's sign), and training that learns
 * ballistic flight well enough to beat holding the first state. */
#include "test.h"

#include "impulse/core.h"
#include "impulse/rigid_models.h"

/* n_ep tosses of `len` samples of ballistic flight from random states. */
static void make_tosses(imp_rigid_traj *t, int n_ep, int len, unsigned seed)
{
    imp_rigid_traj_default(t);
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    double *s = malloc((size_t)n_ep * len * 13 * sizeof *s);
    int64_t *lengths = malloc((size_t)n_ep * sizeof *lengths);
    for (int e = 0; e < n_ep; e++) {
        double x0[13], q[4] = {imp_rng_normal(&rng), imp_rng_normal(&rng), imp_rng_normal(&rng), imp_rng_normal(&rng)};
        double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (int i = 0; i < 4; i++) x0[i] = q[i] / nq;
        x0[4] = imp_rng_uniform_range(&rng, -0.5, 0.5);
        x0[5] = imp_rng_uniform_range(&rng, -0.5, 0.5);
        x0[6] = imp_rng_uniform_range(&rng, 0.3, 0.6);
        for (int i = 7; i < 10; i++) x0[i] = imp_rng_uniform_range(&rng, -5, 5);
        for (int i = 10; i < 12; i++) x0[i] = imp_rng_uniform_range(&rng, -1, 1);
        x0[12] = imp_rng_uniform_range(&rng, 0, 1);
        imp_rigid_ballistic(x0, (size_t)len, t->dt, &t->body, t->gravity, 4, s + (size_t)e * len * 13);
        lengths[e] = len;
    }
    if (imp_rigid_traj_set(t, s, (size_t)n_ep * len, lengths, NULL, (size_t)n_ep, 1e-9))
        fprintf(stderr, "make_tosses: %s\n", imp_last_error());
    free(s);
    free(lengths);
}

static void test_gradient(void)
{
    imp_rigid_traj t;
    make_tosses(&t, 3, 12, 7);
    /* measurement-like noise: no state change is exactly constant */
    imp_rng rng;
    imp_rng_seed(&rng, 99);
    for (size_t r = 0; r < t.n_rows; r++)
        for (int i = 4; i < 13; i++) t.states[r * 13 + i] += 1e-3 * imp_rng_normal(&rng);
    imp_rigid_e2e_opts o;
    imp_rigid_e2e_opts_default(&o);
    o.hidden = 9;
    o.seed = 3;
    imp_rigid_e2e m;
    CHECK_OK(imp_rigid_e2e_init(&m, &o));
    int eps[3] = {0, 1, 2};
    CHECK_OK(imp_rigid_e2e_set_scaling(&m, &t, eps, 3));
    /* the features are standardised: non-trivial scales */
    CHECK(m.in_scale[4] > 1e-3 && m.out_scale[6] > 1e-6 && m.out_scale[6] < 1);
    const size_t P = m.net.n_params;
    double *g = calloc(P, sizeof *g), *num = calloc(P, sizeof *num), *p = malloc(P * sizeof *p);
    memcpy(p, m.params, P * sizeof *p);
    /* a less trivial point than the initialisation */
    for (size_t i = 0; i < P; i++) p[i] += 0.05 * sin(1.3 * (double)i);
    /* windows of 1 and 4 steps from rows 0..2 of toss 0 and row 1 of toss 1
     * (one first state with its quaternion's sign flipped: the same motion) */
    for (int H = 1; H <= 4; H += 3) {
        enum { B = 4 };
        double x0[B * 13], target[B * 4 * 13];
        const int rows[B] = {0, 1, 2, 13};
        for (int b = 0; b < B; b++) {
            memcpy(x0 + b * 13, t.states + rows[b] * 13, 13 * sizeof *x0);
            memcpy(target + b * H * 13, t.states + (rows[b] + 1) * 13, (size_t)H * 13 * sizeof *x0);
        }
        for (int i = 0; i < 4; i++) x0[13 + i] = -x0[13 + i];
        imp_mlp_work *w[4];
        for (int k = 0; k < 4; k++) w[k] = imp_mlp_work_new(&m.net, B);
        memset(g, 0, P * sizeof *g);
        double L = imp_rigid_e2e_window_loss(&m, p, x0, target, B, H, g, w);
        CHECK(isfinite(L) && L > 0);
        const double h = 1e-6;
        for (size_t i = 0; i < P; i++) {
            double keep = p[i];
            p[i] = keep + h;
            double lp = imp_rigid_e2e_window_loss(&m, p, x0, target, B, H, NULL, w);
            p[i] = keep - h;
            double lm = imp_rigid_e2e_window_loss(&m, p, x0, target, B, H, NULL, w);
            p[i] = keep;
            num[i] = (lp - lm) / (2 * h);
        }
        double err = test_grad_rel_err(g, num, P, 1e-8);
        CHECK_MSG(err < 1e-6, "window %d: relative gradient error %g over %zu parameters", H, err, P);
        for (int k = 0; k < 4; k++) imp_mlp_work_free(w[k]);
    }
    free(g), free(num), free(p);

    /* invariances: a shift in x, y moves the prediction by the same shift;
     * -q gives the same orientation */
    double a[13], b[13], xa[13], xb[13];
    memcpy(xa, t.states + 13 * 4, sizeof xa);
    memcpy(xb, xa, sizeof xb);
    xb[4] += 0.3;
    xb[5] -= 1.7;
    CHECK_OK(imp_rigid_e2e_step(&m, xa, a));
    CHECK_OK(imp_rigid_e2e_step(&m, xb, b));
    CHECK_CLOSE(b[4] - a[4], 0.3, 0, 1e-12);
    CHECK_CLOSE(b[5] - a[5], -1.7, 0, 1e-12);
    for (int i = 6; i < 13; i++) CHECK_CLOSE(b[i], a[i], 0, 1e-12);
    for (int i = 0; i < 4; i++) CHECK_CLOSE(b[i], a[i], 0, 1e-12);
    for (int i = 0; i < 4; i++) xb[i] = -xa[i];
    memcpy(xb + 4, xa + 4, 9 * sizeof *xb);
    CHECK_OK(imp_rigid_e2e_step(&m, xb, b));
    CHECK(imp_rigid_quat_angle(a, b) < 1e-9);
    CHECK_CLOSE(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3], 1.0, 0, 1e-12);
    imp_rigid_e2e_free(&m);
    imp_rigid_traj_free(&t);
}

static int hold_rollout(const double x0[13], size_t n, void *ctx, double *out)
{
    (void)ctx;
    for (size_t k = 0; k < n; k++) memcpy(out + k * 13, x0, 13 * sizeof *out);
    return IMP_OK;
}

static void test_training(void)
{
    imp_rigid_traj t;
    enum { NT = 40 };
    make_tosses(&t, NT + 4, 20, 11);
    t.ground_height = -10; /* no penetration in free flight */
    int train[NT], valid[2] = {NT, NT + 1}, test[2] = {NT + 2, NT + 3};
    for (int i = 0; i < NT; i++) train[i] = i;
    imp_rigid_e2e_opts o;
    imp_rigid_e2e_opts_default(&o);
    o.hidden = 32;
    o.steps = 1500;
    o.batch = 64;
    o.eval_every = 100;
    o.lr = 3e-3;
    o.window = 3;
    imp_rigid_e2e m;
    imp_rigid_e2e_report rep;
    CHECK_OK(imp_rigid_e2e_train(&m, &t, train, NT, valid, 2, &o, &rep));
    CHECK(rep.best_step > 0 && rep.best_step <= o.steps && isfinite(rep.valid_score));
    imp_rigid_metrics me, mh;
    CHECK_OK(imp_rigid_eval_rollouts(&t, test, 2, imp_rigid_e2e_rollout, &m, t.ground_height, &me));
    CHECK_OK(imp_rigid_eval_rollouts(&t, test, 2, hold_rollout, NULL, t.ground_height, &mh));
    CHECK_MSG(me.position_error_pct < 0.5 * mh.position_error_pct, "end-to-end %g %% against holding %g %%",
              me.position_error_pct, mh.position_error_pct);
    /* the same seed trains the same network */
    imp_rigid_e2e m2;
    imp_rigid_e2e_report rep2;
    CHECK_OK(imp_rigid_e2e_train(&m2, &t, train, NT, valid, 2, &o, &rep2));
    CHECK(rep2.best_step == rep.best_step && !memcmp(m.params, m2.params, m.net.n_params * sizeof *m.params));
    imp_rigid_e2e_free(&m2);
    imp_rigid_e2e_free(&m);
    /* bad settings name themselves */
    o.steps = 0;
    CHECK_FAILS(imp_rigid_e2e_train(&m, &t, train, NT, valid, 2, &o, &rep), IMP_ERR_INVALID);
    imp_rigid_traj_free(&t);
}

int main(void)
{
    test_gradient();
    test_training();
    TEST_MAIN_END();
}
