/* The elementwise maths of the activations, in one place for both
 * precisions: exponential, reciprocal and log1p kernels without libm calls
 * or branches (selects only), so that GCC vectorises the loops that call
 * them at every instruction-set level (base x86-64, AVX2, AVX-512, and
 * aarch64's NEON), given -fno-trapping-math (CMakeLists.txt). Double:
 * activation.c's kernels (every pass outside the float sweeps); float: the
 * single-precision potential sweeps (mlp_fused.c). Accuracy: a few
 * ulp (tests/test_nn.c compares with libm and the double path). */
#ifndef IMPULSE_NN_ACT_MATH_H
#define IMPULSE_NN_ACT_MATH_H

#include "nn/mlp_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- second derivatives ----
 * phi''(z) expressed through the cached a = phi(z) and s = phi'(z):
 *   tanh:     s = 1 - a^2,      phi'' = -2 a s   (s is computed as 4e/(1+e)^2)
 *   sigmoid:  s = a (1 - a),    phi'' = s (1 - 2a)
 *   softplus: s = sigmoid(z),   phi'' = s (1 - s)
 *   relu, identity:             phi'' = 0 (relu: almost everywhere).
 * As macros for every type the kernels use (double, float, GCC vectors of
 * either): one and two are 1 and 2 in the caller's type. */
#define IMP_PHI2_TANH(one, two, a, s) (-(two) * (a) * (s))
#define IMP_PHI2_SIGMOID(one, two, a, s) ((s) * ((one) - (two) * (a)))
#define IMP_PHI2_SOFTPLUS(one, two, a, s) ((s) * ((one) - (s)))

static inline double imp_act_second(imp_activation act, double a, double s)
{
    switch (act) {
    case IMP_ACT_TANH: return IMP_PHI2_TANH(1.0, 2.0, a, s);
    case IMP_ACT_SIGMOID: return IMP_PHI2_SIGMOID(1.0, 2.0, a, s);
    case IMP_ACT_SOFTPLUS: return IMP_PHI2_SOFTPLUS(1.0, 2.0, a, s);
    default: return 0.0;
    }
}

/* ---- double ---- */

/* For x <= 0 (NaN propagates): *em = expm1(x) and returns exp(x).
 * x = n ln2 + r, |r| <= ln2/2; expm1(r) by its Taylor series to r^13
 * (truncation < 2e-17 relative); exp(x) = 2^n (1 + p),
 * expm1(x) = 2^n p + (2^n - 1). Below -708 exp underflows: 0 and -1. */
static inline __attribute__((always_inline)) double exp_neg(double x, double *em)
{
    const double log2e = 1.4426950408889634, ln2_hi = 6.93147180369123816490e-01,
                 ln2_lo = 1.90821492927058770002e-10, shifter = 0x1.8p52;
    int under = x < -708.0;
    double xc = under ? -708.0 : x;
    double kd = xc * log2e + shifter;
    double n = kd - shifter;
    double r = (xc - n * ln2_hi) - n * ln2_lo;
    double p = 1.0 / 6227020800.0;          /* 1/13! */
    p = p * r + 1.0 / 479001600.0;          /* 1/12! */
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r * r + r;                       /* expm1(r) */
    uint64_t kbits, sbits;
    memcpy(&kbits, &kd, sizeof kbits);
    /* low mantissa bits of kd hold n (two's complement); 2^n by its exponent */
    sbits = (kbits - UINT64_C(0x4338000000000000) + 1023) << 52;
    double scale;
    memcpy(&scale, &sbits, sizeof scale);
    *em = under ? -1.0 : scale * p + (scale - 1.0);
    return under ? 0.0 : scale * p + scale;
}

/* 1/d for d in [1, 2] (NaN propagates) without a division instruction,
 * which costs 8-16 cycles per vector against 9 fused multiply-adds here:
 * a linear first guess with |1 - d y| <= 1/17 on [1, 2], then four Newton steps
 * y += y (1 - d y), each squaring the relative error (17^-16 < 1e-19), so
 * the result is exact to rounding. */
static inline __attribute__((always_inline)) double recip_1_2(double d)
{
    double y = 24.0 / 17.0 - (8.0 / 17.0) * d;
    y = y + y * (1.0 - d * y);
    y = y + y * (1.0 - d * y);
    y = y + y * (1.0 - d * y);
    y = y + y * (1.0 - d * y);
    return y;
}

