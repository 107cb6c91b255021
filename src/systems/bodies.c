/* Bodies embedded in Cartesian coordinates ([F] section 6): point masses
 * and extended bodies (centre of mass + unit principal-axis points), their
 * constant mass matrix ([F] eq 9) and the kinetic energy. */
#include "impulse/constrained.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int imp_csys_init(imp_csys *s, const char *name, int d)
{
    if (!s) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    memset(s, 0, sizeof *s);
    if (d != 2 && d != 3) return imp_fail(IMP_ERR_INVALID, "dim: %d must be 2 or 3", d);
    s->d = d;
    snprintf(s->name, sizeof s->name, "%s", name ? name : "custom");
    s->kind = IMP_CSYS_CUSTOM;
    return IMP_OK;
}

int imp_csys_body_index(const imp_csys *s, const char *name)
{
    for (int b = 0; b < s->n_bodies; b++)
        if (strcmp(s->bodies[b].name, name) == 0) return b;
    return -1;
}

/* Rigid internal distances: |x_i - x_0| = 1 and |x_i - x_j| = sqrt 2, so that
 * the axis points stay an orthonormal frame ([F] appendix D). */
static int add_rigid_internal(imp_csys *s, int b)
{
    const imp_cbody *body = &s->bodies[b];
    int k = body->n_axes;
    if (k == 0) return IMP_OK;
    int n_rows = k * (k + 1) / 2;
    if (s->n_cons >= IMP_CSYS_MAX_CONS || s->n_rows + n_rows > IMP_CSYS_MAX_ROWS)
        return imp_fail(IMP_ERR_INVALID, "body '%s': too many constraints (max %d rows)",
                        body->name, IMP_CSYS_MAX_ROWS);
    imp_ccon *c = &s->cons[s->n_cons];
    char bname[sizeof body->name];
    memcpy(bname, body->name, sizeof bname);
    snprintf(c->label, sizeof c->label, "rigid %s", bname);
    c->first_row = s->n_rows;
    c->n_rows = n_rows;
    for (int i = 0; i <= k; i++)
        for (int j = i + 1; j <= k; j++) {
            imp_crow *r = &s->rows[s->n_rows++];
            memset(r, 0, sizeof *r);
            r->kind = IMP_CROW_DISTANCE;
            r->i = body->first_point + i;
            r->j = body->first_point + j;
            r->length = i == 0 ? 1.0 : sqrt(2.0);
            r->con = s->n_cons;
        }
    s->n_cons++;
    return IMP_OK;
}

int imp_csys_add_body(imp_csys *s, const char *name, double mass, int n_axes,
                      const double *inertia, int *index)
{
    if (!s || !name) return imp_fail(IMP_ERR_INVALID, "body: NULL");
    if (!name[0] || strlen(name) >= sizeof s->bodies[0].name)
        return imp_fail(IMP_ERR_INVALID, "body '%s': name must have 1 to %zu characters", name,
                        sizeof s->bodies[0].name - 1);
    if (imp_csys_body_index(s, name) >= 0)
        return imp_fail(IMP_ERR_INVALID, "body '%s': defined twice", name);
    if (s->n_bodies >= IMP_CSYS_MAX_BODIES)
        return imp_fail(IMP_ERR_INVALID, "body '%s': too many bodies (max %d)", name,
                        IMP_CSYS_MAX_BODIES);
    if (!(mass > 0.0) || !isfinite(mass))
        return imp_fail(IMP_ERR_INVALID, "body '%s': mass %g must be positive and finite", name, mass);
    if (n_axes < 0 || n_axes > s->d)
        return imp_fail(IMP_ERR_INVALID, "body '%s': %d principal axes, must be 0..%d", name,
                        n_axes, s->d);
    if (s->n_points + 1 + n_axes > IMP_CSYS_MAX_POINTS)
        return imp_fail(IMP_ERR_INVALID, "body '%s': too many points (max %d)", name,
                        IMP_CSYS_MAX_POINTS);
    imp_cbody *b = &s->bodies[s->n_bodies];
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    b->mass = mass;
    b->n_axes = n_axes;
    for (int i = 0; i < n_axes; i++) {
        if (!inertia || !(inertia[i] > 0.0) || !isfinite(inertia[i]))
            return imp_fail(IMP_ERR_INVALID, "body '%s': inertia %d must be positive and finite",
                            name, i + 1);
        b->inertia[i] = inertia[i];
    }
    b->first_point = s->n_points;
    for (int p = 0; p <= n_axes; p++) s->point_body[s->n_points + p] = s->n_bodies;
    int idx = s->n_bodies;
    s->n_bodies++;
    s->n_points += 1 + n_axes;
    int st = add_rigid_internal(s, idx);
    if (st) {
        s->n_bodies--;
        s->n_points -= 1 + n_axes;
        return st;
    }
    if (index) *index = idx;
    return IMP_OK;
}

