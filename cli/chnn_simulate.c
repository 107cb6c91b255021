/* `impulse simulate` for the constrained-network systems (issue 3). */
#include "cli.h"

int cli_simulate_chnn(int argc, char **argv, const char *system)
{
    (void)argc; (void)argv; (void)system;
    return CLI_NOT_MINE;
}
