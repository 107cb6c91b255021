/* Routh's piecewise-linear collision integration in normal impulse
 * ([CODE] wang.m / mirtich.m integrate the same process with a fixed step
 * dp = 1e-4; here each segment is solved exactly, reference sec 2.4-2.5).
 *
 * Along a segment the impulse moves in direction g = (gt, 1) and the contact
 * velocity changes at the constant rate k = W g:
 *   sliding   (sigma = sign ut):  g = (-sigma mu, 1)
 *   sticking  (|Wtn| <= mu Wtt):  g = (-Wtn/Wtt, 1), ut stays 0
 *   reversal  (|Wtn| >  mu Wtt):  sliding again with sigma = sign(Wtn)
 * Segments end where slip halts (ut = 0), at maximum compression (un = 0)
 * or at the restitution criterion. */
#include "impact_internal.h"
#include "impulse/core.h"

#include <math.h>

typedef struct routh_state {
    double p, Pt;      /* accumulated impulse */
    double ut, un;     /* contact velocity */
    double Wc, Wr;     /* normal work in compression / restitution */
    int compressed;    /* maximum compression passed */
    double pc;         /* normal impulse at maximum compression */
} routh_state;

static void advance(routh_state *s, double gt, double kt, double kn, double x)
{
    double work = s->un * x + 0.5 * kn * x * x; /* integral of un dp over the step */
    if (s->compressed) s->Wr += work;
    else s->Wc += work;
    s->p += x;
    s->Pt += gt * x;
    s->ut += kt * x;
    s->un += kn * x;
}

int impact_routh(const double W[4], const double u0[2], double mu, double eps, routh_stop stop,
                 double P[2], double u_end[2])
{
    const double Wtt = W[0], Wtn = W[1], Wnt = W[2], Wnn = W[3];
    routh_state s = {0, 0, u0[0], u0[1], 0, 0, 0, 0};
    const double tiny = 1e-13 * (fabs(u0[0]) + fabs(u0[1]));
    for (int seg = 0; seg < 16; seg++) {
        double gt, L = INFINITY;
        int sliding;
        if (fabs(s.ut) > tiny) {
            sliding = 1;
            gt = s.ut > 0 ? -mu : mu;
        } else if (fabs(Wtn) <= mu * Wtt) {
            s.ut = 0.0;
            sliding = 0;
            gt = -Wtn / Wtt;
        } else {
            s.ut = 0.0;
            sliding = 1;
            gt = Wtn > 0 ? -mu : mu; /* reversal: slides towards sign(Wtn) */
        }
        double kt = Wtt * gt + Wtn, kn = Wnt * gt + Wnn;
        if (!sliding) kt = 0.0;
        if (sliding && s.ut != 0.0 && s.ut * kt < 0) L = -s.ut / kt;
        if (!s.compressed) {
            /* kn <= 0 (sliding with large mu): compression cannot end on this
             * segment; if slip halts first the contact sticks or reverses
             * (kn > 0 there), otherwise there is no finite impulse (Painleve).
             * With W positive definite the latter cannot happen: sigma kt >= 0
             * and kn <= 0 together need Wtn^2 >= Wtt Wnn. */
            if (!(kn > 0) && !(L < INFINITY))
                return imp_fail(IMP_ERR_NUMERIC, "Painleve configuration: sliding with normal compliance %g <= 0 "
                                "along the friction direction and slip never stops, the law has no solution (mu = %g)",
                                kn, mu);
            double xc = kn > 0 ? -s.un / kn : INFINITY;
            if (xc <= L) {
                advance(&s, gt, kt, kn, xc);
                s.un = 0.0;
                s.compressed = 1;
                s.pc = s.p;
            } else {
                advance(&s, gt, kt, kn, L);
                s.ut = 0.0;
            }
            continue;
        }
        double x;
        if (stop == ROUTH_POISSON) {
            x = (1.0 + eps) * s.pc - s.p;
        } else {
            double rem = -eps * eps * s.Wc - s.Wr; /* work still to be released */
            if (rem <= 0) x = 0.0;
            else {
                double disc = s.un * s.un + 2.0 * kn * rem;
                if (disc < 0) {
                    /* un would return to 0 first: the contact separates there */
                    if (!(kn < 0)) return imp_fail(IMP_ERR_NUMERIC, "restitution: inconsistent work");
                    x = -s.un / kn;
                } else {
                    x = 2.0 * rem / (s.un + sqrt(disc));
                }
            }
        }
        if (x < 0) x = 0;
        if (x <= L) {
            advance(&s, gt, kt, kn, x);
            P[0] = s.Pt;
            P[1] = s.p;
            if (u_end) { u_end[0] = s.ut; u_end[1] = s.un; }
            return IMP_OK;
        }
        advance(&s, gt, kt, kn, L);
        s.ut = 0.0;
    }
    return imp_fail(IMP_ERR_NUMERIC, "Routh integration: no end after 16 segments");
}

