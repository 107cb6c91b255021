/* What the sweep tasks that train a contact model (imp_model: the cdl and
 * your-data strands) share: their simulated data, views of some of a set's
 * trajectories, the training step with its checkpoint and resumable
 * training state, and the tasks' cost estimate. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/cdl.h"
#include "impulse/core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sweep_simulate(const char *system, double restitution, double noise, unsigned seed, int n_traj, int steps,
                   imp_trajset *ts)
{
    imp_sim_opts o;
    int st = imp_sim_defaults(system, &o);
    if (st) return st;
    o.restitution = restitution;
    o.noise = noise;
    o.seed = seed;
    o.n_traj = n_traj;
    o.randomize = 1;
    if (steps) o.n_steps = steps;
    return imp_simulate(system, &o, ts);
}

imp_trajset sweep_trajectory_view(const imp_trajset *ts, int first, int count)
{
    imp_trajset v = *ts;
    size_t D = (size_t)ts->geom.n_bodies * ts->geom.dim, K = (size_t)ts->geom.n_bodies;
    size_t off = (size_t)first * ts->n_steps;
    v.n_traj = count;
    v.q += off * D, v.qdot += off * D, v.q_clean += off * D, v.qdot_clean += off * D, v.contact += off * K;
    if (v.interior) v.interior += off;
    return v;
}

/* The training time of a checkpoint, from its training meta (the object
 * "training" of its meta, which imp_model_save makes of the extra meta; NaN
 * if it does not say). */
static double checkpoint_seconds(const char *ckpt)
{
    double s = NAN;
    const char *meta = NULL, *training = NULL;
    imp_npz *z = NULL;
    if (!imp_npz_load(&z, ckpt) && (meta = imp_npz_meta(z)) && (training = strstr(meta, "\"training\":")))
        training = strchr(training, '{');
    if (!training || imp_json_get_number(training, "train_seconds", &s)) s = NAN;
    imp_clear_error();
    imp_npz_free(z);
    return s;
}

int sweep_train_model(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o,
                      const imp_cdl_config *cfg, imp_train_opts *to, const imp_trajset *train, int init_law,
                      double e_value, imp_model **out, imp_train_report *rep, double *train_seconds)
{
    char ckpt[4096], state[4096];
    snprintf(ckpt, sizeof ckpt, "%s/model.npz", task_dir);
    snprintf(state, sizeof state, "%s/train_state.npz", task_dir);
    imp_model *m = NULL;
    memset(rep, 0, sizeof *rep);
    *train_seconds = NAN;
    *out = NULL;
    int st;
    if (access(ckpt, F_OK) == 0) {
        /* trained before the task was stopped during evaluation */
        st = imp_model_load(&m, ckpt);
        if (!st && m->cfg.kind != cfg->kind)
            st = imp_fail(IMP_ERR_INVALID, "%s is not a %s model", ckpt, imp_model_kind_name(cfg->kind));
        if (!st) *train_seconds = checkpoint_seconds(ckpt);
    } else {
        sweep_progress pc = {t, o, 100};
        to->hooks.on_epoch = sweep_train_epoch;
        to->hooks.user_data = &pc;
        to->hooks.report = rep;
        /* the last epoch's model, as the reference codes evaluate theirs
         * (`impulse train` keeps the best by default) */
        to->hooks.keep = IMP_KEEP_LAST;
        to->hooks.state_path = state;
        if (access(state, F_OK) == 0) to->hooks.resume_path = state;
        st = imp_model_create(&m, cfg, &train->geom, train->dt, to->seed);
        /* CD-Lagrange's e given, or from the data's estimate around the labelled contacts */
        if (!st && init_law)
            st = imp_model_init_contact_law(m, train, isnan(e_value) ? IMP_LAW_INIT_DATA : IMP_LAW_INIT_VALUE,
                                            isnan(e_value) ? 0 : e_value, IMP_LAW_INIT_DATA, 0, NULL);
        imp_loss_parts lp;
        double t0 = imp_time_now();
        if (!st) st = imp_model_train(m, train, to, &lp);
        *train_seconds = rep->epochs_done ? rep->seconds : imp_time_now() - t0;
        to->hooks.on_epoch = NULL, to->hooks.user_data = NULL, to->hooks.report = NULL;
        if (!st && rep->stop == IMP_TRAIN_STOPPED) {
            /* asked to stop: not done; the training state is on disk */
            imp_model_free(m);
            return SWEEP_STOPPED;
        }
        if (!st) {
            char extra[128];
            snprintf(extra, sizeof extra, "{\"train_seconds\": %.6f}", *train_seconds);
            st = imp_model_save(m, ckpt, extra);
        }
        if (!st) unlink(state);
    }
    if (st) {
        imp_model_free(m);
        return imp_fail_context(st, "task '%s'", t->id);
    }
    *out = m;
    return IMP_OK;
}

/* A rough relative cost of a task, for ordering only: epochs x trajectory
 * steps x a per-step weight of the model (measured per-step costs of the
 * CD-Lagrange reproduction: VIN about half a ResNet step, CD-Lagrange twice,
 * ResNetContact two and a half times), scaled to about seconds on this
 * project's machines. */
double sweep_model_cost(const char *model, long epochs, int steps)
{
    double w = !strcmp(model, "vin") ? 0.5 : !strcmp(model, "cdl") ? 2.0 : !strcmp(model, "resnet-contact") ? 2.5 : 1.0;
    return 4e-5 * w * epochs * steps;
}
