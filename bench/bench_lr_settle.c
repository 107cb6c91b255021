/* Does CD-Lagrange's fit settle? One run of `impulse reproduce your-data`
 * (compliant ball, e 0.7, noise 0.2, touch labels handled by onset, e
 * learned from the data's estimate, Newton's law, reference-code settings)
 * trained once with the constant learning rate and once with the cosine
 * schedule; after each of the last W epochs the learned potential's slope at
 * the floor (over g) and the held-out RMSE (reference-code definition, 5
 * noise-free trajectories from random starts) of the current parameters.
 * Prints their range over those epochs and their last values.
 *
 *   bench_lr_settle [SEED [EPOCHS [W]]]     (defaults 2, 1000, 100)
 *
 * A measurement for docs/your-data.md, not a test. */
#include "impulse/impulse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HELDOUT = 5 };

/* The data of reproduce your-data's seed (src/sweep/task_yourdata.c: training set
 * from seed 1000 + K, the held-out draw from 2000 + K without its first). */
static int make_data(int seed, int heldout, imp_trajset *ts)
{
    imp_sim_opts o;
    int st = imp_sim_defaults("compliant-ball", &o);
    if (st) return st;
    o.restitution = 0.7;
    o.noise = heldout ? 0.0 : 0.2;
    o.seed = (heldout ? 2000u : 1000u) + (unsigned)seed;
    o.n_traj = heldout ? HELDOUT + 1 : 1;
    o.randomize = 1;
    if ((st = imp_simulate("compliant-ball", &o, ts))) return st;
    if (heldout) {
        size_t D = (size_t)ts->geom.n_bodies * ts->geom.dim, K = (size_t)ts->geom.n_bodies;
        size_t T = (size_t)ts->n_steps, n = (size_t)HELDOUT * T;
        memmove(ts->q, ts->q + T * D, n * D * sizeof(double));
        memmove(ts->qdot, ts->qdot + T * D, n * D * sizeof(double));
        memmove(ts->q_clean, ts->q_clean + T * D, n * D * sizeof(double));
        memmove(ts->qdot_clean, ts->qdot_clean + T * D, n * D * sizeof(double));
        memmove(ts->contact, ts->contact + T * K, n * K * sizeof(double));
        ts->n_traj = HELDOUT;
    }
    return IMP_OK;
}

typedef struct trace {
    imp_model *m;
    const imp_trajset *test;
    double gravity;
    int from; /* first epoch recorded */
    double slope_min, slope_max, rmse_min, rmse_max, slope_last, rmse_last;
} trace;

static int on_epoch(const imp_epoch_info *info, void *user)
{
    trace *t = user;
    if (info->epoch < t->from) return 0;
    /* m->params are this epoch's (the training updates them in place) */
    double q0 = 0.0, f = NAN;
    imp_eval_result r;
    if (imp_model_potential_grad(t->m, &q0, 1, &f)) f = NAN;
    if (imp_model_evaluate(t->m, t->test, 0, &r, NULL, NULL, NULL)) r.rmse_code = INFINITY;
    f /= t->gravity;
    t->slope_min = fmin(t->slope_min, f), t->slope_max = fmax(t->slope_max, f);
    t->rmse_min = fmin(t->rmse_min, r.rmse_code), t->rmse_max = fmax(t->rmse_max, r.rmse_code);
    t->slope_last = f, t->rmse_last = r.rmse_code;
    return 0;
}

int main(int argc, char **argv)
{
    int seed = argc > 1 ? atoi(argv[1]) : 2, epochs = argc > 2 ? atoi(argv[2]) : 1000;
    int window = argc > 3 ? atoi(argv[3]) : 100;
    if (epochs < 1 || window < 1 || window > epochs) {
        fprintf(stderr, "usage: bench_lr_settle [SEED [EPOCHS [W]]] (1 <= W <= EPOCHS)\n");
        return 2;
    }
    imp_blas_init();
    imp_trajset test;
    if (make_data(seed, 1, &test)) {
        fprintf(stderr, "bench_lr_settle: %s\n", imp_last_error());
        return 1;
    }
    printf("seed %d, %d epochs; over the last %d epochs: slope at the floor / g and held-out RMSE (ref. code def.)\n",
           seed, epochs, window);
    const int schedules[2] = {IMP_LR_CONSTANT, IMP_LR_COSINE};
    for (int k = 0; k < 2; k++) {
        imp_trajset train;
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
        cfg.act = IMP_ACT_SOFTPLUS;
        cfg.learn_restitution = 1;
        imp_train_opts to;
        imp_train_opts_default(&to, 1);
        to.epochs = epochs;
        to.seed = (unsigned long long)seed;
        to.lr_schedule = schedules[k];
        trace t = {NULL, &test, 0, epochs - window + 1, INFINITY, -INFINITY, INFINITY, -INFINITY, NAN, NAN};
        int st = make_data(seed, 0, &train);
        if (!st) st = imp_contact_labels_apply(&train, IMP_LABELS_AUTO, NULL);
        cfg.impact_law = imp_cdl_default_impact_law(&train);
        if (!st) st = imp_model_create(&t.m, &cfg, &train.geom, train.dt, to.seed);
        if (!st) st = imp_model_init_contact_law(t.m, &train, IMP_LAW_INIT_DATA, 0, IMP_LAW_INIT_DEFAULT, 0, NULL);
        t.gravity = train.gravity;
        to.hooks.on_epoch = on_epoch;
        to.hooks.user_data = &t;
        double t0 = imp_time_now();
        if (!st) st = imp_model_train(t.m, &train, &to, NULL);
        if (st) {
            fprintf(stderr, "bench_lr_settle: %s\n", imp_last_error());
            return 1;
        }
        double e;
        imp_model_get_contact_law(t.m, &e, NULL);
        printf("%-8s slope %.3f .. %.3f (last %.3f)  RMSE %.3f .. %.3f (last %.3f)  e %.4f  %.0f s\n",
               imp_lr_schedule_name(schedules[k]), t.slope_min, t.slope_max, t.slope_last, t.rmse_min, t.rmse_max,
               t.rmse_last, e, imp_time_now() - t0);
        imp_model_free(t.m);
        imp_trajset_free(&train);
    }
    imp_trajset_free(&test);
    return 0;
}
