/* The contact model: bodies, candidates, checks, state helpers
 * (include/impulse/contact.h). */
#include "contact/contact_internal.h"

#include <math.h>
#include <string.h>

static int body_nq(const imp_contact_model *m, int kind)
{
    return kind == IMP_BODY_POINT ? m->dim : kind == IMP_BODY_PLANAR ? 3 : 7;
}

static int body_nv(const imp_contact_model *m, int kind)
{
    return kind == IMP_BODY_POINT ? m->dim : kind == IMP_BODY_PLANAR ? 3 : 6;
}

static int check_body_id(const imp_contact_model *m, int c, const char *field, int id, int wall_ok)
{
    if (id == IMP_WALL && wall_ok) return IMP_OK;
    if (id < 0 || id >= m->n_bodies)
        return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].%s: %d is not a body (the model has %d)", c,
                        field, id, m->n_bodies);
    return IMP_OK;
}

static int check_body(const imp_contact_model *m, int k)
{
    const imp_contact_body *b = &m->bodies[k];
    if (b->kind == IMP_BODY_PLANAR && m->dim != 2)
        return imp_fail(IMP_ERR_INVALID, "contact model: bodies[%d].kind: a planar body needs dim 2 (dim is %d)", k,
                        m->dim);
    if (b->kind == IMP_BODY_SPATIAL && m->dim != 3)
        return imp_fail(IMP_ERR_INVALID, "contact model: bodies[%d].kind: a spatial body needs dim 3 (dim is %d)", k,
                        m->dim);
    if (b->kind != IMP_BODY_POINT && b->kind != IMP_BODY_PLANAR && b->kind != IMP_BODY_SPATIAL)
        return imp_fail(IMP_ERR_INVALID, "contact model: bodies[%d].kind: %d is not a body kind", k, b->kind);
    if (!(b->mass > 0.0) || !isfinite(b->mass))
        return imp_fail(IMP_ERR_INVALID, "contact model: bodies[%d].mass: %g is not a positive number", k, b->mass);
    if (b->kind == IMP_BODY_PLANAR && (!(b->inertia[0] > 0.0) || !isfinite(b->inertia[0])))
        return imp_fail(IMP_ERR_INVALID, "contact model: bodies[%d].inertia[0]: %g is not a positive number", k,
                        b->inertia[0]);
    if (b->kind == IMP_BODY_SPATIAL) {
        const double *I = b->inertia;
        for (int i = 0; i < 9; i++)
            if (!isfinite(I[i]))
                return imp_fail(IMP_ERR_INVALID, "contact model: bodies[%d].inertia[%d] is not finite", k, i);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < i; j++)
                if (fabs(I[3 * i + j] - I[3 * j + i]) > 1e-12 * (fabs(I[0]) + fabs(I[4]) + fabs(I[8])))
                    return imp_fail(IMP_ERR_INVALID, "contact model: bodies[%d].inertia: not symmetric", k);
        /* positive definite: leading minors */
        double d1 = I[0], d2 = I[0] * I[4] - I[1] * I[3];
        double d3 = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) +
                    I[2] * (I[3] * I[7] - I[4] * I[6]);
        if (!(d1 > 0.0 && d2 > 0.0 && d3 > 0.0))
            return imp_fail(IMP_ERR_INVALID, "contact model: bodies[%d].inertia: not positive definite", k);
    }
    return IMP_OK;
}

