#include "cli.h"

int cli_rollout(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("rollout", "not built yet");
}
