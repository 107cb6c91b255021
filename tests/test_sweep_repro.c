/* The reproductions as sweep plans: `reproduce cdl` and `reproduce impact`.
 * Their plans (tasks, the shared ResNet run, errors naming the option), a
 * tiny CD-Lagrange plan and a tiny impact plan run to the end, killed
 * (SIGKILL to the session) after the first finished task and resumed: every
 * task finishes exactly once and the report's tables and the results equal
 * the uninterrupted run's; a CD-Lagrange task killed during its training
 * continues from its training state bit-identically; `reproduce cdl --jobs 2`
 * runs the same plan with two processes. */
#define _XOPEN_SOURCE 700
#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/sweep.h"
#include "test.h"
#include "sweep_test.h"

#include <unistd.h>

static const char *cli = IMPULSE_CLI_PATH;

/* The report's tables (lines starting with '|' before the timing section),
 * without the column headed `drop` (a wall time): what two runs of the same
 * plan must agree on. */
static char *tables_of(const char *dir, const char *drop)
{
    char path[512];
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = slurp(path);
    if (!md) return NULL;
    char *end = strstr(md, "\n## Time");
    if (end) *end = 0;
    size_t cap = strlen(md) + 1, len = 0;
    char *out = calloc(cap, 1);
    int drop_col = -1;
    for (char *ln = md; out && ln && *ln;) {
        char *nl = strchr(ln, '\n');
        if (nl) *nl = 0;
        if (ln[0] == '|') {
            if (strstr(ln, drop)) { /* a header: find the column */
                drop_col = -1;
                int col = 0;
                for (char *p = ln + 1; *p; p++)
                    if (*p == '|') {
                        col++;
                    } else if (!strncmp(p, drop, strlen(drop)) && drop_col < 0) {
                        drop_col = col;
                    }
            }
            int col = 0;
            for (char *p = ln; *p; p++) {
                if (*p == '|') col++;
                if (col - 1 == drop_col && drop_col >= 0 && *p != '|') continue;
                out[len++] = *p;
            }
            out[len++] = '\n';
        } else {
            drop_col = -1;
        }
        ln = nl ? nl + 1 : NULL;
    }
    free(md);
    return out;
}

/* The named arrays of task `id`'s result.npz in two folders are equal
 * bit for bit (entry `skip` of the first array excepted: a wall time). */
static int same_arrays(const char *a, const char *b, const char *id, const char *name, long skip)
{
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/tasks/%s/result.npz", a, id);
    snprintf(pb, sizeof pb, "%s/tasks/%s/result.npz", b, id);
    imp_npz *za = NULL, *zb = NULL;
    int same = 0;
    if (!imp_npz_load(&za, pa) && !imp_npz_load(&zb, pb)) {
        const imp_npy_array *x = imp_npz_find(za, name), *y = imp_npz_find(zb, name);
        same = x && y && x->count == y->count && x->dtype == IMP_F64 && y->dtype == IMP_F64;
        const double *dx = x ? x->data : NULL, *dy = y ? y->data : NULL;
        for (size_t i = 0; same && i < x->count; i++)
            if ((long)i != skip && memcmp(&dx[i], &dy[i], sizeof(double))) same = 0;
    }
    imp_npz_free(za);
    imp_npz_free(zb);
    return same;
}

