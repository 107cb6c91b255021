/* A small shared test header: checks that count, a gradient check helper,
 * and the closing "N passed, N failed" line that CI reads. Each test program
 * includes it once and calls TEST_MAIN_END() at the end of main(). */
#ifndef IMPULSE_TEST_H
#define IMPULSE_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_passed_ = 0, test_failed_ = 0;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (cond) test_passed_++;                                                      \
        else {                                                                         \
            test_failed_++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
        }                                                                              \
    } while (0)

#define CHECK_MSG(cond, ...)                                                           \
    do {                                                                               \
        if (cond) test_passed_++;                                                      \
        else {                                                                         \
            test_failed_++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                              \
            fprintf(stderr, "\n");                                                     \
        }                                                                              \
    } while (0)

/* |a - b| <= atol + rtol |b| */
#define CHECK_CLOSE(a, b, rtol, atol)                                                  \
    do {                                                                               \
        double a_ = (a), b_ = (b);                                                     \
        if (fabs(a_ - b_) <= (atol) + (rtol) * fabs(b_)) test_passed_++;               \
        else {                                                                         \
            test_failed_++;                                                            \
            fprintf(stderr, "%s:%d: CHECK_CLOSE failed: %s = %.12g, %s = %.12g\n",     \
                    __FILE__, __LINE__, #a, a_, #b, b_);                               \
        }                                                                              \
    } while (0)

#define CHECK_OK(expr)                                                                 \
    do {                                                                               \
        int st_ = (expr);                                                              \
        if (st_ == 0) test_passed_++;                                                  \
        else {                                                                         \
            test_failed_++;                                                            \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr,  \
                    st_, imp_last_error());                                            \
        }                                                                              \
    } while (0)

/* Expect a specific failure status and a non-empty message. */
#define CHECK_FAILS(expr, status)                                                      \
    do {                                                                               \
        imp_clear_error();                                                             \
        int st_ = (expr);                                                              \
        if (st_ == (status) && imp_last_error()[0] != '\0') test_passed_++;            \
        else {                                                                         \
            test_failed_++;                                                            \
            fprintf(stderr, "%s:%d: %s returned %d (want %d), message '%s'\n",          \
                    __FILE__, __LINE__, #expr, st_, (int)(status), imp_last_error());  \
        }                                                                              \
    } while (0)

/* Relative error between analytic and numeric derivative vectors:
 * max_i |a_i - n_i| / max(max_i |n_i|, floor). */
static inline double test_grad_rel_err(const double *analytic, const double *numeric, size_t n,
                                       double floor_)
{
    double num = 0.0, den = floor_;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(analytic[i] - numeric[i]);
        if (d > num) num = d;
        if (fabs(numeric[i]) > den) den = fabs(numeric[i]);
    }
    return num / den;
}

#if defined(_GNU_SOURCE) || defined(_POSIX_C_SOURCE)
#include <sys/wait.h>
/* Run a shell command (IMPULSE_PROGRESS=0, stderr joined to stdout) and
 * capture its output into out; the exit code, or -1 if a signal ended it.
 * Programs that use it define _GNU_SOURCE before any include (popen). */
static inline int test_run_command(const char *command, char *out, size_t cap)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "IMPULSE_PROGRESS=0 %s 2>&1", command);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
#endif

#define TEST_MAIN_END()                                                                \
    do {                                                                               \
        printf("%d passed, %d failed\n", test_passed_, test_failed_);                  \
        return test_failed_ ? 1 : 0;                                                   \
    } while (0)

#endif
