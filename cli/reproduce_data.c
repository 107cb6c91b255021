/* `impulse reproduce your-data`: CD-Lagrange against ResNetContact and
 * ResNet on data not made by an event-driven simulator (the compliant
 * bouncing ball with a touch sensor, observation noise), the labels handled
 * by default and as given, evaluated on held-out trajectories: a sweep plan
 * (src/sweep/task_yourdata.c) run in --out by the sweep runner with --jobs
 * processes and reported (src/sweep/report_yourdata.c). The table behind
 * docs/your-data.md. A stopped run resumes where it stopped; --plan only
 * writes the plan. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "impulse/cdl.h"
#include "impulse/sweep.h"

#include <getopt.h>
#include <string.h>

static const char *verb = "reproduce your-data";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse reproduce your-data [options]\n"
            "  CD-Lagrange, ResNetContact and ResNet on compliant-contact data with a touch sensor\n"
            "  (impulse simulate compliant-ball), labels handled by default (auto: onset) and as\n"
            "  given; held-out trajectories; reference-code RMSE, the learned force at the floor.\n"
            "  One task per model x labels x seed, run in DIR (a sweep folder:\n"
            "  DIR/tasks/<id>/{model.npz,result.npz}); prints the report and writes DIR/report.md\n"
            "  and DIR/index.html (the table: section \"Your data\").\n"
            "  --seeds N        seeds (default 5): new noise, held-out starts and initialisation\n"
            "  --epochs E       training epochs (default 2000; --quick: 100)\n"
            "  --quick          at most 2 seeds, 100 epochs (a smoke test, not a result)\n"
            "  --restitution E  target restitution of the spring-damper contact (default 0.7)\n"
            "  --noise S        observation noise (default 0.2)\n"
            "  --system S       compliant-ball (default)\n"
            "  --jobs J         processes sharing the tasks (default 2)\n"
            "  --threads N      training threads per task written into the plan (default 1; the same\n"
            "                   N and seed give bit-identical results)\n"
            "  --impact-law L   CD-Lagrange's impact law: auto (default: newton on these data, as\n"
            "                   train's default), paper or newton (see train --help)\n"
            "  --lr-schedule S  every model's learning-rate schedule: auto (default: cosine on these\n"
            "                   data, as train's default), constant or cosine\n"
            "  --out DIR        results folder (default reproduce-your-data); run the same command\n"
            "                   again to resume: a finished task is never rerun. A folder holding\n"
            "                   another plan (other settings) is refused: use another --out; more\n"
            "                   --seeds add runs\n"
            "  --plan FILE      write the plan and stop (then: impulse sweep run FILE --out DIR, also\n"
            "                   under mpirun; impulse sweep report DIR)\n");
}

int cli_reproduce_your_data(int argc, char **argv)
{
    imp_sweep_your_data_opts yo;
    imp_sweep_your_data_opts_default(&yo);
    const char *out = "reproduce-your-data", *plan_out = NULL;
    int jobs = 2;
    static const struct option opts[] = {
        {"seeds", required_argument, 0, 's'}, {"epochs", required_argument, 0, 'E'},
        {"quick", no_argument, 0, 'q'},       {"restitution", required_argument, 0, 'e'},
        {"noise", required_argument, 0, 'n'}, {"system", required_argument, 0, 'S'},
        {"jobs", required_argument, 0, 'j'},  {"out", required_argument, 0, 'o'},
        {"impact-law", required_argument, 0, 'I'}, {"lr-schedule", required_argument, 0, 'L'},
        {"threads", required_argument, 0, 'T'}, {"plan", required_argument, 0, 'P'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, sched;
    long lv;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 's': st = cli_parse_long("--seeds", optarg, 1, 1000, &lv), yo.seeds = (int)lv; break;
        case 'E': st = cli_parse_long("--epochs", optarg, 1, 1000000, &lv), yo.epochs = (int)lv; break;
        case 'q': yo.quick = 1; break;
        case 'e': st = cli_parse_double("--restitution", optarg, 0, 1, &yo.restitution); break;
        case 'n': st = cli_parse_double("--noise", optarg, 0, 100, &yo.noise); break;
        case 'S':
            if (strcmp(optarg, "compliant-ball")) return cli_failf(verb, "--system: '%s' is not compliant-ball", optarg);
            yo.system = optarg;
            break;
        case 'j': st = cli_parse_long("--jobs", optarg, 1, 64, &lv), jobs = (int)lv; break;
        case 'T': st = cli_parse_long("--threads", optarg, 1, CLI_MAX_THREADS, &lv), yo.threads = (int)lv; break;
        case 'o': out = optarg; break;
        case 'P': plan_out = optarg; break;
        case 'I':
            if (strcmp(optarg, "auto") && strcmp(optarg, "paper") && strcmp(optarg, "newton"))
                return cli_failf(verb, "--impact-law: '%s' is not auto, paper or newton", optarg);
            yo.impact_law = optarg;
            break;
        case 'L':
            if (imp_lr_schedule_from_name(optarg, &sched))
                return cli_failf(verb, "--lr-schedule: '%s' is not constant, cosine or auto", optarg);
            yo.lr_schedule = optarg;
            break;
        case 'h': usage(stdout); return 0;
        default: return cli_failf(verb, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail(verb);
    }
    if (optind < argc) return cli_failf(verb, "unexpected argument '%s'", argv[optind]);
    imp_sweep_plan plan;
    if (imp_sweep_plan_your_data(&plan, &yo)) return cli_fail(verb);
    int rc = cli_reproduce_sweep(verb, &plan, plan_out, out, yo.threads > 0 ? yo.threads : 1, jobs);
    imp_sweep_plan_free(&plan);
    return rc;
}
