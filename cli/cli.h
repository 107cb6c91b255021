/* Shared helpers of the command-line tool. The CLI is thin: it parses
 * options, calls the library, and turns a failure into one line on stderr
 * ("impulse VERB: error: <message>") and a non-zero exit. */
#ifndef IMPULSE_CLI_H
#define IMPULSE_CLI_H

#include <stdio.h>
#include "impulse/core.h"

/* Every verb: int cli_<verb>(int argc, char **argv), argv[0] is the verb. */
typedef int (*cli_verb_fn)(int argc, char **argv);

int cli_simulate(int argc, char **argv);
int cli_train(int argc, char **argv);
int cli_eval(int argc, char **argv);
int cli_rollout(int argc, char **argv);
int cli_reproduce(int argc, char **argv);
int cli_impact(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_inspect(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_plot_log(int argc, char **argv);

/* Strand-specific entry points the generic verbs dispatch to. Each returns
 * CLI_NOT_MINE when the name is not one of its systems/models. */
#define CLI_NOT_MINE 1000
int cli_simulate_chnn(int argc, char **argv, const char *system);
/* impulse simulate box-toss (cli/simulate_box.c) */
int cli_simulate_box(int argc, char **argv, const char *system);
int cli_train_chnn(int argc, char **argv, const char *model);
int cli_eval_chnn(int argc, char **argv, const char *model_kind);
int cli_rollout_chnn(int argc, char **argv, const char *model_kind);
/* The model kind named in a checkpoint's meta ("cdl", "chnn", ...), for dispatch;
 * *constrained: 1 for a constrained-strand checkpoint (meta format
 * "impulse-cmodel": its "resnet" is the constrained strand's, not CD-Lagrange's). */
int cli_checkpoint_kind(const char *path, char *kind, size_t cap, int *constrained);
int cli_reproduce_cdl(int argc, char **argv);
int cli_reproduce_chnn(int argc, char **argv);
int cli_reproduce_impact(int argc, char **argv);
int cli_reproduce_your_data(int argc, char **argv);
int cli_reproduce_cube(int argc, char **argv);
int cli_reproduce_contact(int argc, char **argv);
/* Gaussian-process impact models and the drop simulator (cli/impact_gp.c),
 * dispatched to by `impulse impact gp-...|learning-curve|drop`. */
int cli_impact_gp(int argc, char **argv);
int cli_impact_drop(int argc, char **argv);
/* `impulse import` of one rigid body's quaternion states (cli/import_rigid.c);
 * cli_import_is_rigid: FILE is an .npz with `states` (N, 13) and `lengths`. */
int cli_import_rigid(int argc, char **argv);
int cli_import_is_rigid(const char *path);

/* Print "impulse <verb>: error: <imp_last_error()>" and return 1. */
int cli_fail(const char *verb);
/* The notice that n float32 arrays of path were converted to float64 (nothing for n = 0). */
void cli_note_widened(const char *verb, const char *path, int n);
/* Print "impulse <verb>: error: <formatted>" and return 1. */
int cli_failf(const char *verb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- `--json` (docs/json.md): one object on one line on stdout ----
 * cli_json_begin opens it with "verb"; cli_json_print closes it, prints it
 * and frees it (returns 0, or 1 after an error line). A verb whose result
 * file is "-" (stdout) cannot also print JSON there: cli_json_check_output
 * says so (returns 1 after the error line, else 0). */
#include "impulse/io.h"
void cli_json_begin(imp_json *j, const char *verb);
int cli_json_print(imp_json *j, const char *verb);
int cli_json_check_output(const char *verb, int json, const char *out);
/* "key": [x0, x1, ...] (non-finite values as null). */
void cli_json_kv_array(imp_json *j, const char *key, const double *x, int n);
/* A CD-Lagrange model's contact law per contact pair: "restitution",
 * "restitution_source" (learned | fixed) and, with friction, "friction". */
struct imp_model;
void cli_json_contact_law(imp_json *j, const struct imp_model *m);
/* What CD-Lagrange does with each contact pair of g (issue 24's per-pair
 * events): its bodies, normal and offset, when it takes an impulse (its
 * body gated and the pair in reach: within tol and closing; a body's only
 * pair whenever gated) and the rollouts' non-penetration guard; with a model
 * m (may be NULL) its e and mu; min_gap (may be NULL) the lowest gap a set
 * of rollouts reached per pair. Printed to txt, or as "pairs" (an array of
 * objects) into j when j is non-NULL. */
struct imp_contact_geometry;
void cli_contact_pairs(const struct imp_contact_geometry *g, const struct imp_model *m, double tol,
                       const double *min_gap, imp_json *j, FILE *txt);

/* Strict number parsing for option values; on error they record a message
 * naming the option and return IMP_ERR_INVALID. */
int cli_parse_long(const char *opt, const char *text, long lo, long hi, long *out);
int cli_parse_double(const char *opt, const char *text, double lo, double hi, double *out);
/* "A:B" with 0 <= A < B (episodes A..B-1, `--episodes`) */
int cli_parse_range(const char *opt, const char *text, int *a, int *b);
/* "single" (1) or "double" (0) */
int cli_parse_precision(const char *opt, const char *text, int *single);
/* Comma-separated lists ("1.5,0,-2"): at most max items, each checked. */
int cli_parse_double_list(const char *opt, const char *text, double *out, int max, int *n);
int cli_parse_long_list(const char *opt, const char *text, long lo, long hi, long *out, int max, int *n);
/* Exactly n comma-separated finite numbers ("what" describes them). */
int cli_parse_list(const char *opt, const char *text, int n, const char *what, double *out);

/* Training threads of the constrained-network verbs (`--threads N`): the
 * machines this tool targets have 2 cores. */
#define CLI_DEFAULT_THREADS 2
#define CLI_MAX_THREADS 64

/* Progress lines go to stderr, only when stderr is a terminal or
 * IMPULSE_PROGRESS=1; `--quiet` verbs pass quiet=1. */
int cli_progress_enabled(void);

/* ---- a training run (cli/train_run.c) ---- */
#include "impulse/train.h"
typedef struct cli_run {
    const char *verb, *out;
    char log_path[4096], state_path[4096]; /* OUT.log.jsonl (or --log), OUT.state.npz */
    FILE *log;
    int quiet, tty, printed_tty, first_epoch, epochs;
    double every, t_start, last_print;     /* progress lines off a terminal every `every` s */
} cli_run;
/* Open the log (appended to when resuming) and catch SIGINT; prints the
 * error and returns 1 on failure. */
int cli_run_open(cli_run *r, const char *verb, const char *out, const char *log_path, const char *resume,
                 int quiet);
/* imp_epoch_fn: a log line, progress, and stop after Ctrl-C or SIGTERM. */
int cli_run_on_epoch(const imp_epoch_info *info, void *user);
/* After training with status st: save the model through save(path, ctx) to
 * OUT (or a rescue copy in $TMPDIR when OUT cannot be written), print how
 * the run ended, return the exit status (0; 1 failed or diverged; 3 finished
 * far above its best, CLI_EXIT_FAR_ABOVE_BEST; 130 after Ctrl-C or SIGTERM). */
int cli_run_finish(cli_run *r, int st, const imp_train_report *rep, int (*save)(const char *path, void *ctx),
                   void *ctx);
void cli_run_close(cli_run *r);
/* The exit status of a run that finished with its final loss more than
 * IMP_TRAIN_FAR_ABOVE_BEST times its best (the model is saved). */
#define CLI_EXIT_FAR_ABOVE_BEST 3
/* "best" or "last": which epoch's model a run kept (report.kept_epoch). */
const char *cli_run_kept(const imp_train_report *rep);
/* train --json: opens the object with the members every train verb has
 * (model, system, epochs_done, resumed_at, best_epoch, final_loss,
 * best_loss, seconds, end, output: the keys of the checkpoint's meta and of
 * the Python package's Model.report); the caller adds its own and prints it with cli_json_print. */
void cli_run_json(imp_json *j, const cli_run *r, const imp_train_report *rep, const char *model,
                  const char *system);
/* Options every train verb takes (--log, --resume, --checkpoint-every,
 * --checkpoint-seconds, --diverge-factor): returns 1 if `name` is one (and
 * takes `val`), 0 if not, -1 after printing an error. */
typedef struct cli_run_opts {
    const char *log, *resume;
    int checkpoint_every;
    double checkpoint_seconds, diverge_factor;
    int keep; /* enum imp_train_keep */
} cli_run_opts;
void cli_run_opts_default(cli_run_opts *o);
int cli_run_option(cli_run_opts *o, const char *verb, const char *name, const char *val);
#define CLI_RUN_USAGE                                                                                      \
    "  --log FILE           per-epoch JSON lines (default OUT.log.jsonl)\n"                                  \
    "  --checkpoint-every N   training state OUT.state.npz every N epochs (default: by time)\n"             \
    "  --checkpoint-seconds S  ... and every S seconds (default 60; 0: off); also at the end\n"            \
    "  --resume STATE       continue a run from its state file (same command otherwise);\n"              \
    "                       the result is bit-identical to an uninterrupted run\n"                        \
    "  --diverge-factor X   stop when the epoch loss exceeds X times the best (default 1000;\n"           \
    "                       0: only NaN/Inf), keeping the best model; exit status 1\n"                    \
    "  --keep best|last     the model saved: the best epoch's (lowest loss; default) or the last\n"      \
    "                       epoch's; a run that ends more than 10 times above its best loss\n"          \
    "                       saves it and exits with status 3\n"                                           \
    "  --json               one JSON object on stdout at the end (docs/json.md)\n"                         \
    "  Ctrl-C or SIGTERM stops after the current epoch, saves the best model and the state (exit 130).\n"
/* Set the hooks from the options and the run. */
void cli_run_hooks(const cli_run_opts *o, cli_run *r, imp_train_hooks *h, imp_train_report *rep, int epochs);

/* Long verbs (sweeps, reproductions): the first SIGINT/SIGTERM asks to stop
 * after the current unit of work, the second ends the process. */
void cli_catch_stop_signals(void);
int cli_stop_requested(void);

/* A sweep about to run in this process (cli/sweep.c): prepare the output
 * folder for the plan, catch the stop signals, and fill the run options
 * (threads per task; progress lines on stderr when enabled; stop on a
 * signal). Returns 0 or the exit status of a failure. */
struct imp_sweep_plan;
struct imp_sweep_run_opts;
int cli_sweep_start(const char *verb, const struct imp_sweep_plan *plan, const char *dir, int threads,
                    struct imp_sweep_run_opts *o);
/* A reproduction as a sweep: --plan FILE writes the plan; else run it in dir
 * with `jobs` processes, print the report (exit 130 when stopped). */
int cli_reproduce_sweep(const char *verb, struct imp_sweep_plan *plan, const char *plan_out, const char *dir,
                        int threads, int jobs);
/* Its first half: run the plan's tasks in dir with `jobs` processes and say
 * how many are done (0, or the exit status of a failure). */
int cli_reproduce_sweep_run(const char *verb, struct imp_sweep_plan *plan, const char *dir, int threads, int jobs);
/* --json: run the plan as cli_reproduce_sweep_run, print the JSON lines
 * rows(dir) gives, write the report (0, 130 when stopped, or the exit
 * status of a failure). */
int cli_reproduce_sweep_json(const char *verb, struct imp_sweep_plan *plan, const char *dir, int threads, int jobs,
                             int (*rows)(const char *dir, char **jsonl));

/* Check a trajectory set's contact labels against its motion and handle
 * them (--contact-labels auto | as-given | onset; NULL = auto). The line
 * with the counts (a notice when some labels do not fit the motion, else
 * an info line unless quiet; "" if none) goes into note[cap], for the
 * caller to print once the run has started (an error before that stays
 * the only line). Returns 0 or the exit status of a failure. */
struct imp_trajset;
int cli_handle_labels(const char *verb, struct imp_trajset *ts, const char *mode_name, int quiet, char *note,
                      size_t cap);

/* the help of eval and rollout: both strands' options (cli/eval.c, cli/rollout.c) */
void cli_eval_usage(FILE *f);
void cli_rollout_usage(FILE *f);

/* A constrained-strand dataset's meta (docs/data-format.md): opens the JSON
 * object in j with the keys every writer gives (format, tool, version,
 * system, system_file and system_text for a file, d, n_points, n_bodies,
 * n_constraint_rows); the caller adds its own. */
struct imp_csys;
void cli_chnn_data_meta(imp_json *j, const char *tool, const struct imp_csys *s, const char *system_file);
/* Close j as z's meta and save z to out (atomically) unless st; frees j and
 * z; returns the status. */
int cli_npz_save_with_meta(imp_npz *z, imp_json *j, int st, const char *out);

/* impulse import for the constrained strand (cli/import_chnn.c) */
struct imp_import_opts;
struct imp_import_notes;
int cli_import_is_constrained(const char *name);
/* the notices of what an import computed or assumed (velocities, dt, cut) */
void cli_import_notes_print(const char *in, const struct imp_import_notes *nt, double dt, int steps);
int cli_import_chnn(const char *in, struct imp_import_opts *o, const char *system_file, const char *out, int json);

#endif
