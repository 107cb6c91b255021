/* Stage 1, detection: gap, contact frame, contact points and Jacobian rows
 * of each candidate, and their reverse pass (docs/derivations/contact.md
 * sec 1, eqs 1-4). World vectors are 3-vectors (z = 0 in 2-D). */
#include "contact/contact_internal.h"

#include <math.h>
#include <string.h>

/* Centre of a body-fixed point p of body k: s = x + R p (eq 1). */
static void body_point(const imp_contact_model *m, const double *q, int k, const double *p, const double R[9],
                       double s[3])
{
    const double *x = q + m->q_offset[k];
    for (int i = 0; i < 3; i++) {
        double xi = i < m->dim ? x[i] : 0.0;
        s[i] = xi + R[3 * i] * p[0] + R[3 * i + 1] * p[1] + R[3 * i + 2] * p[2];
    }
}

static void body_position(const imp_contact_model *m, const double *q, int k, double x[3])
{
    const double *xq = q + m->q_offset[k];
    for (int i = 0; i < 3; i++) x[i] = i < m->dim ? xq[i] : 0.0;
}

/* Tangents from the normal (eq 2): 2-D t = (n_y, -n_x); 3-D t1 = h x n / |h x n|
 * with h = e_y unless |n_y| > 0.9 (then e_x), t2 = n x t1. */
static void tangents(int dim, const double n[3], double t[2][3])
{
    memset(t, 0, 6 * sizeof(double));
    if (dim == 2) {
        t[0][0] = n[1], t[0][1] = -n[0];
        return;
    }
    double h[3] = {0, 0, 0}, w[3];
    h[fabs(n[1]) > 0.9 ? 0 : 1] = 1.0;
    imp_cross3(h, n, w);
    double L = sqrt(imp_dot3(w, w));
    for (int i = 0; i < 3; i++) t[0][i] = w[i] / L;
    imp_cross3(n, t[0], t[1]);
}

static void tangents_backward(int dim, const double n[3], const double t[2][3], const double t_bar[2][3],
                              double n_bar[3])
{
    if (dim == 2) {
        n_bar[1] += t_bar[0][0];
        n_bar[0] -= t_bar[0][1];
        return;
    }
    double h[3] = {0, 0, 0}, w[3], c[3], t1_bar[3];
    h[fabs(n[1]) > 0.9 ? 0 : 1] = 1.0;
    /* t2 = n x t1 */
    imp_cross3(t[0], t_bar[1], c);
    for (int i = 0; i < 3; i++) n_bar[i] += c[i];
    imp_cross3(t_bar[1], n, c);
    for (int i = 0; i < 3; i++) t1_bar[i] = t_bar[0][i] + c[i];
    /* t1 = w / |w|, w = h x n */
    imp_cross3(h, n, w);
    double L = sqrt(imp_dot3(w, w)), d = imp_dot3(t[0], t1_bar), w_bar[3];
    for (int i = 0; i < 3; i++) w_bar[i] = (t1_bar[i] - t[0][i] * d) / L;
    imp_cross3(w_bar, h, c);
    for (int i = 0; i < 3; i++) n_bar[i] += c[i];
}

int imp_contact_detect(const imp_contact_model *m, const double *q, imp_contact_frame *frames)
{
    int st = imp_contact_state_check(m, q);
    if (st) return st;
    for (int c = 0; c < m->n_candidates; c++) {
        const imp_contact_candidate *k = &m->cand[c];
        imp_contact_frame *f = &frames[c];
        double Rb[9], sb[3];
        imp_contact_rotation(m, q, k->body_b, Rb);
        body_point(m, q, k->body_b, k->point_b, Rb, sb);
        if (k->kind == IMP_CONTACT_PLANE) {
            memcpy(f->n, k->normal, sizeof f->n);
            double h = imp_dot3(f->n, sb) - k->offset;
            f->phi = h - k->radius_b;
            for (int i = 0; i < 3; i++) {
                f->pb[i] = sb[i] - k->radius_b * f->n[i];
                f->pa[i] = sb[i] - h * f->n[i];
            }
        } else {
            double Ra[9], sa[3], d[3];
            imp_contact_rotation(m, q, k->body_a, Ra);
            body_point(m, q, k->body_a, k->point_a, Ra, sa);
            for (int i = 0; i < 3; i++) d[i] = sb[i] - sa[i];
            double L = sqrt(imp_dot3(d, d));
            if (!(L > 1e-12 * (1.0 + k->radius_a + k->radius_b)))
                return imp_fail(IMP_ERR_NUMERIC,
                                "contact cand[%d]: degenerate normal: the sphere centres of bodies %d and %d coincide",
                                c, k->body_a, k->body_b);
            for (int i = 0; i < 3; i++) f->n[i] = d[i] / L;
            f->phi = L - k->radius_a - k->radius_b;
            for (int i = 0; i < 3; i++) {
                f->pa[i] = sa[i] + k->radius_a * f->n[i];
                f->pb[i] = sb[i] - k->radius_b * f->n[i];
            }
        }
        tangents(m->dim, f->n, f->t);
    }
    return IMP_OK;
}

