/* Helpers of the sweep tests (test_sweep.c, test_sweep_repro.c): run a
 * command, read files, count a task's finished runs, and kill a run's whole
 * session at a given moment as a scheduler ending a job does. */
#ifndef IMPULSE_SWEEP_TEST_H
#define IMPULSE_SWEEP_TEST_H

#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/sweep.h"
#include "test.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline int run(const char *cmd)
{
    int s = system(cmd);
    return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
}

/* noinline: GCC 12's -Wdangling-pointer (Release builds) otherwise takes a
 * pointer into the returned text for a pointer to the local `buf` */
__attribute__((noinline)) static char *slurp(const char *path)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    if (imp_read_file(path, &buf, &len)) return NULL;
    return (char *)buf;
}

static inline int count_lines(const char *path)
{
    char *t = slurp(path);
    int n = 0;
    for (char *p = t; p && *p; p++) n += *p == '\n';
    free(t);
    return n;
}

/* How many "done" lines log.jsonl has for task id. */
static inline int done_count(const char *dir, const char *id)
{
    char path[512], key[160];
    snprintf(path, sizeof path, "%s/log.jsonl", dir);
    snprintf(key, sizeof key, "{\"id\":\"%s\",\"status\":\"done\"", id);
    char *t = slurp(path);
    int n = 0;
    for (char *p = t; p && (p = strstr(p, key)); p++) n++;
    free(t);
    return n;
}

/* SIGKILL every process of session sid (mpirun puts each rank in a process
 * group of its own, but they stay in its session); returns how many are
 * left. */
static inline int kill_session(pid_t sid)
{
    DIR *d = opendir("/proc");
    int left = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *rp = strrchr(buf, ')'); /* after the command name */
        char state;
        int ppid, pgrp, session;
        if (!rp || sscanf(rp + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) != 4) continue;
        if (session == sid && state != 'Z') {
            kill((pid_t)atoi(e->d_name), SIGKILL);
            left++;
        }
    }
    if (d) closedir(d);
    return left;
}

/* Start cmd in a session of its own, wait until the file `when` exists
 * (or, with lines > 0, has that many lines), then SIGKILL every process of
 * the session, as a scheduler ending a job does; wait until they are gone.
 * Returns 1 if it was killed mid-way, 0 if the command ended first. */
static inline int run_and_kill_at(const char *cmd, const char *when, int lines)
{
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int killed = 0;
    for (int i = 0; i < 6000; i++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) return 0;
        if (lines > 0 ? count_lines(when) >= lines : access(when, F_OK) == 0) {
            killed = 1;
            break;
        }
        sleep_ms(10);
    }
    kill_session(pid);
    waitpid(pid, NULL, 0);
    for (int i = 0; i < 500 && kill_session(pid) > 0; i++) sleep_ms(10);
    return killed;
}

/* ... after the first finished task of the sweep in dir */
static inline int run_and_kill(const char *cmd, const char *dir)
{
    char log[512];
    snprintf(log, sizeof log, "%s/log.jsonl", dir);
    return run_and_kill_at(cmd, log, 1);
}

static inline int run_and_kill_when(const char *cmd, const char *file) { return run_and_kill_at(cmd, file, 0); }

/* Needs test.h and impulse/sweep.h. */
/* Every task of the plan in dir finished exactly once. */
static inline void check_once(const char *dir, const char *what)
{
    char path[512];
    snprintf(path, sizeof path, "%s/plan.txt", dir);
    imp_sweep_plan plan;
    if (imp_sweep_plan_load(&plan, path)) {
        CHECK_MSG(0, "%s: %s", what, imp_last_error());
        return;
    }
    for (int i = 0; i < plan.n_tasks; i++) {
        int n = done_count(dir, plan.tasks[i].id);
        CHECK_MSG(n == 1, "%s: task %s finished %d times", what, plan.tasks[i].id, n);
        CHECK(imp_sweep_task_state(dir, &plan.tasks[i]) == IMP_SWEEP_DONE);
    }
    imp_sweep_plan_free(&plan);
}

/* A one-task plan (`text`, saved as STEM.txt) run uninterrupted into
 * STEM_ref, then into STEM killed once the task's training state exists
 * (the task not done) and resumed. The callers compare the two. Needs
 * test.h. */
static inline void run_killed_in_training(const char *cli, const char *text, const char *stem)
{
    char cmd[1024], path[512];
    snprintf(path, sizeof path, "%s.txt", stem);
    CHECK_OK(imp_write_file_atomic(path, text, strlen(text)));
    snprintf(cmd, sizeof cmd, "rm -rf %s_ref %s", stem, stem);
    run(cmd);
    snprintf(cmd, sizeof cmd, "%s sweep run %s.txt --out %s_ref --threads 1 2>/dev/null", cli, stem, stem);
    CHECK(run(cmd) == 0);
    snprintf(cmd, sizeof cmd, "exec %s sweep run %s.txt --out %s --threads 1 2>/dev/null", cli, stem, stem);
    snprintf(path, sizeof path, "%s/tasks/long/train_state.npz", stem);
    CHECK_MSG(run_and_kill_when(cmd, path) == 1, "the run ended before its training state was written");
    snprintf(path, sizeof path, "%s/tasks/long/result.npz", stem);
    CHECK(access(path, F_OK) != 0);
    snprintf(cmd, sizeof cmd, "%s sweep run %s.txt --out %s --threads 1 2>/dev/null", cli, stem, stem);
    CHECK(run(cmd) == 0);
    snprintf(path, sizeof path, "%s/tasks/long/train_state.npz", stem);
    CHECK(access(path, F_OK) != 0); /* removed once trained */
}

/* A setting and the words its error must contain. */
typedef struct bad_key {
    const char *words, *needle;
} bad_key;

/* Each of n tasks "task id=badK <common> <bad[k].words>", run in a fresh
 * folder dir, fails before any training (no model.npz), its message naming
 * bad[k].needle. */
static inline void check_bad_keys(const char *dir, const char *common, const bad_key *bad, size_t n)
{
    size_t cap = 256 * (n + 1), len = 0;
    char *text = malloc(cap);
    if (!text) return;
    text[0] = 0;
    for (size_t k = 0; k < n; k++)
        len += (size_t)snprintf(text + len, cap - len, "task id=bad%zu %s %s\n", k, common, bad[k].words);
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p, text, "x"));
    free(text);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    CHECK_OK(imp_sweep_prepare(&p, dir));
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    for (size_t k = 0; k < n; k++) {
        int ran = 1;
        CHECK(imp_sweep_run_task(&p, (int)k, dir, &o, &ran) != IMP_OK && ran == 0);
        CHECK_MSG(strstr(imp_last_error(), bad[k].needle), "%s: %s", bad[k].words, imp_last_error());
        char path[600];
        snprintf(path, sizeof path, "%s/tasks/bad%zu/model.npz", dir, k);
        CHECK_MSG(access(path, F_OK) != 0, "%s: trained before the keys were checked", bad[k].words);
    }
    imp_sweep_plan_free(&p);
}

#endif
