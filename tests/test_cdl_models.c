/* CD-Lagrange strand models: finite-difference checks of whole window
 * losses (CDL in every option combination, VIN, ResNet, ResNetContact),
 * including windows in which impacts happen; the impulse law itself. */
#include "impulse/cdl.h"
#include "../src/models/cdl_internal.h"
#include "test.h"

#include <stdlib.h>

/* Windows from a simulated system; starts chosen to contain impacts. */
typedef struct batch {
    int B, H, D, K;
    double *x0, *target, *labels;
    double *weight; /* B x H state-error weights, NULL: all 1 */
} batch;

static void make_batch(const imp_trajset *ts, int B, int H, const int *starts, batch *bt)
{
    int D = ts->geom.n_bodies * ts->geom.dim, K = ts->geom.n_bodies, S = 2 * D;
    bt->B = B, bt->H = H, bt->D = D, bt->K = K;
    bt->weight = NULL;
    bt->x0 = malloc(sizeof(double) * B * S);
    bt->target = malloc(sizeof(double) * B * H * S);
    bt->labels = malloc(sizeof(double) * B * H * K);
    for (int b = 0; b < B; b++) {
        int t0 = starts[b];
        memcpy(bt->x0 + b * S, ts->q + t0 * D, D * sizeof(double));
        memcpy(bt->x0 + b * S + D, ts->qdot + t0 * D, D * sizeof(double));
        for (int k = 0; k < H; k++) {
            memcpy(bt->target + (b * H + k) * S, ts->q + (t0 + 1 + k) * D, D * sizeof(double));
            memcpy(bt->target + (b * H + k) * S + D, ts->qdot + (t0 + 1 + k) * D, D * sizeof(double));
            memcpy(bt->labels + (b * H + k) * K, ts->contact + (t0 + 1 + k) * K, K * sizeof(double));
        }
    }
}

static void free_batch(batch *bt) { free(bt->x0), free(bt->target), free(bt->labels), free(bt->weight); }

/* Central differences of the total loss against the analytic gradient, on
 * every parameter of the small model; returns the worst relative error. */
static double fd_check(imp_model *m, const batch *bt, double l2, const char *what)
{
    imp_model_work *w = imp_model_work_new(m, bt->B, bt->H);
    double *grad = calloc(m->n_params, sizeof(double));
    double *num = calloc(m->n_params, sizeof(double));
    imp_loss_parts lp;
    int st = imp_model_window_loss(m, m->params, w, bt->x0, bt->target, bt->labels, bt->weight, bt->B, bt->H, l2, grad, &lp);
    CHECK_MSG(st == IMP_OK, "%s: %s", what, imp_last_error());
    const double eps = 1e-6;
    for (size_t i = 0; i < m->n_params; i++) {
        double keep = m->params[i];
        imp_loss_parts lp1, lp2;
        m->params[i] = keep + eps;
        imp_model_window_loss(m, m->params, w, bt->x0, bt->target, bt->labels, bt->weight, bt->B, bt->H, l2, NULL, &lp1);
        m->params[i] = keep - eps;
        imp_model_window_loss(m, m->params, w, bt->x0, bt->target, bt->labels, bt->weight, bt->B, bt->H, l2, NULL, &lp2);
        m->params[i] = keep;
        num[i] = (lp1.total - lp2.total) / (2 * eps);
    }
    double err = test_grad_rel_err(grad, num, m->n_params, 1e-8);
    /* the check must be able to fail: a gradient with one flipped sign does */
    size_t imax = 0;
    for (size_t i = 0; i < m->n_params; i++) if (fabs(grad[i]) > fabs(grad[imax])) imax = i;
    grad[imax] = -grad[imax];
    double err_wrong = test_grad_rel_err(grad, num, m->n_params, 1e-8);
    printf("%-40s loss %.4g  FD rel err %.2e (sign-flipped %.2e)\n", what, lp.total, err, err_wrong);
    CHECK_MSG(err < 1e-5, "%s: gradient relative error %g", what, err);
    CHECK(err_wrong > 1e-2);
    free(grad), free(num);
    imp_model_work_free(w);
    return err;
}

static imp_model *small_model(imp_model_kind kind, const imp_contact_geometry *g, double dt, int touch,
                              int projection, int damping, int mass, imp_activation act)
{
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, kind);
    cfg.hidden = 7;
    cfg.hidden_layers = 2;
    cfg.contact_hidden = 6;
    cfg.act = act;
    cfg.touch = touch;
    cfg.projection = projection;
    cfg.learn_damping = damping;
    cfg.learn_mass = mass;
    imp_model *m = NULL;
    int st = imp_model_create(&m, &cfg, g, dt, 11);
    CHECK_MSG(st == IMP_OK, "create: %s", imp_last_error());
    /* perturb damping/mass away from their initial values */
    imp_rng r;
    imp_rng_seed(&r, 5);
    if (damping) for (int i = 0; i < m->D; i++) m->params[m->off_damping + i] = -1.0 + 0.3 * imp_rng_normal(&r);
    if (mass) for (int k = 0; k < m->K; k++) m->params[m->off_mass + k] = 0.2 * imp_rng_normal(&r);
    return m;
}

static void test_ball_gradients(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.noise = 0.05;
    o.restitution = 0.8;
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    /* first impact at t = sqrt(2*10/9.81) = 1.43 s, step ~71: windows around it */
    int first = -1;
    for (int t = 0; t < ts.n_steps; t++) if (ts.contact[t] > 0.5) { first = t; break; }
    CHECK(first > 60 && first < 80);
    int starts[4] = {first - 3, first - 6, first - 1, 20};
    batch bt;
    make_batch(&ts, 4, 6, starts, &bt);
    const imp_activation acts[3] = {IMP_ACT_TANH, IMP_ACT_SOFTPLUS, IMP_ACT_TANH};
    for (int variant = 0; variant < 6; variant++) {
        int touch = variant != 1, proj = variant == 2 || variant == 5, damp = variant >= 3, mass = variant >= 4;
        imp_model *m = small_model(IMP_MODEL_CDL, &ts.geom, ts.dt, touch, proj, damp, mass, acts[variant % 3]);
        char what[128];
        snprintf(what, sizeof what, "ball cdl touch=%d proj=%d damp=%d mass=%d", touch, proj, damp, mass);
        fd_check(m, &bt, 0.01, what);
        imp_model_free(m);
    }
    imp_model *m = small_model(IMP_MODEL_VIN, &ts.geom, ts.dt, 1, 0, 0, 0, IMP_ACT_TANH);
    fd_check(m, &bt, 0.01, "ball vin");
    imp_model_free(m);
    m = small_model(IMP_MODEL_RESNET, &ts.geom, ts.dt, 1, 0, 0, 0, IMP_ACT_TANH);
    fd_check(m, &bt, 0.0, "ball resnet");
    imp_model_free(m);
    m = small_model(IMP_MODEL_RESNET_CONTACT, &ts.geom, ts.dt, 1, 0, 0, 0, IMP_ACT_SOFTPLUS);
    fd_check(m, &bt, 0.0, "ball resnet-contact");
    imp_model_free(m);
    free_batch(&bt);
    imp_trajset_free(&ts);
}

/* Loss weights (samples inside a multi-sample impact get 0): the gradient
 * with weights checked by finite differences, and a target with weight 0
 * changes neither loss nor gradient while one with weight 1 does. */
