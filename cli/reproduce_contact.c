/* `impulse reproduce contact`: the contact comparisons of issues 24 and 25
 * (docs/contact.md): the ball in a box, several bodies with their own e and
 * mu per contact, the constrained systems that hit things and the simulated
 * box tosses, as a sweep plan (src/sweep/task_contact.c, with strand=chnn
 * and strand=cube tasks) run in --out and reported
 * (src/sweep/report_contact.c); --json prints one line per finished task
 * instead of the report. A stopped run resumes where it stopped; --plan
 * only writes the plan. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "impulse/sweep.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *verb = "reproduce contact";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse reproduce contact [--quick] [--only PART,...] [--seeds K] [--epochs E] [--json]\n"
            "                                 [options]\n"
            "  Contact where it happens (docs/contact.md). Parts:\n"
            "  ball-box     compliant-ball-box (apparent e 0.80, a floor and two walls), noise 0.05, 24 training\n"
            "               and 6 test trajectories: CD-Lagrange with e learned per wall (with the per-body\n"
            "               labels, without them, gated by geometry) against ResNetContact and ResNet;\n"
            "               rollout RMSE, each wall's e, the lowest gap any rollout reaches (3 seeds, 200 epochs)\n"
            "  points       bouncing-points:5, e and mu per contact: CD-Lagrange with friction against\n"
            "               ResNetContact and ResNet; learned e and mu per contact against the truth and each\n"
            "               contact's impacts in the training data (5 seeds, 150 epochs)\n"
            "  disks        bouncing-disks:5 the same (when this build has the simulator)\n"
            "  constrained  CHNN and CLNN with e and mu learned per contact, against the same without contact,\n"
            "               NODE and a ResNet on chain-ground:3, chain-ground-elastic:3 and gyroscope-wall:\n"
            "               relative state error summed over the first 5 steps and over the rollout, 100 test\n"
            "               trajectories (5 seeds, 500 epochs, 400 training trajectories; seed by seed)\n"
            "  box-toss     rigid-identified and the learned box on simulated box tosses: e and mu against\n"
            "               the simulator's, position error and penetration over 1 s (3 seeds)\n"
            "  --quick          2 seeds (1: constrained, box-toss), 30 epochs (10 constrained), at most 8\n"
            "                   training trajectories (10 and 20 test ones constrained), rigid-identified\n"
            "                   only (minutes)\n"
            "  --only LIST      parts to run (default all)\n"
            "  --seeds K        seeds of every part\n"
            "  --epochs E       training epochs of every part\n"
            "  --box-tosses N   training tosses of the box-toss tasks (default 16)\n"
            "  --threads N      training threads per task written into the plan (default 1)\n"
            "  --json           one JSON object per line per finished task (part: model, constrained or\n"
            "                   box-toss, and its numbers) instead of the report\n"
            "  --jobs J         processes sharing the tasks (default 1)\n"
            "  --out DIR        results folder (default reproduce-contact); run the same command again to\n"
            "                   resume: a finished task is never rerun\n"
            "  --plan FILE      write the plan and stop (then: impulse sweep run FILE --out DIR, also under\n"
            "                   mpirun; impulse sweep report DIR)\n");
}

int cli_reproduce_contact(int argc, char **argv)
{
    imp_sweep_contact_opts co;
    imp_sweep_contact_opts_default(&co);
    const char *out = "reproduce-contact", *plan_out = NULL;
    int jobs = 1, json = 0;
    static const struct option opts[] = {
        {"quick", no_argument, 0, 'q'},        {"only", required_argument, 0, 'O'},
        {"seeds", required_argument, 0, 's'},  {"epochs", required_argument, 0, 'E'},
        {"box-tosses", required_argument, 0, 'b'}, {"threads", required_argument, 0, 'T'},
        {"json", no_argument, 0, 'J'},         {"jobs", required_argument, 0, 'j'},
        {"out", required_argument, 0, 'o'},    {"plan", required_argument, 0, 'P'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    long lv;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 'q': co.quick = 1; break;
        case 'O': co.only = optarg; break;
        case 's': st = cli_parse_long("--seeds", optarg, 1, 1000, &lv), co.seeds = (int)lv; break;
        case 'E': st = cli_parse_long("--epochs", optarg, 1, 1000000, &lv), co.epochs = (int)lv; break;
        case 'b': st = cli_parse_long("--box-tosses", optarg, 1, 100000, &lv), co.box_tosses = (int)lv; break;
        case 'T': st = cli_parse_long("--threads", optarg, 1, CLI_MAX_THREADS, &lv), co.threads = (int)lv; break;
        case 'J': json = 1; break;
        case 'j': st = cli_parse_long("--jobs", optarg, 1, 64, &lv), jobs = (int)lv; break;
        case 'o': out = optarg; break;
        case 'P': plan_out = optarg; break;
        case 'h': usage(stdout); return 0;
        default: return cli_failf(verb, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail(verb);
    }
    if (optind < argc) return cli_failf(verb, "unexpected argument '%s'", argv[optind]);
    imp_sweep_plan plan;
    if (imp_sweep_plan_contact(&plan, &co)) return cli_fail(verb);
    const int threads = co.threads > 0 ? co.threads : 1;
    if (plan_out || !json) {
        int rc = cli_reproduce_sweep(verb, &plan, plan_out, out, threads, jobs);
        imp_sweep_plan_free(&plan);
        return rc;
    }
    int rc = cli_reproduce_sweep_json(verb, &plan, out, threads, jobs, imp_sweep_contact_rows);
    imp_sweep_plan_free(&plan);
    return rc;
}