/* Adds sign * (d . velocity of body k's material point at world point p) to
 * the row J (eq 3): point d; planar (d, l x d); spatial (d, R^T (l x d)),
 * l = p - x the lever arm. */
static void body_row(const imp_contact_model *m, const double *q, int k, const double d[3], const double p[3],
                     double sign, double *J)
{
    double *row = J + m->v_offset[k], x[3], l[3];
    for (int i = 0; i < m->dim; i++) row[i] += sign * d[i];
    int kind = m->bodies[k].kind;
    if (kind == IMP_BODY_POINT) return;
    body_position(m, q, k, x);
    for (int i = 0; i < 3; i++) l[i] = p[i] - x[i];
    if (kind == IMP_BODY_PLANAR) {
        row[2] += sign * (l[0] * d[1] - l[1] * d[0]);
        return;
    }
    double R[9], c[3];
    imp_contact_rotation(m, q, k, R);
    imp_cross3(l, d, c);
    for (int j = 0; j < 3; j++) row[3 + j] += sign * (R[j] * c[0] + R[3 + j] * c[1] + R[6 + j] * c[2]);
}

void imp_contact_jacobian(const imp_contact_model *m, const double *q, const imp_contact_frame *f, int c,
                          double *J)
{
    const imp_contact_candidate *k = &m->cand[c];
    memset(J, 0, (size_t)m->dim * m->nv * sizeof(double));
    for (int r = 0; r < m->dim; r++) {
        const double *d = r == 0 ? f->n : f->t[r - 1];
        body_row(m, q, k->body_b, d, f->pb, 1.0, J + (size_t)r * m->nv);
        if (k->body_a != IMP_WALL) body_row(m, q, k->body_a, d, f->pa, -1.0, J + (size_t)r * m->nv);
    }
}

/* Reverse of body_row: from the row's adjoint g (this body's segment),
 * adds to d_bar, p_bar (the contact point), x_bar (the body's position in
 * q_bar) and R_bar. */
static void body_row_backward(double d_bar[3], double p_bar[3], double *q_bar, double R_bar[9],
                              const imp_contact_model *m, const double *q, int k, const double d[3],
                              const double p[3], double sign, const double *Jb)
{
    const double *g = Jb + m->v_offset[k];
    for (int i = 0; i < m->dim; i++) d_bar[i] += sign * g[i];
    int kind = m->bodies[k].kind;
    if (kind == IMP_BODY_POINT) return;
    double x[3], l[3], l_bar[3] = {0, 0, 0};
    body_position(m, q, k, x);
    for (int i = 0; i < 3; i++) l[i] = p[i] - x[i];
    if (kind == IMP_BODY_PLANAR) {
        double s = sign * g[2];
        l_bar[0] += s * d[1], l_bar[1] -= s * d[0];
        d_bar[0] -= s * l[1], d_bar[1] += s * l[0];
    } else {
        double R[9], c[3], a[3], kb[3], t[3];
        imp_contact_rotation(m, q, k, R);
        imp_cross3(l, d, c);
        for (int j = 0; j < 3; j++) a[j] = sign * g[3 + j];
        for (int i = 0; i < 3; i++) {
            kb[i] = R[3 * i] * a[0] + R[3 * i + 1] * a[1] + R[3 * i + 2] * a[2];
            for (int j = 0; j < 3; j++) R_bar[3 * i + j] += c[i] * a[j];
        }
        imp_cross3(d, kb, t);
        for (int i = 0; i < 3; i++) l_bar[i] += t[i];
        imp_cross3(kb, l, t);
        for (int i = 0; i < 3; i++) d_bar[i] += t[i];
    }
    double *xb = q_bar + m->q_offset[k];
    for (int i = 0; i < m->dim; i++) xb[i] -= l_bar[i];
    for (int i = 0; i < 3; i++) p_bar[i] += l_bar[i];
}