static void test_weighted_loss(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball", &o));
    o.noise = 0.05;
    o.restitution = 0.7;
    imp_trajset ts;
    CHECK_OK(imp_simulate("compliant-ball", &o, &ts));
    CHECK_OK(imp_contact_labels_apply(&ts, IMP_LABELS_ONSET, NULL));
    int first = -1;
    for (int t = 0; t < ts.n_steps && first < 0; t++) if (ts.interior[t] != 0.0) first = t;
    CHECK(first > 60 && first < 80);
    int starts[3] = {first - 3, first - 1, first - 5};
    batch bt;
    make_batch(&ts, 3, 6, starts, &bt);
    bt.weight = malloc(sizeof(double) * bt.B * bt.H);
    for (int b = 0; b < bt.B; b++)
        for (int k = 0; k < bt.H; k++)
            bt.weight[b * bt.H + k] = ts.interior[starts[b] + 1 + k] != 0.0 ? 0.0 : k == 4 ? 0.5 : 1.0;
    CHECK(bt.weight[0 * bt.H + 2] == 0.0 && bt.weight[1 * bt.H + 0] == 0.0);
    const imp_model_kind kinds[3] = {IMP_MODEL_CDL, IMP_MODEL_CDL, IMP_MODEL_RESNET_CONTACT};
    for (int v = 0; v < 3; v++) {
        imp_model *m = small_model(kinds[v], &ts.geom, ts.dt, 1, 0, v == 1, 0, IMP_ACT_SOFTPLUS);
        if (v == 1) m->cfg.impact_law = IMP_CDL_IMPACT_NEWTON;
        char what[96];
        snprintf(what, sizeof what, "weighted %s%s", imp_model_kind_name(kinds[v]), v == 1 ? " newton damp" : "");
        fd_check(m, &bt, kinds[v] == IMP_MODEL_CDL ? 0.01 : 0.0, what);
        /* the mid-impact target of window 0 (weight 0), then a weighted one */
        imp_model_work *w = imp_model_work_new(m, bt.B, bt.H);
        double *g0 = calloc(m->n_params, sizeof(double)), *g1 = calloc(m->n_params, sizeof(double));
        imp_loss_parts l0, l1;
        CHECK_OK(imp_model_window_loss(m, m->params, w, bt.x0, bt.target, bt.labels, bt.weight, bt.B, bt.H, 0.01, g0, &l0));
        const int S = 2 * bt.D;
        for (int slot = 2; slot <= 3; slot++) {
            double *tq = bt.target + (size_t)(0 * bt.H + slot) * S;
            double keep = tq[0];
            tq[0] += 1.0;
            memset(g1, 0, m->n_params * sizeof(double));
            CHECK_OK(imp_model_window_loss(m, m->params, w, bt.x0, bt.target, bt.labels, bt.weight, bt.B, bt.H, 0.01, g1,
                                           &l1));
            tq[0] = keep;
            int same = l1.total == l0.total && !memcmp(g0, g1, m->n_params * sizeof(double));
            CHECK_MSG(same == (bt.weight[slot] == 0.0), "%s: target %d (weight %g): loss %g -> %g", what, slot,
                      bt.weight[slot], l0.total, l1.total);
        }
        free(g0), free(g1);
        imp_model_work_free(w);
        imp_model_free(m);
    }
    free_batch(&bt);
    imp_trajset_free(&ts);
}

static void test_cradle_gradients(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("newtons-cradle", &o));
    o.noise = 0.01;
    imp_trajset ts;
    CHECK_OK(imp_simulate("newtons-cradle", &o, &ts));
    int first = -1;
    for (int t = 0; t < ts.n_steps; t++) if (ts.contact[2 * t] > 0.5) { first = t; break; }
    CHECK(first > 0);
    int starts[3] = {first - 2, first - 4, 10};
    batch bt;
    make_batch(&ts, 3, 5, starts, &bt);
    for (int variant = 0; variant < 3; variant++) {
        imp_model *m = small_model(IMP_MODEL_CDL, &ts.geom, ts.dt, variant != 1, variant == 2, variant == 2,
                                   variant == 2, IMP_ACT_TANH);
        char what[96];
        snprintf(what, sizeof what, "cradle cdl variant %d", variant);
        fd_check(m, &bt, 0.005, what);
        imp_model_free(m);
    }
    free_batch(&bt);
    imp_trajset_free(&ts);
}

/* The impulse law: for a body-body pair the post-impact relative normal
 * velocity of the half-step grid is -e times the pre-impact one, and
 * momentum is conserved ([A] eqs 48-50). */
static void test_impulse_law(void)
{
    imp_contact_geometry g = {.n_bodies = 2, .dim = 1, .mass = {1.0, 3.0}, .restitution = 0.6, .n_pairs = 1};
    g.pairs[0] = (imp_contact_pair){.body_i = 1, .body_j = 0, .normal = {1.0}, .offset = 0.0};
    double w[2] = {1.0, 1.0 / 3.0}, gate[2] = {1, 1};
    double vh[2] = {-1.5, 0.5}, vS[2] = {-1.4, 0.45}, dv[2] = {0, 0};
    imp_impulse_forward(&g, w, (double[]){0.6}, NULL, IMP_CDL_IMPACT_PAPER, NULL, gate, vh, vS, dv);
    double post[2] = {vS[0] + dv[0], vS[1] + dv[1]};
    CHECK_CLOSE(post[0] - post[1], -0.6 * (vh[0] - vh[1]), 1e-12, 1e-12);
    CHECK_CLOSE(1.0 * dv[0] + 3.0 * dv[1], 0.0, 0, 1e-12);
    /* gate off: no impulse */
    double gate0[2] = {0, 0}, dv0[2] = {0, 0};
    imp_impulse_forward(&g, w, (double[]){0.6}, NULL, IMP_CDL_IMPACT_PAPER, NULL, gate0, vh, vS, dv0);
    CHECK(dv0[0] == 0.0 && dv0[1] == 0.0);
    /* a non-finite velocity (a diverging training) gives a NaN impulse and
       NaN gradients, as the closed form did, and leaves no error set */
    double vn[2] = {NAN, 0.45}, dvn[2] = {0, 0}, vb[2] = {1, 1}, vhb[2] = {0, 0}, eb = 0.0;
    imp_clear_error();
    imp_impulse_forward(&g, w, (double[]){0.6}, NULL, IMP_CDL_IMPACT_PAPER, NULL, gate, vh, vn, dvn);
    CHECK(isnan(dvn[0]) && isnan(dvn[1]));
    imp_impulse_backward(&g, w, (double[]){0.6}, NULL, IMP_CDL_IMPACT_PAPER, NULL, gate, vh, vn, vb, vhb, NULL, NULL,
                         NULL, &eb, NULL);
    CHECK(isnan(eb));
    CHECK_MSG(imp_last_error()[0] == '\0', "error left set: %s", imp_last_error());
}


/* Training's single-precision contact network (imp_model_work_set_single_contact,
 * 100-unit layers as in the reference code): the window loss and its
 * gradient stay within float rounding of the all-double pass, whose
 * gradient fd_check verifies; the single pass must really be taken. */
static void test_single_contact(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.noise = 0.05;
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    int starts[4] = {66, 68, 70, 20};
    batch bt;
    make_batch(&ts, 4, 6, starts, &bt);
    const imp_model_kind kinds[2] = {IMP_MODEL_CDL, IMP_MODEL_RESNET_CONTACT};
    for (int k = 0; k < 2; k++) {
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, kinds[k]);
        cfg.hidden = 9;
        imp_model *m = NULL;
        CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 3));
        imp_model_work *w = imp_model_work_new(m, bt.B, bt.H);
        double *grad[2] = {calloc(m->n_params, sizeof(double)), calloc(m->n_params, sizeof(double))};
        double loss[2];
        for (int single = 0; single < 2; single++) {
            CHECK_OK(imp_model_work_set_single_contact(w, single));
            imp_loss_parts lp;
            CHECK_OK(imp_model_window_loss(m, m->params, w, bt.x0, bt.target, bt.labels, NULL, bt.B, bt.H, 0.01, grad[single],
                                           &lp));
            loss[single] = lp.total;
        }
        double num = 0.0, den = 1e-300;
        for (size_t i = 0; i < m->n_params; i++) {
            num = fmax(num, fabs(grad[1][i] - grad[0][i]));
            den = fmax(den, fabs(grad[0][i]));
        }
        printf("%-40s loss rel diff %.2e, gradient rel diff %.2e\n",
               k ? "resnet-contact single vs double" : "cdl single vs double contact net",
               fabs(loss[1] - loss[0]) / fabs(loss[0]), num / den);
        CHECK(fabs(loss[1] - loss[0]) <= 1e-6 * fabs(loss[0]));
        CHECK(num / den < 1e-5);
        CHECK(num > 0.0); /* the single path was taken */
        free(grad[0]), free(grad[1]);
        imp_model_work_free(w);
        imp_model_free(m);
    }
    CHECK(imp_model_work_set_single_contact(NULL, 1) == IMP_ERR_INVALID);
    free_batch(&bt);
    imp_trajset_free(&ts);
}

