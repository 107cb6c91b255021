/* The your-data sweep strand (src/sweep/task_yourdata.c, report_yourdata.c):
 * its plan, the errors of its keys (each names the key), a tiny plan run and
 * reported (the table's cells are the results' numbers), a task stopped
 * during training resumed from its training state to the uninterrupted
 * run's numbers, and a task stopped during evaluation finished from its
 * checkpoint. */
#define _XOPEN_SOURCE 700
#include "impulse/cdl.h"
#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/sweep.h"
#include "test.h"
#include "sweep_test.h"

#include <math.h>
#include <unistd.h>

/* The reproduction's plan: a task per model x labels x seed, every task's
 * settings those asked for; bad options fail naming them. */
static void test_plan(void)
{
    imp_sweep_your_data_opts o;
    imp_sweep_your_data_opts_default(&o);
    o.seeds = 3;
    o.epochs = 7;
    o.restitution = 0.55;
    o.lr_schedule = "constant";
    o.impact_law = "paper";
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_your_data(&p, &o));
    int cdl = 0, resnet = 0;
    for (int i = 0; i < p.n_tasks; i++) {
        const imp_sweep_task *t = &p.tasks[i];
        const char *model = imp_sweep_task_get(t, "model"), *law = imp_sweep_task_get(t, "impact_law");
        double e = -1;
        long epochs = -1, seed = -1;
        CHECK(!strcmp(imp_sweep_task_get(t, "strand"), "your-data"));
        CHECK_OK(imp_sweep_task_double(t, "restitution", -1, 0, 1, &e));
        CHECK_OK(imp_sweep_task_int(t, "epochs", -1, 0, 100, &epochs));
        CHECK_OK(imp_sweep_task_int(t, "seed", -1, 0, 100, &seed));
        CHECK(e == o.restitution && epochs == o.epochs && seed >= 0 && seed < o.seeds);
        CHECK(!strcmp(imp_sweep_task_get(t, "lr_schedule"), "constant"));
        /* the impact law is CD-Lagrange's only; the ResNet takes no labels */
        CHECK(!strcmp(model, "cdl") ? law && !strcmp(law, "paper") : law == NULL);
        if (!strcmp(model, "resnet")) CHECK(!strcmp(imp_sweep_task_get(t, "labels"), "none"));
        cdl += !strcmp(model, "cdl");
        resnet += !strcmp(model, "resnet");
    }
    CHECK(cdl == 2 * o.seeds && resnet == o.seeds && p.n_tasks == 5 * o.seeds);
    imp_sweep_plan_free(&p);
    /* quick: at most 2 seeds (fewer when asked), 100 epochs unless given */
    imp_sweep_your_data_opts_default(&o);
    o.quick = 1;
    CHECK_OK(imp_sweep_plan_your_data(&p, &o));
    long epochs = 0;
    CHECK(p.n_tasks == 10 && !imp_sweep_task_int(&p.tasks[0], "epochs", 0, 0, 1000000, &epochs) && epochs == 100);
    imp_sweep_plan_free(&p);
    o.seeds = 1;
    CHECK_OK(imp_sweep_plan_your_data(&p, &o));
    CHECK(p.n_tasks == 5);
    imp_sweep_plan_free(&p);
    struct {
        const char *field, *value, *needle;
    } bad[] = {{"impact_law", "sideways", "impact_law=sideways"},
               {"lr_schedule", "step", "lr_schedule=step"},
               {"system", "bouncing-ball", "system=bouncing-ball"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        imp_sweep_your_data_opts_default(&o);
        if (!strcmp(bad[k].field, "impact_law")) o.impact_law = bad[k].value;
        if (!strcmp(bad[k].field, "lr_schedule")) o.lr_schedule = bad[k].value;
        if (!strcmp(bad[k].field, "system")) o.system = bad[k].value;
        CHECK_FAILS(imp_sweep_plan_your_data(&p, &o), IMP_ERR_INVALID);
        CHECK_MSG(strstr(imp_last_error(), bad[k].needle) && strstr(imp_last_error(), "your-data plan"), "%s",
                  imp_last_error());
    }
    imp_sweep_your_data_opts_default(&o);
    o.restitution = 1.5;
    CHECK_FAILS(imp_sweep_plan_your_data(&p, &o), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "restitution=1.5"), "%s", imp_last_error());
}

