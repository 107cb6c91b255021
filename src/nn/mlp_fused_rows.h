/* The row kernels of the fused one-hidden-layer sweeps, written once and
 * instantiated per precision: mlp_fused.c includes this file with
 * FR_REAL double, FR_SFX nothing and FR_PARTS 8, mlp_fused_single.c with
 * float, _f and 16. Dot products run in FR_PARTS fixed partial sums (lane k
 * takes j = k mod FR_PARTS, in order of j), reduced in a fixed tree, so the
 * results do not depend on the vector width; the sums are rounded to
 * double on the way out. Equations: mlp_fused.c's header. */
#ifndef FR_REAL
#error "define FR_REAL, FR_SFX and FR_PARTS before including mlp_fused_rows.h"
#endif
#define FR_CAT2(a, b) a##b
#define FR_CAT(a, b) FR_CAT2(a, b)
#define FR_NAME(name) FR_CAT(name, FR_SFX)
#define FR_INLINE static inline __attribute__((always_inline))

/* FR_PARTS partial sums (16: folded to 8 first) in a fixed tree, then tail */
FR_INLINE FR_REAL FR_NAME(sum_parts)(const FR_REAL *part, FR_REAL tail)
{
    FR_REAL s8[8];
    for (int k = 0; k < 8; k++) s8[k] = FR_PARTS == 16 ? part[k] + part[k + 8 * (FR_PARTS == 16)] : part[k];
    return (((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]))) + tail;
}

/* sum_j a_j b_j c_j (c == NULL: sum_j a_j b_j) */
FR_INLINE FR_REAL FR_NAME(dot3)(int n, const FR_REAL *restrict a, const FR_REAL *restrict b,
                                const FR_REAL *restrict c)
{
    FR_REAL part[FR_PARTS] = {0};
    int j = 0;
    for (; j + FR_PARTS <= n; j += FR_PARTS)
        for (int k = 0; k < FR_PARTS; k++) part[k] += a[j + k] * b[j + k] * c[j + k];
    FR_REAL tail = 0;
    for (; j < n; j++) tail += a[j] * b[j] * c[j];
    return FR_NAME(sum_parts)(part, tail);
}

FR_INLINE FR_REAL FR_NAME(dot2)(int n, const FR_REAL *restrict a, const FR_REAL *restrict b)
{
    FR_REAL part[FR_PARTS] = {0};
    int j = 0;
    for (; j + FR_PARTS <= n; j += FR_PARTS)
        for (int k = 0; k < FR_PARTS; k++) part[k] += a[j + k] * b[j + k];
    FR_REAL tail = 0;
    for (; j < n; j++) tail += a[j] * b[j];
    return FR_NAME(sum_parts)(part, tail);
}

/* z = W0 x + b0 for every row (bias and input 0 in one pass) */
FR_INLINE void FR_NAME(pre_activation_rows_body)(int B, int n0, int n1, const FR_REAL *restrict x,
                                                 const FR_REAL *restrict W0t, const FR_REAL *restrict b0,
                                                 FR_REAL *restrict z)
{
    for (int b = 0; b < B; b++) {
        FR_REAL *restrict zb = z + (size_t)b * n1;
        const FR_REAL x0 = x[(size_t)b * n0];
        for (int j = 0; j < n1; j++) zb[j] = b0[j] + x0 * W0t[j];
        for (int i = 1; i < n0; i++) {
            const FR_REAL xi = x[(size_t)b * n0 + i];
            const FR_REAL *restrict col = W0t + (size_t)i * n1;
            for (int j = 0; j < n1; j++) zb[j] += xi * col[j];
        }
    }
}

/* g_i = sum_j s_j w1_j W0[j,i] for every row, in double */
FR_INLINE void FR_NAME(grad_rows_body)(int B, int n0, int n1, const FR_REAL *restrict s,
                                       const FR_REAL *restrict W0t, const FR_REAL *restrict w1,
                                       double *restrict g, int ldg)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < n0; i++)
            g[(size_t)b * ldg + i] = (double)FR_NAME(dot3)(n1, s + (size_t)b * n1, w1, W0t + (size_t)i * n1);
}

/* One row of sweep 2: t = W0 gbar, the z-adjoint r_j = w1_j t_j phi''(z_j)
 * from the cached a (= phi(z); softplus and relu need only s) and s, as
 * imp_act_second; then the sums (acc rows 0..n0-1: W0bar^T, row n0:
 * b0bar, row n0+1: w1bar; skipped if acc is NULL) and xbar, added to dx in
 * double. */
FR_INLINE void FR_NAME(sweep2_row)(imp_activation act, int n0, int n1, const FR_REAL *restrict W0t,
                                   const FR_REAL *restrict w1, const FR_REAL *restrict gb,
                                   const FR_REAL *restrict x, const FR_REAL *restrict a,
                                   const FR_REAL *restrict s, FR_REAL *restrict t, FR_REAL *restrict r,
                                   FR_REAL *restrict acc, double *restrict dx)
{
    const FR_REAL one = 1, two = 2;
    for (int j = 0; j < n1; j++) t[j] = 0;
    for (int i = 0; i < n0; i++) {
        const FR_REAL gi = gb[i];
        const FR_REAL *restrict col = W0t + (size_t)i * n1;
        for (int j = 0; j < n1; j++) t[j] += gi * col[j];
    }
    switch (act) {
    case IMP_ACT_TANH:
        for (int j = 0; j < n1; j++) r[j] = w1[j] * t[j] * (-two * a[j] * s[j]);
        break;
    case IMP_ACT_SIGMOID:
        for (int j = 0; j < n1; j++) r[j] = w1[j] * t[j] * (s[j] * (one - two * a[j]));
        break;
    case IMP_ACT_SOFTPLUS:
        for (int j = 0; j < n1; j++) r[j] = w1[j] * t[j] * (s[j] * (one - s[j]));
        break;
    default: /* relu, identity: phi'' = 0 */
        for (int j = 0; j < n1; j++) r[j] = 0;
        break;
    }
    if (acc) {
        FR_REAL *restrict b0bar = acc + (size_t)n0 * n1, *restrict w1bar = b0bar + n1;
        for (int j = 0; j < n1; j++) {
            b0bar[j] += r[j];
            w1bar[j] += s[j] * t[j];
        }
        for (int i = 0; i < n0; i++) {
            const FR_REAL gi = gb[i], xi = x[i];
            FR_REAL *restrict row = acc + (size_t)i * n1;
            for (int j = 0; j < n1; j++) row[j] += w1[j] * s[j] * gi + r[j] * xi;
        }
    }
    if (dx)
        for (int i = 0; i < n0; i++) dx[i] += (double)FR_NAME(dot2)(n1, r, W0t + (size_t)i * n1);
}

#undef FR_CAT2
#undef FR_CAT
#undef FR_NAME
#undef FR_INLINE
