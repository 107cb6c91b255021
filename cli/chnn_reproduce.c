/* `impulse reproduce chnn`: Finzi et al. 2020 figures 5-7 as a sweep plan
 * (src/sweep), run in --out by the sweep runner and reported: the table of
 * mean geometric-mean relative errors beside the paper's, the bar chart,
 * the error/energy/constraint curves and, with --data-efficiency, fig 6.
 * A stopped run resumes where it stopped; --plan only writes the plan, for
 * `impulse sweep run` on other machines or under MPI. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "impulse/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *verb = "reproduce chnn";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse reproduce chnn [--quick] [--systems a,b,...] [--models chnn,clnn,hnn,delan,node]\n"
            "         [--epochs E] [--n-train N] [--n-test N] [--lr X] [--hidden H] [--seed K] [--seeds S]\n"
            "         [--out DIR] [--data-efficiency [--n-train-list 20,200,800]] [--threads N] [--plan FILE]\n"
            "         [--precision double|single]\n"
            "  default: CHNN and CLNN on the eight systems of figs 5/7 (pendulum-chain:1,2,3,5,\n"
            "  coupled-pendulums:3, magnet-pendulum, gyroscope, rotor), HNN, DeLaN and NODE on\n"
            "  pendulum-chain:3, gyroscope and rotor; 2000 epochs, 800 training trajectories, 100 test\n"
            "  trajectories (the reference settings); --systems/--models: those, every pair\n"
            "  --quick: pendulum-chain:1,2; chnn, node; 30 epochs, 200 trajectories, 20 test trajectories\n"
            "  --data-efficiency: pendulum-chain:2 at each --n-train-list size (fig 6)\n"
            "  --seed K --seeds S: training seeds K..K+S-1 (default 0, 1)\n"
            "  --precision single: train with float hidden-to-hidden products (tasks precision=single,\n"
            "  ids ending .f32; evaluation stays double)\n"
            "  --threads N: training threads per task, 1..64 (default 2); the same N and seed\n"
            "  give bit-identical checkpoints, another N agrees to rounding\n"
            "  --out DIR (default reproduce-chnn): the sweep folder; run again to resume (--resume is\n"
            "  accepted and is always the case: a finished task is never rerun)\n"
            "  --plan FILE: write the plan and stop (then: impulse sweep run FILE --out DIR, also\n"
            "  under mpirun; impulse sweep report DIR)\n");
}


int cli_reproduce_chnn(int argc, char **argv)
{
    imp_sweep_chnn_opts co;
    imp_sweep_chnn_opts_default(&co);
    const char *out = "reproduce-chnn", *plan_out = NULL, *ntr_list = "20,200,800";
    long threads = CLI_DEFAULT_THREADS;
    int quick = 0, deff = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        long lv;
        double dv;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "--resume")) {
            /* always */
        } else if (!strcmp(a, "--data-efficiency")) {
            deff = 1;
        } else if (!strcmp(a, "--systems") && val) {
            co.systems = argv[++i];
        } else if (!strcmp(a, "--models") && val) {
            co.models = argv[++i];
        } else if (!strcmp(a, "--n-train-list") && val) {
            ntr_list = argv[++i];
        } else if (!strcmp(a, "--out") && val) {
            out = argv[++i];
        } else if (!strcmp(a, "--plan") && val) {
            plan_out = argv[++i];
        } else if (!strcmp(a, "--epochs")) {
            if (cli_parse_long(a, val, 0, 1000000, &lv)) return cli_fail(verb);
            co.epochs = (int)lv;
            i++;
        } else if (!strcmp(a, "--n-train")) {
            if (cli_parse_long(a, val, 1, 1000000, &lv)) return cli_fail(verb);
            co.n_train = (int)lv;
            i++;
        } else if (!strcmp(a, "--n-test")) {
            if (cli_parse_long(a, val, 1, 100000, &lv)) return cli_fail(verb);
            co.n_test = (int)lv;
            i++;
        } else if (!strcmp(a, "--hidden")) {
            if (cli_parse_long(a, val, 1, 4096, &lv)) return cli_fail(verb);
            co.hidden = (int)lv;
            i++;
        } else if (!strcmp(a, "--seed")) {
            if (cli_parse_long(a, val, 0, 2147483647L - 1000, &lv)) return cli_fail(verb);
            co.first_seed = (int)lv;
            i++;
        } else if (!strcmp(a, "--seeds")) {
            if (cli_parse_long(a, val, 1, 1000, &lv)) return cli_fail(verb);
            co.seeds = (int)lv;
            i++;
        } else if (!strcmp(a, "--lr")) {
            if (cli_parse_double(a, val, 1e-12, 10, &dv)) return cli_fail(verb);
            co.lr = dv;
            i++;
        } else if (!strcmp(a, "--precision")) {
            if (cli_parse_precision(a, val, &co.single)) return cli_fail(verb);
            i++;
        } else if (!strcmp(a, "--threads")) {
            if (cli_parse_long(a, val, 1, CLI_MAX_THREADS, &lv)) return cli_fail(verb);
            threads = lv;
            i++;
        } else {
            return cli_failf(verb, "unknown option '%s' (see --help)", a);
        }
    }
    if (quick) co.preset = "quick";
    if (deff) {
        co.preset = quick ? "quick" : "all";
        if (!co.systems) co.systems = "pendulum-chain:2";
        co.n_train_list = ntr_list;
    }
    imp_sweep_plan plan;
    if (imp_sweep_plan_chnn(&plan, &co)) return cli_fail(verb);
    int rc = cli_reproduce_sweep(verb, &plan, plan_out, out, (int)threads, 1);
    imp_sweep_plan_free(&plan);
    return rc;
}
