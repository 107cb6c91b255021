/* impulse sweeps: a reproduction as a list of independent tasks, run in any
 * order, by any number of processes, resumably.
 *
 * A plan is a small text file, one task per line:
 *
 *   # impulse sweep plan 1
 *   task id=pend3.chnn.s0 strand=chnn system=pendulum-chain:3 model=chnn seed=0 epochs=2000 cost=600
 *
 * `id` (letters, digits, '.', '-', '_', ':' -> unique per plan), `strand` and
 * the strand's settings are `key=value` words; `cost` (optional, seconds) is
 * an estimate used to start the longest tasks first. Blank lines and lines
 * starting with '#' are ignored.
 *
 * An output folder holds a copy of the plan (plan.txt) and one folder per task,
 * tasks/<id>/, with the task's checkpoint and its result.npz, written
 * atomically when the task is done. A task with a result is never run again;
 * a task being run holds tasks/<id>/claim (host, pid), created exclusively,
 * so several runners (MPI ranks, scheduler array tasks, a second shell) can
 * share one folder; a claim left by a process that is gone (same host) is
 * taken over. Every finished task appends one line to log.jsonl.
 */
#ifndef IMPULSE_SWEEP_H
#define IMPULSE_SWEEP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_SWEEP_MAX_KEYS 24
#define IMP_SWEEP_ID_MAX 96

typedef struct imp_sweep_task {
    char id[IMP_SWEEP_ID_MAX];
    int n_keys;
    char *keys[IMP_SWEEP_MAX_KEYS];   /* includes "id" and "strand" */
    char *values[IMP_SWEEP_MAX_KEYS];
    double cost;                      /* estimate in seconds (1 if not given) */
    int line;                         /* line in the plan file */
} imp_sweep_task;

typedef struct imp_sweep_plan {
    int n_tasks;
    imp_sweep_task *tasks;
} imp_sweep_plan;

/* Parse a plan from text / a file ("-" is stdin). Errors name the line. */
int imp_sweep_plan_parse(imp_sweep_plan *plan, const char *text, const char *what);
int imp_sweep_plan_load(imp_sweep_plan *plan, const char *path);
/* Text of a plan (malloc'd, the caller frees); save writes it atomically. */
int imp_sweep_plan_text(const imp_sweep_plan *plan, char **text);
int imp_sweep_plan_save(const imp_sweep_plan *plan, const char *path);
void imp_sweep_plan_free(imp_sweep_plan *plan);
/* Append a task ("key=value key=value ..."; must have id and strand). */
int imp_sweep_plan_add(imp_sweep_plan *plan, const char *words);

/* A task's setting, or NULL if absent. */
const char *imp_sweep_task_get(const imp_sweep_task *t, const char *key);
/* Typed settings with defaults; a present but malformed or out-of-range
 * value is an error naming the task and the key. */
int imp_sweep_task_int(const imp_sweep_task *t, const char *key, long dflt, long lo, long hi, long *out);
int imp_sweep_task_double(const imp_sweep_task *t, const char *key, double dflt, double lo, double hi,
                          double *out);

/* Task states in an output folder. */
typedef enum imp_sweep_state {
    IMP_SWEEP_PENDING = 0,
    IMP_SWEEP_RUNNING = 1,   /* claimed by a live process (or one on another host) */
    IMP_SWEEP_DONE = 2,
    IMP_SWEEP_STALE = 3      /* claimed by a process of this host that is gone */
} imp_sweep_state;
imp_sweep_state imp_sweep_task_state(const char *dir, const imp_sweep_task *t);

/* Prepare an output folder for a plan: create it, write plan.txt, or check
 * that the plan.txt already there has the same tasks (a different plan in
 * the same folder is refused, naming the first differing task). */
int imp_sweep_prepare(const imp_sweep_plan *plan, const char *dir);

