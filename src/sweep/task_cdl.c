/* Sweep tasks of the CD-Lagrange strand (Hochlehnert et al. 2021, section 4
 * and appendix): one model of one experiment trained with one seed on the
 * experiment's trajectory and evaluated by rollout from its noise-free first
 * state, from a held-out initial state and over a 5x longer forecast.
 * Settings:
 *   experiment=pendulum|ball-touch|ball-notouch|ball-e07|cradle-touch|cradle-notouch
 *   model=cdl|vin|resnet|resnet-contact seed=K epochs=E settings=code|paper
 *   threads=1 (training threads; the same seed and count give bit-identical
 *   results) state_seconds=60 (how often the training state is saved;
 *   state_every=E: every E epochs too)
 *   lr_schedule=constant|cosine|auto (default constant: a task without the
 *   key trains as every task did before the key existed, with the reference
 *   code's constant rate; auto would resolve to constant on these
 *   experiments' data anyway, all made by impulse's event-driven simulators)
 * Files: tasks/<id>/train_state.npz (the whole training state, every minute:
 * a task killed during training continues from it bit-identically),
 * model.npz (the checkpoint, when training ends) and result.npz. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/cdl.h"
#include "impulse/core.h"
#include "impulse/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Noise and epochs: the paper's appendix (pendulum and ball sigma 0.2; cradle
 * sigma 0.02 as the reference code; e = 0.7 ball without noise as the code's
 * run_zenos_paradox). L2 on the potential exists to make the network explain
 * jumps by impulses rather than forces ([P] 3.2); the pendulum has no
 * contacts and there it only biases the learned gravity towards zero (VIN
 * rollout RMSE 0.21 with the code's 5e-3 against 0.09 without, measured), so
 * the pendulum runs without it. The cradle uses the reference code's own
 * 5e-6 for its CDLNetwork (with 5e-3 the learned gravity is far too weak:
 * rollout RMSE 1.6-4.8 against 0.21 after 1000 epochs, measured). */
static const sweep_cdl_experiment experiments[] = {
    {"pendulum", "Pendulum", "pendulum", 1.0, 0.2, 0, 1, 3000, 0.0, {"cdl", "vin", "resnet", NULL}},
    {"ball-touch", "Bouncing ball, e = 1, touch feedback", "bouncing-ball", 1.0, 0.2, 0, 1, 2000, -1.0,
     {"cdl", "resnet-contact", "resnet", NULL}},
    {"ball-notouch", "Bouncing ball, e = 1, no touch feedback", "bouncing-ball", 1.0, 0.2, 0, 0, 2000, -1.0,
     {"cdl", "resnet", NULL}},
    {"ball-e07", "Bouncing ball, e = 0.7 (appendix Fig. 10)", "bouncing-ball", 0.7, 0.0, 0, 1, 2000, -1.0,
     {"cdl", "resnet-contact", "resnet", NULL}},
    {"cradle-touch", "Newton's cradle, touch feedback", "newtons-cradle", 1.0, 0.02, 0, 1, 2000, 5e-6,
     {"cdl", "resnet-contact", "resnet", NULL}},
    {"cradle-notouch", "Newton's cradle, no touch feedback", "newtons-cradle", 1.0, 0.02, 0, 0, 2000, 5e-6,
     {"cdl", "resnet", NULL}},
};
#define N_EXP ((int)(sizeof experiments / sizeof experiments[0]))

int sweep_cdl_n_experiments(void) { return N_EXP; }

const sweep_cdl_experiment *sweep_cdl_experiment_at(int i) { return i >= 0 && i < N_EXP ? &experiments[i] : NULL; }

int sweep_cdl_find(const char *id)
{
    for (int i = 0; id && i < N_EXP; i++)
        if (!strcmp(experiments[i].id, id)) return i;
    return -1;
}

/* The ResNet ignores the touch signal, so its run in a no-touch experiment
 * is the same run as in the touch experiment on the same data: it is trained
 * once and filed under the first such experiment. */