/* p = M v, body by body: [F] eq 9, M_b = [[m + sum I, -I^T], [-I, diag I]] (x) I_d. */
void imp_csys_mass_mul(const imp_csys *s, const double *v, double *p)
{
    int d = s->d;
    for (int b = 0; b < s->n_bodies; b++) {
        const imp_cbody *body = &s->bodies[b];
        const double *vb = v + (size_t)body->first_point * d;
        double *pb = p + (size_t)body->first_point * d;
        int k = body->n_axes;
        double sumI = 0;
        for (int i = 0; i < k; i++) sumI += body->inertia[i];
        for (int c = 0; c < d; c++) {
            double acc = (body->mass + sumI) * vb[c];
            for (int i = 0; i < k; i++) acc -= body->inertia[i] * vb[(i + 1) * d + c];
            pb[c] = acc;
            for (int i = 0; i < k; i++)
                pb[(i + 1) * d + c] = body->inertia[i] * (vb[(i + 1) * d + c] - vb[c]);
        }
    }
}

/* v = M^-1 p with M_b^-1 = 11^T / m + diag(0, 1/I). */
void imp_csys_mass_inv_mul(const imp_csys *s, const double *p, double *v)
{
    int d = s->d;
    for (int b = 0; b < s->n_bodies; b++) {
        const imp_cbody *body = &s->bodies[b];
        const double *pb = p + (size_t)body->first_point * d;
        double *vb = v + (size_t)body->first_point * d;
        int k = body->n_axes;
        for (int c = 0; c < d; c++) {
            double sum = pb[c];
            for (int i = 0; i < k; i++) sum += pb[(i + 1) * d + c];
            double base = sum / body->mass;
            vb[c] = base;
            for (int i = 0; i < k; i++) vb[(i + 1) * d + c] = base + pb[(i + 1) * d + c] / body->inertia[i];
        }
    }
}

void imp_csys_mass_matrix(const imp_csys *s, double *M)
{
    int N = imp_csys_ndof(s), d = s->d;
    memset(M, 0, (size_t)N * N * sizeof(double));
    for (int b = 0; b < s->n_bodies; b++) {
        const imp_cbody *body = &s->bodies[b];
        int k = body->n_axes, p0 = body->first_point;
        double sumI = 0;
        for (int i = 0; i < k; i++) sumI += body->inertia[i];
        for (int c = 0; c < d; c++) {
            int r0 = p0 * d + c;
            M[(size_t)r0 * N + r0] = body->mass + sumI;
            for (int i = 0; i < k; i++) {
                int ri = (p0 + 1 + i) * d + c;
                M[(size_t)r0 * N + ri] = -body->inertia[i];
                M[(size_t)ri * N + r0] = -body->inertia[i];
                M[(size_t)ri * N + ri] = body->inertia[i];
            }
        }
    }
}

double imp_csys_energy(const imp_csys *s, const double *x, const double *v)
{
    double p[IMP_CSYS_MAX_POINTS * 3];
    int N = imp_csys_ndof(s);
    imp_csys_mass_mul(s, v, p);
    double T = 0;
    for (int q = 0; q < N; q++) T += 0.5 * v[q] * p[q];
    return T + imp_csys_potential(s, x);
}
