/* Adaptive Dormand-Prince 5(4) (Hairer, Norsett & Wanner, Solving ODEs I,
 * section II.5 and the DOPRI5 code): FSAL stages, PI step-size control,
 * the 4th-order continuous extension for output at requested times, and
 * Hairer's starting-step heuristic. The same integrator as torchdiffeq's
 * "dopri5", which produced the CHNN reference data ([chnn] section 1). */
#include "impulse/integrate.h"
#include "impulse/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
static const double a21 = 1.0 / 5;
static const double a31 = 3.0 / 40, a32 = 9.0 / 40;
static const double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
static const double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561,
                    a54 = -212.0 / 729;
static const double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247,
                    a64 = 49.0 / 176, a65 = -5103.0 / 18656;
static const double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192,
                    a75 = -2187.0 / 6784, a76 = 11.0 / 84;
/* b - bhat: the embedded error estimate */
static const double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920,
                    e5 = -17253.0 / 339200, e6 = 22.0 / 525, e7 = -1.0 / 40;
/* dense output (Hairer's DOPRI5 contd5 coefficients) */
static const double d1 = -12715105075.0 / 11282082432.0, d3 = 87487479700.0 / 32700410799.0,
                    d4 = -10690763975.0 / 1880347072.0, d5 = 701980252875.0 / 199316789632.0,
                    d6 = -1453857185.0 / 822651844.0, d7 = 69997945.0 / 29380423.0;

typedef struct dp_ctx {
    const imp_ode *ode;
    int B;
    size_t n;
    long n_rhs;
} dp_ctx;

static int dp_f(dp_ctx *c, double t, const double *y, double *f)
{
    c->n_rhs++;
    int st = c->ode->rhs(c->ode->user, t, y, c->B, f);
    if (st) return st;
    for (size_t q = 0; q < c->n; q++)
        if (!isfinite(f[q]))
            return imp_fail(IMP_ERR_NUMERIC, "dopri5: right-hand side non-finite at t = %g", t);
    return IMP_OK;
}

static double dp_rms(const double *v, const double *ya, const double *yb, double rtol,
                     double atol, size_t n)
{
    double s = 0.0;
    for (size_t q = 0; q < n; q++) {
        double m = fabs(ya[q]);
        if (yb && fabs(yb[q]) > m) m = fabs(yb[q]);
        double sk = atol + rtol * m;
        double r = v[q] / sk;
        s += r * r;
    }
    return sqrt(s / (double)n);
}

/* Hairer's hinit: a first guess from |y|/|f|, refined with an estimate of
 * the second derivative so that the first step is about right for order 5. */
static int dp_initial_step(dp_ctx *c, double t0, const double *y0, const double *f0, double rtol,
                           double atol, double span, double *tmp_y, double *tmp_f, double *h_out)
{
    size_t n = c->n;
    double dnf = dp_rms(f0, y0, NULL, rtol, atol, n);
    double dny = dp_rms(y0, y0, NULL, rtol, atol, n);
    double h = (dnf <= 1e-5 || dny <= 1e-5) ? 1e-6 : 0.01 * dny / dnf;
    if (h > span) h = span;
    for (size_t q = 0; q < n; q++) tmp_y[q] = y0[q] + h * f0[q];
    int st = dp_f(c, t0 + h, tmp_y, tmp_f);
    if (st) return st;
    for (size_t q = 0; q < n; q++) tmp_y[q] = tmp_f[q] - f0[q];
    double der2 = dp_rms(tmp_y, y0, NULL, rtol, atol, n) / h;
    double der12 = fmax(der2, dnf);
    double h1 = der12 <= 1e-15 ? fmax(1e-6, h * 1e-3) : pow(0.01 / der12, 1.0 / 5.0);
    h = fmin(100.0 * h, h1);
    if (h > span) h = span;
    *h_out = h;
    return IMP_OK;
}