/* Training's single-precision potential sweeps (imp_model_work_set_single_potential,
 * src/nn/mlp_fused.c, float) on the ball (one coordinate, softplus as the
 * reference code), the cradle (two coordinates, tanh as the paper, with
 * projection) and the pendulum with VIN: the window loss and its gradient
 * within float rounding of the all-double pass (which fd_check verifies);
 * the single pass must really be taken; the ResNet baseline, which has no
 * potential, is left exactly as it was. */
static void test_single_potential(void)
{
    static const struct {
        const char *system;
        imp_model_kind kind;
        imp_activation act;
        int projection, starts[4];
    } cases[] = {
        {"bouncing-ball", IMP_MODEL_CDL, IMP_ACT_SOFTPLUS, 0, {66, 68, 70, 20}},
        {"newtons-cradle", IMP_MODEL_CDL, IMP_ACT_TANH, 1, {3, 40, 90, 120}},
        {"pendulum", IMP_MODEL_VIN, IMP_ACT_SIGMOID, 0, {0, 17, 50, 80}},
        {"bouncing-ball", IMP_MODEL_RESNET, IMP_ACT_SOFTPLUS, 0, {66, 68, 70, 20}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        imp_sim_opts o;
        CHECK_OK(imp_sim_defaults(cases[c].system, &o));
        o.noise = 0.05;
        imp_trajset ts;
        CHECK_OK(imp_simulate(cases[c].system, &o, &ts));
        batch bt;
        make_batch(&ts, 4, 6, cases[c].starts, &bt);
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, cases[c].kind);
        cfg.hidden = 37; /* not a multiple of the vector length */
        cfg.act = cases[c].act;
        cfg.projection = cases[c].projection;
        imp_model *m = NULL;
        CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 5));
        imp_model_work *w = imp_model_work_new(m, bt.B, bt.H);
        double *grad[2] = {calloc(m->n_params, sizeof(double)), calloc(m->n_params, sizeof(double))};
        double loss[2];
        for (int single = 0; single < 2; single++) {
            CHECK_OK(imp_model_work_set_single_potential(w, single));
            imp_loss_parts lp;
            CHECK_OK(imp_model_window_loss(m, m->params, w, bt.x0, bt.target, bt.labels, NULL, bt.B, bt.H, 0.01,
                                           grad[single], &lp));
            loss[single] = lp.total;
        }
        double num = 0.0, den = 1e-300;
        for (size_t i = 0; i < m->n_params; i++) {
            num = fmax(num, fabs(grad[1][i] - grad[0][i]));
            den = fmax(den, fabs(grad[0][i]));
        }
        printf("%-15s %-15s single vs double potential: loss rel diff %.2e, gradient rel diff %.2e\n",
               cases[c].system, imp_model_kind_name(cases[c].kind), fabs(loss[1] - loss[0]) / fabs(loss[0]),
               num / den);
        if (cases[c].kind == IMP_MODEL_RESNET) {
            CHECK(num == 0.0 && loss[1] == loss[0]);
        } else {
            CHECK(fabs(loss[1] - loss[0]) <= 1e-6 * fabs(loss[0]));
            CHECK(num / den < 2e-5);
            CHECK(num > 0.0); /* the single path was taken */
        }
        free(grad[0]), free(grad[1]);
        imp_model_work_free(w);
        imp_model_free(m);
        free_batch(&bt);
        imp_trajset_free(&ts);
    }
    CHECK(imp_model_work_set_single_potential(NULL, 1) == IMP_ERR_INVALID);
}

/* Learned restitution: the window loss's gradient with respect to the
 * per-pair e (sigmoid parameter) through the impulses, by central
 * differences, on the ball (touch, no touch, learned masses) and the cradle. */
static void test_learned_restitution_gradients(void)
{
    const char *systems[2] = {"bouncing-ball", "newtons-cradle"};
    for (int s = 0; s < 2; s++) {
        imp_sim_opts o;
        CHECK_OK(imp_sim_defaults(systems[s], &o));
        o.noise = 0.02;
        o.restitution = 0.7;
        imp_trajset ts;
        CHECK_OK(imp_simulate(systems[s], &o, &ts));
        int first = -1;
        for (int t = 0; t < ts.n_steps && first < 0; t++)
            for (int k = 0; k < ts.geom.n_bodies; k++)
                if (ts.contact[(size_t)t * ts.geom.n_bodies + k] > 0.5) { first = t; break; }
        CHECK(first > 6);
        int starts[3] = {first - 3, first - 5, first - 1};
        batch bt;
        make_batch(&ts, 3, 5, starts, &bt);
        for (int variant = 0; variant < 7; variant++) {
            int touch = variant != 1 && variant != 4 && variant != 6, mass = variant == 2 || variant == 6,
                law = variant == 3 || variant == 4 ? IMP_CDL_IMPACT_NEWTON : 0, event = variant >= 5;
            imp_model *m = small_model(IMP_MODEL_CDL, &ts.geom, ts.dt, touch, 0, 0, mass, IMP_ACT_TANH);
            imp_cdl_config cfg = m->cfg;
            imp_model_free(m);
            cfg.learn_restitution = 1;
            cfg.impact_law = law;
            cfg.impact_timing = event ? IMP_CDL_TIMING_EVENT : IMP_CDL_TIMING_STEP;
            CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 11));
            CHECK(m->n_params == m->off_restitution + (size_t)ts.geom.n_pairs);
            for (int p = 0; p < ts.geom.n_pairs; p++) m->params[m->off_restitution + p] = 0.3 - 0.4 * p;
            char what[96];
            snprintf(what, sizeof what, "%s cdl learned e touch=%d mass=%d law=%s", systems[s], touch, mass,
                     event ? "event" : law ? "newton" : "paper");
            fd_check(m, &bt, 0.01, what);
            /* the e entries themselves carry gradient */
            imp_model_work *w = imp_model_work_new(m, bt.B, bt.H);
            double *grad = calloc(m->n_params, sizeof(double));
            CHECK_OK(imp_model_window_loss(m, m->params, w, bt.x0, bt.target, bt.labels, NULL, bt.B, bt.H, 0.01, grad, NULL));
            double ge = 0.0;
            for (int p = 0; p < ts.geom.n_pairs; p++) ge += fabs(grad[m->off_restitution + p]);
            CHECK_MSG(ge > 1e-6, "%s: no gradient reaches e (%g)", what, ge);
            free(grad);
            imp_model_work_free(w);
            imp_model_free(m);
        }
        free_batch(&bt);
        imp_trajset_free(&ts);
    }
}

/* The system's default simulation with noise 0.01, n_traj x n_steps. */
static void simulated(const char *system, int n_traj, int n_steps, imp_trajset *ts)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults(system, &o));
    o.noise = 0.01;
    o.n_traj = n_traj;
    o.n_steps = n_steps;
    CHECK_OK(imp_simulate(system, &o, ts));
}

/* Learned Coulomb friction (AP Newton inside the CD-Lagrange impulse) on
 * the bouncing disk: central differences of the window loss in every
 * parameter, e and mu included, on windows with sliding and sticking
 * impacts; touch and no-touch, learned masses. */
