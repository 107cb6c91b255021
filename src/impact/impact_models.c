/* The six planar impact laws of [ISRR]/[CoRL] in contact space (reference
 * sec 2). Closed forms of the single-contact LCPs/QPs; Routh segments for
 * the laws that integrate through the impact. */
#include "impact_internal.h"
#include "impulse/core.h"
#include "impulse/impact_models.h"

#include <math.h>
#include <string.h>

static const char *model_names[IMP_IMPACT_MODEL_COUNT] = {
    "drumshell", "ap-poisson", "ap-newton", "mirtich", "wang-mason", "whittaker"};
static const char *model_titles[IMP_IMPACT_MODEL_COUNT] = {
    "Drumwright-Shell", "AP Poisson", "AP Newton", "Mirtich", "Wang-Mason", "Whittaker"};
static const char *model_summaries[IMP_IMPACT_MODEL_COUNT] = {
    "Poisson restitution on the maximum-dissipation (min kinetic energy) impulse in the cone; closed form",
    "Poisson restitution on the plastic Anitescu-Potra LCP impulse; closed form",
    "Newton restitution in the Anitescu-Potra LCP (stick, else maximal sliding friction); closed form",
    "Stronge energetic restitution with collision integration (authors: friction ~ slip velocity); exact segments",
    "Routh's method, Poisson restitution, slide/stick/reversal modes; exact segments",
    "Newton stick impulse, tangential clipped to mu*Pn keeping Pn; closed form"};
/* [ISRR]/[CoRL] Table 1 (mean of the ensemble identification). */
static const double table1_mu[IMP_IMPACT_MODEL_COUNT] = {0.081, 0.101, 0.084, 0.062, 0.120, 0.111};
static const double table1_eps[IMP_IMPACT_MODEL_COUNT] = {0.516, 0.526, 0.547, 0.558, 0.537, 0.484};

const char *imp_impact_model_name(imp_impact_model m)
{
    return (unsigned)m < IMP_IMPACT_MODEL_COUNT ? model_names[m] : NULL;
}

const char *imp_impact_model_title(imp_impact_model m)
{
    return (unsigned)m < IMP_IMPACT_MODEL_COUNT ? model_titles[m] : NULL;
}

const char *imp_impact_model_summary(imp_impact_model m)
{
    return (unsigned)m < IMP_IMPACT_MODEL_COUNT ? model_summaries[m] : NULL;
}

int imp_impact_model_parse(const char *text, imp_impact_model *out, const char *what)
{
    for (int m = 0; text && m < IMP_IMPACT_MODEL_COUNT; m++)
        if (!strcmp(text, model_names[m])) {
            *out = (imp_impact_model)m;
            return IMP_OK;
        }
    return imp_fail(IMP_ERR_NOT_FOUND, "%s: unknown impact model '%s' (see `impulse impact list-models`)",
                    what, text ? text : "(null)");
}

const char *imp_impact_variant_name(imp_impact_variant v)
{
    return v == IMP_VARIANT_TEXTBOOK ? "textbook" : v == IMP_VARIANT_AUTHORS ? "authors" : NULL;
}

int imp_impact_variant_parse(const char *text, imp_impact_variant *out, const char *what)
{
    if (text && !strcmp(text, "textbook")) { *out = IMP_VARIANT_TEXTBOOK; return IMP_OK; }
    if (text && !strcmp(text, "authors")) { *out = IMP_VARIANT_AUTHORS; return IMP_OK; }
    return imp_fail(IMP_ERR_INVALID, "%s: unknown variant '%s' (textbook or authors)", what, text ? text : "(null)");
}

void imp_impact_table1(imp_impact_model m, double *mu, double *eps)
{
    int k = (unsigned)m < IMP_IMPACT_MODEL_COUNT ? (int)m : 0;
    *mu = table1_mu[k];
    *eps = table1_eps[k];
}

int imp_impact_law_check(const imp_impact_law *law)
{
    if ((unsigned)law->model >= IMP_IMPACT_MODEL_COUNT)
        return imp_fail(IMP_ERR_INVALID, "model: unknown id %d", (int)law->model);
    if (law->variant != IMP_VARIANT_TEXTBOOK && law->variant != IMP_VARIANT_AUTHORS)
        return imp_fail(IMP_ERR_INVALID, "variant: unknown id %d", (int)law->variant);
    if (!(law->mu >= 0 && law->mu <= 10))
        return imp_fail(IMP_ERR_INVALID, "mu: must be in [0, 10] (got %g)", law->mu);
    if (!(law->eps >= 0 && law->eps <= 1))
        return imp_fail(IMP_ERR_INVALID, "eps: must be in [0, 1] (got %g)", law->eps);
    return IMP_OK;
}

