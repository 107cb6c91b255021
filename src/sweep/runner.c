/* The sweep runner: task folders, exclusive claims, results written
 * atomically, a log line per finished task. See include/impulse/sweep.h. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct {
    const char *strand;
    sweep_exec_fn exec;
} executors[] = {
    {"chnn", sweep_exec_chnn},
    {"cdl", sweep_exec_cdl},
    {"impact", sweep_exec_impact},
    {"your-data", sweep_exec_your_data},
    {"cube", sweep_exec_cube},
    {"contact", sweep_exec_contact},
};

int sweep_train_epoch(const imp_epoch_info *info, void *user)
{
    sweep_progress *p = user;
    if (p->o->progress && (info->epoch % p->every == 0 || info->epoch == 1)) {
        char line[256];
        snprintf(line, sizeof line, "%s: epoch %d/%d loss %.4g (%.0f s)", p->t->id, info->epoch, info->epochs,
                 info->loss, info->seconds);
        p->o->progress(p->o->progress_user, line);
    }
    return p->o->should_stop && p->o->should_stop(p->o->stop_user);
}

void sweep_meta_begin(imp_json *j, const imp_sweep_task *t)
{
    imp_json_init(j);
    imp_json_begin_object(j);
    imp_json_kv_string(j, "strand", imp_sweep_task_get(t, "strand"));
    imp_json_kv_string(j, "id", t->id);
}

int sweep_meta_set(imp_npz *result, imp_json *j)
{
    imp_json_end_object(j);
    int st = imp_json_text(j) ? imp_npz_set_meta(result, imp_json_text(j)) : imp_fail(IMP_ERR_NOMEM, "out of memory");
    imp_json_free(j);
    return st;
}

void imp_sweep_run_opts_default(imp_sweep_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 2;
    o->runner = "main";
}

static int task_path(char *out, size_t cap, const char *dir, const imp_sweep_task *t, const char *file)
{
    int n = file ? snprintf(out, cap, "%s/tasks/%s/%s", dir, t->id, file) : snprintf(out, cap, "%s/tasks/%s", dir, t->id);
    if (n < 0 || (size_t)n >= cap) return imp_fail(IMP_ERR_INVALID, "sweep: path of task '%s' too long", t->id);
    return IMP_OK;
}

int sweep_make_dir(const char *path)
{
    if (mkdir(path, 0777) && errno != EEXIST) return imp_fail(IMP_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    struct stat sb;
    if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) return imp_fail(IMP_ERR_IO, "%s: not a directory", path);
    return IMP_OK;
}

static void host_name(char *h, size_t cap)
{
    if (gethostname(h, cap - 1)) snprintf(h, cap, "unknown");
    h[cap - 1] = 0;
}

/* A claim names its holder "host pid". Alive: another host (we cannot
 * tell), or a process of this host that exists. */
static int claim_read(const char *path, char *host, size_t cap, long *pid)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    if (imp_read_file(path, &buf, &len)) {
        imp_clear_error();
        return -1;
    }
    char fmt[32];
    snprintf(fmt, sizeof fmt, "%%%zus %%ld", cap - 1);
    int ok = sscanf((const char *)buf, fmt, host, pid) == 2;
    free(buf);
    return ok ? 0 : -1;
}

/* A claim that cannot be read as "host pid" is being written (created and
 * written at once, microseconds apart) while younger than this; older, its
 * writer died between creating and writing it and the claim is stale. */
#define CLAIM_WRITE_GRACE_S 10

static int claim_abandoned(const char *path)
{
    struct stat sb;
    if (stat(path, &sb)) return 0;
    double age = difftime(time(NULL), sb.st_mtime);
    return age >= CLAIM_WRITE_GRACE_S || age <= -CLAIM_WRITE_GRACE_S; /* far in the future: a bad clock */
}

