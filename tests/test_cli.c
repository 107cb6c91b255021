/* The command-line tool end to end, and its handling of bad input: each
 * case must exit non-zero with exactly one clear line on stderr. */
#define _POSIX_C_SOURCE 200809L
#include "impulse/cdl.h"
#include "impulse/io.h"
#include "test.h"
#include "cli_test.h"

#include <stdlib.h>

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/* issue 27 item 14: an error names its file once; an unknown system is
 * one line naming both strands' systems. */
static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void test_names_once(void)
{
    char err[4096];
    imp_npz *z = imp_npz_new();
    double q[10] = {0};
    size_t sh[3] = {1, 10, 1};
    imp_npz_add_f64(z, "q", 3, sh, q);
    imp_npz_add_f64(z, "qdot", 3, sh, q);
    imp_npz_set_meta(z, "{\"dt\": 0.1, \"dim\": 1}");
    CHECK_OK(imp_npz_save(z, "cli_mini.npz"));
    imp_npz_free(z);
    expect_error("train cdl --data cli_mini.npz -o cli_x.npz", "no array 'masses'");
    CHECK(run("train cdl --data cli_mini.npz -o cli_x.npz", err, sizeof err) != 0);
    CHECK_MSG(count_of(err, "cli_mini.npz") == 1, "%s", err);
    CHECK(run("train chnn --data cli_nosuch.npz -o cli_x.npz", err, sizeof err) != 0);
    CHECK_MSG(count_of(err, "cli_nosuch.npz") == 1, "%s", err);
    CHECK(run("eval --model cli_nosuch.npz --data cli_mini.npz", err, sizeof err) != 0);
    CHECK_MSG(count_of(err, "cli_nosuch.npz") == 1, "%s", err);
    expect_error("simulate pendulum-chains:2 -o cli_x.npz", "constrained strand: pendulum-chain:N");
    /* the list names every system simulate knows, the newer ones too */
    CHECK(run("simulate pendulum-chains:2 -o cli_x.npz", err, sizeof err) != 0);
    const char *known[] = {"bouncing-disk", "ball-box", "compliant-ball-box", "bouncing-points:N", "box-toss",
                           "chain-ground:3", "chain-ground-elastic:3", "gyroscope-wall",
                           "colliding-pendulums"};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        CHECK_MSG(strstr(err, known[k]) != NULL, "'%s' not named: %s", known[k], err);
    remove("cli_mini.npz");
}

