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
    {"rollout", cli_rollout, "roll a trained model out from an initial state"},
    {"impact", cli_impact, "planar impact models: predict, identify, bounds, GP models, drops"},
    {"reproduce", cli_reproduce, "rerun a paper's experiments: cdl, chnn, impact"},
    {"info", cli_info, "version, BLAS core and build facts"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: impulse VERB [options]   (impulse VERB --help for a verb's options)\n\nverbs:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
}

/* OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded; on these VMs its
 * own detection picks slow SSE3 kernels. It also starts its thread pool at
 * load time: idle workers that spin and yield on the other core even after
 * openblas_set_num_threads(1) (about 3 % system time in a training run,
 * measured), taking it from our own parallel workers. If either variable is
 * unset, set it (the core from the CPU features, one BLAS thread, as every
 * call of ours is single-threaded) and re-execute ourselves once. */
static void blas_env_fixup(char **argv)
{
    if (getenv("IMPULSE_NO_REEXEC") || (getenv("OPENBLAS_CORETYPE") && getenv("OPENBLAS_NUM_THREADS"))) return;
    const char *core = getenv("OPENBLAS_CORETYPE") ? NULL : imp_blas_suggested_coretype();
    if (core) setenv("OPENBLAS_CORETYPE", core, 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    setenv("IMPULSE_NO_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);
    /* exec failed: carry on with the default detection */
}

int main(int argc, char **argv)
{
    blas_env_fixup(argv);
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