typedef struct imp_sweep_run_opts {
    int threads;        /* training threads per task (default 2) */
    const char *runner; /* who runs (e.g. "rank 1"), recorded in log.jsonl */
    /* Progress of the task being run (may be NULL): one line of text. */
    void (*progress)(void *user, const char *line);
    void *progress_user;
    /* Return non-zero to stop the task being run (it is then left pending). */
    int (*should_stop)(void *user);
    void *stop_user;
} imp_sweep_run_opts;
void imp_sweep_run_opts_default(imp_sweep_run_opts *o);

/* Order in which runners should take the tasks: longest estimated first
 * (ties in plan order). order[] receives n_tasks indices. */
void imp_sweep_order(const imp_sweep_plan *plan, int *order);

/* Run task k if it is neither done nor claimed by a live process. *ran is
 * set to 1 if this call ran it to completion, 0 if it was skipped. A task
 * that fails leaves its claim removed, its message in tasks/<id>/error.txt
 * and returns the status. */
int imp_sweep_run_task(const imp_sweep_plan *plan, int k, const char *dir, const imp_sweep_run_opts *o, int *ran);

/* Source of task indices: returns the next index to try, or -1 when there
 * are none left. The plain runner walks imp_sweep_order; an MPI runner hands
 * out indices from a shared counter. */
typedef int (*imp_sweep_next_fn)(void *user);

typedef struct imp_sweep_summary {
    int ran, skipped, failed;
} imp_sweep_summary;
/* Run every task of the plan not yet done, longest first, in this process. */
int imp_sweep_run_plan(const imp_sweep_plan *plan, const char *dir, const imp_sweep_run_opts *o,
                       imp_sweep_summary *summary);
/* Run tasks from `next` until it returns -1. A failing task is recorded and
 * does not stop the others. */
int imp_sweep_run(const imp_sweep_plan *plan, const char *dir, const imp_sweep_run_opts *o, imp_sweep_next_fn next,
                  void *next_user, imp_sweep_summary *summary);

/* The plan of the constrained-network reproduction (Finzi et al. 2020 figs
 * 5-7). Presets: "full" (CHNN and CLNN on the eight systems of figs 5/7,
 * HNN, DeLaN and NODE on pendulum-chain:3, gyroscope and rotor; 2000 epochs,
 * 800 training trajectories, 100 test trajectories: the reference's
 * settings), "all" (every model on every system), "quick" (pendulum-chain:1,2;
 * CHNN and NODE; 30 epochs, 200 trajectories, 20 test trajectories), "tiny"
 * (seconds, for tests). Every field but the preset overrides it when set
 * (NULL / 0). n_train_list (comma list) makes a data-efficiency plan: each
 * model once per training-set size. Each system also gets its "GT + 1e-4
 * pert" noise-floor task. */
typedef struct imp_sweep_chnn_opts {
    const char *preset;
    const char *systems;      /* comma list */
    const char *models;       /* comma list of chnn, clnn, hnn, delan, node */
    const char *n_train_list; /* comma list of training-set sizes */
    int seeds;                /* 1 */
    int first_seed;           /* 0 */
    int epochs;               /* -1: the preset's */
    int n_train, n_test, hidden; /* 0: the preset's */
    double lr;                /* 0: per-system default (1e-3 rotor, magnet; else 3e-3) */
    int single;               /* 1: training tasks say precision=single (ids end .f32); 0: double */
} imp_sweep_chnn_opts;
void imp_sweep_chnn_opts_default(imp_sweep_chnn_opts *o);
int imp_sweep_plan_chnn(imp_sweep_plan *plan, const imp_sweep_chnn_opts *o);

/* The plan of the CD-Lagrange reproduction (Hochlehnert et al. 2021,
 * section 4 and appendix): the experiments pendulum, ball-touch,
 * ball-notouch, ball-e07, cradle-touch, cradle-notouch, each with its models
 * (cdl, vin, resnet, resnet-contact), one task per experiment x model x seed
 * (the ResNet ignores touch, so its ball and cradle runs are planned once,
 * under the touch experiment). Full: each experiment's epochs (3000 for the
 * pendulum, 2000 otherwise), 3 seeds; quick: 100 epochs, 2 seeds. Fields
 * left 0 / NULL take those defaults. */