int sweep_cdl_canonical(int exp, const char *model)
{
    const sweep_cdl_experiment *e = &experiments[exp];
    if (strcmp(model, "resnet")) return exp;
    for (int k = 0; k < exp; k++) {
        const sweep_cdl_experiment *o = &experiments[k];
        if (strcmp(o->system, e->system) || o->restitution != e->restitution || o->noise != e->noise ||
            o->steps != e->steps || o->epochs != e->epochs || o->l2 != e->l2)
            continue;
        for (int m = 0; o->models[m]; m++)
            if (!strcmp(o->models[m], "resnet")) return k;
    }
    return exp;
}

/* Two trajectories: the paper's (trained on, and evaluated from its
 * noise-free first state as in the reference code) and a held-out one from a
 * random initial state (pendulum angle in [-1.5, 1.5], ball height in
 * [5, 10] m, cradle speed in [1, 3] rad/s), which shows whether a model
 * learned the dynamics or the one trajectory. */
int sweep_cdl_make_data(const sweep_cdl_experiment *e, int seed, imp_trajset *ts)
{
    return sweep_simulate(e->system, e->restitution, e->noise, 1000u + (unsigned)seed, 2, e->steps, ts);
}

/* Forecast: the paper's trajectory, noise-free, continued to FORECAST_FACTOR
 * times its training length (as the VIN code's "train on 15 s, forecast
 * 10 s"): a model that learned the dynamics keeps its phase and energy
 * beyond the data, one that fitted the window drifts away. */
enum { FORECAST_FACTOR = 5 };
static int make_forecast(const sweep_cdl_experiment *e, imp_trajset *ts)
{
    imp_sim_opts o;
    int st = imp_sim_defaults(e->system, &o);
    if (st) return st;
    o.restitution = e->restitution;
    o.noise = 0.0;
    o.n_traj = 1;
    o.randomize = 0;
    o.n_steps = FORECAST_FACTOR * (e->steps ? e->steps : o.n_steps);
    return imp_simulate(e->system, &o, ts);
}

typedef struct cdl_settings {
    int exp;
    const char *model;
    long seed, epochs, threads, state_every;
    int code;
    int lr_schedule;
    double state_seconds;
} cdl_settings;

