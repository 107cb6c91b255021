/* `impulse impact gp-* | learning-curve | drop` (issue 4, GP and drop part). */
#include "cli.h"

int cli_impact_gp(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("impact", "GP models not built yet");
}

int cli_impact_drop(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("impact drop", "not built yet");
}

int cli_reproduce_impact_gp(int argc, char **argv, const char *outdir, int quick)
{
    (void)argc; (void)argv; (void)outdir; (void)quick;
    return cli_failf("reproduce impact", "GP learning curves not built yet");
}
