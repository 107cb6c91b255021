#include "cli.h"

int cli_simulate(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("simulate", "not built yet");
}