static int claim_alive(const char *host, long pid)
{
    char me[256];
    host_name(me, sizeof me);
    if (strcmp(host, me)) return 1;
    if (pid <= 0) return 0;
    if (kill((pid_t)pid, 0) && errno == ESRCH) return 0;
    /* a zombie (killed, not yet reaped: its parent died too and this
     * machine's init may be slow to reap) is gone as well */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *rp = strrchr(buf, ')');
    return !(rp && rp[1] == ' ' && rp[2] == 'Z');
}

imp_sweep_state imp_sweep_task_state(const char *dir, const imp_sweep_task *t)
{
    char path[4096];
    if (task_path(path, sizeof path, dir, t, "result.npz")) return IMP_SWEEP_PENDING;
    if (access(path, F_OK) == 0) return IMP_SWEEP_DONE;
    if (task_path(path, sizeof path, dir, t, "claim")) return IMP_SWEEP_PENDING;
    char host[256];
    long pid;
    if (claim_read(path, host, sizeof host, &pid))
        return access(path, F_OK) ? IMP_SWEEP_PENDING : claim_abandoned(path) ? IMP_SWEEP_STALE : IMP_SWEEP_RUNNING;
    return claim_alive(host, pid) ? IMP_SWEEP_RUNNING : IMP_SWEEP_STALE;
}

/* Take the claim of a task: 1 if taken, 0 if someone else holds it. */
static int claim_take(const char *path)
{
    char me[256], text[300];
    host_name(me, sizeof me);
    int n = snprintf(text, sizeof text, "%s %ld\n", me, (long)getpid());
    for (int attempt = 0; attempt < 3; attempt++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0) {
            ssize_t w = write(fd, text, (size_t)n);
            close(fd);
            if (w != n) {
                unlink(path);
                return imp_fail(IMP_ERR_IO, "%s: cannot write the claim", path);
            }
            return 1;
        }
        if (errno != EEXIST) return imp_fail(IMP_ERR_IO, "%s: %s", path, strerror(errno));
        char host[256] = "";
        long pid = 0;
        int unread = claim_read(path, host, sizeof host, &pid) != 0;
        if (unread && !claim_abandoned(path)) return 0; /* being written: someone else's */
        if (!unread && claim_alive(host, pid)) return 0;
        /* Stale: move it aside (only one taker's rename succeeds), check that
         * what was moved is the stale claim we read, then try again. */
        char aside[4200];
        snprintf(aside, sizeof aside, "%s.stale.%ld", path, (long)getpid());
        if (rename(path, aside)) continue;
        char h2[256];
        long p2;
        int same = unread ? claim_read(aside, h2, sizeof h2, &p2) != 0 && claim_abandoned(aside)
                          : !claim_read(aside, h2, sizeof h2, &p2) && !strcmp(h2, host) && p2 == pid;
        if (!same && link(aside, path) == 0) { /* a fresh claim: put it back */
            unlink(aside);
            return 0;
        }
        unlink(aside);
    }
    return 0;
}

/* The same task: the same id and settings. The cost is not a setting (it
 * only orders the tasks), so a plan whose estimates were recalibrated still
 * matches the folder's. Called both ways, so a key of either side only
 * must be the cost. */
static int same_plan_task(const imp_sweep_task *a, const imp_sweep_task *b)
{
    if (strcmp(a->id, b->id)) return 0;
    for (int i = 0; i < a->n_keys; i++) {
        if (!strcmp(a->keys[i], "cost")) continue;
        const char *v = imp_sweep_task_get(b, a->keys[i]);
        if (!v || strcmp(v, a->values[i])) return 0;
    }
    return 1;
}