/* A task with a bad key fails before any training, naming the key. */
static void test_key_errors(void)
{
    static const bad_key bad[] = {
        {"model=cdl labels=bogus epochs=1", "labels=bogus"},
        {"model=vin epochs=1", "model=vin"},
        {"labels=auto epochs=1", "needs model="},
        {"model=cdl impact_law=bogus epochs=1", "impact_law=bogus"},
        {"model=resnet impact_law=newton epochs=1", "impact_law=newton applies to model=cdl only"},
        {"model=resnet labels=auto epochs=1", "labels=auto: model=resnet takes no labels"},
        {"model=cdl lr_schedule=step epochs=1", "lr_schedule=step"},
        {"model=cdl system=bouncing-ball epochs=1", "system=bouncing-ball"},
        {"model=cdl restitution=1.5 epochs=1", "restitution=1.5"},
        {"model=cdl heldout=0 epochs=1", "heldout=0"},
        {"model=resnet epochs=0", "epochs=0"},
    };
    check_bad_keys("yd_bad", "strand=your-data", bad, sizeof bad / sizeof bad[0]);
}

static int read_metrics(const char *dir, const char *id, double *v)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tasks/%s/result.npz", dir, id);
    imp_npz *z = NULL;
    if (imp_npz_load(&z, path)) return -1;
    const imp_npy_array *a = imp_npz_find(z, "metrics");
    int ok = a && a->dtype == IMP_F64 && a->count == 5;
    if (ok) memcpy(v, a->data, 5 * sizeof(double));
    imp_npz_free(z);
    return ok ? 0 : -1;
}

/* Stop the training after a number of epochs (the runner's stop request). */
static int stop_calls;
static int stop_after(void *user)
{
    return ++stop_calls > *(int *)user;
}

static const char tiny_common[] = "strand=your-data epochs=4 heldout=1 state_every=1";

/* A tiny plan run and reported: every row of the table, its cells the
 * results' numbers. */
