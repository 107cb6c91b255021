/* `impulse reproduce cdl`: the experiments of Hochlehnert et al. 2021
 * (section 4, appendix) as a sweep plan (src/sweep/task_cdl.c), run in --out
 * by the sweep runner with --jobs processes and reported
 * (src/sweep/report_cdl.c): a table per experiment, mean and standard error
 * over seeds, and a figure from the first seed's checkpoints. A stopped run
 * resumes where it stopped; --plan only writes the plan. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "impulse/sweep.h"

#include <stdio.h>
#include <string.h>

static const char *verb = "reproduce cdl";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse reproduce cdl [--quick] [--seeds N] [--seed K] [--jobs J] [--epochs E] [--threads N]\n"
            "                             [--settings code|paper] [--only ID[,ID...]] [--out DIR] [--plan FILE]\n"
            "  Experiments (IDs): pendulum, ball-touch, ball-notouch, ball-e07, cradle-touch,\n"
            "  cradle-notouch. One task per experiment x model x seed, run in DIR (a sweep folder:\n"
            "  DIR/tasks/<id>/{model.npz,result.npz}); prints one table per experiment (mean +- standard\n"
            "  error over seeds) and writes DIR/report.md, DIR/index.html, DIR/figures/<ID>.{png,svg,npz}.\n"
            "  --quick     100 epochs, 2 seeds (a smoke run, not the paper's numbers)\n"
            "  --seeds N   seeds per experiment and model (default 3); --seed K: the first (default 0)\n"
            "  --jobs J    processes sharing the tasks (default 2)\n"
            "  --threads N training threads per task written into the plan (default 1; the same N\n"
            "              and seed give bit-identical results)\n"
            "  --epochs E  override every experiment's epoch count\n"
            "  --out DIR   output folder (default reproduce-cdl); run again to resume: a finished task\n"
            "              is never rerun (--resume is accepted and is always the case)\n"
            "  --plan FILE write the plan and stop (then: impulse sweep run FILE --out DIR, also under\n"
            "              mpirun; impulse sweep report DIR)\n");
}

int cli_reproduce_cdl(int argc, char **argv)
{
    imp_sweep_cdl_opts co;
    imp_sweep_cdl_opts_default(&co);
    const char *out = "reproduce-cdl", *plan_out = NULL;
    long jobs = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long lv;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quick")) {
            co.quick = 1;
        } else if (!strcmp(a, "--resume")) {
            /* always */
        } else if (!strcmp(a, "--seeds") && v) {
            if (cli_parse_long(a, v, 1, 1000, &lv)) return cli_fail(verb);
            co.seeds = (int)lv, i++;
        } else if (!strcmp(a, "--seed") && v) {
            if (cli_parse_long(a, v, 0, 2147483647L - 1000, &lv)) return cli_fail(verb);
            co.first_seed = (int)lv, i++;
        } else if (!strcmp(a, "--jobs") && v) {
            if (cli_parse_long(a, v, 1, 64, &lv)) return cli_fail(verb);
            jobs = lv, i++;
        } else if (!strcmp(a, "--threads") && v) {
            if (cli_parse_long(a, v, 1, CLI_MAX_THREADS, &lv)) return cli_fail(verb);
            co.threads = (int)lv, i++;
        } else if (!strcmp(a, "--epochs") && v) {
            if (cli_parse_long(a, v, 1, 1000000, &lv)) return cli_fail(verb);
            co.epochs = (int)lv, i++;
        } else if (!strcmp(a, "--settings") && v) {
            co.settings = v, i++;
        } else if (!strcmp(a, "--only") && v) {
            co.only = v, i++;
        } else if (!strcmp(a, "--out") && v) {
            out = v, i++;
        } else if (!strcmp(a, "--plan") && v) {
            plan_out = v, i++;
        } else {
            return cli_failf(verb, "unknown or incomplete option '%s' (see --help)", a);
        }
    }
    imp_sweep_plan plan;
    if (imp_sweep_plan_cdl(&plan, &co)) return cli_fail(verb);
    int rc = cli_reproduce_sweep(verb, &plan, plan_out, out, co.threads > 0 ? co.threads : 1, (int)jobs);
    imp_sweep_plan_free(&plan);
    return rc;
}
