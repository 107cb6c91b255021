/* Sweep tasks of the your-data experiment (docs/your-data.md): one model
 * trained with one seed on compliant-contact data with a touch sensor (the
 * stand-in for trajectories impulse did not simulate: another simulator's
 * soft contact, a lab's noisy positions), the sensor's labels handled by
 * default or kept as given, and evaluated on noise-free held-out
 * trajectories from random starts. Settings:
 *   system=compliant-ball model=cdl|resnet-contact|resnet
 *   labels=auto|as-given|onset (cdl, resnet-contact; default auto) or none
 *   (resnet, which takes no labels) seed=K epochs=E (2000)
 *   restitution=0.7 noise=0.2 heldout=5 (held-out trajectories)
 *   impact_law=auto|paper|newton (cdl only; auto: the data's default)
 *   lr_schedule=auto|constant|cosine (default auto: cosine on these data)
 *   threads=1 state_seconds=60 state_every=0 (as the cdl strand's)
 * Data: the training trajectory from seed 1000 + K (noise on positions and
 * velocities), the held-out set from seed 2000 + K (noise-free; the first
 * trajectory of that draw, which starts where the training one does, is
 * left out). Reference-code settings (softplus, Adam lr 1e-2); CD-Lagrange
 * learns e starting from the data's estimate around the labelled contacts
 * (not from the meta, which holds the target).
 * Files: tasks/<id>/train_state.npz, model.npz and result.npz: meta
 * rmse_code, rmse (held-out), force_over_g (the learned dU/dq at height 0
 * over g; CD-Lagrange), e (the learned restitution; CD-Lagrange), seconds
 * (training), and the same numbers bit-exact in the array "metrics". */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "core/num.h"
