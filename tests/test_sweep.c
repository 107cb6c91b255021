/* The sweep runner: plan parsing and its errors, a tiny plan run to the end,
 * killed (SIGKILL to the whole process group) after its first finished task
 * and resumed, without MPI and under mpirun -np 2: every task finishes
 * exactly once and the merged table equals the uninterrupted run's. */
#define _XOPEN_SOURCE 700
#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/sweep.h"
#include "test.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *cli = IMPULSE_CLI_PATH;

static const char plan_text[] =
    "# a tiny plan: four short trainings and a noise floor\n"
    "task id=p1.chnn.s0 strand=chnn system=pendulum-chain:1 model=chnn seed=0 epochs=6 n_train=24 n_test=3 cost=2\n"
    "task id=p1.chnn.s1 strand=chnn system=pendulum-chain:1 model=chnn seed=1 epochs=6 n_train=24 n_test=3 cost=2\n"
    "task id=p1.hnn.s0 strand=chnn system=pendulum-chain:1 model=hnn seed=0 epochs=6 n_train=24 n_test=3 cost=1\n"
    "\n"
    "task id=p1.hnn.s1 strand=chnn system=pendulum-chain:1 model=hnn seed=1 epochs=6 n_train=24 n_test=3 cost=1\n"
    "task id=p1.gt-pert strand=chnn system=pendulum-chain:1 model=gt-pert n_test=3\n";

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int run(const char *cmd)
{
    int s = system(cmd);
    return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
}

static char *slurp(const char *path)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    if (imp_read_file(path, &buf, &len)) return NULL;
    return (char *)buf;
}

static int count_lines(const char *path)
{
    char *t = slurp(path);
    int n = 0;
    for (char *p = t; p && *p; p++) n += *p == '\n';
    free(t);
    return n;
}

/* How many "done" lines log.jsonl has for task id. */
static int done_count(const char *dir, const char *id)
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
static int kill_session(pid_t sid)
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
static int run_and_kill_at(const char *cmd, const char *when, int lines)
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
static int run_and_kill(const char *cmd, const char *dir)
{
    char log[512];
    snprintf(log, sizeof log, "%s/log.jsonl", dir);
    return run_and_kill_at(cmd, log, 1);
}

static int run_and_kill_when(const char *cmd, const char *file) { return run_and_kill_at(cmd, file, 0); }

static void check_complete(const char *dir, const char *ref_table, const char *what)
{
    imp_sweep_plan plan;
    if (imp_sweep_plan_parse(&plan, plan_text, "plan")) {
        CHECK_MSG(0, "%s", imp_last_error());
        return;
    }
    for (int i = 0; i < plan.n_tasks; i++) {
        int n = done_count(dir, plan.tasks[i].id);
        CHECK_MSG(n == 1, "%s: task %s finished %d times", what, plan.tasks[i].id, n);
        CHECK(imp_sweep_task_state(dir, &plan.tasks[i]) == IMP_SWEEP_DONE);
    }
    imp_sweep_plan_free(&plan);
    char cmd[1024], path[512];
    snprintf(cmd, sizeof cmd, "%s sweep report %s > %s/report.out", cli, dir, dir);
    CHECK(run(cmd) == 0);
    snprintf(path, sizeof path, "%s/chnn_results.json", dir);
    char *table = slurp(path);
    CHECK_MSG(table && ref_table && !strcmp(table, ref_table), "%s: merged table differs from the uninterrupted run's",
              what);
    free(table);
}

