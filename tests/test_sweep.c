/* The sweep runner: plan parsing and its errors, a tiny plan run to the end,
 * killed (SIGKILL to the whole process group) after its first finished task
 * and resumed, without MPI and under mpirun -np 2: every task finishes
 * exactly once and the merged table equals the uninterrupted run's. */
#define _XOPEN_SOURCE 700
#include "impulse/cdl.h"
#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/sweep.h"
#include "test.h"
#include "sweep_test.h"

#include <fcntl.h>
#include <sys/stat.h>
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

static void check_complete(const char *dir, const char *ref_table, const char *what)
{
    check_once(dir, what);
    char cmd[1024], path[512];
    snprintf(cmd, sizeof cmd, "%s sweep report %s > %s/report.out", cli, dir, dir);
    CHECK(run(cmd) == 0);
    snprintf(path, sizeof path, "%s/chnn_results.json", dir);
    char *table = slurp(path);
    CHECK_MSG(table && ref_table && !strcmp(table, ref_table), "%s: merged table differs from the uninterrupted run's",
              what);
    free(table);
}

/* Line endings: LF, CRLF and lone CR alike, the last line with or without
 * one (a last line ending in '\r' alone hung the parser). Each parse runs in
 * a child with an alarm, so a hang fails the test instead of stalling it. */
static void test_plan_line_endings(void)
{
    const char *texts[] = {
        "task id=a strand=chnn\ntask id=b strand=chnn",
        "task id=a strand=chnn\r\ntask id=b strand=chnn\r\n",
        "task id=a strand=chnn\r\ntask id=b strand=chnn\r",
        "task id=a strand=chnn\rtask id=b strand=chnn\r",
        "# plan\r\rtask id=a strand=chnn\r\n\r\ntask id=b strand=chnn\r\r\r",
        "task id=a strand=chnn\n\rtask id=b strand=chnn\n\r",
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5);
            imp_sweep_plan p;
            int st = imp_sweep_plan_parse(&p, texts[k], "x");
            int ok = !st && p.n_tasks == 2 && !strcmp(p.tasks[0].id, "a") && !strcmp(p.tasks[1].id, "b") &&
                     !strcmp(imp_sweep_task_get(&p.tasks[1], "strand"), "chnn");
            if (!st) imp_sweep_plan_free(&p);
            _exit(ok ? 0 : 1);
        }
        int ws = 0;
        waitpid(pid, &ws, 0);
        CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "plan %zu: %s", k,
                  WIFSIGNALED(ws) ? "hung (alarm)" : "not the two tasks a and b");
    }
    /* line numbers count CR, CRLF and LF lines alike */
    imp_sweep_plan p;
    CHECK_FAILS(imp_sweep_plan_parse(&p, "task id=a strand=chnn\rtask id=a strand=chnn\r", "x"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "line 2") && strstr(imp_last_error(), "already used on line 1"));
    CHECK_FAILS(imp_sweep_plan_parse(&p, "# x\r\n\rtask id=a strand=chnn oops\r", "x"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "line 3") && strstr(imp_last_error(), "'oops' is"));
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
    int chnn = 0, hnn = 0, floors = 0, e200 = 0;
    for (int i = 0; i < p.n_tasks; i++) {
        const char *m = imp_sweep_task_get(&p.tasks[i], "model"), *e = imp_sweep_task_get(&p.tasks[i], "epochs");
        chnn += !strcmp(m, "chnn");
        hnn += !strcmp(m, "hnn");
        floors += !strcmp(m, "gt-pert");
        /* the paper's 200-epoch HNN and DeLaN on the rotor, beside the 2000 */
        if (e && !strcmp(e, "200")) {
            e200++;
            CHECK(!strcmp(imp_sweep_task_get(&p.tasks[i], "system"), "rotor") && (!strcmp(m, "hnn") || !strcmp(m, "delan")));
        }
    }
    CHECK_MSG(chnn == 8 && floors == 8 && hnn == 4 && e200 == 2, "chnn %d floors %d hnn %d e200 %d", chnn, floors, hnn,
              e200);
    imp_sweep_plan_free(&p);
    co.preset = "huge";
    CHECK_FAILS(imp_sweep_plan_chnn(&p, &co), IMP_ERR_INVALID);
    co.preset = "quick";
    co.models = "chnn,nope";
    CHECK_FAILS(imp_sweep_plan_chnn(&p, &co), IMP_ERR_NOT_FOUND);
    /* the constrained strand's ResNet has no column in the figures' report */
    co.models = "chnn,resnet";
    CHECK_FAILS(imp_sweep_plan_chnn(&p, &co), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "resnet") && strstr(imp_last_error(), "reproduce contact"));
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
    /* a task of the same id with other settings */
    CHECK_OK(imp_sweep_plan_parse(&p, "task id=ok strand=chnn system=pendulum-chain:1 model=gt-pert n_test=3\n", "x"));
    CHECK_FAILS(imp_sweep_prepare(&p, "sweep_fail"), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "task 'ok' has other settings"), "%s", imp_last_error());
    imp_sweep_plan_free(&p);
    /* another cost is not another setting (it only orders the tasks) */
    CHECK_OK(imp_sweep_plan_parse(&p, "task id=ok strand=chnn system=pendulum-chain:1 model=gt-pert n_test=2 cost=99\n",
                                  "x"));
    CHECK_OK(imp_sweep_prepare(&p, "sweep_fail"));
    imp_sweep_plan_free(&p);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_fail/plan.txt --out sweep_fail --task 4 2>sweep_fail/err.txt", cli);
    CHECK(run(cmd) == 1);
    err = slurp("sweep_fail/err.txt");
    CHECK(err && strstr(err, "impulse sweep: error: run: --task 4 out of range"));
    free(err);
}

