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
 * own detection picks slow SSE3 kernels. If the variable is unset, set it
 * from the CPU features and re-execute ourselves once. */
static void blas_env_fixup(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE") || getenv("IMPULSE_NO_REEXEC")) return;
    const char *core = imp_blas_suggested_coretype();
    if (!core) return;
    setenv("OPENBLAS_CORETYPE", core, 1);
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
