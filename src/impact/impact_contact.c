/* Contact-space machinery of one planar impact ([ISRR] eqs 2-6, [CoRL]
 * eqs 2-5): J = [d; n], M = diag(m, m, I), W = J M^-1 J^T, Mc = W^-1. */
#include "impulse/impact.h"
#include "impulse/core.h"

#include <math.h>
#include <string.h>

int imp_contact_make(imp_contact *c, const double d[3], const double n[3], double mass,
                     double inertia, const double v_pre[3], const double v_post[3])
{
    memset(c, 0, sizeof *c);
    if (!(mass > 0) || !isfinite(mass)) return imp_fail(IMP_ERR_INVALID, "mass: must be > 0 (got %g)", mass);
    if (!(inertia > 0) || !isfinite(inertia))
        return imp_fail(IMP_ERR_INVALID, "inertia: must be > 0 (got %g)", inertia);
    int st;
    if ((st = imp_check_finite(d, 3, "d"))) return st;
    if ((st = imp_check_finite(n, 3, "n"))) return st;
    if ((st = imp_check_finite(v_pre, 3, "v_pre"))) return st;
    if (v_post && (st = imp_check_finite(v_post, 3, "v_post"))) return st;
    memcpy(c->J, d, 3 * sizeof(double));
    memcpy(c->J + 3, n, 3 * sizeof(double));
    c->minv[0] = c->minv[1] = 1.0 / mass;
    c->minv[2] = 1.0 / inertia;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            double w = 0.0;
            for (int k = 0; k < 3; k++) w += c->J[3 * a + k] * c->minv[k] * c->J[3 * b + k];
            c->W[2 * a + b] = w;
        }
    double det = c->W[0] * c->W[3] - c->W[1] * c->W[2];
    if (!(det > 1e-12 * c->W[0] * c->W[3]))
        return imp_fail(IMP_ERR_NUMERIC, "J: contact rows are (nearly) dependent, W is singular");
    c->Mc[0] = c->W[3] / det;
    c->Mc[1] = -c->W[1] / det;
    c->Mc[2] = -c->W[2] / det;
    c->Mc[3] = c->W[0] / det;
    memcpy(c->v_pre, v_pre, 3 * sizeof(double));
    if (v_post) memcpy(c->v_post, v_post, 3 * sizeof(double));
    for (int a = 0; a < 2; a++) {
        c->u[a] = c->J[3 * a] * v_pre[0] + c->J[3 * a + 1] * v_pre[1] + c->J[3 * a + 2] * v_pre[2];
        c->u_post[a] = c->J[3 * a] * c->v_post[0] + c->J[3 * a + 1] * c->v_post[1] +
                       c->J[3 * a + 2] * c->v_post[2];
    }
    return IMP_OK;
}

int imp_impact_contact(const imp_impact_set *s, size_t i, imp_contact *c)
{
    if (i >= s->count) return imp_fail(IMP_ERR_INVALID, "impact index %zu out of range (count %zu)", i, s->count);
    double I = s->object.mass * s->object.kg * s->object.kg;
    int st = imp_contact_make(c, s->d + 3 * i, s->n + 3 * i, s->object.mass, I, s->pre + 6 * i + 3,
                              s->post + 6 * i + 3);
    if (st) imp_fail_context(st, "impact %zu", i);
    return st;
}

void imp_contact_velocity_after(const imp_contact *c, const double P[2], double v_out[3])
{
    /* [ISRR] eq 5: v+ = v- + M^-1 J^T P */
    for (int k = 0; k < 3; k++)
        v_out[k] = c->v_pre[k] + c->minv[k] * (c->J[k] * P[0] + c->J[3 + k] * P[1]);
}

void imp_contact_u_after(const imp_contact *c, const double P[2], double u_out[2])
{
    u_out[0] = c->u[0] + c->W[0] * P[0] + c->W[1] * P[1];
    u_out[1] = c->u[1] + c->W[2] * P[0] + c->W[3] * P[1];
}

static double quad(const double A[4], const double x[2])
{
    return x[0] * (A[0] * x[0] + A[1] * x[1]) + x[1] * (A[2] * x[0] + A[3] * x[1]);
}

double imp_contact_energy_before(const imp_contact *c) { return 0.5 * quad(c->Mc, c->u); }

double imp_contact_energy_after(const imp_contact *c, const double P[2])
{
    return 0.5 * quad(c->Mc, c->u) + c->u[0] * P[0] + c->u[1] * P[1] + 0.5 * quad(c->W, P);
}