/* log1p(e) for e in [0, 1]: 2 atanh(u) with u = e/(2+e), or, above
 * sqrt(2)-1, ln 2 + 2 atanh((e-1)/(e+3)); |u| <= 0.1716 so the odd series
 * to u^21 is exact to double precision. */
static inline __attribute__((always_inline)) double log1p_unit(double e)
{
    const double ln2 = 0.69314718055994530942;
    int hi = e > 0.41421356237309504880;
    /* 1/(e + 2) = recip(1 + e/2) / 2 and 1/(e + 3) = recip((e + 3)/2) / 2,
     * both arguments in [1, 2] and the scalings exact */
    double u = 0.5 * (hi ? e - 1.0 : e) * recip_1_2(hi ? 0.5 * (e + 3.0) : 1.0 + 0.5 * e);
    double w = u * u;
    double q = 1.0 / 21;
    q = q * w + 1.0 / 19;
    q = q * w + 1.0 / 17;
    q = q * w + 1.0 / 15;
    q = q * w + 1.0 / 13;
    q = q * w + 1.0 / 11;
    q = q * w + 1.0 / 9;
    q = q * w + 1.0 / 7;
    q = q * w + 1.0 / 5;
    q = q * w + 1.0 / 3;
    double l = 2.0 * (u + u * w * q);
    return hi ? ln2 + l : l;
}

/* The activation kernels in double, in place: z -> a = phi(z) and
 * s = phi'(z) (softplus_deriv_inplace: z -> s only). activation.c compiles
 * them once per instruction-set version for every pass; the fused sweeps
 * (mlp_fused.c) inline them into theirs. */
IMP_VEC_OPTS static inline __attribute__((always_inline)) void tanh_forward_body(double *restrict z,
                                                                double *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* with e = exp(-2|z|): tanh|z| = -expm1(-2|z|) / (2 + expm1(-2|z|))
         * (no cancellation near 0) and 1 - tanh^2 = 4e/(1+e)^2 (keeps the
         * tails that 1 - a^2 rounds to zero) */
        double zi = z[i], em;
        double e = exp_neg(-2.0 * fabs(zi), &em);
        double inv = recip_1_2(2.0 + em); /* em in [-1, 0] */
        z[i] = copysign(-em * inv, zi);
        s[i] = 4.0 * e * inv * inv;
    }
}


IMP_VEC_OPTS static inline __attribute__((always_inline)) void softplus_forward_body(double *restrict z,
                                                                double *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* softplus(z) = max(z,0) + log1p(exp(-|z|)) never overflows; its
         * derivative sigmoid(z) shares the exponential. */
        double zi = z[i], em;
        double e = exp_neg(-fabs(zi), &em);
        double sig_abs = recip_1_2(1.0 + e); /* sigmoid(|z|), e in [0, 1] */
        z[i] = (zi > 0.0 ? zi : 0.0) + log1p_unit(e);
        s[i] = zi >= 0.0 ? sig_abs : e * sig_abs;
    }
}


/* softplus'(z) = sigmoid(z) alone, in place (zs: z in, s out): sweep 1 of
 * a network whose value is not asked for needs only the derivative of its
 * last hidden layer, and this skips the logarithm. The second argument is
 * unused; it gives the kernel the dispatcher's shape. */
IMP_VEC_OPTS static inline __attribute__((always_inline)) void softplus_deriv_inplace_body(
    double *restrict zs, double *restrict unused, size_t n)
{
    (void)unused;
    for (size_t i = 0; i < n; i++) {
        double zi = zs[i], em;
        double e = exp_neg(-fabs(zi), &em);
        double sig_abs = recip_1_2(1.0 + e);
        zs[i] = zi >= 0.0 ? sig_abs : e * sig_abs;
    }
}


IMP_VEC_OPTS static inline __attribute__((always_inline)) void sigmoid_forward_body(double *restrict z,
                                                                double *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* s = e/(1+e)^2 with e = exp(-|z|) keeps the tiny tails of
         * sigmoid' that a(1-a) would round to zero. */
        double zi = z[i], em;
        double e = exp_neg(-fabs(zi), &em);
        double inv = recip_1_2(1.0 + e);
        z[i] = zi >= 0.0 ? inv : e * inv;
        s[i] = e * inv * inv;
    }
}