int imp_sweep_prepare(const imp_sweep_plan *plan, const char *dir)
{
    if (!plan || !dir) return imp_fail(IMP_ERR_INVALID, "sweep: NULL");
    int st = sweep_make_dir(dir);
    if (st) return st;
    char path[4096];
    snprintf(path, sizeof path, "%s/tasks", dir);
    if ((st = sweep_make_dir(path))) return st;
    snprintf(path, sizeof path, "%s/plan.txt", dir);
    if (access(path, F_OK) == 0) {
        imp_sweep_plan old;
        st = imp_sweep_plan_load(&old, path);
        if (st) return imp_fail_context(st, "%s holds another sweep's plan that cannot be read", dir);
        /* the same tasks (by id, every key equal), or more of them (more
         * seeds, systems...: the folder's plan grows), or some of them (run
         * just those); a task of the same id with other keys, or a plan
         * sharing only part of its tasks, is refused */
        int common = 0;
        for (int i = 0; i < plan->n_tasks && !st; i++) {
            const imp_sweep_task *t = &plan->tasks[i], *o = NULL;
            for (int k = 0; k < old.n_tasks && !o; k++)
                if (!strcmp(old.tasks[k].id, t->id)) o = &old.tasks[k];
            if (!o) continue;
            common++;
            if (!same_plan_task(t, o) || !same_plan_task(o, t))
                st = imp_fail(IMP_ERR_INVALID,
                              "%s holds a different plan (task '%s' has other settings there): use another --out", dir,
                              t->id);
        }
        if (!st && common < old.n_tasks && common < plan->n_tasks)
            st = imp_fail(IMP_ERR_INVALID,
                          "%s holds a different plan (%d of its %d tasks are in this plan of %d): use another --out",
                          dir, common, old.n_tasks, plan->n_tasks);
        if (!st && common == old.n_tasks && plan->n_tasks > old.n_tasks) st = imp_sweep_plan_save(plan, path);
        imp_sweep_plan_free(&old);
        if (st) return st;
    } else {
        st = imp_sweep_plan_save(plan, path);
        if (st) return st;
    }
    for (int i = 0; i < plan->n_tasks; i++) {
        if ((st = task_path(path, sizeof path, dir, &plan->tasks[i], NULL))) return st;
        if ((st = sweep_make_dir(path))) return st;
    }
    return IMP_OK;
}

void imp_sweep_order(const imp_sweep_plan *plan, int *order)
{
    int n = plan->n_tasks;
    for (int i = 0; i < n; i++) order[i] = i;
    /* insertion sort, stable: plans are small */
    for (int i = 1; i < n; i++) {
        int k = order[i], j = i - 1;
        while (j >= 0 && plan->tasks[order[j]].cost < plan->tasks[k].cost) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = k;
    }
}

static void log_line(const char *dir, const imp_sweep_task *t, const imp_sweep_run_opts *o, const char *status,
                     double seconds)
{
    char path[4096], host[256];
    snprintf(path, sizeof path, "%s/log.jsonl", dir);
    host_name(host, sizeof host);
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "id", t->id);
    imp_json_kv_string(&j, "status", status);
    imp_json_kv_string(&j, "runner", o->runner ? o->runner : "");
    imp_json_kv_string(&j, "host", host);
    imp_json_kv_int(&j, "pid", (long long)getpid());
    imp_json_kv_number(&j, "seconds", seconds);
    imp_json_end_object(&j);
    const char *text = imp_json_text(&j);
    if (text) {
        /* one write of a short line with O_APPEND: lines of concurrent
         * runners do not interleave */
        size_t n = strlen(text);
        char *line = malloc(n + 2);
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0666);
        if (line && fd >= 0) {
            memcpy(line, text, n);
            line[n] = '\n';
            if (write(fd, line, n + 1) < 0) { /* the log is informative: the result file is what counts */
            }
        }
        if (fd >= 0) close(fd);
        free(line);
    }
    imp_json_free(&j);
}