typedef struct imp_sweep_cdl_opts {
    int quick;
    int seeds;            /* 0: 3 (2 with quick) */
    int first_seed;       /* 0 */
    int epochs;           /* 0: the experiment's (100 with quick) */
    const char *settings; /* "code" (reference code: lr 1e-2, softplus; default) or "paper" */
    const char *only;     /* comma list of experiment ids; NULL: all */
    int threads;          /* training threads per task written into the plan (0: 1) */
} imp_sweep_cdl_opts;
void imp_sweep_cdl_opts_default(imp_sweep_cdl_opts *o);
int imp_sweep_plan_cdl(imp_sweep_plan *plan, const imp_sweep_cdl_opts *o);

/* The plan of the planar-impact reproduction (Fazeli et al. 2017): coarse
 * tasks, one per table: the evaluation under the stored and under the
 * corrected tangent sign (Tables 1-2, mean errors, figure data), Table 1
 * against the authors' stored impulses (p_true_data.mat beside the data
 * file), and the GP learning curves on the data and on synthetic drops.
 * `data` is the processed data file (data_ellipse.mat); quick: 5 draws
 * instead of 20, Table 2 on 300 impacts, 11x11 start grid, 2 GP splits. */
typedef struct imp_sweep_impact_opts {
    const char *data;     /* required */
    int quick;
    const char *variant;  /* "authors" (default) or "textbook" */
    const char *target;   /* "contact" (default), irb-velocity, irb-momentum, p-data */
    long seed;            /* 2017 */
    int gp;               /* 1 (default): the GP learning-curve tasks too */
} imp_sweep_impact_opts;
void imp_sweep_impact_opts_default(imp_sweep_impact_opts *o);
int imp_sweep_plan_impact(imp_sweep_plan *plan, const imp_sweep_impact_opts *o);

/* The plan of the your-data experiment (docs/your-data.md): CD-Lagrange,
 * ResNetContact and ResNet on compliant-contact data with a touch sensor
 * (impulse simulate compliant-ball), the labels handled by default (auto)
 * and as given, one task per model x labels x seed (strand=your-data; 5
 * tasks a seed), evaluated on held-out trajectories. Fields left 0 take
 * the defaults; imp_sweep_your_data_opts_default sets the others'. */
typedef struct imp_sweep_your_data_opts {
    int quick;               /* 100 epochs and at most 2 seeds (a smoke test) */
    int seeds;               /* 0: 5 */
    int epochs;              /* 0: 2000 (100 with quick) */
    const char *system;      /* "compliant-ball" */
    double restitution;      /* the contact's target restitution, 0.7 */
    double noise;            /* observation noise of the training data, 0.2 */
    int heldout;             /* held-out trajectories per seed, 5 */
    const char *impact_law;  /* CD-Lagrange's: "auto" (the data's default: newton), "paper" or "newton" */
    const char *lr_schedule; /* every model's: "auto" (the data's default: cosine), "constant" or "cosine" */
    int threads;             /* training threads per task written into the plan (0: 1) */
} imp_sweep_your_data_opts;
void imp_sweep_your_data_opts_default(imp_sweep_your_data_opts *o);
int imp_sweep_plan_your_data(imp_sweep_plan *plan, const imp_sweep_your_data_opts *o);

/* The plan of the cube tosses (issue 28, docs/cube.md): for each number of
 * training tosses N and seed, the end-to-end network, MuJoCo with fitted
 * contact parameters (when `mujoco` is set: the peer program was found) and
 * ballistic flight as a reference, each trained on the N training tosses
 * of a random 50/25/25 split of 2N tosses drawn from `data` (all tosses
 * when it has fewer) and scored on its test tosses and, with `test`, on all
 * tosses of that file. One task per model x N x seed (strand=cube). Full:
 * N = 4..256 (doubling), 5 seeds; quick: N = 8, 16, 64, one seed. */