/* Newton stick impulse P_st(e) = -Mc (ut, (1+e) un): u+ = (0, -e un). */
static void newton_stick(const double W[4], const double u[2], double e, double P[2])
{
    double det = W[0] * W[3] - W[1] * W[2];
    double a = u[0], b = (1.0 + e) * u[1];
    P[0] = -(W[3] * a - W[1] * b) / det;
    P[1] = -(-W[2] * a + W[0] * b) / det;
}

/* Single-contact Anitescu-Potra LCP with Newton restitution ([CODE]
 * APNewton.m, reference 2.1): stick if the stick impulse is in the cone,
 * else maximal friction opposing the post-impact slip with un+ = -e un.
 * The sliding test allows ut+ of the wrong sign by rounding (relative 1e-12
 * of the terms summed): at the sticking threshold the stick impulse lies on
 * the cone edge, ut+ = 0 on that edge, and both tests may miss by one
 * rounding unit (kt = Wtn - sigma mu Wtt itself cancels there, hence the
 * scale |Wtn| + mu Wtt). The sliding impulse returned is on the cone edge
 * exactly.
 * Written for a general removed normal velocity bn (bn = (1 + e) un here),
 * the form the CD-Lagrange integrator shares (include/impulse/impact_models.h). */
int imp_ap_newton_forward(double P[2], int *branch, const double W[4], const double u[2], double mu, double bn)
{
    double det = W[0] * W[3] - W[1] * W[2];
    double a = u[0];
    P[0] = -(W[3] * a - W[1] * bn) / det; /* Newton stick impulse -Mc (ut, bn) */
    P[1] = -(-W[2] * a + W[0] * bn) / det;
    if (branch) *branch = IMP_AP_STICK;
    if (P[1] >= 0 && fabs(P[0]) <= mu * P[1]) return IMP_OK;
    double s0 = u[0] >= 0 ? 1.0 : -1.0;
    for (int k = 0; k < 2; k++) {
        double sg = k ? -s0 : s0;
        double den = W[3] - sg * mu * W[2];
        if (!(den > 0)) continue;
        double pn = -bn / den;
        double kt = W[1] - sg * mu * W[0];
        double ut_post = u[0] + kt * pn;
        double tol = 1e-12 * (fabs(u[0]) + (fabs(W[1]) + mu * W[0]) * fabs(pn));
        if (sg * ut_post >= -tol) {
            P[0] = -sg * mu * pn;
            P[1] = pn;
            if (branch) *branch = sg > 0 ? IMP_AP_SLIDE_POS : IMP_AP_SLIDE_NEG;
            return IMP_OK;
        }
    }
    return imp_fail(IMP_ERR_NUMERIC, "ap-newton: LCP has no sliding solution (mu = %g too large for this contact)", mu);
}

void imp_ap_newton_backward(double W_bar[4], double u_bar[2], double *mu_bar, double *bn_bar, const double P_bar[2],
                            const double P[2], int branch, const double W[4], double mu, double bn)
{
    if (branch == IMP_AP_STICK) {
        /* W P = -(ut, bn): lambda = W^-T P_bar, (ut, bn)_bar = -lambda, W_bar = -lambda P^T */
        double det = W[0] * W[3] - W[1] * W[2];
        double l0 = (W[3] * P_bar[0] - W[2] * P_bar[1]) / det;
        double l1 = (-W[1] * P_bar[0] + W[0] * P_bar[1]) / det;
        if (u_bar) u_bar[0] += -l0;
        if (bn_bar) *bn_bar += -l1;
        if (W_bar) {
            W_bar[0] += -l0 * P[0];
            W_bar[1] += -l0 * P[1];
            W_bar[2] += -l1 * P[0];
            W_bar[3] += -l1 * P[1];
        }
        return;
    }
    /* sliding: pn = -bn / den, den = Wnn - sg mu Wnt, P = (-sg mu pn, pn);
     * u enters only through the choice of branch */
    double sg = branch == IMP_AP_SLIDE_POS ? 1.0 : -1.0;
    double den = W[3] - sg * mu * W[2];
    double pn = P[1];
    double pn_bar = P_bar[1] - sg * mu * P_bar[0];
    double den_bar = -pn_bar * pn / den; /* d pn / d den = bn / den^2 = -pn / den */
    if (bn_bar) *bn_bar += -pn_bar / den;
    if (mu_bar) *mu_bar += -sg * pn * P_bar[0] - sg * W[2] * den_bar;
    if (W_bar) {
        W_bar[3] += den_bar;
        W_bar[2] += -sg * mu * den_bar;
    }
    (void)bn;
}