int imp_dopri5_solve(const imp_ode *ode, const imp_dopri5_opts *opts, double t0,
                     const double *y0, int B, const double *t_out, int n_out, double *y_out,
                     imp_dopri5_stats *stats)
{
    if (!ode || !ode->rhs) return imp_fail(IMP_ERR_INVALID, "ode: missing right-hand side");
    if (ode->dim <= 0) return imp_fail(IMP_ERR_INVALID, "ode.dim: %d must be positive", ode->dim);
    if (B <= 0) return imp_fail(IMP_ERR_INVALID, "B: batch size %d must be positive", B);
    if (!opts) return imp_fail(IMP_ERR_INVALID, "opts: NULL");
    double rtol = opts->rtol, atol = opts->atol;
    if (!(rtol >= 0.0) || !(atol >= 0.0) || !isfinite(rtol) || !isfinite(atol) ||
        (rtol == 0.0 && atol == 0.0))
        return imp_fail(IMP_ERR_INVALID, "opts.rtol/atol: need finite, non-negative, not both zero (%g, %g)",
                        rtol, atol);
    if (!(opts->h0 >= 0.0) || !isfinite(opts->h0))
        return imp_fail(IMP_ERR_INVALID, "opts.h0: %g must be >= 0 and finite", opts->h0);
    if (opts->max_steps < 0) return imp_fail(IMP_ERR_INVALID, "opts.max_steps: must be >= 0");
    if (!isfinite(t0)) return imp_fail(IMP_ERR_INVALID, "t0: %g is not finite", t0);
    if (n_out < 1) return imp_fail(IMP_ERR_INVALID, "n_out: %d must be >= 1", n_out);
    if (!y0 || !t_out || !y_out) return imp_fail(IMP_ERR_INVALID, "y0/t_out/y_out: NULL buffer");
    for (int i = 0; i < n_out; i++) {
        if (!isfinite(t_out[i])) return imp_fail(IMP_ERR_INVALID, "t_out[%d]: not finite", i);
        if (i == 0 ? t_out[0] < t0 : t_out[i] <= t_out[i - 1])
            return imp_fail(IMP_ERR_INVALID,
                            "t_out[%d]: %g must be increasing and >= t0 = %g", i, t_out[i], t0);
    }
    size_t n = (size_t)ode->dim * (size_t)B;
    int rc = imp_check_finite(y0, n, "y0");
    if (rc) return rc;
    long max_steps = opts->max_steps ? opts->max_steps : 10000000L;

    double *buf = malloc(n * 14 * sizeof(double));
    if (!buf) return imp_fail(IMP_ERR_NOMEM, "dopri5: work buffer");
    double *y = buf, *y1 = y + n, *k1 = y1 + n, *k2 = k1 + n, *k3 = k2 + n, *k4 = k3 + n,
           *k5 = k4 + n, *k6 = k5 + n, *k7 = k6 + n, *ys = k7 + n, *err = ys + n,
           *r3 = err + n, *r4 = r3 + n, *r5 = r4 + n;
    dp_ctx c = {ode, B, n, 0};
    long n_steps = 0, n_rej = 0;
    memcpy(y, y0, n * sizeof(double));
    double t = t0, t_end = t_out[n_out - 1];
    int io = 0;
    while (io < n_out && t_out[io] == t0) {
        memcpy(y_out + (size_t)io * n, y0, n * sizeof(double));
        io++;
    }
    rc = IMP_OK;
    if (io < n_out) {
        rc = dp_f(&c, t, y, k1);
        double h = opts->h0;
        if (!rc && h == 0.0)
            rc = dp_initial_step(&c, t, y, k1, rtol, atol, t_end - t0, ys, k2, &h);
        const double safe = 0.9, beta = 0.04, expo1 = 0.2 - beta * 0.75;
        double facold = 1e-4;
        int last_rejected = 0;
        while (!rc && io < n_out) {
            if (n_steps + n_rej >= max_steps) {
                rc = imp_fail(IMP_ERR_NUMERIC, "dopri5: more than %ld steps before t = %g (reached %g)",
                              max_steps, t_end, t);
                break;
            }
            if (t + h >= t_end || t + 1.01 * h >= t_end) h = t_end - t;
            if (!(h > fabs(t) * 1e-14) || h < 1e-300) {
                rc = imp_fail(IMP_ERR_NUMERIC, "dopri5: step size underflow (h = %g) at t = %g", h, t);
                break;
            }
            size_t q;
            for (q = 0; q < n; q++) ys[q] = y[q] + h * a21 * k1[q];
            if ((rc = dp_f(&c, t + c2 * h, ys, k2))) break;
            for (q = 0; q < n; q++) ys[q] = y[q] + h * (a31 * k1[q] + a32 * k2[q]);
            if ((rc = dp_f(&c, t + c3 * h, ys, k3))) break;
            for (q = 0; q < n; q++) ys[q] = y[q] + h * (a41 * k1[q] + a42 * k2[q] + a43 * k3[q]);
            if ((rc = dp_f(&c, t + c4 * h, ys, k4))) break;
            for (q = 0; q < n; q++)
                ys[q] = y[q] + h * (a51 * k1[q] + a52 * k2[q] + a53 * k3[q] + a54 * k4[q]);
            if ((rc = dp_f(&c, t + c5 * h, ys, k5))) break;
            for (q = 0; q < n; q++)
                ys[q] = y[q] + h * (a61 * k1[q] + a62 * k2[q] + a63 * k3[q] + a64 * k4[q] +
                                    a65 * k5[q]);
            if ((rc = dp_f(&c, t + h, ys, k6))) break;
            for (q = 0; q < n; q++)
                y1[q] = y[q] + h * (a71 * k1[q] + a73 * k3[q] + a74 * k4[q] + a75 * k5[q] +
                                    a76 * k6[q]);
            if ((rc = dp_f(&c, t + h, y1, k7))) break;
            for (q = 0; q < n; q++)
                err[q] = h * (e1 * k1[q] + e3 * k3[q] + e4 * k4[q] + e5 * k5[q] + e6 * k6[q] +
                              e7 * k7[q]);
            double e = dp_rms(err, y, y1, rtol, atol, n);
            if (!isfinite(e)) e = 1e10;
            if (e <= 1.0) {
                /* accepted: dense output on [t, t + h] for every requested time inside */
                n_steps++;
                double t_new = (h == t_end - t) ? t_end : t + h;
                if (io < n_out && t_out[io] <= t_new) {
                    for (q = 0; q < n; q++) {
                        double ydiff = y1[q] - y[q];
                        double bspl = h * k1[q] - ydiff;
                        r3[q] = bspl;
                        r4[q] = ydiff - h * k7[q] - bspl;
                        r5[q] = h * (d1 * k1[q] + d3 * k3[q] + d4 * k4[q] + d5 * k5[q] +
                                     d6 * k6[q] + d7 * k7[q]);
                    }
                    while (io < n_out && t_out[io] <= t_new) {
                        double *out = y_out + (size_t)io * n;
                        if (t_out[io] == t_new) {
                            memcpy(out, y1, n * sizeof(double));
                        } else {
                            double th = (t_out[io] - t) / h, th1 = 1.0 - th;
                            for (q = 0; q < n; q++)
                                out[q] = y[q] + th * ((y1[q] - y[q]) +
                                                      th1 * (r3[q] + th * (r4[q] + th1 * r5[q])));
                        }
                        io++;
                    }
                }
                memcpy(y, y1, n * sizeof(double));
                memcpy(k1, k7, n * sizeof(double)); /* FSAL */
                t = t_new;
                double fac = pow(e, expo1) / pow(facold, beta) / safe;
                fac = fmax(0.1, fmin(5.0, fac)); /* hnew in [h/5, 10 h] */
                double hnew = h / fac;
                if (last_rejected && hnew > h) hnew = h;
                facold = fmax(e, 1e-4);
                last_rejected = 0;
                h = hnew;
            } else {
                n_rej++;
                double fac = pow(e, expo1) / safe;
                h = h / fmin(5.0, fac);
                last_rejected = 1;
            }
        }
    }
    if (stats) {
        stats->n_steps = n_steps;
        stats->n_rejected = n_rej;
        stats->n_rhs = c.n_rhs;
    }
    free(buf);
    return rc;
}
