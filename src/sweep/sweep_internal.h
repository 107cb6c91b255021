/* Internal interface of the sweep runner: one executor per strand. */
#ifndef IMPULSE_SWEEP_INTERNAL_H
#define IMPULSE_SWEEP_INTERNAL_H

#include "impulse/cdl.h"
#include "impulse/contact_systems.h"
#include "impulse/io.h"
#include "impulse/report.h"
#include "impulse/sweep.h"
#include "impulse/train.h"

/* Run task t with its files under task_dir (which exists); put the result
 * (named arrays and a "meta" JSON with the scalar results) into `result`.
 * The runner saves it as task_dir/result.npz once the executor returns OK;
 * SWEEP_STOPPED means the runner asked it to stop (o->should_stop) and the
 * task is left to a later run. */
#define SWEEP_STOPPED 1
typedef int (*sweep_exec_fn)(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o,
                             imp_npz *result);

int sweep_exec_chnn(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result);
/* Create the folder path (an existing folder is fine; a file there is an error). */
int sweep_make_dir(const char *path);
int sweep_exec_cdl(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result);
int sweep_exec_impact(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result);
int sweep_exec_your_data(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o,
                         imp_npz *result);
int sweep_exec_cube(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result);
int sweep_exec_contact(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result);

/* The training callback of a task: a progress line every `every` epochs,
 * and a stop request of the runner ends the training cleanly (the task's
 * training state is kept for the next run). */
typedef struct sweep_progress {
    const imp_sweep_task *t;
    const imp_sweep_run_opts *o;
    int every;
} sweep_progress;
int sweep_train_epoch(const imp_epoch_info *info, void *user);

/* A task's result meta: sweep_meta_begin opens the JSON object with the
 * task's strand and id; sweep_meta_set closes it, sets it as the result's
 * meta and frees it. */
void sweep_meta_begin(imp_json *j, const imp_sweep_task *t);
int sweep_meta_set(imp_npz *result, imp_json *j);

/* ---- shared by the tasks that train a contact model (task_model.c) ---- */

/* Trajectories of a built-in system from random initial states
 * (imp_sim_opts.randomize) with the given restitution, observation noise
 * and seed; steps 0: the system's default. */
int sweep_simulate(const char *system, double restitution, double noise, unsigned seed, int n_traj, int steps,
                   imp_trajset *ts);
/* A non-owning view of trajectories first .. first + count - 1 of a set. */
imp_trajset sweep_trajectory_view(const imp_trajset *ts, int first, int count);
/* The model of task t: its checkpoint task_dir/model.npz if an earlier run
 * finished the training (a model of another kind than cfg's is an error),
 * otherwise trained on `train` with `to` (the progress hook and the
 * resumable training state task_dir/train_state.npz added to to->hooks;
 * state_seconds and state_every are the caller's) from a model created with
 * cfg and to->seed, its contact law first initialised when init_law is
 * set (e from e_value, or from the data's estimate when e_value is NaN; mu
 * from the data's estimate), and saved as the checkpoint. *rep is the training's
 * report (zero for a checkpoint), *train_seconds the training time (the
 * checkpoint's). SWEEP_STOPPED: asked to stop, the state is on disk. On
 * any status but IMP_OK, *m is NULL. */
int sweep_train_model(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o,
                      const imp_cdl_config *cfg, imp_train_opts *to, const imp_trajset *train, int init_law,
                      double e_value, imp_model **m, imp_train_report *rep, double *train_seconds);
/* A task's estimated cost in about seconds (for ordering only). */
double sweep_model_cost(const char *model, long epochs, int steps);

/* Columns of an impact evaluation's "models" array (task_impact.c):
 * mu mean, std, eps mean, std, best share, worst share, Table 2 fraction,
 * per-impact mu mean, std, zero share, per-impact eps mean, std, mean error
 * at Table 1, identified, median identified, energy-gain, penetration and
 * cone-violation shares (identified), failures and first failure at Table 1
 * and identified, ensemble k and draws. */
#define SWEEP_IMPACT_NCOL 24

/* The experiments of the CD-Lagrange reproduction (task_cdl.c). */
typedef struct sweep_cdl_experiment {
    const char *id, *title, *system;
    double restitution, noise;
    int steps;  /* 0: system default */
    int touch;
    int epochs; /* full run */
    double l2;  /* L2 on the potential; < 0: the settings' default */
    const char *models[4];
} sweep_cdl_experiment;
int sweep_cdl_n_experiments(void);
const sweep_cdl_experiment *sweep_cdl_experiment_at(int i);
int sweep_cdl_find(const char *id); /* index or -1 */
/* The experiment whose task holds experiment exp's run of `model` (the
 * ResNet ignores touch: one run serves both ball experiments). */
