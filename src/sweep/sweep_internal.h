/* Internal interface of the sweep runner: one executor per strand. */
#ifndef IMPULSE_SWEEP_INTERNAL_H
#define IMPULSE_SWEEP_INTERNAL_H

#include "impulse/io.h"
#include "impulse/sweep.h"

/* Run task t with its files under task_dir (which exists); put the result
 * (named arrays and a "meta" JSON with the scalar results) into `result`.
 * The runner saves it as task_dir/result.npz once the executor returns OK;
 * SWEEP_STOPPED means the runner asked it to stop (o->should_stop) and the
 * task is left to a later run. */
#define SWEEP_STOPPED 1
typedef int (*sweep_exec_fn)(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o,
                             imp_npz *result);

int sweep_exec_chnn(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result);

/* The strand's report section: appended to md (markdown) and to the JSON
 * array of results; figures written into dir. */
typedef struct sweep_result {
    const imp_sweep_task *task;
    imp_npz *z;          /* result.npz, NULL if the task is not done */
    const char *meta;    /* its meta JSON */
} sweep_result;

int sweep_report_chnn(const char *dir, const sweep_result *res, int n, char **md, size_t *md_len);

/* Append printf-formatted text to a growing buffer. */
int sweep_appendf(char **buf, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