/* A claim file `text` (possibly empty) whose last change was `age` seconds ago. */
static void write_claim(const char *path, const char *text, int age)
{
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
    struct timespec ts[2];
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= age;
    ts[1] = ts[0];
    CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

/* A claim left empty or unreadable by a runner killed between creating and
 * writing it is stale once a few seconds old (it kept its task from ever
 * running); a fresh one is another runner's claim being written. */
static void test_empty_claim(void)
{
    system("rm -rf sweep_claim");
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p, "task id=ok strand=chnn system=pendulum-chain:1 model=gt-pert n_test=2\n", "x"));
    CHECK_OK(imp_sweep_prepare(&p, "sweep_claim"));
    CHECK(system("mkdir -p sweep_claim/tasks/ok") == 0);
    const char *claim = "sweep_claim/tasks/ok/claim";
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    int ran = -1;
    /* being written: left alone */
    write_claim(claim, "", 0);
    CHECK(imp_sweep_task_state("sweep_claim", &p.tasks[0]) == IMP_SWEEP_RUNNING);
    CHECK_OK(imp_sweep_run_task(&p, 0, "sweep_claim", &o, &ran));
    CHECK(ran == 0 && access(claim, F_OK) == 0);
    /* empty and a minute old: stale, the task runs */
    write_claim(claim, "", 60);
    CHECK(imp_sweep_task_state("sweep_claim", &p.tasks[0]) == IMP_SWEEP_STALE);
    CHECK_OK(imp_sweep_run_task(&p, 0, "sweep_claim", &o, &ran));
    CHECK(ran == 1 && access(claim, F_OK) != 0 && access("sweep_claim/tasks/ok/result.npz", F_OK) == 0);
    /* unreadable (no "host pid") and old: stale too, from the command line */
    CHECK(system("rm -f sweep_claim/tasks/ok/result.npz") == 0);
    write_claim(claim, "\x01garbage", 60);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s sweep run sweep_claim/plan.txt --out sweep_claim 2>sweep_claim/err.txt", cli);
    CHECK(run(cmd) == 0);
    CHECK(access("sweep_claim/tasks/ok/result.npz", F_OK) == 0 && access(claim, F_OK) != 0);
    imp_sweep_plan_free(&p);
}

/* A CD-Lagrange task's lr_schedule: absent is the constant rate (plans
 * written before the key existed keep their runs), as the explicit
 * constant; cosine trains otherwise; an unknown name fails naming it. */