IMP_VEC_OPTS static inline __attribute__((always_inline)) void relu_forward_body(double *restrict z,
                                                                                double *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int pos = z[i] > 0.0;
        s[i] = pos ? 1.0 : 0.0;
        z[i] = pos ? z[i] : 0.0;
    }
}

/* z -> a = phi(z), s = phi'(z) for any activation: imp_act_forward's
 * versions (activation.c) and the fused forward's (mlp_fused.c) */
IMP_VEC_OPTS static inline __attribute__((always_inline)) void act_forward_d_body(imp_activation act,
                                                                                 double *restrict z,
                                                                                 double *restrict s, size_t n)
{
    switch (act) {
    case IMP_ACT_IDENTITY:
        for (size_t i = 0; i < n; i++) s[i] = 1.0;
        break;
    case IMP_ACT_TANH: tanh_forward_body(z, s, n); break;
    case IMP_ACT_SOFTPLUS: softplus_forward_body(z, s, n); break;
    case IMP_ACT_RELU: relu_forward_body(z, s, n); break;
    case IMP_ACT_SIGMOID: sigmoid_forward_body(z, s, n); break;
    }
}

/* softplus'(z) = sigmoid(z) of one value: softplus_deriv_inplace_body's
 * expression */
static inline __attribute__((always_inline)) double softplus_deriv_d(double zi)
{
    double em;
    double e = exp_neg(-fabs(zi), &em);
    double sig_abs = recip_1_2(1.0 + e);
    return zi >= 0.0 ? sig_abs : e * sig_abs;
}

/* The same value with one division, (z >= 0 ? 1 : e) / (1 + e) (a correctly
 * rounded quotient; recip_1_2's Newton steps agree with it to an ulp): the
 * one-row gradient of fixed networks (mlp_fused.c), where the divider works
 * beside the exponential's multiply-adds instead of adding nine of them. */
static inline __attribute__((always_inline)) double softplus_deriv_div_d(double zi)
{
    double em;
    double e = exp_neg(-fabs(zi), &em);
    return (zi >= 0.0 ? 1.0 : e) / (1.0 + e);
}

/* s = phi'(z) in place in zs, and for tanh and sigmoid also a = phi(z)
 * (a holds z on entry): the double counterpart of act_deriv_f_body */
static inline __attribute__((always_inline)) void act_deriv_d_body(imp_activation act, double *restrict a,
                                                                   double *restrict zs, size_t n)
{
    switch (act) {
    case IMP_ACT_SOFTPLUS: softplus_deriv_inplace_body(zs, NULL, n); break;
    case IMP_ACT_TANH: tanh_forward_body(a, zs, n); break;
    case IMP_ACT_SIGMOID: sigmoid_forward_body(a, zs, n); break;
    case IMP_ACT_RELU:
        for (size_t i = 0; i < n; i++) zs[i] = zs[i] > 0.0 ? 1.0 : 0.0;
        break;
    case IMP_ACT_IDENTITY:
        for (size_t i = 0; i < n; i++) zs[i] = 1.0;
        break;
    }
}

/* ---- float ---- */

/* For x <= 0: *em = expm1(x), returns exp(x), in float. x = n ln2 + r with
 * |r| <= ln2/2 and expm1(r) by its Taylor series to r^7 (truncation
 * < 2e-8 relative, below float's 6e-8); exp(x) = 2^n (1 + p). Below -60
 * the results are 0 and -1: exp(-60) ~ 9e-27 is far below float rounding
 * next to any unsaturated unit. */
static inline __attribute__((always_inline)) float expf_neg(float x, float *em)
{
    const float log2e = 1.44269504f, ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-06f,
                shifter = 0x1.8p23f;
    int under = x < -60.0f;
    float xc = under ? -60.0f : x;
    float kd = xc * log2e + shifter;
    float n = kd - shifter;
    float r = (xc - n * ln2_hi) - n * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r * r + r; /* expm1(r) */
    uint32_t kbits, sbits;
    memcpy(&kbits, &kd, sizeof kbits);
    sbits = (kbits - UINT32_C(0x4B400000) + 127u) << 23; /* 2^n: n sits in kd's low mantissa bits */
    float scale;
    memcpy(&scale, &sbits, sizeof scale);
    *em = under ? -1.0f : scale * p + (scale - 1.0f);
    return under ? 0.0f : scale * p + scale;
}

