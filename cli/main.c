/* impulse: learn contact and constrained dynamics, identify impact models. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    cli_verb_fn fn;
    const char *help;
} verbs[] = {
    {"simulate", cli_simulate, "generate ground-truth trajectories of a system"},
    {"train", cli_train, "train a model on trajectories"},
    {"eval", cli_eval, "evaluate a trained model on test trajectories"},
    {"import", cli_import, "turn numpy, CSV or HDF5 trajectories into a trajectory file"},
    {"inspect", cli_inspect, "what a file holds and which models can train on it"},
    {"rollout", cli_rollout, "roll a trained model out from an initial state"},
    {"impact", cli_impact, "planar impact models: predict, identify, bounds, GP models, drops"},
    {"reproduce", cli_reproduce, "rerun a paper's experiments: cdl, chnn, impact"},
    {"sweep", cli_sweep, "run a reproduction's tasks resumably, on one machine or many (MPI)"},
    {"plot-log", cli_plot_log, "draw loss curves from training logs (JSON lines)"},
    {"info", cli_info, "version, BLAS core and build facts"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: impulse VERB [options]   (impulse VERB --help for a verb's options)\n\nverbs:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
}

int main(int argc, char **argv)
{
    imp_blas_env_fixup(argv); /* returns only if no re-execution was needed (or it failed) */
    imp_blas_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("impulse %s\n", IMP_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (!strcmp(argv[1], verbs[i].name)) return verbs[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "impulse: error: unknown verb '%s' (try impulse --help)\n", argv[1]);
    return 2;
}