static void test_cdl_lr_schedule(void)
{
    system("rm -rf sweep_lr");
    imp_sweep_plan p;
    const char *common = "strand=cdl experiment=ball-e07 model=resnet seed=0 epochs=3";
    char text[1024];
    snprintf(text, sizeof text,
             "task id=none %s\ntask id=constant %s lr_schedule=constant\ntask id=cosine %s lr_schedule=cosine\n"
             "task id=bad %s lr_schedule=step\n", common, common, common, common);
    CHECK_OK(imp_sweep_plan_parse(&p, text, "x"));
    CHECK_OK(imp_sweep_prepare(&p, "sweep_lr"));
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    int ran = 0;
    double *params[3] = {NULL, NULL, NULL};
    size_t n[3] = {0, 0, 0};
    const char *ids[3] = {"none", "constant", "cosine"};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(imp_sweep_run_task(&p, k, "sweep_lr", &o, &ran));
        char path[256];
        snprintf(path, sizeof path, "sweep_lr/tasks/%s/model.npz", ids[k]);
        imp_model *m = NULL;
        CHECK_OK(imp_model_load(&m, path));
        if (!m) continue;
        n[k] = m->n_params;
        params[k] = malloc(n[k] * sizeof(double));
        memcpy(params[k], m->params, n[k] * sizeof(double));
        imp_model_free(m);
    }
    CHECK(params[0] && params[1] && params[2] && n[0] == n[1] && n[0] == n[2]);
    if (params[0] && params[1] && params[2]) {
        CHECK_MSG(!memcmp(params[0], params[1], n[0] * sizeof(double)), "a task without lr_schedule is not constant");
        CHECK(memcmp(params[0], params[2], n[0] * sizeof(double)) != 0);
    }
    for (int k = 0; k < 3; k++) free(params[k]);
    CHECK_FAILS(imp_sweep_run_task(&p, 3, "sweep_lr", &o, &ran), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "lr_schedule=step"), "%s", imp_last_error());
    imp_sweep_plan_free(&p);
}

/* A chnn training that diverges (here: a guard of factor 2 at lr 0.1, which
 * trips at epoch 3 with epoch 1 the best): by default its best epoch's
 * model is evaluated and the result says "diverged", as does the report's
 * cell and note; a task stopped during that evaluation keeps the mark when
 * it is evaluated again from model.npz; diverged=fail fails the task
 * naming the divergence; the new keys' bad values fail naming the key. */
static void test_diverged(void)
{
    system("rm -rf sweep_dv");
    const char *common = "strand=chnn system=pendulum-chain:1 model=hnn seed=0 epochs=8 n_train=400 n_test=3 lr=0.1 "
                         "warmup=0 clip=0 diverge_factor=2";
    char text[2048];
    snprintf(text, sizeof text,
             "task id=keep %s\ntask id=fail %s diverged=fail\ntask id=bad1 %s diverged=maybe\n"
             "task id=bad2 %s skip_factor=1\ntask id=bad3 %s max_substeps=0\ntask id=bad4 %s contact_substeps=65\n",
             common, common, common, common, common, common);
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p, text, "x"));
    CHECK_OK(imp_sweep_prepare(&p, "sweep_dv"));
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    o.threads = 1;
    int ran = 0;
    CHECK_OK(imp_sweep_run_task(&p, 0, "sweep_dv", &o, &ran));
    CHECK(ran == 1);
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, "sweep_dv/tasks/keep/result.npz"));
    if (!z) return;
    const char *meta = imp_npz_meta(z);
    char stop[32] = "", msg[600] = "";
    double best = -1, geo = NAN;
    CHECK_OK(imp_json_get_string(meta, "stop", stop, sizeof stop));
    CHECK_MSG(!strcmp(stop, "diverged"), "stop=%s", stop);
    CHECK_OK(imp_json_get_string(meta, "diverged", msg, sizeof msg));
    CHECK_MSG(strstr(msg, "training diverged at epoch"), "%s", msg);
    CHECK_OK(imp_json_get_number(meta, "best_epoch", &best));
    CHECK(best >= 1);
    CHECK_OK(imp_json_get_number(meta, "mean_geo_rel_err", &geo));
    CHECK(isfinite(geo) && geo > 0);
    double loss = NAN, secs = NAN;
    CHECK_OK(imp_json_get_number(meta, "final_train_loss", &loss));
    CHECK_OK(imp_json_get_number(meta, "train_seconds", &secs));
    CHECK(isfinite(loss) && loss > 0 && secs > 0);
    imp_npz_free(z);
    /* stopped during evaluation: result gone, model and note kept */
    CHECK(access("sweep_dv/tasks/keep/diverged.txt", F_OK) == 0);
    CHECK(unlink("sweep_dv/tasks/keep/result.npz") == 0);
    CHECK_OK(imp_sweep_run_task(&p, 0, "sweep_dv", &o, &ran));
    CHECK(ran == 1);
    CHECK_OK(imp_npz_load(&z, "sweep_dv/tasks/keep/result.npz"));
    if (!z) return;
    stop[0] = 0;
    double geo2 = NAN;
    CHECK_OK(imp_json_get_string(imp_npz_meta(z), "stop", stop, sizeof stop));
    CHECK_OK(imp_json_get_number(imp_npz_meta(z), "mean_geo_rel_err", &geo2));
    CHECK(!strcmp(stop, "diverged") && geo2 == geo);
    /* and how the training went, as the first evaluation said (its
     * final_train_loss was missing after such a restart) */
    double loss2 = NAN, secs2 = NAN;
    CHECK_OK(imp_json_get_number(imp_npz_meta(z), "final_train_loss", &loss2));
    CHECK_OK(imp_json_get_number(imp_npz_meta(z), "train_seconds", &secs2));
    CHECK_MSG(loss2 == loss && secs2 == secs, "after the restart: final_train_loss %g (was %g), train_seconds %g (was %g)",
              loss2, loss, secs2, secs);
    imp_npz_free(z);
    CHECK_FAILS(imp_sweep_run_task(&p, 1, "sweep_dv", &o, &ran), IMP_ERR_NUMERIC);
    CHECK_MSG(strstr(imp_last_error(), "training diverged at epoch"), "%s", imp_last_error());
    CHECK(access("sweep_dv/tasks/fail/result.npz", F_OK) != 0);
    CHECK_FAILS(imp_sweep_run_task(&p, 2, "sweep_dv", &o, &ran), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "diverged=maybe"), "%s", imp_last_error());
    CHECK_FAILS(imp_sweep_run_task(&p, 3, "sweep_dv", &o, &ran), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "skip_factor"), "%s", imp_last_error());
    CHECK_FAILS(imp_sweep_run_task(&p, 4, "sweep_dv", &o, &ran), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "max_substeps=0"), "%s", imp_last_error());
    CHECK_FAILS(imp_sweep_run_task(&p, 5, "sweep_dv", &o, &ran), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "contact_substeps=65"), "%s", imp_last_error());
    char *md = NULL;
    CHECK_OK(imp_sweep_report("sweep_dv", &md));
    CHECK_MSG(md && strstr(md, "(diverged; best epoch)") && strstr(md, "- keep: training diverged at epoch"), "%s",
              md ? md : "(null)");
    free(md);
    imp_sweep_plan_free(&p);
}

