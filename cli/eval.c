#include "cli.h"

int cli_eval(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("eval", "not built yet");
}