int imp_sweep_run_task(const imp_sweep_plan *plan, int k, const char *dir, const imp_sweep_run_opts *o, int *ran)
{
    *ran = 0;
    if (!plan || k < 0 || k >= plan->n_tasks) return imp_fail(IMP_ERR_INVALID, "sweep: task index %d out of range", k);
    const imp_sweep_task *t = &plan->tasks[k];
    const char *strand = imp_sweep_task_get(t, "strand");
    sweep_exec_fn exec = NULL;
    for (size_t i = 0; i < sizeof executors / sizeof executors[0]; i++)
        if (!strcmp(executors[i].strand, strand)) exec = executors[i].exec;
    if (!exec) return imp_fail(IMP_ERR_NOT_FOUND, "task '%s': strand '%s' unknown (known: chnn, cdl, impact, your-data, cube, contact)", t->id, strand);
    if (imp_sweep_task_state(dir, t) == IMP_SWEEP_DONE) return IMP_OK;
    char tdir[4096], claim[4096], result[4096], errpath[4096];
    int st = task_path(tdir, sizeof tdir, dir, t, NULL);
    if (!st) st = sweep_make_dir(tdir);
    if (!st) st = task_path(claim, sizeof claim, dir, t, "claim");
    if (!st) st = task_path(result, sizeof result, dir, t, "result.npz");
    if (!st) st = task_path(errpath, sizeof errpath, dir, t, "error.txt");
    if (st) return st;
    int got = claim_take(claim);
    if (got < 0) return got;
    if (!got) return IMP_OK;
    /* done between our check and our claim? */
    if (access(result, F_OK) == 0) {
        unlink(claim);
        return IMP_OK;
    }
    double t0 = imp_time_now();
    imp_npz *z = imp_npz_new();
    st = z ? exec(t, tdir, o, z) : imp_fail(IMP_ERR_NOMEM, "task '%s': out of memory", t->id);
    if (st == SWEEP_STOPPED) {
        imp_npz_free(z);
        unlink(claim);
        return IMP_OK;
    }
    if (!st) st = imp_npz_save(z, result);
    imp_npz_free(z);
    double seconds = imp_time_now() - t0;
    if (st) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s\n", imp_last_error());
        imp_write_file_atomic(errpath, msg, strlen(msg));
        log_line(dir, t, o, "failed", seconds);
        unlink(claim);
        return imp_fail_context(st, "task '%s'", t->id);
    }
    unlink(errpath);
    log_line(dir, t, o, "done", seconds);
    unlink(claim);
    *ran = 1;
    return IMP_OK;
}

int imp_sweep_run(const imp_sweep_plan *plan, const char *dir, const imp_sweep_run_opts *o, imp_sweep_next_fn next,
                  void *next_user, imp_sweep_summary *summary)
{
    imp_sweep_summary s = {0, 0, 0};
    int first_err = IMP_OK;
    char first_msg[1024] = "";
    for (;;) {
        if (o->should_stop && o->should_stop(o->stop_user)) break;
        int k = next(next_user);
        if (k < 0) break;
        int ran = 0;
        int st = imp_sweep_run_task(plan, k, dir, o, &ran);
        if (st) {
            s.failed++;
            if (!first_err) {
                first_err = st;
                snprintf(first_msg, sizeof first_msg, "%s", imp_last_error());
            }
            if (o->progress) o->progress(o->progress_user, imp_last_error());
        } else if (ran) {
            s.ran++;
        } else {
            s.skipped++;
        }
    }
    if (summary) *summary = s;
    if (first_err)
        return imp_fail(first_err, "%d task%s failed (first: %s)", s.failed, s.failed == 1 ? "" : "s", first_msg);
    return IMP_OK;
}

typedef struct walk {
    const int *order;
    int n, pos;
} walk;
static int walk_next(void *user)
{
    walk *w = user;
    return w->pos < w->n ? w->order[w->pos++] : -1;
}

int imp_sweep_run_plan(const imp_sweep_plan *plan, const char *dir, const imp_sweep_run_opts *o,
                       imp_sweep_summary *summary)
{
    if (!plan || !dir || !o) return imp_fail(IMP_ERR_INVALID, "sweep: NULL");
    int *order = malloc((size_t)plan->n_tasks * sizeof(int));
    if (!order) return imp_fail(IMP_ERR_NOMEM, "sweep: out of memory");
    imp_sweep_order(plan, order);
    walk w = {order, plan->n_tasks, 0};
    int st = imp_sweep_run(plan, dir, o, walk_next, &w, summary);
    free(order);
    return st;
}