typedef struct imp_sweep_cube_opts {
    const char *data;   /* required: impulse's rigid-body file or the ContactNets file */
    const char *test;   /* NULL: the split's test tosses only */
    const char *tosses; /* comma list of N; NULL: the preset's */
    int seeds;          /* 0: 5 (quick: 1) */
    int quick;
    int steps;          /* end-to-end Adam steps; 0: 4000 */
    int max_evals;      /* the fit budget of mujoco and rigid-identified (training-set rollouts); 0: 200 and 100 */
    int mujoco;         /* plan the mujoco tasks */
} imp_sweep_cube_opts;
void imp_sweep_cube_opts_default(imp_sweep_cube_opts *o);
int imp_sweep_plan_cube(imp_sweep_plan *plan, const imp_sweep_cube_opts *o);
/* The MuJoCo peer program: env IMPULSE_CUBE_MUJOCO (empty: none), else
 * cube_mujoco beside the running program. 1 and its path if it is there
 * and executable, else 0 (path then holds where it was looked for). */
int imp_sweep_cube_peer(char *path, size_t cap);
/* The cube results of a sweep folder as JSON lines (malloc'd; "" when
 * none): one object per finished task and test set with model, tosses,
 * seed, test ("split" or the test file's name), test_tosses,
 * position_error_pct, rotation_error_deg, penetration_pct, seconds. */
int imp_sweep_cube_rows(const char *dir, char **jsonl);

/* The plan of the contact comparisons (issues 24 and 25, docs/contact.md):
 * parts (only: a comma list; NULL all) "ball-box" (CD-Lagrange with its e
 * learned per wall, with the per-body touch labels, without them and gated
 * by geometry, against ResNetContact and ResNet on compliant-ball-box, noise
 * 0.05, 24 training and 6 test trajectories; 3 seeds, 200 epochs), "points"
 * (bouncing-points:5, e and mu per contact; 5 seeds, 150 epochs), "disks"
 * (bouncing-disks:5 the same, when the build has that simulator),
 * "constrained" (CHNN, CLNN and NODE without contact on chain-ground:3,
 * chain-ground-elastic:3 and gyroscope-wall, strand=chnn, 100 test
 * trajectories; 5 seeds, 500 epochs), "box-toss" (rigid-identified and the
 * learned box on simulated box tosses, strand=cube with simulate=box-toss;
 * 3 seeds). quick: 2 seeds (1 constrained and box-toss), 30 epochs (10
 * constrained), at most 8 training trajectories (constrained: 10, and 20 test ones), only
 * rigid-identified (minutes). Fields left 0 / NULL take those defaults. */
typedef struct imp_sweep_contact_opts {
    int quick;
    int seeds;        /* 0: each part's */
    int epochs;       /* 0: each part's */
    const char *only; /* comma list of parts; NULL: all */
    int threads;      /* training threads per task written into the plan (0: 1) */
    int box_tosses;   /* training tosses of the box-toss tasks (16) */
} imp_sweep_contact_opts;
void imp_sweep_contact_opts_default(imp_sweep_contact_opts *o);
int imp_sweep_plan_contact(imp_sweep_plan *plan, const imp_sweep_contact_opts *o);
/* The contact results of a sweep folder as JSON lines (malloc'd; "" when
 * none): one object per finished task of the contact plan (part, system,
 * config or model, seed and its numbers: docs/contact.md). */
int imp_sweep_contact_rows(const char *dir, char **jsonl);

/* Report of an output folder: tables (markdown and CSV), results.json,
 * figures, and the list of tasks not done, written into `dir`. The markdown
 * text is also returned (malloc'd) if `markdown` is not NULL. */
int imp_sweep_report(const char *dir, char **markdown);

#ifdef __cplusplus
}
#endif
#endif
