/* BLAS set-up. impulse links OpenBLAS directly (it carries an optimised
 * LAPACK too). Two facts measured on our 2-core machines drive this file
 * (see the README's linking notes): threads give no GEMM speed-up at our sizes, so
 * every call is single-threaded and we parallelise our own batch loops
 * instead; and OpenBLAS misdetects the virtual CPU as "Prescott" unless
 * OPENBLAS_CORETYPE is set before the library is loaded. */
#define _GNU_SOURCE
#include "impulse/core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);
char *openblas_get_corename(void);

int imp_blas_env_fixup(char **argv)
{
    if (getenv("IMPULSE_NO_REEXEC") || (getenv("OPENBLAS_CORETYPE") && getenv("OPENBLAS_NUM_THREADS")))
        return IMP_OK;
    if (!argv || !argv[0]) return imp_fail(IMP_ERR_INVALID, "argv: NULL (the program's own argv is needed)");
    const char *core = getenv("OPENBLAS_CORETYPE") ? NULL : imp_blas_suggested_coretype();
    if (core) setenv("OPENBLAS_CORETYPE", core, 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    setenv("IMPULSE_NO_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);
    return imp_fail(IMP_ERR_IO, "re-executing /proc/self/exe: %s", strerror(errno));
}

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
    /* IMPULSE_ISA (src/nn/activation.c) asks the network kernels for a lower
     * instruction set, to measure what a CPU without the higher ones gets:
     * the BLAS kernels follow */
    const char *isa = getenv("IMPULSE_ISA");
    if (isa && !strcmp(isa, "base")) return "Nehalem";
    if (isa && !strcmp(isa, "avx2") && __builtin_cpu_supports("avx2")) return "Haswell";
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
