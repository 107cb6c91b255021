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
int cli_sweep(int argc, char **argv);
int cli_plot_log(int argc, char **argv);

/* Strand-specific entry points the generic verbs dispatch to. Each returns
 * CLI_NOT_MINE when the name is not one of its systems/models. */
#define CLI_NOT_MINE 1000
int cli_simulate_chnn(int argc, char **argv, const char *system);
int cli_train_chnn(int argc, char **argv, const char *model);
int cli_eval_chnn(int argc, char **argv, const char *model_kind);
int cli_reproduce_cdl(int argc, char **argv);
int cli_reproduce_chnn(int argc, char **argv);
int cli_reproduce_impact(int argc, char **argv);
/* Gaussian-process impact models and the drop simulator (cli/impact_gp.c),
 * dispatched to by `impulse impact gp-...|learning-curve|drop` and called by
 * `impulse reproduce impact` with the output folder for its learning curves. */
int cli_impact_gp(int argc, char **argv);
int cli_impact_drop(int argc, char **argv);
int cli_reproduce_impact_gp(int argc, char **argv, const char *outdir, int quick);

/* Print "impulse <verb>: error: <imp_last_error()>" and return 1. */
int cli_fail(const char *verb);
/* Print "impulse <verb>: error: <formatted>" and return 1. */
int cli_failf(const char *verb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Strict number parsing for option values; on error they record a message
 * naming the option and return IMP_ERR_INVALID. */
int cli_parse_long(const char *opt, const char *text, long lo, long hi, long *out);
int cli_parse_double(const char *opt, const char *text, double lo, double hi, double *out);

/* Training threads of the constrained-network verbs (`--threads N`): the
 * machines this tool targets have 2 cores. */
#define CLI_DEFAULT_THREADS 2
#define CLI_MAX_THREADS 64

/* Progress lines go to stderr, only when stderr is a terminal or
 * IMPULSE_PROGRESS=1; `--quiet` verbs pass quiet=1. */
int cli_progress_enabled(void);

/* Long verbs (sweeps, reproductions): the first SIGINT/SIGTERM asks to stop
 * after the current unit of work, the second ends the process. */
void cli_catch_stop_signals(void);
int cli_stop_requested(void);

/* Check a trajectory set's contact labels against its motion and handle
 * them (--contact-labels auto | as-given | onset; NULL = auto). The line
 * with the counts (a notice when some labels do not fit the motion, else
 * an info line unless quiet; "" if none) goes into note[cap], for the
 * caller to print once the run has started (an error before that stays
 * the only line). Returns 0 or the exit status of a failure. */
struct imp_trajset;
int cli_handle_labels(const char *verb, struct imp_trajset *ts, const char *mode_name, int quiet, char *note,
                      size_t cap);

#endif
