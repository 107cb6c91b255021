#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_fail(const char *verb)
{
    const char *msg = imp_last_error();
    fprintf(stderr, "impulse %s: error: %s\n", verb, msg[0] ? msg : "unknown failure");
    return 1;
}

int cli_failf(const char *verb, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "impulse %s: error: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int cli_parse_long(const char *opt, const char *text, long lo, long hi, long *out)
{
    if (!text || !*text) return imp_fail(IMP_ERR_INVALID, "%s: missing value", opt);
    errno = 0;
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (errno || *end != '\0')
        return imp_fail(IMP_ERR_INVALID, "%s: '%s' is not an integer", opt, text);
    if (v < lo || v > hi)
        return imp_fail(IMP_ERR_INVALID, "%s: %ld is out of range [%ld, %ld]", opt, v, lo, hi);
    *out = v;
    return IMP_OK;
}

int cli_parse_double(const char *opt, const char *text, double lo, double hi, double *out)
{
    if (!text || !*text) return imp_fail(IMP_ERR_INVALID, "%s: missing value", opt);
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno || *end != '\0' || !isfinite(v))
        return imp_fail(IMP_ERR_INVALID, "%s: '%s' is not a finite number", opt, text);
    if (v < lo || v > hi)
        return imp_fail(IMP_ERR_INVALID, "%s: %g is out of range [%g, %g]", opt, v, lo, hi);
    *out = v;
    return IMP_OK;
}

int cli_progress_enabled(void)
{
    const char *e = getenv("IMPULSE_PROGRESS");
    if (e) return strcmp(e, "0") != 0;
    return isatty(2);
}

static volatile sig_atomic_t stop_requested_ = 0;
static void on_stop_signal(int sig)
{
    stop_requested_ = 1;
    signal(sig, SIG_DFL);
}
void cli_catch_stop_signals(void)
{
    signal(SIGINT, on_stop_signal);
    signal(SIGTERM, on_stop_signal);
}
int cli_stop_requested(void)
{
    return stop_requested_ != 0;
}
