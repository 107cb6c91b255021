/* Thread-local error messages: the library records, the caller decides
 * whether and how to show them. */
#include "impulse/core.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define IMP_ERRMSG_CAP 1024

static _Thread_local char errmsg[IMP_ERRMSG_CAP];

const char *imp_last_error(void) { return errmsg; }

void imp_clear_error(void) { errmsg[0] = '\0'; }

const char *imp_status_string(int status)
{
    switch (status) {
    case IMP_OK: return "ok";
    case IMP_ERR_INVALID: return "invalid argument";
    case IMP_ERR_NOMEM: return "out of memory";
    case IMP_ERR_IO: return "i/o error";
    case IMP_ERR_FORMAT: return "malformed file";
    case IMP_ERR_SHAPE: return "wrong shape or type";
    case IMP_ERR_NUMERIC: return "numerical failure";
    case IMP_ERR_NOT_FOUND: return "not found";
    case IMP_ERR_UNSUPPORTED: return "unsupported";
    default: return "unknown error";
    }
}

int imp_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    return status;
}

int imp_fail_context(int status, const char *fmt, ...)
{
    char old[IMP_ERRMSG_CAP];
    memcpy(old, errmsg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    /* a message that names its context already (a file's path) keeps it once */
    size_t pre = n >= 0 ? strlen(errmsg) : 0;
    if (pre > 0 && !strncmp(old, errmsg, pre) && (old[pre] == '\0' || (old[pre] == ':' && old[pre + 1] == ' '))) {
        memcpy(errmsg, old, sizeof errmsg);
        return status;
    }
    if (n >= 0 && (size_t)n + 2 < sizeof errmsg && old[0] != '\0') {
        /* append ": <old>", truncated to fit */
        size_t room = sizeof errmsg - (size_t)n - 3, len = strlen(old);
        if (len > room) len = room;
        memcpy(errmsg + n, ": ", 2);
        memcpy(errmsg + n + 2, old, len);
        errmsg[n + 2 + len] = '\0';
    }
    return status;
}

int imp_check_finite(const double *x, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return imp_fail(IMP_ERR_NUMERIC, "%s: non-finite value %g at flat index %zu",
                            what, x[i], i);
    return IMP_OK;
}
