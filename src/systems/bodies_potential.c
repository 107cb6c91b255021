/* Potentials of constrained systems: uniform gravity on the centres of
 * mass, springs, and the magnet pendulum's dipole field. */
#include "impulse/constrained.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

int imp_csys_add_gravity(imp_csys *s, double g, int axis)
{
    if (!isfinite(g)) return imp_fail(IMP_ERR_INVALID, "gravity: %g is not finite", g);
    if (axis < 0) axis = s->d - 1;
    if (axis >= s->d) return imp_fail(IMP_ERR_INVALID, "gravity: axis %d outside 0..%d", axis, s->d - 1);
    if (s->n_pots >= IMP_CSYS_MAX_POTS) return imp_fail(IMP_ERR_INVALID, "gravity: too many potential terms");
    imp_cpot *p = &s->pots[s->n_pots++];
    memset(p, 0, sizeof *p);
    p->kind = IMP_CPOT_GRAVITY;
    p->g = g;
    p->axis = axis;
    return IMP_OK;
}

int imp_csys_add_spring(imp_csys *s, int body_a, int body_b, const double *anchor, double k,
                        double rest)
{
    if (body_a < 0 || body_a >= s->n_bodies || body_b >= s->n_bodies || body_a == body_b)
        return imp_fail(IMP_ERR_INVALID, "spring: bad bodies %d, %d", body_a, body_b);
    if (!isfinite(k) || k < 0) return imp_fail(IMP_ERR_INVALID, "spring: stiffness %g must be >= 0", k);
    if (!isfinite(rest) || rest < 0)
        return imp_fail(IMP_ERR_INVALID, "spring: rest length %g must be >= 0", rest);
    if (s->n_pots >= IMP_CSYS_MAX_POTS) return imp_fail(IMP_ERR_INVALID, "spring: too many potential terms");
    imp_cpot *p = &s->pots[s->n_pots++];
    memset(p, 0, sizeof *p);
    p->kind = IMP_CPOT_SPRING;
    p->i = s->bodies[body_a].first_point;
    p->j = body_b >= 0 ? s->bodies[body_b].first_point : -1;
    if (body_b < 0 && anchor)
        for (int c = 0; c < s->d; c++) p->anchor[c] = anchor[c];
    p->k = k;
    p->rest = rest;
    return IMP_OK;
}

int imp_csys_add_magnet(imp_csys *s, int body, double q, const double *pos, const double *moment)
{
    if (s->d != 3) return imp_fail(IMP_ERR_INVALID, "magnet: needs dim 3");
    if (body < 0 || body >= s->n_bodies) return imp_fail(IMP_ERR_INVALID, "magnet: bad body %d", body);
    if (!isfinite(q)) return imp_fail(IMP_ERR_INVALID, "magnet: q %g is not finite", q);
    for (int c = 0; c < 3; c++)
        if (!isfinite(pos[c]) || !isfinite(moment[c]))
            return imp_fail(IMP_ERR_INVALID, "magnet: position and moment must be finite");
    imp_cpot *p = NULL;
    if (s->n_pots > 0) {
        imp_cpot *last = &s->pots[s->n_pots - 1];
        if (last->kind == IMP_CPOT_MAGNET && last->body == body && last->q == q) p = last;
    }
    if (!p) {
        if (s->n_pots >= IMP_CSYS_MAX_POTS) return imp_fail(IMP_ERR_INVALID, "magnet: too many potential terms");
        p = &s->pots[s->n_pots++];
        memset(p, 0, sizeof *p);
        p->kind = IMP_CPOT_MAGNET;
        p->body = body;
        p->q = q;
    }
    if (p->n_magnets >= 4) return imp_fail(IMP_ERR_INVALID, "magnet: at most 4 magnets per body");
    for (int c = 0; c < 3; c++) {
        p->magnet_pos[p->n_magnets][c] = pos[c];
        p->magnet_moment[p->n_magnets][c] = moment[c];
    }
    p->n_magnets++;
    return IMP_OK;
}