static int check_candidate(const imp_contact_model *m, int c)
{
    const imp_contact_candidate *k = &m->cand[c];
    int st;
    if (k->kind == IMP_CONTACT_PLANE) {
        if (k->body_a != IMP_WALL)
            return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].body_a: a plane contact has body_a = %d (the plane), not %d",
                            c, IMP_WALL, k->body_a);
        if ((st = check_body_id(m, c, "body_b", k->body_b, 0))) return st;
        double nn = 0.0;
        for (int i = 0; i < m->dim; i++) nn += k->normal[i] * k->normal[i];
        for (int i = m->dim; i < 3; i++)
            if (k->normal[i] != 0.0)
                return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].normal[%d]: %g is nonzero in %d-D", c, i,
                                k->normal[i], m->dim);
        if (!isfinite(nn) || fabs(nn - 1.0) > 1e-9)
            return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].normal: degenerate normal (|n|^2 = %g, must be 1)",
                            c, nn);
        if (!isfinite(k->offset)) return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].offset is not finite", c);
    } else if (k->kind == IMP_CONTACT_SPHERES) {
        if ((st = check_body_id(m, c, "body_a", k->body_a, 0))) return st;
        if ((st = check_body_id(m, c, "body_b", k->body_b, 0))) return st;
        if (k->body_a == k->body_b)
            return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d]: body_a and body_b are both %d", c, k->body_a);
        if (!(k->radius_a >= 0.0) || !isfinite(k->radius_a))
            return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].radius_a: %g is not >= 0", c, k->radius_a);
    } else {
        return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].kind: %d is not a contact kind", c, k->kind);
    }
    if (!(k->radius_b >= 0.0) || !isfinite(k->radius_b))
        return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].radius_b: %g is not >= 0", c, k->radius_b);
    for (int i = 0; i < 3; i++)
        if (!isfinite(k->point_a[i]) || !isfinite(k->point_b[i]) || (i >= m->dim && (k->point_a[i] != 0.0 || k->point_b[i] != 0.0)))
            return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].point_%c[%d] is not finite or nonzero beyond dim %d",
                            c, !isfinite(k->point_a[i]) || (i >= m->dim && k->point_a[i] != 0.0) ? 'a' : 'b', i, m->dim);
    if (!(k->e >= 0.0 && k->e <= 1.0))
        return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].e: %g is not in [0, 1]", c, k->e);
    if (!(k->mu >= 0.0) || !isfinite(k->mu))
        return imp_fail(IMP_ERR_INVALID, "contact model: cand[%d].mu: %g is not >= 0", c, k->mu);
    return IMP_OK;
}

int imp_contact_model_init(imp_contact_model *m)
{
    if (!m) return imp_fail(IMP_ERR_INVALID, "contact model: NULL");
    if (m->dim != 2 && m->dim != 3) return imp_fail(IMP_ERR_INVALID, "contact model: dim: %d is not 2 or 3", m->dim);
    if (m->n_bodies < 1 || m->n_bodies > IMP_MAX_BODIES)
        return imp_fail(IMP_ERR_INVALID, "contact model: n_bodies: %d is not in [1, %d]", m->n_bodies, IMP_MAX_BODIES);
    if (m->n_candidates < 0 || m->n_candidates > IMP_MAX_CONTACTS)
        return imp_fail(IMP_ERR_INVALID, "contact model: n_candidates: %d is not in [0, %d]", m->n_candidates,
                        IMP_MAX_CONTACTS);
    if (!(m->gap_tol >= 0.0) || !isfinite(m->gap_tol))
        return imp_fail(IMP_ERR_INVALID, "contact model: gap_tol: %g is not >= 0", m->gap_tol);
    int st, nq = 0, nv = 0;
    for (int k = 0; k < m->n_bodies; k++) {
        if ((st = check_body(m, k))) return st;
        m->q_offset[k] = nq;
        m->v_offset[k] = nv;
        nq += body_nq(m, m->bodies[k].kind);
        nv += body_nv(m, m->bodies[k].kind);
    }
    for (int c = 0; c < m->n_candidates; c++)
        if ((st = check_candidate(m, c))) return st;
    m->nq = nq;
    m->nv = nv;
    return IMP_OK;
}

int imp_contact_state_check(const imp_contact_model *m, const double *q)
{
    for (int k = 0; k < m->n_bodies; k++) {
        const double *x = q + m->q_offset[k];
        int nq = body_nq(m, m->bodies[k].kind);
        for (int i = 0; i < nq; i++)
            if (!isfinite(x[i])) return imp_fail(IMP_ERR_INVALID, "q[body %d][%d] is not finite", k, i);
        if (m->bodies[k].kind == IMP_BODY_SPATIAL) {
            double n2 = x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6];
            if (fabs(n2 - 1.0) > IMP_CONTACT_QUAT_TOL)
                return imp_fail(IMP_ERR_INVALID, "q[body %d]: quaternion norm^2 %.17g is not 1 (w x y z, unit)", k, n2);
        }
    }
    return IMP_OK;
}