static int ap_newton(const double W[4], const double u[2], double mu, double e, double P[2])
{
    return imp_ap_newton_forward(P, NULL, W, u, mu, (1.0 + e) * u[1]);
}

/* Whittaker ([CODE] whittaker.m, reference 2.6): the Newton stick impulse;
 * if |Pt| > mu |Pn|, Pt = mu Pn keeping Pn, flipped if it pushes the slip
 * on (Pt ut+ > 0). With Pt = mu Pn, ut+ = Wtt (mu Pn - Pst_t) since the stick
 * impulse zeroes ut+, so the flip test is sign(Pn) != sign(Pst_t): the result
 * is Pt = sign(Pst_t) mu |Pn|, computed so without the rounding of ut+ ~ 0
 * at the sticking threshold. */
static void whittaker(const double W[4], const double u[2], double mu, double e, double P[2])
{
    newton_stick(W, u, e, P);
    if (fabs(P[0]) > mu * fabs(P[1])) P[0] = copysign(mu * fabs(P[1]), P[0]);
}

/* Drumwright-Shell maximum dissipation ([CODE] DrumShell.m QP, reference
 * 2.3): min 1/2 P^T W P + u^T P s.t. un+ >= 0, |Pt| <= mu Pn. */
static int drumshell_plastic(const double W[4], const double u[2], double mu, double P[2])
{
    newton_stick(W, u, 0.0, P); /* P* = -Mc u */
    if (P[1] >= 0 && fabs(P[0]) <= mu * P[1]) return IMP_OK;
    double best = INFINITY;
    for (int k = 0; k < 2; k++) {
        double sg = k ? -1.0 : 1.0;
        double gt = -sg * mu;
        double wgt = W[0] * gt + W[1], wgn = W[2] * gt + W[3];
        double gwg = gt * wgt + wgn, gu = gt * u[0] + u[1];
        if (!(wgn > 0)) continue; /* un+ >= 0 unreachable along this edge */
        double pn = -gu / gwg;
        double pn_min = -u[1] / wgn;
        if (pn < pn_min) pn = pn_min;
        double energy = pn * gu + 0.5 * pn * pn * gwg;
        if (energy < best) {
            best = energy;
            P[0] = gt * pn;
            P[1] = pn;
        }
    }
    if (!isfinite(best))
        return imp_fail(IMP_ERR_NUMERIC, "drumshell: no impulse in the cone stops penetration (mu = %g)", mu);
    return IMP_OK;
}

/* Poisson restitution applied to a plastic impulse P0.
 * authors: (P0t, (1+e) P0n) ([CODE] APPoisson.m, DrumShell.m; their
 * re-solve branch cannot fire since un+ = e Wnn P0n + un1 >= 0).
 * textbook: a restitution phase of normal impulse e P0n whose tangential
 * impulse dissipates maximally within the cone (clipped stick). */
static void poisson_restitution(const double W[4], const double u[2], double mu, double e,
                                imp_impact_variant variant, double P[2])
{
    if (variant == IMP_VARIANT_AUTHORS) {
        P[1] *= 1.0 + e;
        return;
    }
    double pn2 = e * P[1];
    double ut1 = u[0] + W[0] * P[0] + W[1] * P[1];
    double pt2 = -(ut1 + W[1] * pn2) / W[0];
    double lim = mu * pn2;
    if (pt2 > lim) pt2 = lim;
    if (pt2 < -lim) pt2 = -lim;
    P[0] += pt2;
    P[1] += pn2;
}

int imp_impact_predict_fast(const imp_impact_law *law, const double W[4], const double u[2], double P[2])
{
    int st = IMP_OK;
    switch (law->model) {
    case IMP_IMPACT_AP_NEWTON:
        return ap_newton(W, u, law->mu, law->eps, P);
    case IMP_IMPACT_WHITTAKER:
        whittaker(W, u, law->mu, law->eps, P);
        return IMP_OK;
    case IMP_IMPACT_AP_POISSON:
        if ((st = ap_newton(W, u, law->mu, 0.0, P))) return st;
        poisson_restitution(W, u, law->mu, law->eps, law->variant, P);
        return IMP_OK;
    case IMP_IMPACT_DRUMSHELL:
        if ((st = drumshell_plastic(W, u, law->mu, P))) return st;
        poisson_restitution(W, u, law->mu, law->eps, law->variant, P);
        return IMP_OK;
    case IMP_IMPACT_WANG_MASON:
        return impact_routh(W, u, law->mu, law->eps, ROUTH_POISSON, P, NULL);
    case IMP_IMPACT_MIRTICH:
        if (law->variant == IMP_VARIANT_AUTHORS)
            return impact_mirtich_proportional(W, u, law->mu, law->eps, P);
        return impact_routh(W, u, law->mu, law->eps, ROUTH_ENERGETIC, P, NULL);
    default:
        return imp_fail(IMP_ERR_INVALID, "model: unknown id %d", (int)law->model);
    }
}