static void test_plan_errors(void)
{
    imp_sweep_plan p;
    CHECK_FAILS(imp_sweep_plan_parse(&p, "task strand=chnn model=chnn\n", "x"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "line 1") && strstr(imp_last_error(), "no id"));
    CHECK_FAILS(imp_sweep_plan_parse(&p, "task id=a strand=chnn\ntask id=a strand=chnn\n", "x"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "line 2") && strstr(imp_last_error(), "already used on line 1"));
    CHECK_FAILS(imp_sweep_plan_parse(&p, "task id=a strand=chnn oops\n", "x"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "'oops' is not key=value"));
    CHECK_FAILS(imp_sweep_plan_parse(&p, "task id=../x strand=chnn\n", "x"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "id '../x'"));
    CHECK_FAILS(imp_sweep_plan_parse(&p, "task id=a\n", "x"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "no strand"));
    CHECK_FAILS(imp_sweep_plan_parse(&p, "# nothing\n\n", "x"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "no tasks"));
    CHECK_FAILS(imp_sweep_plan_parse(&p, "tusk id=a strand=chnn\n", "x"), IMP_ERR_FORMAT);
    CHECK_FAILS(imp_sweep_plan_parse(&p, "task id=a strand=chnn cost=-1\n", "x"), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "cost=-1"));
    /* round trip */
    CHECK_OK(imp_sweep_plan_parse(&p, plan_text, "x"));
    char *text = NULL;
    CHECK_OK(imp_sweep_plan_text(&p, &text));
    imp_sweep_plan q;
    CHECK_OK(imp_sweep_plan_parse(&q, text, "y"));
    CHECK(q.n_tasks == 5 && p.n_tasks == 5);
    int order[5];
    imp_sweep_order(&p, order);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3 && order[4] == 4);
    free(text);
    imp_sweep_plan_free(&q);
    imp_sweep_plan_free(&p);
    /* the reproduction's plan: all eight systems, baselines where needed */
    imp_sweep_chnn_opts co;
    imp_sweep_chnn_opts_default(&co);
    CHECK_OK(imp_sweep_plan_chnn(&p, &co));
    int chnn = 0, hnn = 0, floors = 0;
    for (int i = 0; i < p.n_tasks; i++) {
        const char *m = imp_sweep_task_get(&p.tasks[i], "model");
        chnn += !strcmp(m, "chnn");
        hnn += !strcmp(m, "hnn");
        floors += !strcmp(m, "gt-pert");
    }
    CHECK(chnn == 8 && floors == 8 && hnn == 3);
    imp_sweep_plan_free(&p);
    co.preset = "huge";
    CHECK_FAILS(imp_sweep_plan_chnn(&p, &co), IMP_ERR_INVALID);
    co.preset = "quick";
    co.models = "chnn,nope";
    CHECK_FAILS(imp_sweep_plan_chnn(&p, &co), IMP_ERR_NOT_FOUND);
    co.models = "chnn";
    co.n_train_list = "20,x";
    CHECK_FAILS(imp_sweep_plan_chnn(&p, &co), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "'x'"));
    co.n_train_list = "20,200";
    co.seeds = 2;
    CHECK_OK(imp_sweep_plan_chnn(&p, &co));
    CHECK(p.n_tasks == 2 * (1 + 2 * 2)); /* per system: a floor, 2 sizes x 2 seeds */
    CHECK(imp_sweep_task_get(&p.tasks[4], "n_train") && !strcmp(imp_sweep_task_get(&p.tasks[4], "n_train"), "200"));
    CHECK(!imp_sweep_task_get(&p.tasks[4], "precision"));
    imp_sweep_plan_free(&p);
    /* single precision: every training task says so, under its own ids */
    co.n_train_list = NULL;
    co.single = 1;
    CHECK_OK(imp_sweep_plan_chnn(&p, &co));
    int single = 0, trained = 0;
    for (int i = 0; i < p.n_tasks; i++) {
        const char *m = imp_sweep_task_get(&p.tasks[i], "model"), *prec = imp_sweep_task_get(&p.tasks[i], "precision");
        if (!strcmp(m, "gt-pert")) continue;
        trained++;
        single += prec && !strcmp(prec, "single") && strstr(p.tasks[i].id, ".f32.");
    }
    CHECK(trained > 0 && single == trained);
    imp_sweep_plan_free(&p);
}

/* A task that fails is reported with its message and does not stop the
 * others; a different plan in the same folder is refused. */