static void test_friction_gradients(void)
{
    imp_trajset ts;
    simulated("bouncing-disk", 4, 150, &ts);
    /* the first impact of each trajectory, and the second of the first */
    int starts[6], B = 0, seen = 0;
    for (int tr = 0; tr < ts.n_traj && B < 6; tr++)
        for (int t = 1; t < ts.n_steps - 6 && B < 6; t++) {
            size_t i = (size_t)tr * ts.n_steps + t;
            if (ts.contact[i] > 0.5 && ts.contact[i - 1] < 0.5 && t >= 4) {
                starts[B++] = (int)(i - 3);
                if (tr > 0 || ++seen > 1) break;
            }
        }
    CHECK(B >= 4);
    batch bt;
    /* make_batch indexes one flat trajectory: windows never cross one */
    imp_trajset flat = ts;
    flat.n_traj = 1;
    flat.n_steps = ts.n_traj * ts.n_steps;
    make_batch(&flat, B, 5, starts, &bt);
    for (int variant = 0; variant < 7; variant++) {
        int touch = variant != 1 && variant != 4 && variant != 6, mass = variant == 2 || variant == 6,
            law = variant == 3 || variant == 4 ? IMP_CDL_IMPACT_NEWTON : 0, event = variant >= 5;
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
        cfg.impact_law = law;
        cfg.impact_timing = event ? IMP_CDL_TIMING_EVENT : IMP_CDL_TIMING_STEP;
        cfg.hidden = 7, cfg.hidden_layers = 2, cfg.contact_hidden = 6, cfg.act = IMP_ACT_TANH;
        cfg.touch = touch, cfg.learn_mass = mass, cfg.learn_restitution = 1, cfg.friction = 1;
        imp_model *m = NULL;
        CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 13));
        if (!m) continue;
        if (mass) m->params[m->off_mass] = 0.15;
        /* mu low enough that some impacts slide, e away from the truth */
        CHECK_OK(imp_model_set_contact_law(m, (double[]){0.6}, (double[]){0.12}));
        char what[96];
        snprintf(what, sizeof what, "disk cdl friction touch=%d mass=%d law=%s", touch, mass,
                 event ? "event" : law ? "newton" : "paper");
        fd_check(m, &bt, 0.01, what);
        imp_model_work *w = imp_model_work_new(m, bt.B, bt.H);
        double *grad = calloc(m->n_params, sizeof(double));
        CHECK_OK(imp_model_window_loss(m, m->params, w, bt.x0, bt.target, bt.labels, NULL, bt.B, bt.H, 0.01, grad, NULL));
        CHECK_MSG(fabs(grad[m->off_friction]) > 1e-6 && fabs(grad[m->off_restitution]) > 1e-6,
                  "%s: e and mu gradients %g %g", what, grad[m->off_restitution], grad[m->off_friction]);
        free(grad);
        imp_model_work_free(w);
        imp_model_free(m);
    }
    free_batch(&bt);
    imp_trajset_free(&ts);
}

/* The data estimates that start a learned contact law: on noise-free
 * simulations the restitution estimate sits below the truth by at most the
 * gravity loss over a sample (it compares samples around the impact, not
 * the impact itself), and the friction estimate, the 90th percentile of
 * |Pt|/Pn, reaches mu (up to the force over a sample) when a tenth or more
 * of the impacts slide; a set with every impact sticking can only bound mu
 * from below. */
static void test_contact_law_estimate(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.restitution = 0.7;
    imp_trajset ts;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    int n[IMP_MAX_CONTACTS];
    CHECK_OK(imp_cdl_estimate_contact_law(&ts, e, mu, n));
    printf("estimate ball e = 0.7: %.4f from %d impacts, mu %g (no tangent)\n", e[0], n[0], mu[0]);
    CHECK(n[0] >= 5 && e[0] <= 0.7 && e[0] > 0.6 && isnan(mu[0]));
    imp_trajset_free(&ts);
    CHECK_OK(imp_sim_defaults("bouncing-disk", &o));
    o.n_traj = 20;
    CHECK_OK(imp_simulate("bouncing-disk", &o, &ts));
    CHECK_OK(imp_cdl_estimate_contact_law(&ts, e, mu, n));
    printf("estimate disk e = %g, mu = %g: e %.4f, mu %.4f from %d impacts\n", o.restitution, o.friction, e[0], mu[0],
           n[0]);
    CHECK(e[0] <= o.restitution && e[0] > o.restitution - 0.1);
    /* the normal impulse from the samples misses g dt (about 2 % here) */
    CHECK_CLOSE(mu[0], o.friction, 0.05, 0);
    imp_trajset_free(&ts);
}

/* A point in the plane (unit mass, e = 0.8) with a floor (y >= 0) and, if
 * `wall`, a wall at x = 100 (x <= 100). */
static imp_contact_geometry plane_geometry(int wall)
{
    imp_contact_geometry g = {.n_bodies = 1, .dim = 2, .mass = {1.0}, .restitution = 0.8, .n_pairs = 1 + wall};
    g.pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {0.0, 1.0}, .offset = 0.0};
    g.pairs[1] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {-1.0, 0.0}, .offset = -100.0};
    return g;
}

/* A CD-Lagrange model of that point with no force (potential weights 0)
 * and the contact network's output bias `bias`: cfg's options (touch,
 * learned e, geometry gates) on a 4-unit model. */
static imp_model *plane_model_cfg(int wall, imp_cdl_config cfg, double bias)
{
    imp_contact_geometry g = plane_geometry(wall);
    cfg.hidden = 4, cfg.contact_hidden = 4;
    imp_model *m = NULL;
    CHECK_OK(imp_model_create(&m, &cfg, &g, 0.02, 1));
    memset(m->params, 0, m->n_params * sizeof(double));
    const imp_mlp *c = &m->contact;
    m->params[m->off_contact + c->b_off[c->n_layers - 1]] = bias;
    return m;
}

/* ... with restitution 0.8 fixed and impact law `law`. */
static imp_model *plane_model(int wall, int law, double bias)
{
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.impact_law = law;
    return plane_model_cfg(wall, cfg, bias);
}

/* The gradient of one 3-step window's loss (targets 0) from a point at the
 * floor or 5 m above it, moving with (1, -1). */
static double *plane_window_grad(imp_model *m, int at_floor)
{
    imp_model_work *w = imp_model_work_new(m, 1, 3);
    double x0[4] = {0.0, at_floor ? 0.01 : 5.0, 1.0, -1.0}, target[12] = {0};
    double *grad = calloc(m->n_params, sizeof(double));
    CHECK_OK(imp_model_window_loss(m, m->params, w, x0, target, NULL, NULL, 1, 3, 0.0, grad, NULL));
    imp_model_work_free(w);
    return grad;
}

/* Issue 24's minimal case: a floor bounce of a point moving with vx = 1,
 * gated by its (per-body) label, keeps vx when a second wall 100 m away
 * is added, for both impact laws (the point approaches the wall too, but
 * the wall is 100 m off: the impulse acts on the floor only); the normal
 * velocity reverses with e. */
static void test_event_per_pair(void)
{
    for (int law = IMP_CDL_IMPACT_PAPER; law <= IMP_CDL_IMPACT_NEWTON; law++)
        for (int wall = 0; wall <= 1; wall++) {
            imp_model *m = plane_model(wall, law, 0.0);
            double x0[4] = {0.0, 0.01, 1.0, -2.0}, gates[3] = {0, 1, 0}, states[12], contact[3];
            CHECK_OK(imp_model_rollout(m, x0, 3, gates, states, contact));
            printf("floor bounce, %s law, %s: vx %.4f -> %.4f, vy -2 -> %.4f\n",
                   law == IMP_CDL_IMPACT_PAPER ? "paper" : "newton", wall ? "wall 100 m away" : "floor only", x0[2],
                   states[4 + 2], states[4 + 3]);
            CHECK_CLOSE(states[4 + 2], 1.0, 0, 1e-12);
            CHECK_CLOSE(states[4 + 3], 1.6, 0, 1e-12);
            CHECK_CLOSE(states[8 + 2], 1.0, 0, 1e-12);
            imp_model_free(m);
        }
}