static void test_run_report(void)
{
    static const char *rows[][2] = {{"cdl", "auto"}, {"cdl", "as-given"}, {"resnet-contact", "auto"},
                                    {"resnet-contact", "as-given"}, {"resnet", "none"}};
    char text[4096] = "";
    size_t n = 0;
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 5; r++)
            n += (size_t)snprintf(text + n, sizeof text - n, "task id=%s.%s.s%d %s model=%s labels=%s seed=%d\n",
                                  rows[r][0], rows[r][1], s, tiny_common, rows[r][0], rows[r][1], s);
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p, text, "x"));
    system("rm -rf yd_run yd_stop");
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    imp_sweep_summary sum;
    CHECK_OK(imp_sweep_prepare(&p, "yd_run"));
    CHECK_OK(imp_sweep_run_plan(&p, "yd_run", &o, &sum));
    CHECK(sum.ran == 10 && sum.failed == 0);
    char *md = NULL;
    CHECK_OK(imp_sweep_report("yd_run", &md));
    CHECK(md && strstr(md, "## Your data") && strstr(md, "apparent restitution of the contact 0.") &&
          strstr(md, "1 held-out trajectories per seed, 4 epochs, 2 seeds"));
    for (int r = 0; r < 5 && md; r++) {
        double v[2][5];
        char id[128];
        int got = 0;
        for (int s = 0; s < 2; s++) {
            snprintf(id, sizeof id, "%s.%s.s%d", rows[r][0], rows[r][1], s);
            got += read_metrics("yd_run", id, v[s]) == 0;
        }
        CHECK(got == 2);
        if (got != 2) continue;
        int cdl = !strcmp(rows[r][0], "cdl");
        for (int s = 0; s < 2; s++) /* CD-Lagrange alone has a potential and a learned e */
            CHECK(isfinite(v[s][0]) && isfinite(v[s][2]) == cdl && isfinite(v[s][3]) == cdl);
        /* mean, standard error and median of the two seeds */
        double mean = v[0][0] / 2 + v[1][0] / 2;
        double se = sqrt(((v[0][0] - mean) * (v[0][0] - mean) + (v[1][0] - mean) * (v[1][0] - mean)) / 2);
        double med = 0.5 * (fmin(v[0][0], v[1][0]) + fmax(v[0][0], v[1][0]));
        char want[400], tail[200] = " n/a | n/a |";
        if (cdl)
            snprintf(tail, sizeof tail, " %.3f (%.3f .. %.3f) | %.3f (%.3f .. %.3f) |", (v[0][2] + v[1][2]) / 2,
                     fmin(v[0][2], v[1][2]), fmax(v[0][2], v[1][2]), (v[0][3] + v[1][3]) / 2,
                     fmin(v[0][3], v[1][3]), fmax(v[0][3], v[1][3]));
        snprintf(want, sizeof want, "| %-14s | %-8s | 2 | %.3g ± %.2g | %.3g |%s\n", rows[r][0], rows[r][1], mean, se,
                 med, tail);
        CHECK_MSG(strstr(md, want), "row '%s' not in the report:\n%s", want, md);
    }
    free(md);

    /* stopped during its training (after 2 of 4 epochs), resumed from the
     * training state: the uninterrupted run's numbers */
    CHECK_OK(imp_sweep_prepare(&p, "yd_stop"));
    int after = 2, ran = 1;
    stop_calls = 0;
    o.should_stop = stop_after;
    o.stop_user = &after;
    CHECK_OK(imp_sweep_run_task(&p, 0, "yd_stop", &o, &ran));
    CHECK(ran == 0 && access("yd_stop/tasks/cdl.auto.s0/train_state.npz", F_OK) == 0 &&
          access("yd_stop/tasks/cdl.auto.s0/result.npz", F_OK) != 0);
    o.should_stop = NULL;
    CHECK_OK(imp_sweep_run_task(&p, 0, "yd_stop", &o, &ran));
    CHECK(ran == 1);
    double a[5], b[5];
    CHECK(read_metrics("yd_run", "cdl.auto.s0", a) == 0 && read_metrics("yd_stop", "cdl.auto.s0", b) == 0);
    CHECK_MSG(!memcmp(a, b, 4 * sizeof(double)), "resumed: rmse_code %.17g against %.17g", b[0], a[0]);
    imp_npz *z = NULL;
    int resumed = 0;
    CHECK_OK(imp_npz_load(&z, "yd_stop/tasks/cdl.auto.s0/result.npz"));
    CHECK_OK(imp_json_get_int(z ? imp_npz_meta(z) : "{}", "resumed_at_epoch", 0, 4, &resumed));
    CHECK_MSG(resumed >= after && resumed < 4, "resumed at epoch %d", resumed);
    imp_npz_free(z);

    /* stopped during its evaluation (the checkpoint written, no result):
     * evaluated from the checkpoint, the same numbers */
    CHECK(remove("yd_stop/tasks/cdl.auto.s0/result.npz") == 0);
    CHECK_OK(imp_sweep_run_task(&p, 0, "yd_stop", &o, &ran));
    CHECK(ran == 1 && read_metrics("yd_stop", "cdl.auto.s0", b) == 0);
    CHECK_MSG(!memcmp(a, b, 4 * sizeof(double)) && isfinite(b[4]), "from the checkpoint: %.17g against %.17g (%g s)",
              b[0], a[0], b[4]);
    imp_sweep_plan_free(&p);
}

int main(void)
{
    setenv("IMPULSE_PYTHON", "/nonexistent/python3", 1);
    test_plan();
    test_key_errors();
    test_run_report();
    TEST_MAIN_END();
}
