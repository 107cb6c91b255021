/* `impulse impact ...` and `impulse reproduce impact` (issue 4). */
#include "cli.h"

int cli_impact(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("impact", "not built yet");
}

int cli_reproduce_impact(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("reproduce impact", "not built yet");
}