/* issue 27 item 15: the help says what the verbs do */
static void test_help(void)
{
    char err[4096];
    struct {
        const char *args, *want[3];
    } cases[] = {
        {"eval --help", {"--steps T", "--n-test N", "Constrained networks"}},
        {"rollout --help", {"z (T+1, 2, points, d)", "states (T, 2D)", "--dt H"}},
        {"import --help", {"--wall B:N:OFFSET   a wall under body B (repeatable)", "--system-file", "--pair"}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        CHECK(run(cases[k].args, err, sizeof err) == 0);
        size_t n;
        unsigned char *o = NULL;
        CHECK_OK(imp_read_file(CLI_TEST_TAG "_stdout.txt", &o, &n));
        for (int w = 0; w < 3; w++)
            CHECK_MSG(o && strstr((char *)o, cases[k].want[w]), "%s: no '%s'", cases[k].args, cases[k].want[w]);
        CHECK(o && !strstr((char *)o, "states (T x 2 n d)"));
        free(o);
    }
}

/* eval --projection: the ball-in-a-box acceptance's own model (CD-Lagrange,
 * labels derived from the motion, --contact-tol 0; results/ball-box) dips
 * below the floor for a step at impacts; with the projection at impacts in
 * its rollouts no state is below the floor or outside the walls. A ResNet
 * has no impacts to project: one error line. */
static double lowest_gap(const char *pred, double *xmax)
{
    imp_npz *z = NULL;
    double lo = INFINITY;
    *xmax = 0;
    if (imp_npz_load(&z, pred)) return NAN;
    const imp_npy_array *a = imp_npz_find(z, "states");
    if (a && a->dtype == IMP_F64 && a->ndim == 3 && a->shape[2] == 4)
        for (size_t i = 0; i < a->count / 4; i++) {
            const double *x = (const double *)a->data + 4 * i;
            lo = fmin(lo, x[1]);
            *xmax = fmax(*xmax, fabs(x[0]));
        }
    imp_npz_free(z);
    return lo;
}

static void test_eval_projection(void)
{
    char err[4096], cmd[2048];
    const char *dir = IMPULSE_SOURCE_DIR "/results/ball-box";
    double xmax = 0;
    snprintf(cmd, sizeof cmd, "eval --model %s/cdl-geomlabels-tol0.s0/model.npz --data %s/test.npz --predictions cli_proj0.npz",
             dir, dir);
    CHECK(run(cmd, err, sizeof err) == 0);
    double lo0 = lowest_gap("cli_proj0.npz", &xmax);
    CHECK_MSG(lo0 < -1e-3, "the model's rollouts dip to %g only: nothing to project", lo0);
    snprintf(cmd, sizeof cmd,
             "eval --model %s/cdl-geomlabels-tol0.s0/model.npz --data %s/test.npz --projection --predictions cli_proj1.npz",
             dir, dir);
    CHECK(run(cmd, err, sizeof err) == 0);
    double lo1 = lowest_gap("cli_proj1.npz", &xmax);
    CHECK_MSG(lo1 >= -1e-12 && xmax <= 1.5 + 1e-12, "with --projection: lowest %g, largest |x| %g", lo1, xmax);
    snprintf(cmd, sizeof cmd, "rollout --model %s/cdl-geomlabels-tol0.s0/model.npz --data %s/test.npz --projection -o cli_proj2.npz",
             dir, dir);
    CHECK(run(cmd, err, sizeof err) == 0);
    snprintf(cmd, sizeof cmd, "eval --model %s/resnet.s0/model.npz --data %s/test.npz --projection", dir, dir);
    CHECK(run(cmd, err, sizeof err) != 0 && strstr(err, "projection: a resnet model has no impacts"));
}

int main(void)
{
    char err[4096];
    test_names_once();
    test_help();
    test_eval_projection();
    /* the happy path: simulate, train briefly, evaluate with --json */
    CHECK(run("simulate bouncing-ball --steps 120 --noise 0.1 --seed 3 -o cli_ball.npz", err, sizeof err) == 0);
    CHECK(run("train cdl --data cli_ball.npz --epochs 2 --hidden 16 --quiet -o cli_model.npz", err, sizeof err) == 0);
    /* a batch and horizon far beyond the data's windows (the largest --batch
     * accepted): the batch is the whole data, not a buffer of 10^6 windows */
    CHECK(run("train cdl --data cli_ball.npz --epochs 1 --hidden 16 --batch 1000000 --horizon 100 --quiet "
              "-o cli_bigbatch.npz", err, sizeof err) == 0);
    CHECK(run("eval --model cli_model.npz --data cli_ball.npz --json", err, sizeof err) == 0);
    unsigned char *out = NULL;
    size_t len = 0;
    CHECK_OK(imp_read_file("cli_stdout.txt", &out, &len));
    double rmse = -1;
    CHECK(out && out[0] == '{' && imp_json_get_number((char *)out, "rmse", &rmse) == IMP_OK && rmse >= 0);
    free(out);
    CHECK(run("rollout --model cli_model.npz --data cli_ball.npz --steps 50 -o cli_roll.npz", err, sizeof err) == 0);
    CHECK(run("train resnet --data cli_ball.npz --epochs 1 --hidden 8 --quiet -o cli_resnet.npz", err, sizeof err) == 0);
    CHECK(run("simulate --help", err, sizeof err) == 0);
    CHECK(run("train --help", err, sizeof err) == 0);
    CHECK(run("eval --help", err, sizeof err) == 0);
    CHECK(run("reproduce cdl --help", err, sizeof err) == 0);

    /* the ball in a box (three wall pairs on one body): inspect and eval
     * --json say what CD-Lagrange does with each pair, e per pair, and the
     * lowest gap its rollouts reached */
    CHECK(run("simulate ball-box --trajectories 2 --steps 150 --noise 0.02 -o cli_box.npz", err, sizeof err) == 0);
    CHECK(run("train cdl --data cli_box.npz --epochs 1 --hidden 16 --quiet -o cli_box_model.npz", err, sizeof err) == 0);
    CHECK(run("inspect cli_box_model.npz --json", err, sizeof err) == 0);
    out = NULL;
    CHECK_OK(imp_read_file("cli_stdout.txt", &out, &len));
    double tol = -1;
    CHECK(out && imp_json_get_number((char *)out, "contact_tol", &tol) == IMP_OK);
    CHECK_CLOSE(tol, 3 * 0.02, 1e-12, 0); /* 3 sigma of the data's noise */
    CHECK(out && strstr((char *)out, "\"pairs\":[{\"pair\":0,") && strstr((char *)out, "\"pair\":2,") &&
          strstr((char *)out, "\"impulse_when\":\"gated and in reach\""));
    free(out);
    CHECK(run("inspect cli_box.npz", err, sizeof err) == 0);
    out = NULL;
    CHECK_OK(imp_read_file("cli_stdout.txt", &out, &len));
    CHECK(out && strstr((char *)out, "pair 2: wall -> body 0, normal (-1, 0), offset -1.5: an impulse when"));
    free(out);
    CHECK(run("eval --model cli_box_model.npz --data cli_box.npz --json", err, sizeof err) == 0);
    out = NULL;
    CHECK_OK(imp_read_file("cli_stdout.txt", &out, &len));
    CHECK(out && strstr((char *)out, "\"pairs\":[") && strstr((char *)out, "\"min_gap\":") &&
          strstr((char *)out, "\"offset\":0,\"restitution\":"));
    free(out);
    expect_error("train cdl --data cli_box.npz --contact-tol -1 -o x.npz", "--contact-tol");

    /* unknown system, model, verb; negative and malformed numbers */
    expect_error("simulate double-pendulum -o x.npz", "double-pendulum");
    expect_error("train transformer --data cli_ball.npz -o x.npz", "transformer");
    expect_error("simulate pendulum --steps -5 -o x.npz", "--steps");
    expect_error("simulate pendulum --trajectories 0 -o x.npz", "--trajectories");
    expect_error("simulate bouncing-ball --restitution 1.5 -o x.npz", "--restitution");
    expect_error("simulate pendulum --dt abc -o x.npz", "--dt");
    expect_error("train cdl --data cli_ball.npz --epochs -3 -o x.npz", "--epochs");
    expect_error("simulate pendulum", "-o");
    expect_error("rollout --model cli_model.npz --data cli_ball.npz --steps -1 -o x.npz", "--steps");
    expect_error("train resnet-contact --no-touch --data cli_ball.npz -o x.npz", "touch");
    expect_error("train cdl --data cli_ball.npz --contact-precision half -o x.npz", "--contact-precision");
    expect_error("train cdl --data cli_ball.npz --potential-precision half -o x.npz", "--potential-precision");

    /* malformed, truncated, wrong files */
    expect_error("train cdl --data does_not_exist.npz -o x.npz", "does_not_exist.npz");
    write_bytes("cli_garbage.npz", "this is not a zip archive at all", 32);
    expect_error("train cdl --data cli_garbage.npz -o x.npz", "cli_garbage.npz");
    CHECK_OK(imp_read_file("cli_ball.npz", &out, &len));
    write_bytes("cli_trunc.npz", out, len / 2);
    free(out);
    expect_error("train cdl --data cli_trunc.npz -o x.npz", "cli_trunc.npz");
    expect_error("eval --model cli_ball.npz --data cli_ball.npz", "model");

    /* missing array and NaN in data */
    imp_trajset ts;
    CHECK_OK(imp_trajset_load(&ts, "cli_ball.npz"));
    imp_npz *z = imp_npz_new();
    size_t sh[3] = {1, (size_t)ts.n_steps, 1};
    imp_npz_add_f64(z, "q", 3, sh, ts.q);
    imp_npz_set_meta(z, "{\"dt\": 0.02, \"dim\": 1, \"restitution\": 1}");
    imp_npz_add_f64(z, "masses", 1, (size_t[]){1}, ts.geom.mass);
    CHECK_OK(imp_npz_save(z, "cli_missing.npz"));
    imp_npz_free(z);
    expect_error("train cdl --data cli_missing.npz -o x.npz", "contact_pairs");
    ts.qdot[7] = NAN;
    CHECK_OK(imp_trajset_save(&ts, "cli_nan.npz"));
    expect_error("train cdl --data cli_nan.npz -o x.npz", "qdot");
    imp_trajset_free(&ts);

    /* learned restitution: data without one in its meta (null) trains with
     * e learned, eval reports it; keeping it fixed is refused */
    CHECK_OK(imp_trajset_load(&ts, "cli_ball.npz"));
    ts.geom.restitution = NAN;
    CHECK_OK(imp_trajset_save(&ts, "cli_noe.npz"));
    imp_trajset_free(&ts);
    expect_error("train cdl --data cli_noe.npz --restitution fixed -o x.npz", "--restitution fixed");
    expect_error("train cdl --data cli_ball.npz --restitution sometimes -o x.npz", "--restitution");
    expect_error("train cdl --data cli_ball.npz --restitution-init 1.5 -o x.npz", "--restitution-init");
    expect_error("train cdl --data cli_noe.npz --restitution-init meta -o x.npz", "meta");
    expect_error("train resnet --data cli_ball.npz --friction -o x.npz", "cdl only");
    expect_error("train cdl --data cli_ball.npz --impact-law sideways -o x.npz", "--impact-law");
    expect_error("train resnet --data cli_ball.npz --impact-law newton -o x.npz", "cdl only");
    expect_error("train cdl --data cli_ball.npz --impact-timing later -o x.npz",
                 "--impact-timing: 'later' is not step or event");
    expect_error("train resnet --data cli_ball.npz --impact-timing event -o x.npz", "cdl only");
    expect_error("train cdl --data cli_ball.npz --impact-timing event --impact-law paper -o x.npz",
                 "--impact-law applies to --impact-timing step");
    expect_error("train cdl --data cli_ball.npz --impact-timing event --projection -o x.npz",
                 "impact_timing: event has no reverse pass through the projection");
    /* event timing: in the checkpoint's meta, and the loaded model rolls out as trained */
    {
        CHECK_MSG(run("train cdl --data cli_ball.npz --epochs 2 --hidden 8 --impact-timing event -o cli_event.npz", err,
                      sizeof err) == 0, "event timing: %s", err);
        imp_npz *z = NULL;
        CHECK_OK(imp_npz_load(&z, "cli_event.npz"));
        const char *meta = z ? imp_npz_meta(z) : NULL;
        CHECK_MSG(meta && strstr(meta, "\"impact_timing\":\"event\""), "event timing meta: %s", meta ? meta : "");
        imp_npz_free(z);
        imp_model *me = NULL;
        CHECK_OK(imp_model_load(&me, "cli_event.npz"));
        CHECK(me && me->cfg.impact_timing == IMP_CDL_TIMING_EVENT);
        imp_model_free(me);
        CHECK_MSG(run("train cdl --data cli_ball.npz --epochs 2 --hidden 8 -o cli_step.npz", err, sizeof err) == 0, "%s",
                  err);
        CHECK_OK(imp_npz_load(&z, "cli_step.npz"));
        meta = z ? imp_npz_meta(z) : NULL;
        CHECK(meta && !strstr(meta, "impact_timing")); /* step: as before */
        imp_npz_free(z);
        remove("cli_event.npz"), remove("cli_event.npz.log.jsonl"), remove("cli_step.npz"), remove("cli_step.npz.log.jsonl");
    }
    /* the law refit: --json lists every pair's change; bad settings fail naming them */
    {
        CHECK(run("simulate bouncing-points:2 --trajectories 2 --steps 120 --seed 4 -o cli_pts.npz", err, sizeof err) == 0);
        CHECK_MSG(run("train cdl --data cli_pts.npz --epochs 1 --hidden 8 --friction --law-refit --law-refit-grid 6 "
                      "--json -o cli_refit.npz", err, sizeof err) == 0, "law refit: %s", err);
        unsigned char *js = NULL;
        size_t jn;
        CHECK_OK(imp_read_file("cli_stdout.txt", &js, &jn));
        double lb = NAN, la = NAN;
        CHECK(js && strstr((char *)js, "\"law_refit\":{\"loss_before\":") &&
              strstr((char *)js, "\"pairs\":[{\"pair\":0,\"steps\":") && strstr((char *)js, "\"mu_after\":") &&
              strstr((char *)js, "\"plateau\":") && strstr((char *)js, "\"mu_grad\":"));
        const char *at = js ? strstr((char *)js, "\"loss_before\":") : NULL;
        CHECK(at && sscanf(at, "\"loss_before\":%lf,\"loss_after\":%lf", &lb, &la) == 2 && la <= lb);
        free(js);
        imp_npz *z = NULL;
        CHECK_OK(imp_npz_load(&z, "cli_refit.npz"));
        CHECK(z && strstr(imp_npz_meta(z), "\"law_refit\":1"));
        imp_npz_free(z);
        remove("cli_refit.npz"), remove("cli_refit.npz.log.jsonl");
        expect_error("train cdl --data cli_pts.npz --friction --law-refit --law-refit-mu-max 0 -o x.npz",
                     "law_refit.mu_max: 0 outside (0, 10]");
        expect_error("train cdl --data cli_pts.npz --friction --law-refit --law-refit-grid 2 -o x.npz",
                     "law_refit.grid: 2 outside [3, 10000]");
        expect_error("train cdl --data cli_pts.npz --friction --law-refit --law-refit-min-steps 0 -o x.npz",
                     "law_refit.min_steps: 0 must be >= 1");
        expect_error("train cdl --data cli_pts.npz --friction --law-refit-grid 8 -o x.npz",
                     "--law-refit-grid: applies to --law-refit or --law-identify (neither given)");
        expect_error("train cdl --data cli_pts.npz --friction --law-refit-all -o x.npz",
                     "--law-refit-all: applies to --law-refit (not given)");
        expect_error("train cdl --data cli_pts.npz --law-refit -o x.npz", "law_refit.what: the model learns no friction");
        expect_error("train resnet --data cli_pts.npz --law-refit -o x.npz", "--law-refit applies to cdl only");
        /* the law identification: the refit's search on one-step windows with the robust loss */
        CHECK_MSG(run("train cdl --data cli_pts.npz --epochs 1 --hidden 8 --friction --law-identify --law-refit-grid 6 "
                      "--json -o cli_refit.npz", err, sizeof err) == 0, "law identification: %s", err);
        CHECK_OK(imp_read_file("cli_stdout.txt", &js, &jn));
        CHECK(js && strstr((char *)js, "\"mode\":\"identify\",\"horizon\":1,\"robust\":true"));
        free(js);
        CHECK_OK(imp_npz_load(&z, "cli_refit.npz"));
        CHECK(z && strstr(imp_npz_meta(z), "\"law_identify\":1"));
        imp_npz_free(z);
        remove("cli_refit.npz"), remove("cli_refit.npz.log.jsonl");
        expect_error("train cdl --data cli_pts.npz --friction --law-identify --law-refit -o x.npz",
                     "--law-refit and --law-identify: give one");
        expect_error("train cdl --data cli_pts.npz --friction --law-identify --law-refit-e -o x.npz",
                     "--law-identify searches every pair's e and mu already");
        expect_error("train resnet --data cli_pts.npz --law-identify -o x.npz", "--law-identify applies to cdl only");
        remove("cli_pts.npz");
    }
    expect_error("train cdl --data cli_ball.npz --lr-schedule linear -o x.npz",
                 "--lr-schedule: 'linear' is not constant, cosine or auto");
    expect_error("train resnet --data cli_ball.npz --lr-schedule -o x.npz", "--lr-schedule");
    expect_error("reproduce your-data --lr-schedule step", "--lr-schedule: 'step' is not constant, cosine or auto");
    /* the impact law and the learning-rate schedule from the data: paper and
     * constant on the event-driven simulator's file, newton and cosine (with
     * a notice, the checkpoint's meta and the log naming it) on a touch
     * sensor's (compliant contact) */
    {
        imp_sim_opts so;
        imp_trajset cts;
        CHECK_OK(imp_sim_defaults("compliant-ball", &so));
        so.restitution = 0.7, so.n_steps = 120;
        CHECK_OK(imp_simulate("compliant-ball", &so, &cts));
        CHECK_OK(imp_trajset_save(&cts, "cli_compliant.npz"));
        imp_trajset_free(&cts);
        const char *files[2] = {"cli_ball.npz", "cli_compliant.npz"}, *laws[2] = {"0", "1"}; /* IMP_CDL_IMPACT_* */
        for (int f = 0; f < 2; f++) {
            char cmd[256];
            snprintf(cmd, sizeof cmd, "train cdl --data %s --epochs 3 --hidden 8 -o cli_law.npz", files[f]);
            CHECK_MSG(run(cmd, err, sizeof err) == 0, "%s: %s", cmd, err);
            CHECK_MSG(!strstr(err, "learning rate annealed") == !f, "%s: %s", cmd, err);
            imp_npz *z = NULL;
            CHECK_OK(imp_npz_load(&z, "cli_law.npz"));
            const char *meta = z ? imp_npz_meta(z) : NULL;
            char law[32] = "";
            CHECK(meta && imp_json_get_token(meta, "impact_law", law, sizeof law) == IMP_OK);
            CHECK_MSG(!strcmp(law, laws[f]), "%s: impact_law %s", files[f], law);
            /* in the training meta (an object inside the meta): as written */
            const char *cos_key = "\"lr_schedule\":\"cosine\"";
            CHECK_MSG(meta && (f ? strstr(meta, cos_key) != NULL : !strstr(meta, "lr_schedule")), "%s: meta %s",
                      files[f], meta ? meta : "");
            imp_npz_free(z);
            /* the log's rate of the last epoch: the base rate, or the cosine's */
            CHECK_OK(imp_read_file("cli_law.npz.log.jsonl", &out, &len));
            char *last = out ? strstr((char *)out, "\"epoch\":3,") : NULL;
            double lr = -1;
            CHECK(last && imp_json_get_number(last - 1, "lr", &lr) == IMP_OK);
            CHECK_MSG(lr == imp_train_epoch_lr(f ? IMP_LR_COSINE : IMP_LR_CONSTANT, 1e-2, 3, 3), "%s: lr %g", files[f], lr);
            free(out);
            /* asked: no notice, the schedule as asked */
            snprintf(cmd, sizeof cmd, "train cdl --data %s --epochs 1 --hidden 8 --lr-schedule %s -o cli_law.npz",
                     files[f], f ? "constant" : "cosine");
            CHECK_MSG(run(cmd, err, sizeof err) == 0 && !strstr(err, "annealed"), "%s: %s", cmd, err);
            CHECK_OK(imp_npz_load(&z, "cli_law.npz"));
            meta = z ? imp_npz_meta(z) : NULL;
            CHECK_MSG(meta && (f ? !strstr(meta, "lr_schedule") : strstr(meta, cos_key) != NULL), "%s: asked, meta %s",
                      files[f], meta ? meta : "");
            imp_npz_free(z);
        }
    }
    expect_error("train cdl --data cli_ball.npz --friction -o x.npz", "tangent");
    CHECK(run("train cdl --data cli_noe.npz --epochs 2 --hidden 16 -o cli_noe_model.npz", err, sizeof err) == 0);
    CHECK_MSG(strstr(err, "restitution starts at") && strstr(err, "data estimate") && strstr(err, "learned restitution"),
              "train stderr: %s", err);
    CHECK(run("eval --model cli_noe_model.npz --data cli_ball.npz --json", err, sizeof err) == 0);
    CHECK_OK(imp_read_file("cli_stdout.txt", &out, &len));
    CHECK(out && strstr((char *)out, "\"restitution\":[") && strstr((char *)out, "\"restitution_source\":\"learned\""));
    free(out);
    CHECK(run("train cdl --data cli_ball.npz --epochs 2 --hidden 16 --restitution fixed --quiet -o cli_fixed.npz", err,
              sizeof err) == 0);
    CHECK(run("eval --model cli_fixed.npz --data cli_ball.npz", err, sizeof err) == 0);
    CHECK_OK(imp_read_file("cli_stdout.txt", &out, &len));
    CHECK(out && strstr((char *)out, "restitution        1 (fixed"));
    free(out);

    /* determinism: same seed, same checkpoint bytes */
    CHECK(run("train cdl --data cli_ball.npz --epochs 2 --hidden 16 --seed 5 --quiet -o cli_a.npz", err, sizeof err) == 0);
    CHECK(run("train cdl --data cli_ball.npz --epochs 2 --hidden 16 --seed 5 --quiet -o cli_b.npz", err, sizeof err) == 0);
    unsigned char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    CHECK_OK(imp_read_file("cli_a.npz", &a, &la));
    CHECK_OK(imp_read_file("cli_b.npz", &b, &lb));
    /* the meta records the wall-clock training time: compare the parameters */
    imp_npz *za = NULL, *zb = NULL;
    CHECK_OK(imp_npz_load(&za, "cli_a.npz"));
    CHECK_OK(imp_npz_load(&zb, "cli_b.npz"));
    const imp_npy_array *pa = imp_npz_find(za, "params"), *pb = imp_npz_find(zb, "params");
    CHECK(pa && pb && pa->count == pb->count && memcmp(pa->data, pb->data, pa->count * 8) == 0);
    imp_npz_free(za), imp_npz_free(zb);
    free(a), free(b);
    TEST_MAIN_END();
}
