#include "cli.h"

int cli_reproduce_cdl(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("reproduce cdl", "not built yet");
}
