/* `impulse train` as a run that survives: kill -9 at several moments and
 * --resume give the same checkpoint bytes as an uninterrupted run; Ctrl-C
 * stops after the current epoch keeping the best model; a divergence exits
 * non-zero keeping the best model; a file-size limit loses nothing and
 * leaves no temporary file; the JSON-lines log has one line per epoch. */
#define _DEFAULT_SOURCE /* forkpty */
#include "impulse/impulse.h"
#include "test.h"

#include <dirent.h>
#include <pty.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DIR_ "train_cli_tmp"

static unsigned char *slurp(const char *path, size_t *n)
{
    unsigned char *d = NULL;
    if (imp_read_file(path, &d, n)) return NULL;
    return d;
}

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *da = slurp(a, &na), *db = slurp(b, &nb);
    int same = da && db && na == nb && !memcmp(da, db, na);
    free(da);
    free(db);
    return same;
}

static int count_temps(void)
{
    DIR *d = opendir(DIR_);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) n++;
    if (d) closedir(d);
    return n;
}

/* 1 if the log's lines are epochs 1, 2, ..., n exactly, once each. */
static int log_epochs_are(const char *path, int n)
{
    size_t len;
    unsigned char *d = slurp(path, &len);
    int e = 0;
    const char *p = (const char *)d;
    while (p && *p) {
        const char *at = strstr(p, "{\"epoch\":");
        int v;
        if (at != p || sscanf(at, "{\"epoch\":%d", &v) != 1 || v != e + 1) break;
        e++;
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    int ok = p && !*p && e == n;
    free(d);
    return ok;
}

static int count_lines_of(const char *path)
{
    size_t n;
    unsigned char *d = slurp(path, &n);
    int lines = 0;
    for (size_t i = 0; d && i < n; i++) lines += d[i] == '\n';
    free(d);
    return lines;
}

/* Start the tool with `args` (space-separated), stderr to DIR_/err.txt;
 * fsize > 0 sets RLIMIT_FSIZE with SIGXFSZ ignored. */
static pid_t start(const char *args, long fsize)
{
    static char buf[2048];
    char *argv[64];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", args);
    argv[n++] = (char *)IMPULSE_CLI_PATH;
    for (char *t = strtok(buf, " "); t && n < 63; t = strtok(NULL, " ")) argv[n++] = t;
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = freopen(DIR_ "/err.txt", "w", stderr);
        (void)f;
        if (!freopen("/dev/null", "w", stdout)) _exit(126);
        setenv("IMPULSE_PROGRESS", "0", 1);
        setenv("TMPDIR", DIR_, 1);
        if (fsize > 0) {
            signal(SIGXFSZ, SIG_IGN);
            struct rlimit rl = {(rlim_t)fsize, (rlim_t)fsize};
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        execv(IMPULSE_CLI_PATH, argv);
        _exit(127);
    }
    return pid;
}

static int finish(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void read_err(char *err, size_t cap)
{
    FILE *f = fopen(DIR_ "/err.txt", "r");
    size_t n = f ? fread(err, 1, cap - 1, f) : 0;
    err[n] = '\0';
    if (f) fclose(f);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#define TRAIN "train cdl --data " DIR_ "/ball.npz --epochs 60 --hidden 64 --seed 3 --checkpoint-every 1"

static void test_kill_resume(void)
{
    CHECK(finish(start(TRAIN " -o " DIR_ "/ref.npz", 0)) == 0);
    CHECK(count_lines_of(DIR_ "/ref.npz.log.jsonl") == 60);
    CHECK(access(DIR_ "/ref.npz.state.npz", F_OK) != 0); /* removed after a complete run */
    /* kill -9 at several moments; each restart resumes from the state if one exists */
    unsigned seed = 12345;
    int kills = 0, done = 0, resumes = 0;
    for (int attempt = 0; attempt < 30 && !done; attempt++) {
        int resume = access(DIR_ "/m.npz.state.npz", F_OK) == 0;
        int before = resume ? count_lines_of(DIR_ "/m.npz.log.jsonl") : 0; /* a fresh run truncates the log */
        resumes += resume;
        pid_t pid = start(resume ? TRAIN " -o " DIR_ "/m.npz --resume " DIR_ "/m.npz.state.npz"
                                 : TRAIN " -o " DIR_ "/m.npz", 0);
        int reaped = 0, status = 0;
        if (kills < 8) {
            /* after 1..5 more epochs (log lines) of this session, plus up to 30 ms:
             * kills land at epoch ends, inside epochs and inside state writes */
            seed = seed * 1103515245u + 12345u;
            int want = before + 1 + (int)((seed >> 16) % 5);
            while (!reaped && count_lines_of(DIR_ "/m.npz.log.jsonl") < want) {
                reaped = waitpid(pid, &status, WNOHANG) == pid;
                sleep_ms(2);
            }
            if (!reaped) sleep_ms((long)(seed >> 20) % 30);
            if (!reaped && kill(pid, SIGKILL) == 0) kills++;
        }
        int rc = reaped ? (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) : finish(pid);
        if (rc == 0) done = 1;
        else CHECK_MSG(rc == 128 + SIGKILL, "exit %d", rc);
    }
    printf("kill -9 at %d moments, %d resumes\n", kills, resumes);
    fflush(stdout);
    CHECK(done);
    CHECK_MSG(resumes >= 5, "only %d resumes", resumes);
    CHECK_MSG(kills >= 5, "only %d kills landed", kills);
    CHECK_MSG(same_file(DIR_ "/ref.npz", DIR_ "/m.npz"), "resumed checkpoint differs after %d kills", kills);
    /* the log as an uninterrupted run's: the epochs run again after each
     * resume replace those logged after the state was written */
    CHECK_MSG(log_epochs_are(DIR_ "/m.npz.log.jsonl", 60), "the log has %d lines, not epochs 1..60 once each",
              count_lines_of(DIR_ "/m.npz.log.jsonl"));
    CHECK(count_temps() == 0);
}

/* Ctrl-C (SIGINT) and SIGTERM (a scheduler ending a job) alike: stop after
 * the current epoch, save the best model and the state, exit 130. */
static void test_stop_signal(int sig)
{
    system("rm -f " DIR_ "/int.npz*");
    pid_t pid = start("train cdl --data " DIR_ "/ball.npz --epochs 100000 --hidden 64 -o " DIR_ "/int.npz", 0);
    sleep_ms(700);
    double t0 = imp_time_now();
    kill(pid, sig);
    int rc = finish(pid);
    double waited = imp_time_now() - t0;
    char err[4096];
    read_err(err, sizeof err);
    CHECK_MSG(rc == 130, "signal %d: exit %d: %s", sig, rc, err);
    CHECK_MSG(waited < 2.0, "took %.2f s to stop", waited);
    CHECK_MSG(strstr(err, "interrupted after epoch") && strstr(err, "best model") && strstr(err, "--resume"), "%s",
              err);
    imp_model *m = NULL;
    CHECK_OK(imp_model_load(&m, DIR_ "/int.npz"));
    imp_model_free(m);
    CHECK(access(DIR_ "/int.npz.state.npz", F_OK) == 0);
    int lines = count_lines_of(DIR_ "/int.npz.log.jsonl");
    CHECK(lines > 0 && lines < 100000);
}

static void test_diverge(void)
{
    pid_t pid = start("train cdl --data " DIR_ "/ball.npz --epochs 200 --lr 10 -o " DIR_ "/div.npz", 0);
    int rc = finish(pid);
    char err[4096];
    read_err(err, sizeof err);
    CHECK_MSG(rc == 1 && strstr(err, "error: training diverged at epoch") && strstr(err, "smaller learning rate") &&
              strstr(err, "div.npz"), "exit %d: %s", rc, err);
    imp_model *m = NULL;
    CHECK_OK(imp_model_load(&m, DIR_ "/div.npz")); /* the best model, not the diverged one */
    imp_trajset ts;
    CHECK_OK(imp_trajset_load(&ts, DIR_ "/ball.npz"));
    imp_eval_result r;
    if (m) CHECK_OK(imp_model_evaluate(m, &ts, 1, &r, NULL, NULL, NULL));
    if (m) CHECK_MSG(r.rmse < 100, "rmse %g", r.rmse);
    imp_model_free(m);
    imp_trajset_free(&ts);
}

static void test_file_limit(void)
{
    /* a good model already there must survive a failed run */
    CHECK(finish(start("train cdl --data " DIR_ "/ball.npz --epochs 2 --hidden 64 -o " DIR_ "/full.npz", 0)) == 0);
    size_t n0;
    unsigned char *before = slurp(DIR_ "/full.npz", &n0);
    pid_t pid = start("train cdl --data " DIR_ "/ball.npz --epochs 3 --hidden 64 --seed 9 --quiet -o " DIR_ "/full.npz", 4096);
    int rc = finish(pid);
    char err[4096];
    read_err(err, sizeof err);
    CHECK_MSG(rc == 1 && strstr(err, "File too large") && strstr(err, "full.npz") && strstr(err, "no rescue copy") &&
              strchr(err, '\n') != NULL && strchr(err, '\n') == strrchr(err, '\n'), "exit %d: %s", rc, err);
    size_t n1;
    unsigned char *after = slurp(DIR_ "/full.npz", &n1);
    CHECK(before && after && n0 == n1 && !memcmp(before, after, n0));
    free(before);
    free(after);
    CHECK(count_temps() == 0);
}

/* An output that cannot be written: the model goes to $TMPDIR and the one
 * error line says where. */
static void test_rescue(void)
{
    int rc = finish(start("train cdl --data " DIR_ "/ball.npz --epochs 2 --hidden 16 --quiet --log " DIR_
                          "/rescue.log -o " DIR_ "/no_such_dir/m.npz", 0));
    char err[4096];
    read_err(err, sizeof err);
    const char *at = strstr(err, "saved to " DIR_ "/impulse-rescue-");
    CHECK_MSG(rc == 1 && at && strchr(err, '\n') == strrchr(err, '\n'), "exit %d: %s", rc, err);
    if (!at) return;
    char path[512];
    snprintf(path, sizeof path, "%s", at + strlen("saved to "));
    path[strcspn(path, " \n")] = '\0';
    imp_model *m = NULL;
    CHECK_OK(imp_model_load(&m, path));
    imp_model_free(m);
    unlink(path);
}

/* A stale temporary file of a killed writer is removed by the next write. */
static void test_stale_temp(void)
{
    FILE *f = fopen(DIR_ "/x.npz.tmp.999999999.0", "w");
    if (f) fclose(f);
    double v = 1;
    CHECK_OK(imp_npy_save_f64(DIR_ "/x.npz", 1, (size_t[]){1}, &v));
    CHECK(access(DIR_ "/x.npz.tmp.999999999.0", F_OK) != 0);
}

/* rollout runs every model kind eval accepts: a constrained network too;
 * and refuses data sampled at another step than the model's. */
static void test_rollout(void)
{
    CHECK(finish(start("simulate pendulum-chain:2 --trajectories 6 --seed 2 -o " DIR_ "/pc.npz", 0)) == 0);
    CHECK(finish(start("train chnn --data " DIR_ "/pc.npz --epochs 2 --hidden 8 --chunks 6 --batch 3 --quiet -o " DIR_
                       "/ch.npz", 0)) == 0);
    CHECK(count_lines_of(DIR_ "/ch.npz.log.jsonl") == 2);
    int rc = finish(start("rollout --model " DIR_ "/ch.npz --data " DIR_ "/pc.npz --trajectory 1 --steps 20 -o " DIR_
                          "/roll.npz", 0));
    char err[4096];
    read_err(err, sizeof err);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, err);
    imp_npz *z = NULL;
    const double *st = NULL;
    size_t sh[4] = {0, 0, 0, 0};
    CHECK_OK(imp_npz_load(&z, DIR_ "/roll.npz"));
    /* z: (steps + 1, x/v, points, d), the layout of the trajectory files */
    if (z) CHECK_OK(imp_npz_get_f64(z, "z", 4, (size_t[]){21, 2, 2, 2}, &st, sh));
    imp_ctraj data;
    char sys[64];
    CHECK_OK(imp_ctraj_load_cartesian(DIR_ "/pc.npz", &data, sys));
    if (st) CHECK(!memcmp(st, data.z + (size_t)data.T * data.dim, 8 * sizeof(double)));
    imp_ctraj_free(&data);
    imp_npz_free(z);
    rc = finish(start("rollout --model " DIR_ "/ch.npz --state 1,0,1,0 --dt 0.03 -o " DIR_ "/roll.npz", 0));
    read_err(err, sizeof err);
    CHECK_MSG(rc == 1 && strstr(err, "--state: needs 8"), "exit %d: %s", rc, err);
    /* a CD-Lagrange model with data at another step */
    CHECK(finish(start("simulate bouncing-ball --dt 0.01 --steps 50 -o " DIR_ "/ball_dt.npz", 0)) == 0);
    rc = finish(start("rollout --model " DIR_ "/ref.npz --data " DIR_ "/ball_dt.npz -o " DIR_ "/roll.npz", 0));
    read_err(err, sizeof err);
    CHECK_MSG(rc == 1 && strstr(err, "dt 0.01 differs from the model's 0.02"), "exit %d: %s", rc, err);
}

/* The last occurrence of needle in s (NULL if none). */
static const char *strrstr_(const char *s, const char *needle)
{
    const char *last = NULL;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) last = p;
    return last;
}

/* A run that finishes far above its best loss (`train chnn --lr 1` on a
 * double pendulum, the guard off: only NaN stops; its epoch losses run
 * 0.14, 0.38, 0.85, 1.4, 1.0, 1.4e6, ..., 1.7e7): the best model is saved, the line
 * says so and the exit status is 3; --keep last saves the last epoch's. A
 * run that ends well says which model it kept. */
#define FAR "train chnn --data " DIR_ "/dp.npz --chunks 100 --epochs 10 --lr 1 --diverge-factor 0 --threads 2 "
static void test_far_above_best(void)
{
    char err[4096];
    CHECK(finish(start("simulate --system-file " IMPULSE_SOURCE_DIR "/systems/double-pendulum.txt --trajectories 100 "
                       "--spread 0.3 -o " DIR_ "/dp.npz", 0)) == 0);
    int rc = finish(start(FAR "-o " DIR_ "/far.npz", 0));
    read_err(err, sizeof err);
    CHECK_MSG(rc == 3 && strstr(err, "error: finished, but the final loss") && strstr(err, "times the best (epoch") &&
              strstr(err, "the best model (epoch") && strstr(err, "far.npz") && strstr(err, "error") == strrstr_(err, "error"),
              "exit %d: %s", rc, err);
    CHECK(access(DIR_ "/far.npz", F_OK) == 0);
    rc = finish(start(FAR "--keep last -o " DIR_ "/far_last.npz", 0));
    read_err(err, sizeof err);
    CHECK_MSG(rc == 3 && strstr(err, "the last model (epoch 10)"), "exit %d: %s", rc, err);
    CHECK_MSG(!same_file(DIR_ "/far.npz", DIR_ "/far_last.npz"), "--keep last saved the best model");
    rc = finish(start("train cdl --data " DIR_ "/ball.npz --epochs 5 --hidden 64 --keep first -o " DIR_ "/x.npz", 0));
    read_err(err, sizeof err);
    CHECK_MSG(rc == 1 && strstr(err, "--keep: 'first'"), "exit %d: %s", rc, err);
    rc = finish(start("train cdl --data " DIR_ "/ball.npz --epochs 5 --hidden 64 -o " DIR_ "/ok.npz", 0));
    read_err(err, sizeof err);
    CHECK_MSG(rc == 0 && strstr(err, "kept the best model (epoch"), "exit %d: %s", rc, err);
}

/* issue 27 item 11: --epochs 0 does not save an untrained model reporting
 * "final loss 0": it says nothing was trained and writes no file. */
static void test_epochs_zero(void)
{
    char err[4096];
    const char *runs[] = {"train cdl --data " DIR_ "/ball.npz --epochs 0 -o " DIR_ "/e0.npz",
                          "train chnn --data " DIR_ "/pc.npz --epochs 0 --hidden 8 -o " DIR_ "/e0.npz"};
    for (int k = 0; k < 2; k++) {
        int rc = finish(start(runs[k], 0));
        read_err(err, sizeof err);
        CHECK_MSG(rc == 0 && strstr(err, "nothing trained, no model written") && !strstr(err, "final loss"),
                  "%s: exit %d: %s", runs[k], rc, err);
        CHECK_MSG(access(DIR_ "/e0.npz", F_OK) != 0 && access(DIR_ "/e0.npz.log.jsonl", F_OK) != 0,
                  "%s wrote a model or a log", runs[k]);
    }
}

/* issue 27 item 18: on an 80-column terminal the progress line fits (it
 * was about 110 characters with the loss's terms and wrapped, so that it
 * could not be rewritten in place and the ETA was cut). Runs the tool on a
 * pseudo-terminal of 80 columns. */
static void test_progress_width(void)
{
    struct winsize ws = {.ws_row = 24, .ws_col = 80};
    int master = -1;
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    CHECK(pid >= 0);
    if (pid < 0) return;
    if (pid == 0) {
        execl(IMPULSE_CLI_PATH, "impulse", "train", "cdl", "--data", DIR_ "/ball.npz", "--epochs", "30", "--hidden",
              "16", "-o", DIR_ "/width.npz", (char *)NULL);
        _exit(127);
    }
    static char buf[1 << 16];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof buf - 1 && (k = read(master, buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)k;
    buf[n] = '\0';
    close(master);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s", status, buf);
    int lines = 0, longest = 0;
    for (char *seg = strtok(buf, "\r\n"); seg; seg = strtok(NULL, "\r\n")) {
        if (!strncmp(seg, "\033[K", 3)) seg += 3;
        if (strncmp(seg, "epoch ", 6)) continue;
        lines++;
        int len = (int)strlen(seg);
        if (len > longest) longest = len;
        CHECK_MSG(strstr(seg, "ETA ") != NULL, "no ETA in '%s'", seg);
    }
    CHECK_MSG(lines >= 1 && longest < 80, "%d progress lines, the longest %d characters", lines, longest);
}

int main(void)
{
    imp_blas_init();
    if (system("rm -rf " DIR_) != 0) return 1; /* leftovers of an earlier run */
    mkdir(DIR_, 0755);
    imp_sim_opts o;
    imp_trajset ts;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.noise = 0.1;
    o.restitution = 0.7;
    o.n_steps = 200;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    CHECK_OK(imp_trajset_save(&ts, DIR_ "/ball.npz"));
    imp_trajset_free(&ts);
    test_stale_temp();
    test_diverge();
    test_far_above_best();
    test_file_limit();
    test_rescue();
    test_stop_signal(SIGINT);
    test_stop_signal(SIGTERM);
    test_kill_resume();
    test_rollout();
    test_epochs_zero();
    test_progress_width();
    TEST_MAIN_END();
}