void imp_quat_mul(const double a[4], const double b[4], double out[4])
{
    double r[4];
    r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    memcpy(out, r, sizeof r);
}

void imp_quat_to_rot(const double *qq, double R[9])
{
    double w = qq[0], x = qq[1], y = qq[2], z = qq[3];
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

void imp_quat_to_rot_backward(double *qq_bar, const double Rb[9], const double *qq)
{
    double w = qq[0], x = qq[1], y = qq[2], z = qq[3];
    qq_bar[0] += 2 * (-z * Rb[1] + y * Rb[2] + z * Rb[3] - x * Rb[5] - y * Rb[6] + x * Rb[7]);
    qq_bar[1] += 2 * (y * Rb[1] + z * Rb[2] + y * Rb[3] - 2 * x * Rb[4] - w * Rb[5] + z * Rb[6] + w * Rb[7] -
                      2 * x * Rb[8]);
    qq_bar[2] += 2 * (-2 * y * Rb[0] + x * Rb[1] + w * Rb[2] + x * Rb[3] + z * Rb[5] - w * Rb[6] + z * Rb[7] -
                      2 * y * Rb[8]);
    qq_bar[3] += 2 * (-2 * z * Rb[0] - w * Rb[1] + x * Rb[2] + w * Rb[3] - 2 * z * Rb[4] + y * Rb[5] + x * Rb[6] +
                      y * Rb[7]);
}

void imp_contact_rotation(const imp_contact_model *m, const double *q, int k, double R[9])
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, I, sizeof I);
    const double *x = q + m->q_offset[k];
    if (m->bodies[k].kind == IMP_BODY_PLANAR) {
        double c = cos(x[2]), s = sin(x[2]);
        R[0] = c, R[1] = -s, R[3] = s, R[4] = c;
    } else if (m->bodies[k].kind == IMP_BODY_SPATIAL) {
        imp_quat_to_rot(x + 3, R);
    }
}

void imp_contact_advance(const imp_contact_model *m, const double *q, const double *v, double h, double *q_out)
{
    for (int k = 0; k < m->n_bodies; k++) {
        const double *x = q + m->q_offset[k], *u = v + m->v_offset[k];
        double *y = q_out + m->q_offset[k];
        int kind = m->bodies[k].kind, nlin = kind == IMP_BODY_POINT ? m->dim : kind == IMP_BODY_PLANAR ? 2 : 3;
        for (int i = 0; i < nlin; i++) y[i] = x[i] + h * u[i];
        if (kind == IMP_BODY_PLANAR) y[2] = x[2] + h * u[2];
        if (kind == IMP_BODY_SPATIAL) {
            /* q (x) (cos(a/2), sin(a/2) w/|w|), a = h |w|: body-frame angular velocity */
            const double *w = u + 3, *a = x + 3;
            double wn = sqrt(imp_dot3(w, w)), half = 0.5 * h * wn;
            double bw = cos(half), sc = wn > 0.0 ? sin(half) / wn : 0.5 * h, b[3] = {sc * w[0], sc * w[1], sc * w[2]};
            double cr[3];
            imp_cross3(a + 1, b, cr);
            double qw = a[0] * bw - imp_dot3(a + 1, b);
            double qv[3];
            for (int i = 0; i < 3; i++) qv[i] = a[0] * b[i] + bw * a[1 + i] + cr[i];
            y[3] = qw, y[4] = qv[0], y[5] = qv[1], y[6] = qv[2];
        }
    }
}

double imp_contact_kinetic_energy(const imp_contact_model *m, const double *v)
{
    double T = 0.0;
    for (int k = 0; k < m->n_bodies; k++) {
        const imp_contact_body *b = &m->bodies[k];
        const double *u = v + m->v_offset[k];
        int nlin = b->kind == IMP_BODY_POINT ? m->dim : b->kind == IMP_BODY_PLANAR ? 2 : 3;
        for (int i = 0; i < nlin; i++) T += 0.5 * b->mass * u[i] * u[i];
        if (b->kind == IMP_BODY_PLANAR) T += 0.5 * b->inertia[0] * u[2] * u[2];
        if (b->kind == IMP_BODY_SPATIAL)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) T += 0.5 * u[3 + i] * b->inertia[3 * i + j] * u[3 + j];
    }
    return T;
}
