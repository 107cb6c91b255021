#include "cli.h"
#include "impulse/contact_systems.h"

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

int cli_handle_labels(const char *verb, imp_trajset *ts, const char *mode_name, int quiet, char *note, size_t cap)
{
    note[0] = 0;
    imp_label_mode mode;
    if (imp_label_mode_from_name(mode_name ? mode_name : "auto", &mode)) return cli_fail(verb);
    if (!ts->has_contact) return 0;
    imp_label_report r;
    if (imp_contact_labels_apply(ts, mode, &r)) return cli_fail(verb);
    int odd = r.multi || r.no_change || r.no_pair;
    if (quiet && !odd) return 0;
    const char *why = mode != IMP_LABELS_AUTO ? "as asked"
                      : r.mode == IMP_LABELS_AS_GIVEN ? "default for meta labels \"impact\" or \"as-given\""
                                                      : "default for data whose meta labels are not \"impact\" or \"as-given\"";
    snprintf(note, cap,
            "impulse %s: %s: contact labels: %d in %d intervals, %d impacts (velocity reversals); %d impacts carry "
            "several labels (%d extra, %d while separating), %d labels show no velocity change, %d resting, "
            "%d on bodies without a contact pair (rest: |u| <= %.3g); handling %s (%s): %d labels kept",
            verb, odd ? "notice" : "info", r.labels, r.intervals, r.impacts, r.multi, r.extra, r.separating,
            r.no_change, r.resting, r.no_pair, r.v_rest, imp_label_mode_name(r.mode), why, r.kept);
    return 0;
}
