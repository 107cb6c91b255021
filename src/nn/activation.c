/* Activations: names, and the fused value + first-derivative kernel used by
 * every MLP pass. Second derivatives are in mlp_internal.h (they are
 * functions of the cached value and first derivative).
 *
 * The kernels do not call libm: at the shapes the models use (inputs of
 * dimension 1..12 into 500 units) the transcendental functions, not the
 * matrix products, dominate the first layer, and glibc's scalar tanh costs
 * ~9 ns. The exponential below is branch-free, so GCC vectorises the loops;
 * AVX2 and AVX-512 versions are picked at run time from the CPU features,
 * without a global -march flag. Accuracy: a few ulp (tests/test_nn.c compares
 * against libm over a dense grid). */
#include "nn/mlp_internal.h"
#include "nn/act_math.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every vectorised kernel of src/nn is dispatched by hand (IMP_ISA_VERSIONS
 * in mlp_internal.h) rather than by target_clones, so that one choice
 * covers them all, an environment variable can pin it for measurements,
 * and tests can force each version and check all of them on one machine.
 * The choice is made once, at the first kernel call, and cached. */
static int forced_isa = -1;
static _Atomic int chosen_isa = -1;

unsigned imp_isa_cpu(void)
{
    unsigned cpu = 0;
#if IMP_HAVE_ISA_VERSIONS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) cpu |= 1u << IMP_ISA_AVX2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) cpu |= 1u << IMP_ISA_AVX512;
#endif
    return cpu | 1u << IMP_ISA_BASE;
}

int imp_isa_choose(const char *request, unsigned cpu)
{
    int want = IMP_ISA_AVX512;
    if (request && strcmp(request, "base") == 0) want = IMP_ISA_BASE;
    else if (request && strcmp(request, "avx2") == 0) want = IMP_ISA_AVX2;
    /* "avx512", "auto", unset or anything else: the best the CPU has */
    for (int isa = want; isa > IMP_ISA_BASE; isa--)
        if (cpu & 1u << isa) return isa;
    return IMP_ISA_BASE;
}

int imp_act_force_isa(int isa)
{
    if (isa < 0) {
        forced_isa = -1;
        return IMP_OK;
    }
    if (isa <= IMP_ISA_AVX512 && (imp_isa_cpu() & 1u << isa)) {
        forced_isa = isa;
        return IMP_OK;
    }
    return imp_fail(IMP_ERR_UNSUPPORTED, "isa: %d not available on this CPU or build", isa);
}

int imp_act_isa(void)
{
    if (forced_isa >= 0) return forced_isa;
    int isa = chosen_isa;
    if (isa < 0) chosen_isa = isa = imp_isa_choose(getenv("IMPULSE_ISA"), imp_isa_cpu());
    return isa;
}

const char *imp_isa_name(int isa)
{
    switch (isa) {
    case IMP_ISA_AVX2: return "avx2";
    case IMP_ISA_AVX512: return "avx512";
    default: return "base";
    }
}

/* the activation kernels' versions and dispatch */
#define ACT_DISPATCH(name) \
    IMP_ISA_VERSIONS(name, (double *restrict z, double *restrict s, size_t n), (z, s, n))

int imp_activation_from_name(const char *name, imp_activation *out)
{
    static const struct { const char *name; imp_activation act; } table[] = {
        {"identity", IMP_ACT_IDENTITY}, {"linear", IMP_ACT_IDENTITY},
        {"tanh", IMP_ACT_TANH},         {"softplus", IMP_ACT_SOFTPLUS},
        {"relu", IMP_ACT_RELU},         {"sigmoid", IMP_ACT_SIGMOID},
    };
    if (!name || !out) return imp_fail(IMP_ERR_INVALID, "activation: name is NULL");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) {
            *out = table[i].act;
            return IMP_OK;
        }
    return imp_fail(IMP_ERR_NOT_FOUND,
                    "activation: unknown name '%s' (want tanh, softplus, relu, sigmoid, identity)",
                    name);
}

const char *imp_activation_name(imp_activation a)
{
    switch (a) {
    case IMP_ACT_IDENTITY: return "identity";
    case IMP_ACT_TANH: return "tanh";
    case IMP_ACT_SOFTPLUS: return "softplus";
    case IMP_ACT_RELU: return "relu";
    case IMP_ACT_SIGMOID: return "sigmoid";
    }
    return "unknown";
}

/* the kernels of act_math.h, one version per instruction set */
ACT_DISPATCH(softplus_deriv_inplace)
IMP_ISA_VERSIONS(act_forward_d, (imp_activation act, double *restrict z, double *restrict s, size_t n),
                 (act, z, s, n))