static void test_failures(void)
{
    system("rm -rf sweep_fail");
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p,
                                  "task id=bad strand=chnn system=pendulum-chain:1 model=chnn epochs=-3\n"
                                  "task id=nosys strand=chnn system=no-such model=chnn\n"
                                  "task id=ok strand=chnn system=pendulum-chain:1 model=gt-pert n_test=2\n"
                                  "task id=prec strand=chnn system=pendulum-chain:1 model=chnn precision=half\n",
                                  "x"));
    CHECK_OK(imp_sweep_prepare(&p, "sweep_fail"));
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    int ran = 0;
    CHECK_FAILS(imp_sweep_run_task(&p, 0, "sweep_fail", &o, &ran), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "epochs=-3"));
    char *err = slurp("sweep_fail/tasks/bad/error.txt");
    CHECK(err && strstr(err, "epochs=-3"));
    free(err);
    CHECK(access("sweep_fail/tasks/bad/claim", F_OK) != 0);
    CHECK_FAILS(imp_sweep_run_task(&p, 3, "sweep_fail", &o, &ran), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "precision=half"));
    CHECK_OK(imp_sweep_run_task(&p, 2, "sweep_fail", &o, &ran));
    CHECK(ran == 1);
    CHECK_OK(imp_sweep_run_task(&p, 2, "sweep_fail", &o, &ran));
    CHECK(ran == 0);
    char *md = NULL;
    CHECK_OK(imp_sweep_report("sweep_fail", &md));
    CHECK(md && strstr(md, "1 of 4 tasks done") && strstr(md, "| nosys | pending |") && strstr(md, "no-such"));
    free(md);
    imp_sweep_plan_free(&p);
    CHECK_OK(imp_sweep_plan_parse(&p, "task id=other strand=chnn system=rotor model=chnn\n", "x"));
    CHECK_FAILS(imp_sweep_prepare(&p, "sweep_fail"), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "different plan"));
    imp_sweep_plan_free(&p);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_fail/plan.txt --out sweep_fail --task 4 2>sweep_fail/err.txt", cli);
    CHECK(run(cmd) == 1);
    err = slurp("sweep_fail/err.txt");
    CHECK(err && strstr(err, "impulse sweep: error: run: --task 4 out of range"));
    free(err);
}

