/* impulse core: status codes, error messages, seeded RNG, BLAS set-up.
 *
 * Every public function that can fail returns an int status (IMP_OK == 0,
 * negative on failure) and leaves a one-line, human-readable message that
 * names the offending field in a thread-local buffer, fetched with
 * imp_last_error(). The library never prints and never exits.
 */
#ifndef IMPULSE_CORE_H
#define IMPULSE_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_VERSION_STRING "0.1.0"

enum imp_status {
    IMP_OK = 0,
    IMP_ERR_INVALID = -1,     /* an argument or parameter is impossible */
    IMP_ERR_NOMEM = -2,       /* allocation failed */
    IMP_ERR_IO = -3,          /* open/read/write/rename failed */
    IMP_ERR_FORMAT = -4,      /* malformed or truncated file */
    IMP_ERR_SHAPE = -5,       /* wrong shape or dtype */
    IMP_ERR_NUMERIC = -6,     /* NaN/Inf, singular matrix, divergence */
    IMP_ERR_NOT_FOUND = -7,   /* missing array, unknown name */
    IMP_ERR_UNSUPPORTED = -8  /* valid but not implemented */
};

/* Message of the most recent failure in this thread ("" if none). */
const char *imp_last_error(void);
/* Short name of a status code, e.g. "invalid argument". */
const char *imp_status_string(int status);
/* Record a failure message (printf-style) and return `status`, so that
 * library code can write `return imp_fail(IMP_ERR_SHAPE, "x: ...", ...)`. */
int imp_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prefix the current message with context ("loading data.npz: <old>"). */
int imp_fail_context(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void imp_clear_error(void);

/* ---- Input budget ----
 * The most bytes a reader materialises from one input file: a file read
 * whole, the decompressed members of an .npz, the decompressed variables of
 * a .mat. Sizes a file declares are checked against it (and against the
 * file's own length) before anything is allocated, so a corrupt or hostile
 * file fails with a message instead of exhausting memory. Default 512 MiB;
 * the environment variable IMPULSE_MAX_INPUT_BYTES (a byte count) overrides
 * it, and imp_set_input_limit() overrides both (0 restores the default). */
#define IMP_INPUT_LIMIT_DEFAULT ((size_t)512 << 20)
size_t imp_input_limit(void);
void imp_set_input_limit(size_t bytes);

/* Checks used at API boundaries; each returns IMP_OK or fails naming `what`. */
int imp_check_finite(const double *x, size_t n, const char *what);

/* ---- RNG: xoshiro256** seeded through splitmix64. Same seed, same stream,
 * on every platform. Normal variates by the polar Box-Muller method. ---- */
typedef struct imp_rng {
    uint64_t s[4];
    int has_spare;
    double spare;
} imp_rng;

void imp_rng_seed(imp_rng *rng, uint64_t seed);
uint64_t imp_rng_next(imp_rng *rng);
double imp_rng_uniform(imp_rng *rng);              /* [0, 1) */
double imp_rng_uniform_range(imp_rng *rng, double lo, double hi);
double imp_rng_normal(imp_rng *rng);               /* N(0, 1) */
size_t imp_rng_below(imp_rng *rng, size_t n);      /* uniform in [0, n) */
void imp_rng_shuffle(imp_rng *rng, size_t *idx, size_t n);

/* ---- BLAS ----
 * OpenBLAS detects the CPU once, when it is loaded, from OPENBLAS_CORETYPE
 * or cpuid; on these virtual machines cpuid reports a generic model and
 * OpenBLAS falls back to SSE3 ("Prescott") kernels, 2-3x slower. OpenBLAS
 * also starts its thread pool when loaded: idle workers that spin and yield
 * on the other core even after imp_blas_init() made every call
 * single-threaded. Programs that link impulse should call
 * imp_blas_env_fixup(argv) first thing in main() and imp_blas_init() before
 * any compute. */
/* If OPENBLAS_CORETYPE or OPENBLAS_NUM_THREADS is unset, set it (the core
 * from the CPU features, one BLAS thread) and re-execute the program once
 * (/proc/self/exe with the same argv; IMPULSE_NO_REEXEC set, or already set
 * by the caller, prevents it). Returns only if no re-execution was needed or
 * it failed (then OpenBLAS keeps its own detection): IMP_OK, or
 * IMP_ERR_IO with the reason. */
int imp_blas_env_fixup(char **argv);
int imp_blas_init(void);                   /* single-threaded BLAS calls */
const char *imp_blas_corename(void);       /* e.g. "SkylakeX", or "unknown" */
const char *imp_blas_suggested_coretype(void); /* from CPU features, or NULL */

/* Wall clock in seconds (monotonic). */
double imp_time_now(void);

#ifdef __cplusplus
}
#endif
#endif