static void test_plans(void)
{
    imp_sweep_plan p;
    imp_sweep_cdl_opts co;
    imp_sweep_cdl_opts_default(&co);
    CHECK_OK(imp_sweep_plan_cdl(&p, &co));
    /* 16 experiment x model pairs, the no-touch ResNet runs shared: 14 x 3 seeds */
    CHECK_MSG(p.n_tasks == 42, "%d tasks", p.n_tasks);
    int shared = 0, pend_epochs = 0;
    for (int i = 0; i < p.n_tasks; i++) {
        shared += !strcmp(p.tasks[i].id, "ball-notouch.resnet.s0");
        if (!strcmp(p.tasks[i].id, "pendulum.cdl.s2")) pend_epochs = atoi(imp_sweep_task_get(&p.tasks[i], "epochs"));
    }
    CHECK(shared == 0 && pend_epochs == 3000);
    imp_sweep_plan_free(&p);
    co.quick = 1;
    co.only = "ball-notouch";
    CHECK_OK(imp_sweep_plan_cdl(&p, &co));
    /* alone, the no-touch experiment trains its own ResNet; quick: 2 seeds, 100 epochs */
    CHECK(p.n_tasks == 4 && !strcmp(p.tasks[1].id, "ball-notouch.resnet.s0") &&
          !strcmp(imp_sweep_task_get(&p.tasks[1], "epochs"), "100"));
    imp_sweep_plan_free(&p);
    co.only = "pendulum,nope";
    CHECK_FAILS(imp_sweep_plan_cdl(&p, &co), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "'nope'"));
    co.only = NULL;
    co.settings = "fast";
    CHECK_FAILS(imp_sweep_plan_cdl(&p, &co), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "settings 'fast'"));

    imp_sweep_impact_opts io;
    imp_sweep_impact_opts_default(&io);
    CHECK_FAILS(imp_sweep_plan_impact(&p, &io), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "data"));
    io.data = "/some/data_ellipse.mat";
    CHECK_OK(imp_sweep_plan_impact(&p, &io));
    CHECK(p.n_tasks == 5 && !strcmp(imp_sweep_task_get(&p.tasks[0], "convention"), "stored") &&
          !strcmp(imp_sweep_task_get(&p.tasks[2], "kind"), "p-data"));
    imp_sweep_plan_free(&p);
    io.target = "p-data"; /* the tables already use the stored impulses: no separate task */
    io.gp = 0;
    CHECK_OK(imp_sweep_plan_impact(&p, &io));
    CHECK(p.n_tasks == 2);
    imp_sweep_plan_free(&p);
    io.target = "psychic";
    CHECK_FAILS(imp_sweep_plan_impact(&p, &io), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "psychic"));
    /* a task with a bad setting fails naming it */
    CHECK_OK(imp_sweep_plan_parse(&p, "task id=x strand=cdl experiment=moon model=cdl\n", "x"));
    CHECK_OK(imp_sweep_prepare(&p, "repro_bad"));
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    int ran = 0;
    CHECK_FAILS(imp_sweep_run_task(&p, 0, "repro_bad", &o, &ran), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "experiment=moon"));
    imp_sweep_plan_free(&p);
}

/* Run the plan in ref (uninterrupted) and in kill (killed after its first
 * finished task, then resumed); the tables must agree. */
static void run_kill_resume(const char *plan, const char *ref, const char *kill, const char *drop_col)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", ref, kill);
    CHECK(run(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s sweep run %s --out %s 2>/dev/null && %s sweep report %s > /dev/null", cli, plan, ref,
             cli, ref);
    CHECK(run(cmd) == 0);
    check_once(ref, "uninterrupted");
    snprintf(cmd, sizeof cmd, "exec %s sweep run %s --out %s 2>/dev/null", cli, plan, kill);
    CHECK_MSG(run_and_kill(cmd, kill) == 1, "%s: the run ended before it could be killed", plan);
    char log[512];
    snprintf(log, sizeof log, "%s/log.jsonl", kill);
    int before = count_lines(log);
    snprintf(cmd, sizeof cmd, "%s sweep report %s > /dev/null", cli, kill);
    CHECK(run(cmd) == 0); /* a report of the unfinished sweep says what is missing */
    char path[512];
    snprintf(path, sizeof path, "%s/report.md", kill);
    char *md = slurp(path);
    CHECK_MSG(md && strstr(md, "Not done:") && strstr(md, "| pending |"), "%s: no list of the missing tasks", kill);
    free(md);
    snprintf(cmd, sizeof cmd, "%s sweep run %s --out %s 2>/dev/null && %s sweep report %s > /dev/null", cli, plan, kill,
             cli, kill);
    CHECK(run(cmd) == 0);
    CHECK(count_lines(log) > before);
    check_once(kill, "killed and resumed");
    char *a = tables_of(ref, drop_col), *b = tables_of(kill, drop_col);
    CHECK_MSG(a && b && strlen(a) > 200 && !strcmp(a, b), "%s: the resumed report's tables differ:\n%s\n---\n%s", plan,
              a ? a : "", b ? b : "");
    free(a);
    free(b);
}