int sweep_cdl_canonical(int exp, const char *model);
/* The experiment's data for a seed: the paper's trajectory and a held-out one. */
int sweep_cdl_make_data(const sweep_cdl_experiment *e, int seed, imp_trajset *ts);

/* The settings of a your-data task (task_yourdata.c), every key checked:
 * a bad name or value is an error naming the task and the key. labels is
 * "none" for the ResNet; impact_law -1 is auto (the data's default). */
typedef struct sweep_yd_settings {
    const char *system, *model, *labels;
    imp_model_kind kind;
    long seed, epochs, heldout, threads, state_every;
    double restitution, noise, state_seconds;
    int impact_law, lr_schedule;
} sweep_yd_settings;
int sweep_your_data_settings(const imp_sweep_task *t, sweep_yd_settings *s);
/* The task's training trajectory (noisy, touch-sensor labels as recorded). */
int sweep_your_data_train_set(const sweep_yd_settings *s, imp_trajset *ts);
/* Its result's "metrics" array: rmse_code, rmse, force_over_g, e, seconds. */
#define SWEEP_YD_NMETRICS 5

/* The settings of a contact task (task_contact.c), every key checked: a
 * bad name or value is an error naming the task and the key. e_init NaN:
 * the data's estimate. */
typedef struct sweep_contact_settings {
    const char *system, *model, *config, *labels;
    imp_model_kind kind;
    int geometry_gates, impact_law; /* impact_law -1: the data's default */
    int impact_timing;              /* IMP_CDL_TIMING_* */
    long seed, epochs, n_train, n_test, data_seed, test_seed, friction, projection, threads, state_every;
    long law_identify;              /* 1: --law-identify after training (cdl) */
    double restitution, noise, e_init, state_seconds;
    double contact_tol;             /* NAN: the data's default (3 x noise) */
} sweep_contact_settings;
int sweep_contact_read(const imp_sweep_task *t, sweep_contact_settings *s);
/* Its result's "metrics" array: rmse, rmse_code, min_gap, seconds. */
#define SWEEP_CONTACT_NMETRICS 4
/* 1 if system is one of the contact plan's constrained systems. */
int sweep_contact_constrained_system(const char *system);

/* The strand's report section: appended to md (markdown) and to the JSON
 * array of results; figures written into dir. */
typedef struct sweep_result {
    const imp_sweep_task *task;
    imp_npz *z;          /* result.npz, NULL if the task is not done */
    const char *meta;    /* its meta JSON */
} sweep_result;

int sweep_report_chnn(const char *dir, const sweep_result *res, int n, char **md, size_t *md_len);
int sweep_report_cdl(const char *dir, const sweep_result *res, int n, char **md, size_t *md_len);
int sweep_report_impact(const char *dir, const sweep_result *res, int n, char **md, size_t *md_len);
int sweep_report_your_data(const char *dir, const sweep_result *res, int n, char **md, size_t *md_len);
int sweep_report_cube(const char *dir, const sweep_result *res, int n, char **md, size_t *md_len);
int sweep_report_contact(const char *dir, const sweep_result *res, int n, char **md, size_t *md_len);

/* Mean and standard error (sample standard deviation / sqrt n; 0 for n < 2
 * or a mean that is not finite) of x[0..n-1], n >= 1. */
void sweep_mean_se(const double *x, int n, double *mean, double *se);
/* "mean ± se" (imp_format_mean_se), the mean alone for n < 2, "diverged"
 * for a mean that is not finite. */
void sweep_fmt_mean_se(char *buf, size_t cap, double mean, double se, int n);

/* JSON lines of a sweep folder's finished tasks: row() is called with each
 * (its result loaded) and appends its lines, if any, to *out; *jsonl is ""
 * when no task gives one. what names the caller in errors. */
typedef int (*sweep_row_fn)(const sweep_result *r, void *user, char **out, size_t *len);
int sweep_rows(const char *dir, const char *what, sweep_row_fn row, void *user, char **jsonl);
/* Append j's text and a newline to *out; frees j. */
int sweep_row_append(imp_json *j, char **out, size_t *len);

/* Save a figure as dir/stem.{png,svg,npz} and append its Markdown (or,
 * when it cannot be drawn, e.g. no matplotlib, a note: the tables stand
 * without the figures); frees fig. */
int sweep_save_figure(imp_figure *fig, const char *dir, const char *stem, const char *caption, char **md, size_t *len);

/* Append printf-formatted text to a growing buffer. */
int sweep_appendf(char **buf, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