/* A point resting on the floor (labelled all the time, as a touch sensor
 * does) slides towards the wall: within the contact tolerance (0.15) but not
 * reaching it in the step, the wall takes no impulse (the floor, which it
 * penetrates, does); reaching it in the step, both do and vx reverses. */
static void test_resting_near_wall(void)
{
    for (int law = IMP_CDL_IMPACT_PAPER; law <= IMP_CDL_IMPACT_NEWTON; law++) {
        imp_model *m = plane_model(1, law, 0.0);
        m->cfg.contact_tol = 0.15;
        double gates[2] = {1, 1}, states[8], contact[2];
        double near[4] = {99.9, 0.0, 1.0, -0.1}, hit[4] = {99.99, 0.0, 1.0, -0.1}; /* no force: settling at 0.1 m/s */
        CHECK_OK(imp_model_rollout(m, near, 2, gates, states, contact));
        CHECK_CLOSE(states[4 + 2], 1.0, 0, 1e-12);
        CHECK_OK(imp_model_rollout(m, hit, 2, gates, states, contact));
        CHECK_CLOSE(states[4 + 2], -0.8, 0, 1e-12);
        imp_model_free(m);
    }
}

/* Without touch feedback the contact network's soft gate is on everywhere:
 * a point in flight 5 m above the floor and 100 m from the wall puts
 * neither pair in reach, so no impulse acts and the loss does not depend
 * on e (nor on the contact network); the same window starting at the
 * floor does. */
static void test_soft_gate_in_flight(void)
{
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.touch = 0, cfg.learn_restitution = 1;
    imp_model *m = plane_model_cfg(1, cfg, 0.0);
    m->cfg.contact_tol = 0.1;
    for (int at_floor = 0; at_floor <= 1; at_floor++) {
        double *grad = plane_window_grad(m, at_floor);
        double ge = fabs(grad[m->off_restitution]) + fabs(grad[m->off_restitution + 1]), gc = 0.0;
        for (size_t i = m->off_contact; i < m->off_contact + m->contact.n_params; i++) gc += fabs(grad[i]);
        printf("soft gate, point %s: |dL/de| %.3g, |dL/d contact net| %.3g\n", at_floor ? "at the floor" : "in flight",
               ge, gc);
        if (at_floor) CHECK(ge > 0.0 && gc > 0.0);
        else CHECK(ge == 0.0 && gc == 0.0);
        free(grad);
    }
    imp_model_free(m);
}

/* Geometry alone (cfg.gate_geometry, data without labels): a falling point
 * bounces off the floor with e, keeps vx (the wall 100 m away takes
 * nothing), and the model reports one contact; in training a window in
 * flight does not depend on e, one at the floor does, and the gradient
 * through geometric events matches finite differences (box, below). */
static void test_gate_geometry(void)
{
    imp_contact_geometry g = plane_geometry(1);
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.touch = 1, cfg.gate_geometry = 1;
    imp_model *m = NULL;
    CHECK(imp_model_create(&m, &cfg, &g, 0.02, 1) == IMP_ERR_INVALID); /* labels would gate */
    cfg.touch = 0, cfg.learn_restitution = 1;
    m = plane_model_cfg(1, cfg, 0.0);
    m->params[m->off_restitution] = log(0.8 / 0.2); /* e = 0.8 at the floor */
    enum { T = 60 };
    double x0[4] = {0.0, 0.5, 1.0, -2.0}, states[T * 4], contact[T];
    CHECK_OK(imp_model_rollout(m, x0, T, NULL, states, contact));
    int hits = 0;
    double lo = INFINITY;
    for (int t = 0; t < T; t++) hits += contact[t] > 0.5, lo = fmin(lo, states[4 * t + 1]);
    printf("geometry gates: %d contact, vx %.4f, vy after %.4f, lowest height %.3g\n", hits, states[4 * (T - 1) + 2],
           states[4 * (T - 1) + 3], lo);
    CHECK(hits == 1);
    CHECK_CLOSE(states[4 * (T - 1) + 2], 1.0, 0, 1e-12);
    CHECK_CLOSE(states[4 * (T - 1) + 3], 1.6, 0, 1e-12);
    for (int at_floor = 0; at_floor <= 1; at_floor++) {
        double *grad = plane_window_grad(m, at_floor);
        CHECK(at_floor ? grad[m->off_restitution] != 0.0 : grad[m->off_restitution] == 0.0);
        free(grad);
    }
    imp_model_free(m);
}

/* The non-penetration guard: a model whose contact network never fires
 * (p = sigmoid(-50)) and a rollout whose observed gates are all off still
 * keep a falling point on or above the floor, bouncing it with its e;
 * the guard's impacts are reported as the model's contact signal. */
static void test_guard(void)
{
    for (int gated = 0; gated <= 1; gated++) {
        imp_model *m = plane_model(1, IMP_CDL_IMPACT_PAPER, -50.0);
        enum { T = 200 };
        double x0[4] = {0.0, 1.0, 0.5, -3.0}, *gates = calloc(T, sizeof(double));
        double *states = malloc(sizeof(double) * T * 4), *contact = malloc(sizeof(double) * T);
        CHECK_OK(imp_model_rollout(m, x0, T, gated ? gates : NULL, states, contact));
        double lo = INFINITY, vy_max = -INFINITY;
        int hits = 0;
        for (int t = 0; t < T; t++) {
            lo = fmin(lo, states[4 * t + 1]);
            vy_max = fmax(vy_max, states[4 * t + 3]);
            hits += contact[t] > 0.5;
        }
        printf("contact %s never fires: lowest height %.3g over %d steps, %d guarded impacts, largest vy %.3f\n",
               gated ? "label" : "network", lo, T, hits, vy_max);
        CHECK(lo >= -1e-12);
        CHECK(hits >= 1);
        CHECK_CLOSE(vy_max, 0.8 * 3.0, 0, 1e-9); /* no force: one bounce, un+ = -e u- */
        imp_model_free(m);
        free(gates), free(states), free(contact);
    }
}

/* Gradients through per-pair events: the ball in a box (three pairs, one
 * body) with windows around floor and wall impacts, touch feedback and
 * without, both impact laws, with projection. */
static void test_box_gradients(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("ball-box", &o));
    o.noise = 0.02;
    o.v0 = 1.4;
    imp_trajset ts;
    CHECK_OK(imp_simulate("ball-box", &o, &ts));
    /* floor impact at step 40, right wall at 54 */
    int starts[4] = {37, 51, 45, 10};
    batch bt;
    make_batch(&ts, 4, 6, starts, &bt);
    for (int variant = 0; variant < 5; variant++) {
        imp_model *m = small_model(IMP_MODEL_CDL, &ts.geom, ts.dt, variant != 1 && variant != 4, variant == 2, 0, 0,
                                   IMP_ACT_TANH);
        m->cfg.impact_law = variant == 3 ? IMP_CDL_IMPACT_NEWTON : IMP_CDL_IMPACT_PAPER;
        m->cfg.gate_geometry = variant == 4;
        m->cfg.contact_tol = 0.06;
        char what[128];
        snprintf(what, sizeof what, "ball-box cdl touch=%d proj=%d law=%d geom=%d", variant != 1 && variant != 4,
                 variant == 2, variant == 3, variant == 4);
        fd_check(m, &bt, 0.01, what);
        imp_model_free(m);
    }
    free_batch(&bt);
    imp_trajset_free(&ts);
}

/* Pair activity with disks: a disk with nothing in reach falls back on its
 * nearest wall, never on a disk-disk pair, which would give the other disk
 * (gated for its own wall impact) an impulse from a disk 0.2 m away. */