int main(void)
{
    /* the reports' figures are matplotlib's business (tested in test_report):
     * here they would only cost time */
    setenv("IMPULSE_PYTHON", "/nonexistent/python3", 1);
    test_plan_errors();
    test_failures();
    CHECK_OK(imp_write_file_atomic("sweep_plan.txt", plan_text, strlen(plan_text)));
    char cmd[1024];
    /* uninterrupted */
    system("rm -rf sweep_ref sweep_kill sweep_mpi sweep_task");
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_plan.txt --out sweep_ref --threads 1 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s sweep report sweep_ref > /dev/null", cli);
    CHECK(run(cmd) == 0);
    char *ref = slurp("sweep_ref/chnn_results.json");
    CHECK(ref != NULL);
    /* a second run finds everything done and runs nothing */
    int lines = count_lines("sweep_ref/log.jsonl");
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_plan.txt --out sweep_ref --threads 1 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    CHECK(count_lines("sweep_ref/log.jsonl") == lines);
    check_complete("sweep_ref", ref, "uninterrupted");

    /* killed after its first finished task, then resumed */
    snprintf(cmd, sizeof cmd, "exec %s sweep run sweep_plan.txt --out sweep_kill --threads 1 2>/dev/null", cli);
    CHECK_MSG(run_and_kill(cmd, "sweep_kill") == 1, "the run ended before it could be killed");
    CHECK(count_lines("sweep_kill/log.jsonl") < 5);
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_plan.txt --out sweep_kill --threads 1 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    check_complete("sweep_kill", ref, "killed and resumed");

    /* a task killed in the middle of its training continues from its
     * training state, bit-identically */
    static const char long_plan[] = "task id=long strand=chnn system=pendulum-chain:1 model=chnn seed=3 epochs=40 "
                                    "n_train=24 n_test=3 state_every=2\n";
    CHECK_OK(imp_write_file_atomic("sweep_long.txt", long_plan, strlen(long_plan)));
    system("rm -rf sweep_long_ref sweep_long");
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_long.txt --out sweep_long_ref --threads 1 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    snprintf(cmd, sizeof cmd, "exec %s sweep run sweep_long.txt --out sweep_long --threads 1 2>/dev/null", cli);
    CHECK_MSG(run_and_kill_when(cmd, "sweep_long/tasks/long/train_state.npz") == 1,
              "the run ended before its training state was written");
    CHECK(access("sweep_long/tasks/long/result.npz", F_OK) != 0);
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_long.txt --out sweep_long --threads 1 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    unsigned char *ab = NULL, *bb = NULL;
    size_t an = 0, bn = 0;
    CHECK_OK(imp_read_file("sweep_long_ref/tasks/long/model.npz", &ab, &an));
    CHECK_OK(imp_read_file("sweep_long/tasks/long/model.npz", &bb, &bn));
    CHECK_MSG(ab && bb && an == bn && !memcmp(ab, bb, an), "resumed checkpoint differs from the uninterrupted one");
    free(ab);
    free(bb);
    CHECK(access("sweep_long/tasks/long/train_state.npz", F_OK) != 0); /* removed once trained */
    imp_npz *rz = NULL;
    double resumed = 0;
    CHECK_OK(imp_npz_load(&rz, "sweep_long/tasks/long/result.npz"));
    CHECK_MSG(rz && imp_npz_meta(rz) && !imp_json_get_number(imp_npz_meta(rz), "resumed_at_epoch", &resumed) &&
                  resumed > 0,
              "the task was trained again from the start (resumed at epoch %g)", resumed);
    imp_npz_free(rz);

    /* precision=single reaches the training: the same task in double and in
     * single gives another loss, and the result says which it was */
    static const char prec_plan[] = "task id=d strand=chnn system=pendulum-chain:1 model=chnn seed=1 epochs=2 n_train=8 "
                                    "n_test=2\n"
                                    "task id=f strand=chnn system=pendulum-chain:1 model=chnn seed=1 epochs=2 n_train=8 "
                                    "n_test=2 precision=single\n";
    CHECK_OK(imp_write_file_atomic("sweep_prec.txt", prec_plan, strlen(prec_plan)));
    system("rm -rf sweep_prec");
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_prec.txt --out sweep_prec --threads 1 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    double loss[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        char path[64], prec[16] = "";
        snprintf(path, sizeof path, "sweep_prec/tasks/%s/result.npz", k ? "f" : "d");
        CHECK_OK(imp_npz_load(&rz, path));
        CHECK(rz && imp_npz_meta(rz) && !imp_json_get_number(imp_npz_meta(rz), "final_train_loss", &loss[k]) &&
              !imp_json_get_string(imp_npz_meta(rz), "precision", prec, sizeof prec) &&
              !strcmp(prec, k ? "single" : "double"));
        imp_npz_free(rz);
    }
    CHECK_MSG(loss[0] != loss[1] && fabs(loss[0] - loss[1]) < 1e-3 * fabs(loss[0]),
              "double and single losses %.17g %.17g: want close but not equal", loss[0], loss[1]);

    /* scheduler array form: one task by index */
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_plan.txt --out sweep_task --task 2 --threads 1 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    CHECK(done_count("sweep_task", "p1.hnn.s0") == 1 && count_lines("sweep_task/log.jsonl") == 1);

#if !TEST_UNDER_ASAN
    /* under MPI (OpenMPI's leaks at exit would fail a sanitizer build) */
    snprintf(cmd, sizeof cmd, "%s info | grep -q 'sweep runner: MPI' && command -v mpirun >/dev/null", cli);
    if (run(cmd) == 0) {
        const char *mpi = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
                          "mpirun -np 2 --oversubscribe";
        snprintf(cmd, sizeof cmd, "%s %s sweep run sweep_plan.txt --out sweep_mpi --threads 1 2>/dev/null", mpi, cli);
        CHECK_MSG(run_and_kill(cmd, "sweep_mpi") == 1, "the MPI run ended before it could be killed");
        CHECK(count_lines("sweep_mpi/log.jsonl") < 5);
        CHECK(run(cmd) == 0);
        check_complete("sweep_mpi", ref, "MPI, killed and resumed");
        char *log = slurp("sweep_mpi/log.jsonl");
        CHECK_MSG(log && strstr(log, "\"runner\":\"rank 0\"") && strstr(log, "\"runner\":\"rank 1\""),
                  "both ranks ran tasks");
        free(log);
    } else {
        fprintf(stderr, "test_sweep: this build has no MPI; the mpirun part is not run\n");
    }
#endif
    free(ref);
    TEST_MAIN_END();
}