#include "impulse/cdl.h"
#include "impulse/core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int sweep_your_data_settings(const imp_sweep_task *t, sweep_yd_settings *s)
{
    memset(s, 0, sizeof *s);
    s->system = imp_sweep_task_get(t, "system");
    if (!s->system) s->system = "compliant-ball";
    if (strcmp(s->system, "compliant-ball"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': system=%s is not compliant-ball", t->id, s->system);
    s->model = imp_sweep_task_get(t, "model");
    if (!s->model) return imp_fail(IMP_ERR_INVALID, "task '%s': needs model=", t->id);
    if (strcmp(s->model, "cdl") && strcmp(s->model, "resnet-contact") && strcmp(s->model, "resnet"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': model=%s is not cdl, resnet-contact or resnet", t->id, s->model);
    imp_model_kind_from_name(s->model, &s->kind);
    s->labels = imp_sweep_task_get(t, "labels");
    if (s->kind == IMP_MODEL_RESNET) {
        if (s->labels && strcmp(s->labels, "none"))
            return imp_fail(IMP_ERR_INVALID, "task '%s': labels=%s: model=resnet takes no labels (none)", t->id,
                            s->labels);
        s->labels = "none";
    } else {
        if (!s->labels) s->labels = "auto";
        imp_label_mode mode;
        if (imp_label_mode_from_name(s->labels, &mode))
            return imp_fail(IMP_ERR_INVALID, "task '%s': labels=%s is not auto, as-given or onset", t->id, s->labels);
    }
    const char *law = imp_sweep_task_get(t, "impact_law");
    s->impact_law = -1;
    if (law && s->kind != IMP_MODEL_CDL)
        return imp_fail(IMP_ERR_INVALID, "task '%s': impact_law=%s applies to model=cdl only", t->id, law);
    if (law && !strcmp(law, "paper")) s->impact_law = IMP_CDL_IMPACT_PAPER;
    else if (law && !strcmp(law, "newton")) s->impact_law = IMP_CDL_IMPACT_NEWTON;
    else if (law && strcmp(law, "auto"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': impact_law=%s is not auto, paper or newton", t->id, law);
    const char *sched = imp_sweep_task_get(t, "lr_schedule");
    s->lr_schedule = IMP_LR_AUTO;
    if (sched && imp_lr_schedule_from_name(sched, &s->lr_schedule))
        return imp_fail(IMP_ERR_INVALID, "task '%s': lr_schedule=%s is not auto, constant or cosine", t->id, sched);
    int st = imp_sweep_task_int(t, "seed", 0, 0, 2147483647L - 2000, &s->seed);
    if (!st) st = imp_sweep_task_int(t, "epochs", 2000, 1, 1000000, &s->epochs);
    if (!st) st = imp_sweep_task_double(t, "restitution", 0.7, 0, 1, &s->restitution);
    if (!st) st = imp_sweep_task_double(t, "noise", 0.2, 0, 100, &s->noise);
    if (!st) st = imp_sweep_task_int(t, "heldout", 5, 1, 1000, &s->heldout);
    if (!st) st = imp_sweep_task_int(t, "threads", 1, 1, 64, &s->threads);
    if (!st) st = imp_sweep_task_double(t, "state_seconds", 60, 0, 1e9, &s->state_seconds);
    if (!st) st = imp_sweep_task_int(t, "state_every", 0, 0, 1000000, &s->state_every);
    return st;
}

int sweep_your_data_train_set(const sweep_yd_settings *s, imp_trajset *ts)
{
    return sweep_simulate(s->system, s->restitution, s->noise, 1000u + (unsigned)s->seed, 1, 0, ts);
}

/* The held-out draw: heldout + 1 noise-free trajectories, of which the
 * task evaluates on all but the first. */
static int heldout_draw(const sweep_yd_settings *s, imp_trajset *ts)
{
    return sweep_simulate(s->system, s->restitution, 0.0, 2000u + (unsigned)s->seed, (int)s->heldout + 1, 0, ts);
}

int sweep_exec_your_data(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result)
{
    sweep_yd_settings s;
    int st = sweep_your_data_settings(t, &s);
    if (st) return st;
    imp_trajset train, draw;
    if ((st = sweep_your_data_train_set(&s, &train))) return imp_fail_context(st, "task '%s'", t->id);
    if ((st = heldout_draw(&s, &draw))) {
        imp_trajset_free(&train);
        return imp_fail_context(st, "task '%s'", t->id);
    }
    imp_trajset test = sweep_trajectory_view(&draw, 1, (int)s.heldout);
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, s.kind);
    cfg.act = IMP_ACT_SOFTPLUS;
    cfg.touch = s.kind != IMP_MODEL_RESNET;
    if (cfg.touch) {
        imp_label_mode mode;
        imp_label_mode_from_name(s.labels, &mode);
        st = imp_contact_labels_apply(&train, mode, NULL);
    }
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    to.epochs = (int)s.epochs;
    to.seed = (unsigned long long)s.seed;
    to.lr_schedule = s.lr_schedule;
    to.threads = (int)s.threads;
    to.hooks.state_seconds = s.state_seconds;
    to.hooks.state_every = (int)s.state_every;
    cfg.learn_restitution = s.kind == IMP_MODEL_CDL;
    if (s.kind == IMP_MODEL_CDL) cfg.impact_law = s.impact_law >= 0 ? s.impact_law : imp_cdl_default_impact_law(&train);
    int lr_used = s.lr_schedule == IMP_LR_AUTO ? imp_train_default_lr_schedule(&train) : s.lr_schedule;
    imp_model *m = NULL;
    imp_train_report rep;
    double seconds = NAN;
    if (!st) st = sweep_train_model(t, task_dir, o, &cfg, &to, &train, 1, NAN, &m, &rep, &seconds);
    if (st) {
        imp_trajset_free(&train);
        imp_trajset_free(&draw);
        return st == SWEEP_STOPPED ? st : imp_fail_context(st, "task '%s'", t->id);
    }
    /* a baseline may diverge from an unseen state: that is a result */
    imp_eval_result r;
    if (imp_model_evaluate(m, &test, 0, &r, NULL, NULL, NULL)) {
        r.rmse = r.rmse_code = INFINITY;
        imp_clear_error();
    }
    double force = NAN, e = NAN;
    if (s.kind == IMP_MODEL_CDL) {
        double q0 = 0.0;
        if (!imp_model_potential_grad(m, &q0, 1, &force)) force /= train.gravity;
        else imp_clear_error();
        double ec[IMP_MAX_CONTACTS];
        imp_model_get_contact_law(m, ec, NULL);
        e = ec[0];
    }
    imp_model_free(m);
    imp_trajset_free(&train);
    imp_trajset_free(&draw);
    imp_json j;
    sweep_meta_begin(&j, t);
    /* the seed, the table's row (model, labels), then the data and training */
    imp_json_kv_int(&j, "seed", s.seed);
    imp_json_kv_string(&j, "model", s.model);
    imp_json_kv_string(&j, "labels", s.labels);
    imp_json_kv_string(&j, "system", s.system);
    imp_json_kv_number(&j, "restitution", s.restitution);
    imp_json_kv_number(&j, "noise", s.noise);
    imp_json_kv_int(&j, "heldout", s.heldout);
    imp_json_kv_int(&j, "epochs", s.epochs);
    if (s.kind == IMP_MODEL_CDL) imp_json_kv_string(&j, "impact_law", cfg.impact_law == IMP_CDL_IMPACT_NEWTON ? "newton" : "paper");
    imp_json_kv_string(&j, "lr_schedule", imp_lr_schedule_name(lr_used));
    imp_json_kv_number(&j, "rmse_code", r.rmse_code);
    imp_json_kv_number(&j, "rmse", r.rmse);
    imp_json_kv_number(&j, "force_over_g", force);
    imp_json_kv_number(&j, "e", e);
    imp_json_kv_number(&j, "seconds", seconds);
    imp_json_kv_int(&j, "resumed_at_epoch", rep.resumed_at);
    st = sweep_meta_set(result, &j);
    /* bit-exact, and a diverged rollout stays +inf (JSON says null) */
    double v[SWEEP_YD_NMETRICS] = {r.rmse_code, r.rmse, force, e, seconds};
    size_t shape[1] = {SWEEP_YD_NMETRICS};
    if (!st) st = imp_npz_add_f64(result, "metrics", 1, shape, v);
    return st;
}

/* ---- plans ---- */

void imp_sweep_your_data_opts_default(imp_sweep_your_data_opts *o)
{
    memset(o, 0, sizeof *o);
    o->system = "compliant-ball";
    o->restitution = 0.7;
    o->noise = 0.2;
    o->heldout = 5;
    o->impact_law = "auto";
    o->lr_schedule = "auto";
}

int imp_sweep_plan_your_data(imp_sweep_plan *plan, const imp_sweep_your_data_opts *o)
{
    if (!plan || !o) return imp_fail(IMP_ERR_INVALID, "your-data plan: NULL");
    memset(plan, 0, sizeof *plan);
    int seeds = o->seeds > 0 ? o->seeds : 5;
    if (o->quick && seeds > 2) seeds = 2;
    if (seeds > 1000) return imp_fail(IMP_ERR_INVALID, "your-data plan: seeds %d out of [1, 1000]", seeds);
    if (o->epochs < 0) return imp_fail(IMP_ERR_INVALID, "your-data plan: epochs %d < 0", o->epochs);
    if (o->threads < 0 || o->threads > 64)
        return imp_fail(IMP_ERR_INVALID, "your-data plan: threads %d out of [0, 64]", o->threads);
    int epochs = o->epochs > 0 ? o->epochs : o->quick ? 100 : 2000;
    const char *system = o->system ? o->system : "compliant-ball";
    const char *law = o->impact_law ? o->impact_law : "auto", *sched = o->lr_schedule ? o->lr_schedule : "auto";
    imp_sim_opts so;
    int steps = imp_sim_defaults(system, &so) == IMP_OK ? so.n_steps : 500;
    imp_clear_error();
    static const char *rows[][2] = {{"cdl", "auto"}, {"cdl", "as-given"}, {"resnet-contact", "auto"},
                                    {"resnet-contact", "as-given"}, {"resnet", "none"}};
    char words[768], e[IMP_NUM_FMT_CAP], sigma[IMP_NUM_FMT_CAP], thr[24] = "", lw[48];
    if (o->threads > 1) snprintf(thr, sizeof thr, " threads=%d", o->threads);
    int st = IMP_OK;
    for (int s = 0; s < seeds && !st; s++)
        for (size_t k = 0; k < sizeof rows / sizeof rows[0] && !st; k++) {
            const char *model = rows[k][0];
            lw[0] = 0;
            if (!strcmp(model, "cdl")) snprintf(lw, sizeof lw, " impact_law=%s", law);
            snprintf(words, sizeof words,
                     "id=your-data.%s.%s.s%d strand=your-data system=%s model=%s labels=%s seed=%d epochs=%d "
                     "restitution=%s noise=%s heldout=%d%s lr_schedule=%s%s cost=%.3g",
                     model, rows[k][1], s, system, model, rows[k][1], s, epochs, imp_num_format(o->restitution, e),
                     imp_num_format(o->noise, sigma), o->heldout, lw, sched, thr,
                     sweep_model_cost(model, epochs, steps));
            st = imp_sweep_plan_add(plan, words);
            /* every setting checked as the task will read it */
            sweep_yd_settings ys;
            if (!st && (st = sweep_your_data_settings(&plan->tasks[plan->n_tasks - 1], &ys)))
                imp_fail_context(st, "your-data plan");
        }
    if (st) imp_sweep_plan_free(plan);
    return st;
}