static void test_disks_activity(void)
{
    imp_contact_geometry g;
    memset(&g, 0, sizeof g);
    g.n_bodies = 2, g.dim = 3, g.restitution = 0.8, g.has_radii = 1, g.n_pairs = 3;
    g.mass[0] = g.mass[1] = 1.0, g.radius[0] = g.radius[1] = 0.1;
    g.pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {0, 1, 0}, .offset = 0.1};
    g.pairs[1] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 1, .normal = {0, 1, 0}, .offset = 0.1};
    g.pairs[2] = (imp_contact_pair){.body_i = 0, .body_j = 1, .kind = IMP_PAIR_SPHERE};
    CHECK_OK(imp_contact_geometry_check(&g));
    /* disk 0 hits the floor; disk 1 flies 1 m up, 0.2 m from disk 0's rim, closing on it */
    double q[6] = {0.0, 0.1, 0.0, 0.0, 0.5, 0.0}, v[6] = {0.0, -2.0, 0.0, 0.0, -2.5, 0.0};
    imp_contact_geometry gl;
    imp_contact_geometry_at(&g, q, &gl);
    unsigned char act[3];
    imp_pair_activity(&gl, 0.0, 1, q, v, v, act);
    printf("disks activity: floor of disk 0 %d, floor of disk 1 %d, disk pair %d\n", act[0], act[1], act[2]);
    CHECK(act[0] == 1 && act[2] == 0);
    /* the impulse the labels (disk 0 gated, disk 1 not) give: disk 0 only */
    double w[2] = {1.0, 1.0}, e[3] = {0.8, 0.8, 0.8}, gate[2] = {1.0, 0.0}, dv[6] = {0};
    imp_impulse_forward(&gl, w, e, NULL, IMP_CDL_IMPACT_PAPER, act, gate, v, v, dv);
    CHECK_CLOSE(dv[1], 1.8 * 2.0, 1e-12, 0);
    CHECK(dv[0] == 0.0 && dv[3] == 0.0 && dv[4] == 0.0);
    /* both disks up in the air, 0.05 m apart, nothing in reach: each other's
       nearest pair, which both then fall back on */
    double q2[6] = {0.0, 1.0, 0.0, 0.25, 1.0, 0.0}, v2[6] = {0.5, 0.0, 0.0, -0.5, 0.0, 0.0};
    imp_contact_geometry_at(&g, q2, &gl);
    imp_pair_activity(&gl, 0.0, 1, q2, v2, v2, act);
    CHECK(act[0] == 0 && act[1] == 0 && act[2] == 1);
}

/* Gradients through disk-disk events (sphere pairs: normal and gap from
 * the centres, friction turning both disks): bouncing-disks:3 windows
 * around disk-disk impacts, horizon 5, learned e and mu per pair, touch
 * feedback and without, both impact laws; the normals' own gradient
 * (sphere_normal_backward) included. */
static void test_disks_gradients(void)
{
    imp_trajset ts;
    simulated("bouncing-disks:3", 6, 120, &ts);
    const imp_contact_geometry *g = &ts.geom;
    const int K = 3, D = 9, H = 5;
    /* windows whose second step holds a disk-disk impact (both labelled,
       centres within reach) */
    int starts[6], B = 0;
    for (int tr = 0; tr < ts.n_traj && B < 6; tr++)
        for (int t = 2; t < ts.n_steps - H - 1 && B < 6; t++) {
            size_t i = (size_t)tr * ts.n_steps + t;
            int found = 0;
            for (int p = 0; p < g->n_pairs && !found; p++) {
                const imp_contact_pair *c = &g->pairs[p];
                if (c->kind != IMP_PAIR_SPHERE || ts.contact[i * K + c->body_i] < 0.5 || ts.contact[i * K + c->body_j] < 0.5)
                    continue;
                found = imp_contact_gap(g, p, ts.q_clean + (i - 1) * D) < 0.05 &&
                        imp_contact_normal_velocity_at(g, p, ts.q_clean + (i - 1) * D, ts.qdot_clean + (i - 1) * D) < -0.2;
            }
            if (found) starts[B++] = (int)(i - 2), t += 20;
        }
    CHECK_MSG(B >= 3, "disk-disk impacts found: %d", B);
    imp_trajset flat = ts;
    flat.n_traj = 1;
    flat.n_steps = ts.n_traj * ts.n_steps;
    batch bt;
    make_batch(&flat, B, H, starts, &bt);
    for (int variant = 0; variant < 5; variant++) {
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
        cfg.impact_law = variant == 2 ? IMP_CDL_IMPACT_NEWTON : IMP_CDL_IMPACT_PAPER;
        cfg.impact_timing = variant >= 3 ? IMP_CDL_TIMING_EVENT : IMP_CDL_TIMING_STEP;
        cfg.hidden = 7, cfg.hidden_layers = 2, cfg.contact_hidden = 6, cfg.act = IMP_ACT_TANH;
        cfg.touch = variant != 1 && variant != 4, cfg.learn_restitution = 1, cfg.friction = 1;
        imp_model *m = NULL;
        CHECK_OK(imp_model_create(&m, &cfg, g, ts.dt, 17));
        if (!m) continue;
        double e0[IMP_MAX_CONTACTS], mu0[IMP_MAX_CONTACTS];
        for (int p = 0; p < g->n_pairs; p++) e0[p] = 0.6 + 0.01 * p, mu0[p] = 0.1 + 0.01 * p;
        CHECK_OK(imp_model_set_contact_law(m, e0, mu0));
        char what[96];
        snprintf(what, sizeof what, "disks cdl friction touch=%d law=%s", cfg.touch,
                 variant >= 3 ? "event" : variant == 2 ? "newton" : "paper");
        fd_check(m, &bt, 0.01, what);
        imp_model_free(m);
    }
    free_batch(&bt);
    imp_trajset_free(&ts);
}

/* A CD-Lagrange model under exact gravity 9.81 on every body (mass 1: the
 * potential 9.81 softplus(sum of the heights + 60), whose Hessian is below
 * 1e-25), impacts at their event time, e and (with friction) mu per pair. */
static imp_model *gravity_event_model(const imp_contact_geometry *g, double dt, int friction)
{
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.hidden = 4, cfg.contact_hidden = 4, cfg.learn_restitution = 1, cfg.friction = friction;
    cfg.impact_timing = IMP_CDL_TIMING_EVENT;
    cfg.contact_tol = 0.0;
    imp_model *m = NULL;
    CHECK_OK(imp_model_create(&m, &cfg, g, dt, 1));
    if (!m) return NULL;
    memset(m->params, 0, m->n_params * sizeof(double));
    const imp_mlp *u = &m->net;
    for (int k = 0; k < g->n_bodies; k++) m->params[m->off_net + u->w_off[0] + k * g->dim + 1] = 1.0;
    m->params[m->off_net + u->b_off[0]] = 60.0;
    m->params[m->off_net + u->w_off[1]] = 9.81;
    return m;
}

/* The window loss's gradient of an event-timing model in its first state
 * (through the contact times, the velocities at the events and the
 * position shifts) and in every parameter, against central differences. */