/* Runs every task of plan_text in dir (made anew) on one thread and
 * returns the report's markdown (NULL after a failed check). */
static char *run_all(const char *plan_text, const char *dir, int n_tasks)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    system(cmd);
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p, plan_text, "x"));
    CHECK_OK(imp_sweep_prepare(&p, dir));
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    o.threads = 1;
    int ran = 0;
    for (int k = 0; k < n_tasks; k++) CHECK_OK(imp_sweep_run_task(&p, k, dir, &o, &ran));
    char *md = NULL;
    CHECK_OK(imp_sweep_report(dir, &md));
    imp_sweep_plan_free(&p);
    return md;
}

/* Tasks of one system and model at two training budgets are two rows of
 * the table, never one cell averaged over both; the noise floor goes with
 * the system's first row. */
static void test_budget_rows(void)
{
    char *md = run_all("task id=f strand=chnn system=pendulum-chain:1 model=gt-pert n_test=2\n"
                       "task id=e1 strand=chnn system=pendulum-chain:1 model=chnn epochs=1 n_train=8 n_test=2\n"
                       "task id=e2 strand=chnn system=pendulum-chain:1 model=chnn epochs=2 n_train=8 n_test=2\n",
                       "sweep_budget", 3);
    const char *r1 = md ? strstr(md, "\n| pendulum-chain:1 | ") : NULL, *r2 = md ? strstr(md, "\n| pendulum-chain:1, 2 epochs | ") : NULL;
    CHECK_MSG(r1 && r2 && !strstr(md, "(2 seeds)"), "%s", md ? md : "(null)");
    /* the floor (the last column) in the first row; the second has none */
    if (r1 && r2) {
        const char *e1 = strchr(r1 + 1, '\n'), *e2 = strchr(r2 + 1, '\n');
        CHECK(e1 && e1 - r1 > 6 && strncmp(e1 - 6, " | - |", 6) != 0);
        CHECK(e2 && e2 - r2 > 6 && strncmp(e2 - 6, " | - |", 6) == 0);
    }
    free(md);
}