int impact_check_contact(const double W[4], const double u[2])
{
    int st;
    /* x - x is 0 for finite x and NaN otherwise: one branch on the hot path,
     * imp_check_finite only to name the offending value */
    double z = (W[0] - W[0]) + (W[1] - W[1]) + (W[2] - W[2]) + (W[3] - W[3]) + (u[0] - u[0]) + (u[1] - u[1]);
    if (z != 0) {
        if ((st = imp_check_finite(W, 4, "W"))) return st;
        if ((st = imp_check_finite(u, 2, "u"))) return st;
    }
    if (!(W[0] > 0 && W[3] > 0 && W[0] * W[3] - W[1] * W[2] > 0) || fabs(W[1] - W[2]) > 1e-9 * (W[0] + W[3]))
        return imp_fail(IMP_ERR_NUMERIC, "W: not symmetric positive definite");
    if (!(u[1] < 0))
        return imp_fail(IMP_ERR_INVALID, "u: normal contact velocity %g >= 0, the bodies are not impacting", u[1]);
    return IMP_OK;
}

int imp_impact_predict(const imp_impact_law *law, const double W[4], const double u[2], double P[2])
{
    int st;
    if ((st = imp_impact_law_check(law))) return st;
    if ((st = impact_check_contact(W, u))) return st;
    if ((st = imp_impact_predict_fast(law, W, u, P))) return st;
    return (P[0] - P[0]) + (P[1] - P[1]) == 0 ? IMP_OK : imp_check_finite(P, 2, "P");
}

int imp_impact_sticking_threshold(const imp_impact_law *law, const double W[4], const double u[2],
                                  double mu_cap, double *mu_s)
{
    int st;
    imp_impact_law L = *law;
    L.mu = 0;
    if ((st = imp_impact_law_check(&L))) return st;
    if ((st = impact_check_contact(W, u))) return st;
    if (!(mu_cap > 0 && mu_cap <= 10)) return imp_fail(IMP_ERR_INVALID, "mu_cap: must be in (0, 10] (got %g)", mu_cap);
    double P[2], ms = mu_cap;
    switch (law->model) {
    case IMP_IMPACT_AP_NEWTON:
    case IMP_IMPACT_WHITTAKER:
        newton_stick(W, u, law->eps, P);
        if (P[1] > 0) ms = fabs(P[0]) / P[1];
        break;
    case IMP_IMPACT_AP_POISSON:
    case IMP_IMPACT_DRUMSHELL:
        newton_stick(W, u, 0.0, P);
        if (P[1] > 0) ms = fabs(P[0]) / P[1];
        /* textbook restitution phase sticks only if mu >= |Wtn|/Wtt */
        if (law->variant == IMP_VARIANT_TEXTBOOK && law->eps > 0 && fabs(W[1]) / W[0] > ms)
            ms = fabs(W[1]) / W[0];
        break;
    case IMP_IMPACT_MIRTICH:
        if (law->variant == IMP_VARIANT_AUTHORS) break; /* slip decays but never stops */
        /* fall through */
    case IMP_IMPACT_WANG_MASON: {
        /* the integration ends sticking (ut+ = 0) for all mu above mu_s */
        routh_stop stop = law->model == IMP_IMPACT_WANG_MASON ? ROUTH_POISSON : ROUTH_ENERGETIC;
        double ue[2], scale = fabs(u[0]) + fabs(u[1]);
        if (impact_routh(W, u, mu_cap, law->eps, stop, P, ue) || fabs(ue[0]) > 1e-9 * scale) break;
        double lo = 0, hi = mu_cap;
        for (int it = 0; it < 60 && hi - lo > 1e-12; it++) {
            double mid = 0.5 * (lo + hi);
            if (!impact_routh(W, u, mid, law->eps, stop, P, ue) && fabs(ue[0]) <= 1e-9 * scale) hi = mid;
            else lo = mid;
        }
        ms = hi;
        break;
    }
    default:
        break;
    }
    *mu_s = ms < mu_cap ? ms : mu_cap;
    return IMP_OK;
}