int imp_act_deriv_inplace(imp_activation act, double *zs, size_t n)
{
    switch (act) {
    case IMP_ACT_SOFTPLUS: softplus_deriv_inplace(zs, NULL, n); return 0;
    case IMP_ACT_RELU:
        for (size_t i = 0; i < n; i++) zs[i] = zs[i] > 0.0 ? 1.0 : 0.0;
        return 0;
    default: return 1;
    }
}

int imp_act_deriv_only(imp_activation act, double *z, double *s, size_t n)
{
    switch (act) {
    case IMP_ACT_SOFTPLUS:
        memcpy(s, z, n * sizeof(double));
        softplus_deriv_inplace(s, NULL, n);
        return 0;
    case IMP_ACT_RELU:
        for (size_t i = 0; i < n; i++) s[i] = z[i] > 0.0 ? 1.0 : 0.0;
        return 0;
    default: imp_act_forward(act, z, s, n); return 1;
    }
}

void imp_act_forward(imp_activation act, double *z, double *s, size_t n) { act_forward_d(act, z, s, n); }

/* ---- elementwise pieces of the backward passes (vectorised like the
 * activations; at 1..12 inputs and 500 units they cost as much as the
 * matrix products of the first and last layers) ---- */

static inline __attribute__((always_inline)) void vec_mul_body(double *restrict out, const double *restrict x,
                                                               const double *restrict y, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = x[i] * y[i];
}
IMP_ISA_VERSIONS(vec_mul, (double *restrict out, const double *restrict x, const double *restrict y, size_t n),
                 (out, x, y, n))
void imp_vec_mul(double *out, const double *x, const double *y, size_t n) { vec_mul(out, x, y, n); }

static inline __attribute__((always_inline)) void vec_fma_inplace_body(double *restrict out,
                                                                       const double *restrict x,
                                                                       const double *restrict y, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] += x[i] * y[i];
}
IMP_ISA_VERSIONS(vec_fma_inplace, (double *restrict out, const double *restrict x, const double *restrict y, size_t n),
                 (out, x, y, n))
void imp_vec_fma_inplace(double *out, const double *x, const double *y, size_t n) { vec_fma_inplace(out, x, y, n); }

/* r = dbar * e * phi''(z) with phi'' from (a, s) as in mlp_internal.h, and
 * ebar = dbar * s in the same pass; e == NULL (the output layer, e = 1)
 * comes with ebar == NULL. Two loops, so that each one vectorises. */
#define UP_KERNEL(name, second)                                                          \
    static inline __attribute__((always_inline)) void name##_body(                       \
        size_t n, const double *restrict dbar, const double *restrict e,                 \
        const double *restrict a, const double *restrict s, double *restrict r,          \
        double *restrict ebar)                                                           \
    {                                                                                    \
        (void)a;                                                                         \
        if (e && ebar)                                                                   \
            for (size_t i = 0; i < n; i++) {                                             \
                r[i] = dbar[i] * e[i] * (second);                                        \
                ebar[i] = dbar[i] * s[i];                                                \
            }                                                                            \
        else                                                                             \
            for (size_t i = 0; i < n; i++) r[i] = dbar[i] * (second);                    \
    }                                                                                    \
    IMP_ISA_VERSIONS(name,                                                               \
                     (size_t n, const double *restrict dbar, const double *restrict e,   \
                      const double *restrict a, const double *restrict s,                \
                      double *restrict r, double *restrict ebar),                        \
                     (n, dbar, e, a, s, r, ebar))
UP_KERNEL(up_tanh, IMP_PHI2_TANH(1.0, 2.0, a[i], s[i]))
UP_KERNEL(up_sigmoid, IMP_PHI2_SIGMOID(1.0, 2.0, a[i], s[i]))
UP_KERNEL(up_softplus, IMP_PHI2_SOFTPLUS(1.0, 2.0, a[i], s[i]))

void imp_act_sweep2_up(imp_activation act, size_t n, const double *dbar, const double *e,
                       const double *a, const double *s, double *r, double *ebar)
{
    if (!e || !ebar) e = NULL, ebar = NULL;
    switch (act) {
    case IMP_ACT_TANH: up_tanh(n, dbar, e, a, s, r, ebar); return;
    case IMP_ACT_SIGMOID: up_sigmoid(n, dbar, e, a, s, r, ebar); return;
    case IMP_ACT_SOFTPLUS: up_softplus(n, dbar, e, a, s, r, ebar); return;
    default:
        memset(r, 0, n * sizeof(double));
        if (ebar) imp_vec_mul(ebar, dbar, s, n);
        return;
    }
}

const char *imp_nn_isa(void) { return imp_isa_name(imp_act_isa()); }