static void event_fd(imp_model *m, double *x0, double *target, double *labels, int H, const char *name)
{
    const int D = m->D, K = m->K;
    imp_model_work *w = imp_model_work_new(m, 1, H);
    double *grad = calloc(m->n_params, sizeof(double)), an[2 * IMP_MAX_BODIES * IMP_MAX_DIM],
           num[2 * IMP_MAX_BODIES * IMP_MAX_DIM];
    imp_loss_parts lp;
    CHECK_OK(imp_model_window_loss(m, m->params, w, x0, target, labels, NULL, 1, H, 0.0, grad, &lp));
    memcpy(an, w->qbar, D * sizeof(double));
    memcpy(an + D, w->vbar, D * sizeof(double));
    for (int i = 0; i < 2 * D; i++) {
        double keep = x0[i], l1, l2;
        x0[i] = keep + 1e-6;
        CHECK_OK(imp_model_window_loss(m, m->params, w, x0, target, labels, NULL, 1, H, 0.0, NULL, &lp));
        l1 = lp.total;
        x0[i] = keep - 1e-6;
        CHECK_OK(imp_model_window_loss(m, m->params, w, x0, target, labels, NULL, 1, H, 0.0, NULL, &lp));
        l2 = lp.total;
        x0[i] = keep;
        num[i] = (l1 - l2) / 2e-6;
    }
    double err = test_grad_rel_err(an, num, 2 * D, 1e-8);
    printf("event timing, %-26s d loss / d x0: FD rel err %.2e\n", name, err);
    CHECK_MSG(err < 1e-6, "event timing, %s: gradient to the first state, relative error %g", name, err);
    char what[96];
    snprintf(what, sizeof what, "event timing, %s", name);
    batch bt = {1, H, D, K, x0, target, labels, NULL};
    fd_check(m, &bt, 0.0, what);
    free(grad);
    imp_model_work_free(w);
}

/* Impacts at their event time (--impact-timing event): exact for a point
 * under gravity meeting the floor or a wall inside a step (the event-driven
 * solution: Newton's law at the contact time, the rest of the step flown
 * with the post-impact velocity), and the reverse pass to the window's
 * first state (q, v: through the contact time tau, the velocity at the
 * event and the position shift) against central differences: floor, wall,
 * both in one step (friction sliding and sticking) and two disks meeting
 * (a sphere pair, its normal from the centres). */
static void test_event_timing(void)
{
    const double h = 0.02, g0 = 9.81;
    imp_contact_geometry pg = plane_geometry(1);
    pg.pairs[0].tangent[0] = 1.0, pg.pairs[1].tangent[1] = 1.0; /* friction along the floor and the wall */
    /* exactness: floor (y0 0.03, vy -2) and wall (x = 100, vx 2) */
    imp_model *m = gravity_event_model(&pg, h, 0);
    CHECK_OK(imp_model_set_contact_law(m, (double[]){0.8, 0.6}, NULL));
    for (int c = 0; c < 2; c++) {
        double x0[4] = {c ? 99.97 : 0.0, c ? 3.0 : 0.03, c ? 2.0 : 1.0, c ? 0.5 : -2.0}, gates[2] = {0, 1}, st[8], ct[2];
        CHECK_OK(imp_model_rollout(m, x0, 2, gates, st, ct));
        double ex[4];
        if (!c) { /* 0.03 - 2 t - g t^2 / 2 = 0 */
            double tau = (-2.0 + sqrt(4.0 + 2.0 * g0 * 0.03)) / g0, um = -2.0 - g0 * tau, up = -0.8 * um, r = h - tau;
            ex[0] = h, ex[1] = up * r - 0.5 * g0 * r * r, ex[2] = 1.0, ex[3] = up - g0 * r;
        } else {
            double tau = 0.03 / 2.0, r = h - tau;
            ex[0] = 100.0 - 0.6 * 2.0 * r, ex[1] = 3.0 + 0.5 * h - 0.5 * g0 * h * h, ex[2] = -0.6 * 2.0, ex[3] = 0.5 - g0 * h;
        }
        printf("event timing, %s: (%.12f, %.12f, %.12f, %.12f), exact (%.12f, %.12f, %.12f, %.12f)\n", c ? "wall" : "floor",
               st[4], st[5], st[6], st[7], ex[0], ex[1], ex[2], ex[3]);
        for (int i = 0; i < 4; i++) CHECK_CLOSE(st[4 + i], ex[i], 1e-12, 1e-12);
    }
    imp_model_free(m);

    /* two disks (radius 0.1) on a floor, meeting in the first step */
    imp_contact_geometry dg;
    memset(&dg, 0, sizeof dg);
    dg.n_bodies = 2, dg.dim = 3, dg.restitution = 0.8, dg.has_radii = 1, dg.n_pairs = 3;
    dg.mass[0] = dg.mass[1] = 1.0, dg.radius[0] = dg.radius[1] = 0.1;
    dg.pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {0, 1, 0}, .offset = 0.1, .tangent = {1, 0, 0.1}};
    dg.pairs[1] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 1, .normal = {0, 1, 0}, .offset = 0.1, .tangent = {1, 0, 0.1}};
    dg.pairs[2] = (imp_contact_pair){.body_i = 0, .body_j = 1, .kind = IMP_PAIR_SPHERE, .tangent = {0, 0, 0.1}};
    CHECK_OK(imp_contact_geometry_check(&dg));
    struct {
        const char *what;
        int disks;
        double mu, x0[12];
    } cases[] = {
        {"floor", 0, 0.05, {0.3, 0.05, 0.7, -2.0}},
        {"wall", 0, 0.05, {99.97, 3.0, 2.0, 0.5}},
        {"floor and wall, sliding", 0, 0.05, {99.975, 0.035, 2.0, -2.5}},
        {"floor and wall, sticking", 0, 2.0, {99.975, 0.035, 2.0, -2.5}},
        {"two disks", 1, 0.1, {0.0, 1.0, 0.0, 0.23, 1.03, 0.0, 1.0, 0.1, 0.3, -1.2, -0.3, -0.2}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const imp_contact_geometry *g = cases[c].disks ? &dg : &pg;
        m = gravity_event_model(g, h, 1);
        if (!m) continue;
        const int D = m->D, K = m->K, H = 3;
        double e[3] = {0.7, 0.6, 0.75}, mu[3] = {cases[c].mu, cases[c].mu, cases[c].mu};
        CHECK_OK(imp_model_set_contact_law(m, e, mu));
        double x0[12], target[3 * 12], labels[3 * 2] = {0};
        memcpy(x0, cases[c].x0, 2 * D * sizeof(double));
        for (int i = 0; i < H * 2 * D; i++) target[i] = x0[i % (2 * D)] + 0.01 * (i % 5) - 0.02;
        for (int k = 0; k < K; k++) labels[k] = 1.0; /* the impact in the first step */
        event_fd(m, x0, target, labels, H, cases[c].what);
        imp_model_free(m);
    }
}

/* Several impacts in one step, in their order: disk 0 (radius 0.1, at
 * x = 0, 2 m/s) meets disk 1 (at rest 0.01 m ahead) at 0.005 s; disk 1,
 * knocked at 1.75 m/s (e 0.75, equal masses), meets the right wall 0.01 m
 * ahead of it within the same 0.015 s step and comes back with e 0.6: the
 * event-driven solution, which the step reproduces exactly (the wall was
 * not in reach at the step's start: a chain). Before, each pair acted
 * alone from the step's start: the wall took nothing and disk 1 went
 * through it. A third disk at rest, touching nothing, but a disk-disk pair
 * with disk 1 closing after the knock yet not reached within the step,
 * takes no impulse. Then the reverse pass through the chain (the later
 * impact's inputs move with the earlier one's jump and time) against
 * central differences. */