/* The reference MagnetPendulum potential (its code, Δ vs [F] eq 24-25):
 * m0 = q x/|x|^2, r_i = R_i - x,
 * V = sum_i [-3 (m0.r_i)(m_i.r_i) - |r_i|^2 (m0.m_i)] / (4 pi |r_i|^5).
 * Written over complex numbers so that its gradient comes from the complex
 * step (exact to round-off; V is real-analytic away from the magnets). */
static double complex magnet_energy_c(const imp_cpot *p, const double complex *x)
{
    double complex x2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    double complex m0[3], V = 0;
    for (int c = 0; c < 3; c++) m0[c] = p->q * x[c] / x2;
    for (int i = 0; i < p->n_magnets; i++) {
        double complex r[3];
        for (int c = 0; c < 3; c++) r[c] = p->magnet_pos[i][c] - x[c];
        double complex m0r = 0, mir = 0, m0mi = 0, r2 = 0;
        for (int c = 0; c < 3; c++) {
            m0r += m0[c] * r[c];
            mir += p->magnet_moment[i][c] * r[c];
            m0mi += m0[c] * p->magnet_moment[i][c];
            r2 += r[c] * r[c];
        }
        V += (-3.0 * m0r * mir - r2 * m0mi) / (4.0 * PI * r2 * r2 * csqrt(r2));
    }
    return V;
}

double imp_csys_potential(const imp_csys *s, const double *x)
{
    int d = s->d;
    double V = 0;
    for (int t = 0; t < s->n_pots; t++) {
        const imp_cpot *p = &s->pots[t];
        switch (p->kind) {
        case IMP_CPOT_GRAVITY:
            for (int b = 0; b < s->n_bodies; b++)
                V += p->g * s->bodies[b].mass * x[s->bodies[b].first_point * d + p->axis];
            break;
        case IMP_CPOT_SPRING: {
            double r2 = 0;
            for (int c = 0; c < d; c++) {
                double r = x[p->i * d + c] - (p->j >= 0 ? x[p->j * d + c] : p->anchor[c]);
                r2 += r * r;
            }
            double e = sqrt(r2) - p->rest;
            V += 0.5 * p->k * e * e;
            break;
        }
        case IMP_CPOT_MAGNET: {
            const double *xb = x + s->bodies[p->body].first_point * d;
            double complex xc[3] = {xb[0], xb[1], xb[2]};
            V += creal(magnet_energy_c(p, xc));
            break;
        }
        }
    }
    return V;
}

void imp_csys_potential_grad(const imp_csys *s, const double *x, double *grad)
{
    int d = s->d, N = imp_csys_ndof(s);
    memset(grad, 0, (size_t)N * sizeof(double));
    for (int t = 0; t < s->n_pots; t++) {
        const imp_cpot *p = &s->pots[t];
        switch (p->kind) {
        case IMP_CPOT_GRAVITY:
            for (int b = 0; b < s->n_bodies; b++)
                grad[s->bodies[b].first_point * d + p->axis] += p->g * s->bodies[b].mass;
            break;
        case IMP_CPOT_SPRING: {
            double r[3], r2 = 0;
            for (int c = 0; c < d; c++) {
                r[c] = x[p->i * d + c] - (p->j >= 0 ? x[p->j * d + c] : p->anchor[c]);
                r2 += r[c] * r[c];
            }
            double len = sqrt(r2);
            if (len == 0.0) break; /* direction undefined; the force is zero by symmetry */
            double f = p->k * (len - p->rest) / len;
            for (int c = 0; c < d; c++) {
                grad[p->i * d + c] += f * r[c];
                if (p->j >= 0) grad[p->j * d + c] -= f * r[c];
            }
            break;
        }
        case IMP_CPOT_MAGNET: {
            int off = s->bodies[p->body].first_point * d;
            const double h = 1e-30;
            for (int c = 0; c < 3; c++) {
                double complex xc[3] = {x[off], x[off + 1], x[off + 2]};
                xc[c] += I * h;
                grad[off + c] += cimag(magnet_energy_c(p, xc)) / h;
            }
            break;
        }
        }
    }
}