/* exp(x) for x <= 0, in float, without expm1 (softplus' and sigmoid
 * need only exp): the reduction of expf_neg and a degree-5 polynomial
 * for exp(r) on |r| <= ln2/2, fitted to minimise the relative error
 * (7.5e-8 = 1.3 float ulp; the truncated Taylor series of expf_neg needs
 * degree 7 and the expm1 form: three operations more per element). Below
 * -60 it returns exp(-60) ~ 9e-27 rather than a select to 0, which made
 * GCC mask every operation of the vectorised loop (10 % slower). */
static inline __attribute__((always_inline)) float expf_neg_only(float x)
{
    const float log2e = 1.44269504f, ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-06f,
                shifter = 0x1.8p23f;
    float xc = x < -60.0f ? -60.0f : x; /* a max, not a branch: below, exp(-60) ~ 9e-27 stands in for 0 */
    float kd = xc * log2e + shifter;
    float n = kd - shifter;
    float r = (xc - n * ln2_hi) - n * ln2_lo;
    float p = 8.2976e-3f;
    p = p * r + 4.191538e-2f;
    p = p * r + 0.16667576f;
    p = p * r + 0.49998894f;
    p = p * r + 0.9999997f;
    p = p * r + 1.0000001f;
    uint32_t kbits, sbits;
    memcpy(&kbits, &kd, sizeof kbits);
    sbits = (kbits - UINT32_C(0x4B400000) + 127u) << 23; /* 2^n: n sits in kd's low mantissa bits */
    float scale;
    memcpy(&scale, &sbits, sizeof scale);
    return scale * p;
}

/* 1/d for d in [1, 2] without a division: a quadratic guess fitted to
 * minimise |1 - d y| (<= 0.0102) and two Newton steps (0.0102^4 ~ 1e-8,
 * below float's 6e-8); a linear guess needs three steps. */
static inline __attribute__((always_inline)) float recipf_1_2(float d)
{
    float y = (0.32317632f * d - 1.45437444f) * d + 2.12108835f;
    y = y + y * (1.0f - d * y);
    y = y + y * (1.0f - d * y);
    return y;
}

/* softplus'(z) = sigmoid(z) = 1 / (1 + exp(-z)), through exp(-|z|) */
static inline __attribute__((always_inline)) float softplus_deriv_f(float z)
{
    float e = expf_neg_only(-fabsf(z));
    float sig_abs = recipf_1_2(1.0f + e);
    return z >= 0.0f ? sig_abs : e * sig_abs;
}

/* s = phi'(z) in place in zs, and for tanh and sigmoid also a = phi(z)
 * (a holds z on entry); the formulas of activation.c. */
static inline __attribute__((always_inline)) void act_deriv_f_body(imp_activation act, float *restrict a,
                                                                   float *restrict zs, size_t n)
{
    switch (act) {
    case IMP_ACT_SOFTPLUS:
        for (size_t i = 0; i < n; i++) zs[i] = softplus_deriv_f(zs[i]);
        break;
    case IMP_ACT_TANH:
        for (size_t i = 0; i < n; i++) {
            float zi = a[i], em;
            float e = expf_neg(-2.0f * fabsf(zi), &em);
            float inv = recipf_1_2(2.0f + em);
            a[i] = copysignf(-em * inv, zi);
            zs[i] = 4.0f * e * inv * inv;
        }
        break;
    case IMP_ACT_SIGMOID:
        for (size_t i = 0; i < n; i++) {
            float zi = a[i];
            float e = expf_neg_only(-fabsf(zi));
            float inv = recipf_1_2(1.0f + e);
            a[i] = zi >= 0.0f ? inv : e * inv;
            zs[i] = e * inv * inv;
        }
        break;
    case IMP_ACT_RELU:
        for (size_t i = 0; i < n; i++) zs[i] = zs[i] > 0.0f ? 1.0f : 0.0f;
        break;
    case IMP_ACT_IDENTITY:
        for (size_t i = 0; i < n; i++) zs[i] = 1.0f;
        break;
    }
}

#endif