/* ---- authors' Mirtich: friction proportional to slip velocity ----
 * du/dp = W (-mu ut, 1)^T is linear: with a = mu Wtt,
 *   ut(p) = ut0 e^{-ap} + Wtn E(p),          E(p) = (1 - e^{-ap})/a
 *   S(p)  = int ut = ut0 E(p) + Wtn F(p),     F(p) = int E = (p - E)/a
 *   Pt(p) = -mu S(p),  un(p) = un0 + Wnn p - mu Wnt S(p)
 *   work(p) = int un = un0 p + Wnn p^2/2 - mu Wnt (ut0 F(p) + Wtn G(p)),
 *             G(p) = int F = (p^2/2 - F)/a.  Series for small a p. */
typedef struct prop_law {
    double a, mu, Wtn, Wnt, Wnn, ut0, un0;
} prop_law;

static void efg(double a, double p, double *E, double *F, double *G)
{
    double ap = a * p;
    if (ap < 1e-3) {
        double p2 = p * p, p3 = p2 * p, p4 = p3 * p, p5 = p4 * p, a2 = a * a, a3 = a2 * a;
        *E = p - a * p2 / 2 + a2 * p3 / 6 - a3 * p4 / 24;
        *F = p2 / 2 - a * p3 / 6 + a2 * p4 / 24 - a3 * p5 / 120;
        *G = p3 / 6 - a * p4 / 24 + a2 * p5 / 120 - a3 * p5 * p / 720;
    } else {
        *E = -expm1(-ap) / a;
        *F = (p - *E) / a;
        *G = (0.5 * p * p - *F) / a;
    }
}

static double prop_un(const prop_law *L, double p)
{
    double E, F, G;
    efg(L->a, p, &E, &F, &G);
    return L->un0 + L->Wnn * p - L->mu * L->Wnt * (L->ut0 * E + L->Wtn * F);
}

static double prop_work(const prop_law *L, double p)
{
    double E, F, G;
    efg(L->a, p, &E, &F, &G);
    return L->un0 * p + 0.5 * L->Wnn * p * p - L->mu * L->Wnt * (L->ut0 * F + L->Wtn * G);
}

/* Root of f(p) - target on [lo, hi] with f(lo) < target <= f(hi), f increasing
 * there: Illinois regula falsi, to round-off. */
static double prop_root(const prop_law *L, double (*f)(const prop_law *, double), double target,
                        double lo, double hi)
{
    double flo = f(L, lo) - target, fhi = f(L, hi) - target;
    int side = 0;
    for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
        double x = (lo * fhi - hi * flo) / (fhi - flo);
        if (!(x > lo && x < hi)) x = 0.5 * (lo + hi);
        double fx = f(L, x) - target;
        if (fx == 0) return x;
        if (fx < 0) {
            lo = x; flo = fx;
            if (side == -1) fhi *= 0.5;
            side = -1;
        } else {
            hi = x; fhi = fx;
            if (side == 1) flo *= 0.5;
            side = 1;
        }
    }
    return 0.5 * (lo + hi);
}

int impact_mirtich_proportional(const double W[4], const double u0[2], double mu, double eps,
                                double P[2])
{
    prop_law L = {mu * W[0], mu, W[1], W[2], W[3], u0[0], u0[1]};
    /* bracket the end of compression: un grows at least like ... double until positive */
    double hi = -u0[1] / W[3];
    int k = 0;
    while (prop_un(&L, hi) <= 0) {
        hi *= 2;
        if (++k > 60) return imp_fail(IMP_ERR_NUMERIC, "mirtich (authors): compression does not end");
    }
    double pc = prop_root(&L, prop_un, 0.0, 0.0, hi);
    double wc = prop_work(&L, pc); /* compression work, negative */
    double target = (1.0 - eps * eps) * wc;  /* work(p) - wc = -eps^2 wc */
    double pf = pc;
    if (eps > 0) {
        double lo = pc;
        hi = 2 * pc;
        k = 0;
        while (prop_work(&L, hi) < target) {
            lo = hi;
            hi *= 2;
            if (++k > 60) return imp_fail(IMP_ERR_NUMERIC, "mirtich (authors): restitution does not end");
        }
        pf = prop_root(&L, prop_work, target, lo, hi);
    }
    double E, F, G;
    efg(L.a, pf, &E, &F, &G);
    P[0] = -mu * (u0[0] * E + W[1] * F);
    P[1] = pf;
    return IMP_OK;
}
