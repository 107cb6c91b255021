#define _POSIX_C_SOURCE 200809L
/* libFuzzer harness for the training-log reader of `impulse plot-log`
 * (imp_report_plot_log: JSON lines with epoch, loss, its terms, lr) and the
 * figure it builds. The input is one log, or two separated by a form feed
 * (several logs in one figure). The figure's data are written to a scratch
 * .npz; the python renderer is replaced by /bin/true (IMPULSE_PYTHON), so
 * only impulse's side runs. Seeds: tests/fuzz/corpus/plot_log. See
 * scripts/fuzz.sh. */
#include "fuzz_util.h"
#include "impulse/report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("IMPULSE_PYTHON", "/bin/true", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char paths[2][160], stem[160], npz[170];
    const char *logs[2] = {paths[0], paths[1]};
    snprintf(stem, sizeof stem, "%s", fuzz_scratch(".fig"));
    snprintf(npz, sizeof npz, "%s.npz", stem);
    const uint8_t *ff = memchr(data, '\f', size);
    size_t n = ff ? 2 : 1, len0 = ff ? (size_t)(ff - data) : size;
    snprintf(paths[0], sizeof paths[0], "%s", fuzz_scratch("-a.log.jsonl"));
    snprintf(paths[1], sizeof paths[1], "%s", fuzz_scratch("-b.log.jsonl"));
    int ok = fuzz_write(paths[0], data, len0) == 0;
    if (ok && n == 2) ok = fuzz_write(paths[1], ff + 1, size - len0 - 1) == 0;
    if (ok) (void)imp_report_plot_log(logs, NULL, n, stem);
    remove(paths[0]);
    remove(paths[1]);
    remove(npz);
    return 0;
}
