/* BLAS set-up. impulse links OpenBLAS directly (it carries an optimised
 * LAPACK too). Two facts measured on our 2-core machines drive this file
 * (see the README's linking notes): threads give no GEMM speed-up at our sizes, so
 * every call is single-threaded and we parallelise our own batch loops
 * instead; and OpenBLAS misdetects the virtual CPU as "Prescott" unless
 * OPENBLAS_CORETYPE is set before the library is loaded. */
#define _GNU_SOURCE
#include "impulse/core.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void openblas_set_num_threads(int num_threads);
char *openblas_get_corename(void);

int imp_blas_init(void)
{
    openblas_set_num_threads(1);
    return IMP_OK;
}

const char *imp_blas_corename(void)
{
    const char *name = openblas_get_corename();
    return name ? name : "unknown";
}

const char *imp_blas_suggested_coretype(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return "SkylakeX";
    if (__builtin_cpu_supports("avx2")) return "Haswell";
    if (__builtin_cpu_supports("avx")) return "Sandybridge";
#endif
    return NULL;
}

double imp_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
