/* impulse plot-log LOG.jsonl [LOG2.jsonl ...] [-o STEM]: loss curves of training runs. */
#include "cli.h"
#include "impulse/report.h"

#include <stdlib.h>
#include <string.h>

int cli_plot_log(int argc, char **argv)
{
    const char *verb = "plot-log";
    const char *out = NULL;
    const char **logs = calloc((size_t)argc, sizeof *logs);
    if (!logs) return cli_failf(verb, "out of memory");
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: impulse plot-log LOG.jsonl [LOG.jsonl ...] [-o STEM]\n"
                   "  draws the training loss, its terms and the learning rate over epochs from the\n"
                   "  JSON-lines logs of impulse train (MODEL.npz.log.jsonl), one curve per log, to\n"
                   "  STEM.png, STEM.svg and STEM.npz (default: the first log's name without .jsonl,\n"
                   "  plus .loss)\n");
            free(logs);
            return 0;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) {
                free(logs);
                return cli_failf(verb, "%s: missing file stem", argv[i]);
            }
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(logs);
            return cli_failf(verb, "unknown option '%s' (see --help)", argv[i]);
        } else {
            logs[n++] = argv[i];
        }
    }
    if (!n) {
        free(logs);
        return cli_failf(verb, "missing LOG.jsonl (see --help)");
    }
    char stem[4096];
    if (!out) {
        size_t len = strlen(logs[0]);
        if (len > 6 && !strcmp(logs[0] + len - 6, ".jsonl")) len -= 6;
        snprintf(stem, sizeof stem, "%.*s.loss", (int)len, logs[0]);
        out = stem;
    }
    int st = imp_report_plot_log(logs, NULL, n, out);
    free(logs);
    if (st) return cli_fail(verb);
    fprintf(stderr, "impulse plot-log: wrote %s.png, .svg, .npz\n", out);
    return 0;
}