void imp_contact_plastic_stick(const imp_contact *c, double P[2])
{
    P[0] = -(c->Mc[0] * c->u[0] + c->Mc[1] * c->u[1]);
    P[1] = -(c->Mc[2] * c->u[0] + c->Mc[3] * c->u[1]);
}

double imp_contact_ellipse_alpha(const imp_contact *c, const double P[2])
{
    /* (P + Mc u)^T W (P + Mc u) = 2 E(P) since W (P + Mc u) = u+ */
    double e0 = quad(c->Mc, c->u);
    double ps[2];
    imp_contact_plastic_stick(c, ps);
    double q[2] = {P[0] - ps[0], P[1] - ps[1]};
    return e0 > 0 ? quad(c->W, q) / e0 : INFINITY;
}

double imp_contact_sticking_line(const imp_contact *c, const double P[2])
{
    return c->u[0] + c->W[0] * P[0] + c->W[1] * P[1];
}

double imp_contact_compression_line(const imp_contact *c, const double P[2])
{
    return c->u[1] + c->W[2] * P[0] + c->W[3] * P[1];
}

int imp_contact_admissible(const imp_contact *c, const double P[2], double tol)
{
    return imp_contact_ellipse_alpha(c, P) <= 1.0 + tol &&
           imp_contact_compression_line(c, P) >= -tol * fabs(c->u[1]);
}

int imp_impact_features_x1(const imp_impact_set *s, double *X)
{
    for (size_t i = 0; i < s->count; i++) {
        imp_contact c;
        int st = imp_impact_contact(s, i, &c);
        if (st) return st;
        double *x = X + 5 * i;
        x[0] = c.Mc[0];
        x[1] = c.Mc[1];
        x[2] = c.Mc[3];
        x[3] = c.u[0];
        x[4] = c.u[1];
    }
    return IMP_OK;
}

int imp_impact_features_x2(const imp_impact_set *s, double *X)
{
    for (size_t i = 0; i < s->count; i++) {
        imp_contact c;
        int st = imp_impact_contact(s, i, &c);
        if (st) return st;
        /* gpFeature2.mat stores the contact momentum Mc u in polar form */
        double pt = c.Mc[0] * c.u[0] + c.Mc[1] * c.u[1];
        double pn = c.Mc[2] * c.u[0] + c.Mc[3] * c.u[1];
        X[2 * i] = atan2(pn, pt);
        X[2 * i + 1] = hypot(pt, pn);
    }
    return IMP_OK;
}

int imp_impact_measured_impulses(const imp_impact_set *s, imp_impulse_measure how, double *P)
{
    if (how != IMP_PMEAS_CONTACT && how != IMP_PMEAS_MOMENTUM)
        return imp_fail(IMP_ERR_INVALID, "impulse measure: unknown value %d", (int)how);
    for (size_t i = 0; i < s->count; i++) {
        imp_contact c;
        int st = imp_impact_contact(s, i, &c);
        if (st) return st;
        if (how == IMP_PMEAS_MOMENTUM) {
            P[2 * i] = s->object.mass * (c.v_post[0] - c.v_pre[0]);
            P[2 * i + 1] = s->object.mass * (c.v_post[1] - c.v_pre[1]);
        } else {
            /* [CODE2] optimal_mu_e.m: P = Mc J (v+ - v-) = Mc (u+ - u) */
            double du[2] = {c.u_post[0] - c.u[0], c.u_post[1] - c.u[1]};
            P[2 * i] = c.Mc[0] * du[0] + c.Mc[1] * du[1];
            P[2 * i + 1] = c.Mc[2] * du[0] + c.Mc[3] * du[1];
        }
    }
    return IMP_OK;
}

int imp_impact_wrenches(const imp_impact_set *s, double *Wr)
{
    double m = s->object.mass, I = m * s->object.kg * s->object.kg;
    for (size_t i = 0; i < s->count; i++) {
        const double *a = s->pre + 6 * i + 3, *b = s->post + 6 * i + 3;
        const double *d = s->d + 3 * i, *n = s->n + 3 * i;
        double pt = m * (b[0] - a[0]), pn = m * (b[1] - a[1]);
        Wr[3 * i] = pt;
        Wr[3 * i + 1] = pn;
        Wr[3 * i + 2] = I * (b[2] - a[2]) - (d[2] * pt + n[2] * pn);
    }
    return IMP_OK;
}

double imp_impact_velocity_error(const double v_pred[3], const double v_true[3], double kg)
{
    double a = v_pred[0] - v_true[0], b = v_pred[1] - v_true[1], w = kg * (v_pred[2] - v_true[2]);
    return sqrt(a * a + b * b + w * w);
}
