/* `impulse reproduce cube`: the cube tosses of ContactNets (issue 28,
 * docs/cube.md): for each number of training tosses and seed, the models
 * trained on a random split of the drawn tosses and scored with full-toss
 * rollouts, as a sweep plan (src/sweep/task_cube.c) run in --out and
 * reported (src/sweep/report_cube.c); --json prints one line per model,
 * tosses, seed and test set instead of the report. A stopped run resumes
 * where it stopped; --plan only writes the plan. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "impulse/io.h"
#include "impulse/rigid_traj.h"
#include "impulse/sweep.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *verb = "reproduce cube";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse reproduce cube --data FILE [--test FILE] [--tosses N,N,...] [--seeds K] [--quick]\n"
            "                              [--json] [options]\n"
            "  Real cube tosses: for each N and seed, 2N tosses of --data drawn at random (all of them when\n"
            "  it has fewer) and split 50/25/25: N for training, the rest validation and test. Each model is\n"
            "  trained or fitted on the N training tosses and scored with full-toss rollouts from each test\n"
            "  toss's first state: position error (%% of the width), rotation error (deg), penetration\n"
            "  (%% of the width). Models: impulse (the rigid cube with its corners, e, mu and the ground\n"
            "  learned on rollout windows), end-to-end (a residual next-state network), rigid-identified\n"
            "  (impulse's rigid cube, nominal geometry, e, mu and the ground fitted), mujoco (MuJoCo with\n"
            "  friction, solref and the ground fitted; needs the peer program cube_mujoco), ballistic (no\n"
            "  contact, the floor).\n"
            "  --data FILE      impulse import's rigid-body file or the ContactNets file itself\n"
            "  --test FILE      also score every model on all tosses of FILE (the same layout)\n"
            "  --tosses LIST    training tosses N (default 4,8,16,32,64,128,256; --quick: 8,16,64)\n"
            "  --seeds K        seeds (splits and initialisations; default 5, --quick: 1)\n"
            "  --quick          a few sizes, one seed (minutes)\n"
            "  --json           one JSON object per line per model, tosses, seed and test set\n"
            "                   (model, tosses, seed, test: split or the --test file's name, test_tosses,\n"
            "                   position_error_pct, rotation_error_deg, penetration_pct, seconds) instead\n"
            "                   of the report; models not available get a line with available: false\n"
            "  --steps S        the end-to-end network's Adam steps (default 4000)\n"
            "  --max-evals E    the fits of mujoco and rigid-identified: training-set rollouts at most\n"
            "                   (default 200 and 100)\n"
            "  --jobs J         processes sharing the tasks (default 1)\n"
            "  --out DIR        results folder (default reproduce-cube); run the same command again to\n"
            "                   resume: a finished task is never rerun\n"
            "  --plan FILE      write the plan and stop (then: impulse sweep run FILE --out DIR)\n"
            "  The MuJoCo peer is looked for beside impulse (cube_mujoco) or at $IMPULSE_CUBE_MUJOCO.\n");
}

static void notice_row(int json, const char *model, const char *why)
{
    if (json) {
        imp_json j;
        imp_json_init(&j);
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "model", model);
        imp_json_key(&j, "available");
        imp_json_bool(&j, 0);
        imp_json_kv_string(&j, "notice", why);
        imp_json_end_object(&j);
        printf("%s\n", imp_json_text(&j));
        imp_json_free(&j);
    }
    fprintf(stderr, "impulse %s: notice: %s: %s\n", verb, model, why);
}

int cli_reproduce_cube(int argc, char **argv)
{
    imp_sweep_cube_opts co;
    imp_sweep_cube_opts_default(&co);
    const char *out = "reproduce-cube", *plan_out = NULL;
    int jobs = 1, json = 0;
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},   {"test", required_argument, 0, 't'},
        {"tosses", required_argument, 0, 'n'}, {"seeds", required_argument, 0, 's'},
        {"quick", no_argument, 0, 'q'},        {"json", no_argument, 0, 'J'},
        {"steps", required_argument, 0, 'S'},  {"max-evals", required_argument, 0, 'M'},
        {"jobs", required_argument, 0, 'j'},   {"out", required_argument, 0, 'o'},
        {"plan", required_argument, 0, 'P'},   {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    long lv;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 'd': co.data = optarg; break;
        case 't': co.test = optarg; break;
        case 'n': co.tosses = optarg; break;
        case 's': st = cli_parse_long("--seeds", optarg, 1, 1000, &lv), co.seeds = (int)lv; break;
        case 'q': co.quick = 1; break;
        case 'J': json = 1; break;
        case 'S': st = cli_parse_long("--steps", optarg, 1, 10000000, &lv), co.steps = (int)lv; break;
        case 'M': st = cli_parse_long("--max-evals", optarg, 1, 1000000, &lv), co.max_evals = (int)lv; break;
        case 'j': st = cli_parse_long("--jobs", optarg, 1, 64, &lv), jobs = (int)lv; break;
        case 'o': out = optarg; break;
        case 'P': plan_out = optarg; break;
        case 'h': usage(stdout); return 0;
        default: return cli_failf(verb, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail(verb);
    }
    if (optind < argc) return cli_failf(verb, "unexpected argument '%s'", argv[optind]);
    if (!co.data) return cli_failf(verb, "--data FILE is required (the ContactNets file or impulse import's output)");
    /* the files are read now, so that a wrong name stops here and not in every task */
    const char *files[2] = {co.data, co.test};
    for (int k = 0; k < 2 && files[k]; k++) {
        imp_rigid_traj t;
        if (imp_rigid_traj_load_any(&t, files[k], NULL))
            return cli_failf(verb, "%s %s: %s", k ? "--test" : "--data", files[k], imp_last_error());
        imp_rigid_traj_free(&t);
    }
    char peer[4096];
    co.mujoco = imp_sweep_cube_peer(peer, sizeof peer);
    imp_sweep_plan plan;
    if (imp_sweep_plan_cube(&plan, &co)) return cli_fail(verb);
    if (plan_out) {
        int rc = cli_reproduce_sweep(verb, &plan, plan_out, out, 1, jobs);
        imp_sweep_plan_free(&plan);
        return rc;
    }
    if (!json) {
        int rc = cli_reproduce_sweep(verb, &plan, NULL, out, 1, jobs);
        imp_sweep_plan_free(&plan);
        if (!co.mujoco) notice_row(0, "mujoco", "the peer program cube_mujoco is not built (Debian: libmujoco-dev "
                                                 "libnlopt-dev) or not found (IMPULSE_CUBE_MUJOCO): skipped");
        return rc;
    }
    int rc = cli_reproduce_sweep_json(verb, &plan, out, 1, jobs, imp_sweep_cube_rows);
    imp_sweep_plan_free(&plan);
    if ((rc == 0 || rc == 130) && !co.mujoco)
        notice_row(1, "mujoco", "the peer program cube_mujoco is not built (Debian: libmujoco-dev libnlopt-dev) or "
                                "not found (IMPULSE_CUBE_MUJOCO): skipped");
    return rc;
}
