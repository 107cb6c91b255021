/* CLI entry points of the constrained-network strand (issue 3). */
#include "cli.h"

int cli_train_chnn(int argc, char **argv, const char *model)
{
    (void)argc; (void)argv; (void)model;
    return CLI_NOT_MINE;
}

int cli_eval_chnn(int argc, char **argv, const char *model_kind)
{
    (void)argc; (void)argv; (void)model_kind;
    return CLI_NOT_MINE;
}

int cli_reproduce_chnn(int argc, char **argv)
{
    (void)argc; (void)argv;
    return cli_failf("reproduce chnn", "not built yet");
}