static void test_cdl(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s sweep plan cdl --only pendulum,ball-notouch --epochs 3 --seeds 2 -o repro_cdl_plan.txt 2>/dev/null",
             cli);
    CHECK(run(cmd) == 0);
    run_kill_resume("repro_cdl_plan.txt", "repro_cdl_ref", "repro_cdl_kill", "train time");
    static const char *ids[] = {"pendulum.cdl.s0", "pendulum.vin.s1", "pendulum.resnet.s0", "ball-notouch.cdl.s1",
                                "ball-notouch.resnet.s1"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        CHECK_MSG(same_arrays("repro_cdl_ref", "repro_cdl_kill", ids[i], "metrics", 4), "%s: results differ", ids[i]);
    char *md = slurp("repro_cdl_ref/report.md");
    CHECK(md && strstr(md, "### Pendulum") && strstr(md, "### Bouncing ball, e = 1, no touch feedback") &&
          strstr(md, "| cdl (no touch) "));
    free(md);
    /* the figure's legends name the models as the table does */
    imp_npz *fz = NULL;
    CHECK_OK(imp_npz_load(&fz, "repro_cdl_ref/figures/ball-notouch.npz"));
    const char *spec = fz ? imp_npz_meta(fz) : NULL;
    CHECK_MSG(spec && strstr(spec, "\"cdl (no touch)\"") && !strstr(spec, "\"cdl\""),
              "ball-notouch figure: CDL not labelled 'cdl (no touch)' as in the table");
    /* a phase portrait per model (not three models on one), the energy on a linear axis (a baseline's energy
     * at or below zero would be a full-height spike on a log one), the impacts' time axis with a margin past
     * both ends (a marker at the last step stays whole) */
    int portraits = 0;
    for (const char *p = spec; p && (p = strstr(p, "\"title\":\"phase portrait: ")); p++) portraits++;
    const char *imp = spec ? strstr(spec, "\"title\":\"impacts") : NULL;
    const char *lim = imp ? strstr(imp, "\"limits\":[") : NULL;
    double t0 = lim ? strtod(lim + 10, NULL) : 0;
    CHECK_MSG(spec && portraits == 2 && !strstr(spec, "\"y_log\":true") && t0 < 0,
              "ball-notouch figure: %d phase portraits (want one per model, 2), log axis %d, impacts from t = %g",
              portraits, spec && strstr(spec, "\"y_log\":true"), t0);
    imp_npz_free(fz);

    /* the same plan through `reproduce cdl`, two processes sharing the folder */
    snprintf(cmd, sizeof cmd,
             "rm -rf repro_cdl_cli && %s reproduce cdl --only pendulum,ball-notouch --epochs 3 --seeds 2 --jobs 2 "
             "--out repro_cdl_cli > repro_cdl_cli.out 2>/dev/null",
             cli);
    CHECK(run(cmd) == 0);
    check_once("repro_cdl_cli", "reproduce cdl --jobs 2");
    char *a = tables_of("repro_cdl_ref", "train time"), *b = tables_of("repro_cdl_cli", "train time");
    CHECK_MSG(a && b && !strcmp(a, b), "reproduce cdl's tables differ from the sweep's");
    free(a);
    free(b);
    char *out = slurp("repro_cdl_cli.out");
    CHECK(out && strstr(out, "### Pendulum"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s reproduce cdl --quick --plan repro_cdl_quick.txt 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_load(&p, "repro_cdl_quick.txt"));
    CHECK(p.n_tasks == 28);
    imp_sweep_plan_free(&p);

    /* killed during a training: continues from the training state */
    static const char long_plan[] =
        "task id=long strand=cdl experiment=pendulum model=vin seed=3 epochs=60 state_every=2\n";
    run_killed_in_training(cli, long_plan, "repro_long");
    imp_npz *za = NULL, *zb = NULL;
    CHECK_OK(imp_npz_load(&za, "repro_long_ref/tasks/long/model.npz"));
    CHECK_OK(imp_npz_load(&zb, "repro_long/tasks/long/model.npz"));
    const imp_npy_array *pa = za ? imp_npz_find(za, "params") : NULL, *pb = zb ? imp_npz_find(zb, "params") : NULL;
    CHECK_MSG(pa && pb && pa->count == pb->count && !memcmp(pa->data, pb->data, pa->count * sizeof(double)),
              "resumed parameters differ from the uninterrupted run's");
    imp_npz_free(za);
    imp_npz_free(zb);
    CHECK(same_arrays("repro_long_ref", "repro_long", "long", "metrics", 4));
    imp_npz *rz = NULL;
    double resumed = 0;
    CHECK_OK(imp_npz_load(&rz, "repro_long/tasks/long/result.npz"));
    CHECK_MSG(rz && imp_npz_meta(rz) && !imp_json_get_number(imp_npz_meta(rz), "resumed_at_epoch", &resumed) &&
                  resumed > 0,
              "the task was trained again from the start (resumed at epoch %g)", resumed);
    imp_npz_free(rz);
}

static void test_impact(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s impact drop --count 150 --seed 5 --out repro_drops.npz > /dev/null", cli);
    CHECK(run(cmd) == 0);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    /* the impact plan on a small synthetic set, with small ensembles and curves */
    char plan[4096];
    int n = snprintf(plan, sizeof plan,
                     "task id=t.stored strand=impact kind=eval convention=stored data=%s/repro_drops.npz quick=1 reps=2 "
                     "grid=5 cost=2\n"
                     "task id=t.corrected strand=impact kind=eval convention=corrected data=%s/repro_drops.npz quick=1 "
                     "reps=2 grid=5 cost=2\n"
                     "task id=t.p-data strand=impact kind=p-data data=%s/repro_drops.npz quick=1\n"
                     "task id=t.gp strand=impact kind=gp source=data data=%s/repro_drops.npz quick=1 gp_sizes=10,20 "
                     "repeats=1 n_test=40\n",
                     cwd, cwd, cwd, cwd);
    CHECK_OK(imp_write_file_atomic("repro_impact_plan.txt", plan, (size_t)n));
    run_kill_resume("repro_impact_plan.txt", "repro_impact_ref", "repro_impact_kill", "no such column");
    CHECK(same_arrays("repro_impact_ref", "repro_impact_kill", "t.stored", "errors", -1));
    CHECK(same_arrays("repro_impact_ref", "repro_impact_kill", "t.corrected", "models", -1));
    CHECK(same_arrays("repro_impact_ref", "repro_impact_kill", "t.gp", "mean", -1));
    char *md = slurp("repro_impact_ref/report.md");
    CHECK_MSG(md && strstr(md, "### Convention: stored") && strstr(md, "### Convention: corrected") &&
                  strstr(md, "Table 1 against p_true_data.mat skipped") && strstr(md, "| 20 |"),
              "%s", md ? md : "");
    free(md);
    /* the energy ellipse: a panel per law and convention, each with the measured impulse and the IRB impulse
     * drawn after (on top of) the law's predictions */
    imp_npz *fz = NULL;
    CHECK_OK(imp_npz_load(&fz, "repro_impact_ref/impact_energy_ellipse.npz"));
    const char *spec = fz ? imp_npz_meta(fz) : NULL;
    int measured = 0, on_top = 1;
    for (const char *p = spec; p && (p = strstr(p, "\"label\":\"measured")); p++) {
        measured++;
        /* the element before it in the same panel is the IRB star, not a law's grid */
        const char *prev = p;
        while (prev > spec && strncmp(prev, "{\"kind\"", 7)) prev--;
        const char *irb = prev > spec ? prev - 1 : spec;
        while (irb > spec && strncmp(irb, "{\"kind\"", 7)) irb--;
        on_top &= !strncmp(irb, "{\"kind\":\"scatter\"", 17) && strstr(irb, "IRB") && strstr(irb, "IRB") < prev;
    }
    CHECK_MSG(spec && measured == 12 && on_top && strstr(spec, "\"panel\":11,"),
              "energy ellipse: %d panels with the measured impulse (want 12, one per law and convention), on top %d",
              measured, on_top);
    imp_npz_free(fz);
    /* reproduce impact --plan: the reproduction's plan with its options */
    snprintf(cmd, sizeof cmd,
             "%s reproduce impact --quick --data repro_drops.npz --seed 3 --plan repro_impact_quick.txt 2>/dev/null", cli);
    CHECK(run(cmd) == 0);
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_load(&p, "repro_impact_quick.txt"));
    CHECK(p.n_tasks == 5 && !strcmp(imp_sweep_task_get(&p.tasks[0], "seed"), "3") &&
          imp_sweep_task_get(&p.tasks[0], "data")[0] == '/');
    imp_sweep_plan_free(&p);
}

int main(void)
{
    /* the reports' figures are matplotlib's business (tested in test_report) */
    setenv("IMPULSE_PYTHON", "/nonexistent/python3", 1);
    test_plans();
    test_cdl();
    test_impact();
    TEST_MAIN_END();
}