static int read_settings(const imp_sweep_task *t, cdl_settings *s)
{
    const char *exp = imp_sweep_task_get(t, "experiment");
    s->model = imp_sweep_task_get(t, "model");
    if (!exp) return imp_fail(IMP_ERR_INVALID, "task '%s': needs experiment=", t->id);
    if ((s->exp = sweep_cdl_find(exp)) < 0)
        return imp_fail(IMP_ERR_INVALID, "task '%s': experiment=%s unknown (pendulum, ball-touch, ball-notouch, "
                        "ball-e07, cradle-touch, cradle-notouch)", t->id, exp);
    if (!s->model) return imp_fail(IMP_ERR_INVALID, "task '%s': needs model=", t->id);
    const char *set = imp_sweep_task_get(t, "settings");
    if (set && strcmp(set, "code") && strcmp(set, "paper"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': settings=%s is not code or paper", t->id, set);
    s->code = !set || !strcmp(set, "code");
    const char *sched = imp_sweep_task_get(t, "lr_schedule");
    s->lr_schedule = IMP_LR_CONSTANT;
    if (sched && imp_lr_schedule_from_name(sched, &s->lr_schedule))
        return imp_fail(IMP_ERR_INVALID, "task '%s': lr_schedule=%s is not constant, cosine or auto", t->id, sched);
    int st = imp_sweep_task_int(t, "seed", 0, 0, 2147483647L, &s->seed);
    if (!st) st = imp_sweep_task_int(t, "epochs", experiments[s->exp].epochs, 0, 1000000, &s->epochs);
    if (!st) st = imp_sweep_task_int(t, "threads", 1, 1, 64, &s->threads);
    if (!st) st = imp_sweep_task_double(t, "state_seconds", 60, 0, 1e9, &s->state_seconds);
    if (!st) st = imp_sweep_task_int(t, "state_every", 0, 0, 1000000, &s->state_every);
    return st;
}

int sweep_exec_cdl(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result)
{
    cdl_settings s;
    int st = read_settings(t, &s);
    if (st) return st;
    const sweep_cdl_experiment *e = &experiments[s.exp];
    imp_model_kind kind;
    if ((st = imp_model_kind_from_name(s.model, &kind))) return imp_fail_context(st, "task '%s'", t->id);
    imp_trajset data;
    if ((st = sweep_cdl_make_data(e, (int)s.seed, &data))) return imp_fail_context(st, "task '%s'", t->id);
    imp_trajset train = sweep_trajectory_view(&data, 0, 1), heldout = sweep_trajectory_view(&data, 1, 1);
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, kind);
    cfg.touch = e->touch;
    cfg.act = s.code ? IMP_ACT_SOFTPLUS : IMP_ACT_TANH;
    imp_train_opts to;
    imp_train_opts_default(&to, s.code);
    to.epochs = (int)s.epochs;
    if (e->l2 >= 0.0) to.l2 = e->l2;
    to.seed = (unsigned long long)s.seed;
    to.threads = (int)s.threads;
    to.lr_schedule = s.lr_schedule;
    to.hooks.state_seconds = s.state_seconds;
    to.hooks.state_every = (int)s.state_every;
    imp_model *m = NULL;
    imp_train_report rep;
    double train_seconds;
    st = sweep_train_model(t, task_dir, o, &cfg, &to, &train, 0, NAN, &m, &rep, &train_seconds);
    if (st) {
        imp_trajset_free(&data);
        return st;
    }
    imp_eval_result r, rh, rf;
    if (!st) st = imp_model_evaluate(m, &train, 0, &r, NULL, NULL, NULL);
    /* a baseline may diverge from an unseen state or beyond the data: that
     * is a result, not a failure */
    if (!st && imp_model_evaluate(m, &heldout, 0, &rh, NULL, NULL, NULL)) {
        rh.rmse = INFINITY;
        imp_clear_error();
    }
    imp_trajset forecast;
    if (!st) st = make_forecast(e, &forecast);
    if (!st) {
        if (imp_model_evaluate(m, &forecast, 0, &rf, NULL, NULL, NULL)) {
            rf.rmse = INFINITY;
            imp_clear_error();
        }
        imp_trajset_free(&forecast);
    }
    imp_model_free(m);
    imp_trajset_free(&data);
    if (st) return imp_fail_context(st, "task '%s'", t->id);
    imp_json j;
    sweep_meta_begin(&j, t);
    imp_json_kv_string(&j, "experiment", e->id);
    imp_json_kv_string(&j, "model", s.model);
    imp_json_kv_int(&j, "seed", s.seed);
    imp_json_kv_int(&j, "epochs", s.epochs);
    imp_json_kv_number(&j, "rmse", r.rmse);
    imp_json_kv_number(&j, "rmse_code", r.rmse_code);
    imp_json_kv_number(&j, "energy_drift", r.energy_drift);
    imp_json_kv_number(&j, "contact_timing", r.contact_timing);
    imp_json_kv_number(&j, "train_seconds", train_seconds);
    imp_json_kv_number(&j, "rmse_heldout", rh.rmse);
    imp_json_kv_number(&j, "rmse_forecast", rf.rmse);
    imp_json_kv_int(&j, "resumed_at_epoch", rep.resumed_at);
    st = sweep_meta_set(result, &j);
    /* the metrics also as an array (JSON has no infinity: a diverged rollout is +inf here) */
    double v[7] = {r.rmse, r.rmse_code, r.energy_drift, r.contact_timing, train_seconds, rh.rmse, rf.rmse};
    size_t shape[1] = {7};
    if (!st) st = imp_npz_add_f64(result, "metrics", 1, shape, v);
    return st;
}

/* ---- plans ---- */

void imp_sweep_cdl_opts_default(imp_sweep_cdl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->settings = "code";
}

static double task_cost(const sweep_cdl_experiment *e, const char *model, long epochs)
{
    imp_sim_opts o;
    int steps = e->steps;
    if (!steps) steps = imp_sim_defaults(e->system, &o) == IMP_OK ? o.n_steps : 500;
    return sweep_model_cost(model, epochs, steps);
}

int imp_sweep_plan_cdl(imp_sweep_plan *plan, const imp_sweep_cdl_opts *o)
{
    if (!plan || !o) return imp_fail(IMP_ERR_INVALID, "cdl plan: NULL");
    memset(plan, 0, sizeof *plan);
    int seeds = o->seeds > 0 ? o->seeds : o->quick ? 2 : 3;
    if (seeds > 1000) return imp_fail(IMP_ERR_INVALID, "cdl plan: seeds %d out of [1, 1000]", seeds);
    if (o->first_seed < 0) return imp_fail(IMP_ERR_INVALID, "cdl plan: first seed %d < 0", o->first_seed);
    if (o->epochs < 0) return imp_fail(IMP_ERR_INVALID, "cdl plan: epochs %d < 0", o->epochs);
    if (o->threads < 0 || o->threads > 64) return imp_fail(IMP_ERR_INVALID, "cdl plan: threads %d out of [0, 64]", o->threads);
    const char *settings = o->settings ? o->settings : "code";
    if (strcmp(settings, "code") && strcmp(settings, "paper"))
        return imp_fail(IMP_ERR_INVALID, "cdl plan: settings '%s' is not code or paper", settings);
    int selected[N_EXP];
    for (int e = 0; e < N_EXP; e++) selected[e] = !o->only;
    if (o->only) {
        char *copy = strdup(o->only), *save = NULL;
        if (!copy) return imp_fail(IMP_ERR_NOMEM, "cdl plan: out of memory");
        int any = 0, st = IMP_OK;
        for (char *tok = strtok_r(copy, ",", &save); tok && !st; tok = strtok_r(NULL, ",", &save)) {
            int e = sweep_cdl_find(tok);
            if (e < 0)
                st = imp_fail(IMP_ERR_INVALID, "cdl plan: experiment '%s' unknown (pendulum, ball-touch, "
                              "ball-notouch, ball-e07, cradle-touch, cradle-notouch)", tok);
            else selected[e] = any = 1;
        }
        free(copy);
        if (st) return st;
        if (!any) return imp_fail(IMP_ERR_INVALID, "cdl plan: no experiment in '%s'", o->only);
    }
    char words[512], thr[24] = "";
    if (o->threads > 1) snprintf(thr, sizeof thr, " threads=%d", o->threads);
    int st = IMP_OK;
    for (int e = 0; e < N_EXP && !st; e++) {
        if (!selected[e]) continue;
        const sweep_cdl_experiment *x = &experiments[e];
        long epochs = o->epochs > 0 ? o->epochs : o->quick ? 100 : x->epochs;
        for (int s = o->first_seed; s < o->first_seed + seeds && !st; s++)
            for (int m = 0; x->models[m] && !st; m++) {
                int c = sweep_cdl_canonical(e, x->models[m]);
                if (c != e && selected[c]) continue; /* the same run, planned under c */
                snprintf(words, sizeof words,
                         "id=%s.%s.s%d strand=cdl experiment=%s model=%s seed=%d epochs=%ld settings=%s%s cost=%.3g",
                         x->id, x->models[m], s, x->id, x->models[m], s, epochs, settings, thr,
                         task_cost(x, x->models[m], epochs));
                st = imp_sweep_plan_add(plan, words);
            }
    }
    if (st) imp_sweep_plan_free(plan);
    return st;
}