static void test_event_chain(void)
{
    const double h = 0.015, g0 = 9.81;
    imp_contact_geometry g;
    memset(&g, 0, sizeof g);
    g.n_bodies = 3, g.dim = 3, g.restitution = 0.8, g.has_radii = 1, g.n_pairs = 3;
    for (int k = 0; k < 3; k++) g.mass[k] = 1.0, g.radius[k] = 0.1;
    /* right wall of disk 1 at x = 0.32 (its rim 0.01 m away), disks 0-1 and 1-2 */
    g.pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 1, .normal = {-1, 0, 0}, .offset = -0.22};
    g.pairs[1] = (imp_contact_pair){.body_i = 0, .body_j = 1, .kind = IMP_PAIR_SPHERE};
    g.pairs[2] = (imp_contact_pair){.body_i = 1, .body_j = 2, .kind = IMP_PAIR_SPHERE};
    CHECK_OK(imp_contact_geometry_check(&g));
    imp_model *m = gravity_event_model(&g, h, 0);
    if (!m) return;
    CHECK_OK(imp_model_set_contact_law(m, (double[]){0.6, 0.75, 0.9}, NULL));
    /* disk 2 below disk 1's path: 0.25 m below it, so 1-2 never closes to contact in the step */
    double x0[18] = {0.0, 1.0, 0.0, 0.21, 1.0, 0.0, 0.3, 0.75, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double gates[6] = {0, 0, 0, 1, 1, 1}, st[36], ct[6];
    CHECK_OK(imp_model_rollout(m, x0, 2, gates, st, ct));
    const double t1 = 0.005, u1 = 1.75, t2 = t1 + 0.01 / u1, u2 = -0.6 * u1;
    const double ex0 = 2.0 * t1 + 0.25 * (h - t1), ex1 = 0.22 + u2 * (h - t2), y = 1.0 - 0.5 * g0 * h * h;
    printf("event chain: disk 0 x %.12f vx %.12f (exact %.12f, %.12f), disk 1 x %.12f vx %.12f (exact %.12f, %.12f), "
           "disk 2 vx %.3g\n",
           st[18], st[27], ex0, 0.25, st[21], st[30], ex1, u2, st[33]);
    CHECK_CLOSE(st[18], ex0, 1e-12, 1e-12);
    CHECK_CLOSE(st[27], 0.25, 1e-12, 1e-12);
    CHECK_CLOSE(st[21], ex1, 1e-12, 1e-12);
    CHECK_CLOSE(st[30], u2, 1e-12, 1e-12);
    CHECK_CLOSE(st[19], y, 1e-12, 1e-12);
    CHECK_CLOSE(st[28], -g0 * h, 1e-12, 1e-12);
    CHECK_CLOSE(st[33], 0.0, 1e-12, 1e-12);
    CHECK_CLOSE(st[24], 0.3, 1e-12, 1e-12);
    /* the reverse pass, horizon 3, targets off the motion */
    const int H = 3, D = m->D;
    double target[3 * 18], labels[3 * 3] = {1, 1, 1};
    for (int i = 0; i < H * 2 * D; i++) target[i] = x0[i % (2 * D)] + 0.01 * (i % 5) - 0.02;
    event_fd(m, x0, target, labels, H, "chain: disks, then a wall");
    x0[1] = 0.985; /* disk 0 below disk 1's line: an oblique normal */
    for (int i = 0; i < H * 2 * D; i++) target[i] = x0[i % (2 * D)] + 0.01 * (i % 5) - 0.02;
    event_fd(m, x0, target, labels, H, "chain: oblique, then a wall");
    /* the other order: disk 1 off the wall into disk 0, at rest below its
       line (an oblique normal, which the reverse pass turns) */
    double x1[18] = {0.014, 0.98, 0.0, 0.215, 1.0, 0.0, 0.3, 0.5, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    CHECK_OK(imp_model_rollout(m, x1, 2, gates, st, ct));
    CHECK_MSG(st[30] < 0.0 && st[27] < -0.1, "chain, wall then disks: disk 1 vx %g, disk 0 vx %g", st[30], st[27]);
    for (int i = 0; i < H * 2 * D; i++) target[i] = x1[i % (2 * D)] + 0.01 * (i % 5) - 0.02;
    event_fd(m, x1, target, labels, H, "chain: a wall, then disks");
    imp_model_free(m);
}

/* Two pairs in one step: the ball in a box reaching the floor and the
 * right wall in the same step, each pair's impulse from the contact
 * module's solver with its equality law (IMP_CONTACT_LAW_PAPER or
 * _HALFSTEP) and Coulomb friction sliding (mu 0.05) or sticking (mu 2),
 * touch feedback and without: central differences of the window loss in
 * every parameter. */
static void test_corner_gradients(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("ball-box", &o));
    o.n_traj = 1, o.n_steps = 20;
    imp_trajset ts;
    CHECK_OK(imp_simulate("ball-box", &o, &ts));
    imp_contact_geometry geom = ts.geom, *g = &geom;
    int floor = -1, right = -1;
    for (int p = 0; p < g->n_pairs; p++) { /* the walls' tangents, (n_y, -n_x): friction */
        g->pairs[p].tangent[0] = g->pairs[p].normal[1], g->pairs[p].tangent[1] = -g->pairs[p].normal[0];
        if (g->pairs[p].normal[1] > 0.99) floor = p;
        if (g->pairs[p].normal[0] < -0.99) right = p;
    }
    CHECK(floor >= 0 && right >= 0);
    if (floor < 0 || right < 0) return;
    /* gaps 0.01 at the start, closing at 2-3 m/s: both reached in the first step */
    double xw = -(g->pairs[right].offset + 0.01), yf = g->pairs[floor].offset + 0.01;
    double x0[8] = {xw, yf, 2.0, -2.0, xw, yf, 0.7, -3.0}, target[2 * 3 * 4], labels[2 * 3] = {1, 1, 1, 1, 1, 1};
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 3; k++) {
            double *t = target + (b * 3 + k) * 4;
            t[0] = xw - 0.02 * (k + 1), t[1] = yf + 0.03 * (k + 1), t[2] = -1.2, t[3] = 1.5;
        }
    batch bt = {2, 3, 2, 1, x0, target, labels, NULL};
    for (int variant = 0; variant < 12; variant++) {
        int law = variant & 1 ? IMP_CDL_IMPACT_NEWTON : IMP_CDL_IMPACT_PAPER, stick = (variant >> 1) & 1,
            touch = variant < 4 || (variant >= 8 && variant < 10), event = variant >= 8;
        if (event) law = IMP_CDL_IMPACT_PAPER, stick = variant & 1;
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
        cfg.impact_law = law;
        cfg.impact_timing = event ? IMP_CDL_TIMING_EVENT : IMP_CDL_TIMING_STEP;
        cfg.hidden = 7, cfg.hidden_layers = 2, cfg.contact_hidden = 6, cfg.act = IMP_ACT_TANH;
        cfg.touch = touch, cfg.learn_mass = 1, cfg.learn_restitution = 1, cfg.friction = 1;
        cfg.contact_tol = 0.05;
        imp_model *m = NULL;
        CHECK_OK(imp_model_create(&m, &cfg, g, ts.dt, 17));
        if (!m) continue;
        m->params[m->off_mass] = 0.1;
        double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
        for (int p = 0; p < g->n_pairs; p++) e[p] = 0.5 + 0.1 * p, mu[p] = stick ? 2.0 : 0.05;
        CHECK_OK(imp_model_set_contact_law(m, e, mu));
        /* the first step reverses both velocities: both pairs took their impulse */
        double states[8], contact[2];
        CHECK_OK(imp_model_rollout(m, x0, 2, labels, states, contact));
        CHECK_MSG(states[4 + 2] < 0.0 && states[4 + 3] > 0.0, "corner: v after the step (%g, %g)", states[6],
                  states[7]);
        char what[96];
        snprintf(what, sizeof what, "corner cdl touch=%d law=%s mu=%s", touch,
                 event ? "event" : law ? "newton" : "paper", stick ? "stick" : "slide");
        fd_check(m, &bt, 0.01, what);
        imp_model_free(m);
    }
    imp_trajset_free(&ts);
}

int main(void)
{
    imp_blas_init();
    test_single_contact();
    test_single_potential();
    test_impulse_law();
    test_ball_gradients();
    test_weighted_loss();
    test_cradle_gradients();
    test_learned_restitution_gradients();
    test_friction_gradients();
    test_corner_gradients();
    test_contact_law_estimate();
    test_event_per_pair();
    test_guard();
    test_resting_near_wall();
    test_soft_gate_in_flight();
    test_gate_geometry();
    test_box_gradients();
    test_disks_activity();
    test_disks_gradients();
    test_event_timing();
    test_event_chain();
    TEST_MAIN_END();
}