/* Reverse of s = x + R p: adds to x (in q_bar), p_bar and R_bar. */
static void body_point_backward(double *q_bar, double p_bar[3], double R_bar[9], const imp_contact_model *m,
                                int k, const double *p, const double R[9], const double s_bar[3])
{
    double *xb = q_bar + m->q_offset[k];
    for (int i = 0; i < m->dim; i++) xb[i] += s_bar[i];
    for (int j = 0; j < 3; j++) p_bar[j] += R[j] * s_bar[0] + R[3 + j] * s_bar[1] + R[6 + j] * s_bar[2];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R_bar[3 * i + j] += s_bar[i] * p[j];
}

/* Reverse of the rotation: R_bar to theta or the quaternion in q_bar. */
static void rotation_backward(double *q_bar, const imp_contact_model *m, const double *q, int k,
                              const double R_bar[9])
{
    const double *x = q + m->q_offset[k];
    double *xb = q_bar + m->q_offset[k];
    if (m->bodies[k].kind == IMP_BODY_PLANAR) {
        double c = cos(x[2]), s = sin(x[2]);
        xb[2] += -s * R_bar[0] - c * R_bar[1] + c * R_bar[3] - s * R_bar[4];
    } else if (m->bodies[k].kind == IMP_BODY_SPATIAL) {
        imp_quat_to_rot_backward(xb + 3, R_bar, x + 3);
    }
}

void imp_contact_jacobian_backward(double *q_bar, imp_contact_geom_grad *g, double phi_bar, const double *J_bar,
                                   const imp_contact_model *m, const double *q, const imp_contact_frame *f, int c)
{
    const imp_contact_candidate *k = &m->cand[c];
    int wall = k->body_a == IMP_WALL;
    double n_bar[3] = {0, 0, 0}, t_bar[2][3] = {{0, 0, 0}, {0, 0, 0}};
    double pa_bar[3] = {0, 0, 0}, pb_bar[3] = {0, 0, 0}, Ra_bar[9] = {0}, Rb_bar[9] = {0};
    if (J_bar) {
        for (int r = 0; r < m->dim; r++) {
            const double *d = r == 0 ? f->n : f->t[r - 1];
            double *d_bar = r == 0 ? n_bar : t_bar[r - 1];
            const double *Jr = J_bar + (size_t)r * m->nv;
            body_row_backward(d_bar, pb_bar, q_bar, Rb_bar, m, q, k->body_b, d, f->pb, 1.0, Jr);
            if (!wall) body_row_backward(d_bar, pa_bar, q_bar, Ra_bar, m, q, k->body_a, d, f->pa, -1.0, Jr);
        }
        tangents_backward(m->dim, f->n, f->t, t_bar, n_bar);
    }
    imp_contact_geom_grad dummy;
    if (!g) g = &dummy;
    double Rb[9], sb_bar[3] = {0, 0, 0};
    imp_contact_rotation(m, q, k->body_b, Rb);
    if (wall) {
        /* pb = s_b - r_b n, phi = n . s_b - offset - r_b (n fixed) */
        for (int i = 0; i < 3; i++) sb_bar[i] = pb_bar[i] + phi_bar * f->n[i];
        g->radius_b -= imp_dot3(f->n, pb_bar) + phi_bar;
        g->offset -= phi_bar;
    } else {
        /* pa = s_a + r_a n, pb = s_b - r_b n, phi = |s_b - s_a| - r_a - r_b, n = d / |d| */
        double Ra[9], sa[3], sb[3], sa_bar[3], d[3];
        imp_contact_rotation(m, q, k->body_a, Ra);
        body_point(m, q, k->body_a, k->point_a, Ra, sa);
        body_point(m, q, k->body_b, k->point_b, Rb, sb);
        for (int i = 0; i < 3; i++) {
            d[i] = sb[i] - sa[i];
            n_bar[i] += k->radius_a * pa_bar[i] - k->radius_b * pb_bar[i];
        }
        double L = sqrt(imp_dot3(d, d)), nn = imp_dot3(f->n, n_bar);
        g->radius_a += imp_dot3(f->n, pa_bar) - phi_bar;
        g->radius_b -= imp_dot3(f->n, pb_bar) + phi_bar;
        for (int i = 0; i < 3; i++) {
            double d_bar = phi_bar * f->n[i] + (n_bar[i] - f->n[i] * nn) / L;
            sb_bar[i] = pb_bar[i] + d_bar;
            sa_bar[i] = pa_bar[i] - d_bar;
        }
        body_point_backward(q_bar, g->point_a, Ra_bar, m, k->body_a, k->point_a, Ra, sa_bar);
        rotation_backward(q_bar, m, q, k->body_a, Ra_bar);
    }
    body_point_backward(q_bar, g->point_b, Rb_bar, m, k->body_b, k->point_b, Rb, sb_bar);
    rotation_backward(q_bar, m, q, k->body_b, Rb_bar);
}
