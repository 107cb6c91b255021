/* `impulse reproduce chnn` (placeholder until the data generator lands). */
#include "cli.h"

int cli_reproduce_chnn(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("reproduce chnn", "not built yet");
}