/* A plan over training-set sizes gets fig 6's table, each cell beside the
 * paper's value where the paper has that size (2-pendulum CHNN: 5.5e-2 at
 * 10, 4.5e-2 at 20; none at 12). */
static void test_data_efficiency(void)
{
    char *md = run_all("task id=a strand=chnn system=pendulum-chain:2 model=chnn epochs=1 n_train=10 n_test=2\n"
                       "task id=b strand=chnn system=pendulum-chain:2 model=chnn epochs=1 n_train=20 n_test=2\n"
                       "task id=c strand=chnn system=pendulum-chain:2 model=chnn epochs=1 n_train=12 n_test=2\n",
                       "sweep_eff", 3);
    const char *t = md ? strstr(md, "### Data efficiency, pendulum-chain:2") : NULL;
    const char *r10 = t ? strstr(t, "\n| 10 | ") : NULL, *r20 = t ? strstr(t, "\n| 20 | ") : NULL;
    const char *r12 = t ? strstr(t, "\n| 12 | ") : NULL;
    CHECK_MSG(t && r10 && r20 && r12 && strstr(t, "Ours trained for 1 epochs"), "%s", md ? md : "(null)");
    if (r10 && r20 && r12) {
        const char *e10 = strchr(r10 + 1, '\n'), *e20 = strchr(r20 + 1, '\n'), *e12 = strchr(r12 + 1, '\n');
        CHECK(e10 && e10 - r10 > 10 && !strncmp(e10 - 10, " / 0.055 |", 10));
        CHECK(e20 && e20 - r20 > 10 && !strncmp(e20 - 10, " / 0.045 |", 10));
        CHECK(e12 && !memchr(r12, '/', (size_t)(e12 - r12)));
    }
    free(md);
}

/* The report says what its figures show: the bar chart's caption promises the paper's values only when it
 * draws them (n_train = 800), the constraint plot says why HNN (generalised coordinates) is not on it, and the
 * scaling table stops at the ranks that can still help (two tasks: at most 2 ranks). */
static void test_report_captions(void)
{
    char *md = run_all("task id=c strand=chnn system=pendulum-chain:1 model=chnn epochs=1 n_train=8 n_test=2\n"
                       "task id=h strand=chnn system=pendulum-chain:1 model=hnn epochs=1 n_train=8 n_test=2\n",
                       "sweep_captions", 2);
    CHECK_MSG(md && strstr(md, "relative error of this sweep") && !strstr(md, "the paper's (bottom)"), "%s",
              md ? md : "(null)");
    CHECK_MSG(md && strstr(md, "meet the constraints by construction"), "%s", md ? md : "(null)");
    const char *time = md ? strstr(md, "## Time") : NULL;
    CHECK_MSG(time && strstr(time, "\n| 2 | ") && !strstr(time, "\n| 4 | ") && !strstr(time, "\n| 256 | "), "%s",
              time ? time : "(no time section)");
    free(md);
}

int main(void)
{
    /* the reports' figures are matplotlib's business (tested in test_report):
     * here they would only cost time */
    setenv("IMPULSE_PYTHON", "/nonexistent/python3", 1);
    test_plan_line_endings();
    test_plan_errors();
    test_failures();
    test_empty_claim();
    test_cdl_lr_schedule();
    test_diverged();
    test_budget_rows();
    test_data_efficiency();
    test_report_captions();
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
    /* the time section lists every finished task with its training threads */
    char *rmd = slurp("sweep_ref/report.md");
    CHECK_MSG(rmd && strstr(rmd, "Per task") && strstr(rmd, "| p1.chnn.s1 | ") && strstr(rmd, " | 1 | - | 2 |\n"),
              "report.md lacks the per-task durations");
    free(rmd);
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
    run_killed_in_training(cli, long_plan, "sweep_long");
    unsigned char *ab = NULL, *bb = NULL;
    size_t an = 0, bn = 0;
    CHECK_OK(imp_read_file("sweep_long_ref/tasks/long/model.npz", &ab, &an));
    CHECK_OK(imp_read_file("sweep_long/tasks/long/model.npz", &bb, &bn));
    CHECK_MSG(ab && bb && an == bn && !memcmp(ab, bb, an), "resumed checkpoint differs from the uninterrupted one");
    free(ab);
    free(bb);
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
