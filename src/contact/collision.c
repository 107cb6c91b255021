/* Stage 1, detection: gap, contact frame, contact points and Jacobian rows
 * of each candidate, and their reverse pass (docs/derivations/contact.md
 * sec 1, eqs 1-4). World vectors are 3-vectors (z = 0 in 2-D). The same
 * stage for a trajectory geometry of single-node bodies (the CD-Lagrange
 * step's and the point simulators': gaps, rows, sphere pairs linearised at
 * a state or at their contact within a step, times of impact; sec 1b) is
 * the second half of this file. */
#include "contact/contact_internal.h"

#include <math.h>
#include <string.h>

/* Gap of a linear pair: -offset + n . rel (rel = q_j - q_i, dim numbers).
 * The plane branch of imp_contact_detect (rel = s_b, the plane),
 * imp_contact_gap (sec 1b) and the constrained systems' plane contacts. */
double imp_contact_plane_gap(const double *n, const double *rel, int dim, double offset)
{
    double s = -offset;
    for (int a = 0; a < dim; a++) s += n[a] * rel[a];
    return s;
}

double imp_contact_sphere_normal(const double sa[3], const double sb[3], double n[3])
{
    double d[3];
    for (int i = 0; i < 3; i++) d[i] = sb[i] - sa[i];
    double L = sqrt(imp_dot3(d, d));
    for (int i = 0; i < 3; i++) n[i] = L > 0.0 ? d[i] / L : d[i];
    return L;
}

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
            double h = imp_contact_plane_gap(f->n, sb, m->dim, k->offset);
            f->phi = h - k->radius_b;
            for (int i = 0; i < 3; i++) {
                f->pb[i] = sb[i] - k->radius_b * f->n[i];
                f->pa[i] = sb[i] - h * f->n[i];
            }
        } else {
            double Ra[9], sa[3];
            imp_contact_rotation(m, q, k->body_a, Ra);
            body_point(m, q, k->body_a, k->point_a, Ra, sa);
            double L = imp_contact_sphere_normal(sa, sb, f->n);
            if (!(L > 1e-12 * (1.0 + k->radius_a + k->radius_b)))
                return imp_fail(IMP_ERR_NUMERIC,
                                "contact cand[%d]: degenerate normal: the sphere centres of bodies %d and %d coincide",
                                c, k->body_a, k->body_b);
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
        double Ra[9], sa[3], sb[3], sa_bar[3], n[3];
        imp_contact_rotation(m, q, k->body_a, Ra);
        body_point(m, q, k->body_a, k->point_a, Ra, sa);
        body_point(m, q, k->body_b, k->point_b, Rb, sb);
        for (int i = 0; i < 3; i++) n_bar[i] += k->radius_a * pa_bar[i] - k->radius_b * pb_bar[i];
        double L = imp_contact_sphere_normal(sa, sb, n), nn = imp_dot3(f->n, n_bar);
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

/* ---- Detection on a trajectory geometry (imp_contact_geometry: bodies
 * that are single nodes in generalized coordinates; sec 1b). The CD-Lagrange
 * step and the point simulators detect their contacts here. ---- */

/* rel = q_j - q_i of pair c (q_i = 0 for a wall), dim numbers. */
static void pair_relative(const imp_contact_geometry *g, const imp_contact_pair *c, const double *q, double *rel)
{
    for (int a = 0; a < g->dim; a++) rel[a] = q[c->body_j * g->dim + a] - (c->body_i == IMP_WALL ? 0.0 : q[c->body_i * g->dim + a]);
}

/* Centre difference x_j - x_i of a sphere pair and its length. */
static double centre_gap(const imp_contact_geometry *g, const imp_contact_pair *c, const double *q, double dx[2])
{
    for (int a = 0; a < 2; a++) dx[a] = q[c->body_j * g->dim + a] - q[c->body_i * g->dim + a];
    return hypot(dx[0], dx[1]);
}

/* A sphere pair's plane at the centres' difference c (length r > 0): normal
 * c / r, offset r_i + r_j (the linear gap equals the true one at c), tangent's
 * linear part (n_y, -n_x) where the pair slides (its spin part stays). */
static void sphere_plane(const imp_contact_geometry *g, imp_contact_pair *cp, double n0, double n1, int slides)
{
    cp->normal[0] = n0, cp->normal[1] = n1;
    cp->offset = g->radius[cp->body_i] + g->radius[cp->body_j];
    if (slides) cp->tangent[0] = n1, cp->tangent[1] = -n0;
}

void imp_contact_geometry_at(const imp_contact_geometry *g, const double *q, imp_contact_geometry *out)
{
    if (out != g) *out = *g;
    out->linearized = 1;
    for (int p = 0; p < g->n_pairs; p++) {
        imp_contact_pair *c = &out->pairs[p];
        if (c->kind != IMP_PAIR_SPHERE) continue;
        double dx[2], r = centre_gap(g, c, q, dx);
        int slides = imp_contact_pair_has_tangent(g, p);
        c->tangent[0] = c->tangent[1] = 0.0;
        sphere_plane(g, c, r > 0.0 ? dx[0] / r : 0.0, r > 0.0 ? dx[1] / r : 1.0, slides);
    }
}

/* The contact time s* in [0, h] of sphere pair c moving from the centres'
 * difference d = x_j - x_i with the relative velocity w: the first root of
 * |d + w s| = R (0 when the pair already overlaps, h when it does not meet
 * within the step); cc = d + w s* is the centres' difference then. */
static double sphere_contact_time(const imp_contact_pair *cp, const imp_contact_geometry *g, const double *q,
                                  const double *vel, double h, double cc[2])
{
    const int d = g->dim;
    double dx[2], w[2];
    for (int a = 0; a < 2; a++) {
        dx[a] = q[cp->body_j * d + a] - q[cp->body_i * d + a];
        w[a] = vel[cp->body_j * d + a] - vel[cp->body_i * d + a];
    }
    double R = g->radius[cp->body_i] + g->radius[cp->body_j];
    double A = w[0] * w[0] + w[1] * w[1], B = dx[0] * w[0] + dx[1] * w[1], C = dx[0] * dx[0] + dx[1] * dx[1] - R * R;
    double s = h;
    if (C <= 0.0) s = 0.0;
    else if (B < 0.0 && A > 0.0 && B * B - A * C >= 0.0) {
        double r = C / (-B + sqrt(B * B - A * C)); /* the smaller root of A s^2 + 2 B s + C */
        if (r < h) s = r;
    }
    cc[0] = dx[0] + w[0] * s, cc[1] = dx[1] + w[1] * s;
    return s;
}

const imp_contact_geometry *imp_contact_geometry_swept(const imp_contact_geometry *g, const double *q,
                                                       const double *w, double h, imp_contact_geometry *buf)
{
    if (!imp_contact_geometry_has_spheres(g)) return g;
    imp_contact_geometry_at(g, q, buf);
    for (int p = 0; p < buf->n_pairs; p++) {
        imp_contact_pair *cp = &buf->pairs[p];
        if (cp->kind != IMP_PAIR_SPHERE) continue;
        double c[2];
        sphere_contact_time(cp, buf, q, w, h, c);
        double r = hypot(c[0], c[1]);
        if (!(r > 0.0)) continue;
        sphere_plane(buf, cp, c[0] / r, c[1] / r, cp->tangent[0] != 0.0 || cp->tangent[1] != 0.0);
    }
    return buf;
}

void imp_contact_swept_normal_backward(const imp_contact_geometry *gs, int p, const double *q, const double *w,
                                       double h, double angle_bar, double *q_bar, double *w_bar)
{
    const imp_contact_pair *c = &gs->pairs[p];
    const int d = gs->dim;
    double cc[2], s = sphere_contact_time(c, gs, q, w, h, cc), r2 = cc[0] * cc[0] + cc[1] * cc[1];
    if (!(r2 > 0.0)) return;
    double wr[2] = {w[c->body_j * d] - w[c->body_i * d], w[c->body_j * d + 1] - w[c->body_i * d + 1]};
    double G[2] = {-cc[1] / r2, cc[0] / r2};
    double cw = cc[0] * wr[0] + cc[1] * wr[1];
    if (s > 0.0 && s < h && cw != 0.0) {
        double gw = (G[0] * wr[0] + G[1] * wr[1]) / cw;
        G[0] -= gw * cc[0], G[1] -= gw * cc[1];
    }
    for (int a = 0; a < 2; a++) {
        q_bar[c->body_j * d + a] += angle_bar * G[a];
        q_bar[c->body_i * d + a] -= angle_bar * G[a];
        w_bar[c->body_j * d + a] += angle_bar * s * G[a];
        w_bar[c->body_i * d + a] -= angle_bar * s * G[a];
    }
}

double imp_contact_first_root(double a, double b, double c, double tmax)
{
    double best = tmax + 1.0;
    if (a == 0.0) {
        if (b < 0.0) best = -c / b;
    } else {
        double disc = b * b - 4.0 * a * c;
        if (disc < 0.0) return tmax + 1.0;
        double sq = sqrt(disc), q = -0.5 * (b + (b >= 0 ? sq : -sq));
        double r[2] = {q / a, q != 0.0 ? c / q : -b / a};
        for (int i = 0; i < 2; i++)
            if (r[i] > 0.0 && 2.0 * a * r[i] + b < 0.0 && r[i] < best) best = r[i];
    }
    return best <= tmax ? best : tmax + 1.0;
}

double imp_contact_time_of_impact(const imp_contact_geometry *g, int p, const double *q, const double *v,
                                  const double *a0, double h, double dtau[3])
{
    const double c = imp_contact_gap(g, p, q), b = imp_contact_normal_velocity(g, p, v),
                 a = 0.5 * imp_contact_normal_velocity(g, p, a0);
    dtau[0] = dtau[1] = dtau[2] = 0.0;
    if (!(c > 0.0)) return 0.0; /* at or inside the surface already (NaN: 0) */
    double tau = imp_contact_first_root(a, b, c, h);
    if (!(tau <= h)) tau = h;
    double den = b + 2.0 * a * tau; /* the closing normal velocity at the event */
    if (tau < h && den < 0.0) dtau[0] = -1.0 / den, dtau[1] = -tau / den, dtau[2] = -tau * tau / den;
    return tau;
}

double imp_contact_tangent_i(const imp_contact_geometry *g, int p, int a)
{
    const imp_contact_pair *c = &g->pairs[p];
    return c->kind == IMP_PAIR_SPHERE && a >= 2 ? c->tangent[a] : -c->tangent[a];
}

double imp_contact_gap(const imp_contact_geometry *g, int p, const double *q)
{
    const imp_contact_pair *c = &g->pairs[p];
    if (c->kind == IMP_PAIR_SPHERE && !g->linearized) {
        double dx[2];
        return centre_gap(g, c, q, dx) - g->radius[c->body_i] - g->radius[c->body_j];
    }
    double rel[IMP_MAX_DIM];
    pair_relative(g, c, q, rel);
    return imp_contact_plane_gap(c->normal, rel, g->dim, c->offset);
}

void imp_contact_gap_backward(const imp_contact_geometry *g, int p, const double *q, double gap_bar, double *q_bar)
{
    const imp_contact_pair *c = &g->pairs[p];
    if (c->kind != IMP_PAIR_SPHERE || g->linearized) {
        imp_contact_row_backward(g, p, 0, gap_bar, q_bar);
        return;
    }
    double dx[2], r = centre_gap(g, c, q, dx);
    for (int a = 0; r > 0.0 && a < 2; a++) {
        q_bar[c->body_j * g->dim + a] += gap_bar * dx[a] / r;
        q_bar[c->body_i * g->dim + a] -= gap_bar * dx[a] / r;
    }
}

void imp_contact_min_gaps(const imp_contact_geometry *g, const double *states, size_t n, size_t stride,
                          double *min_gap)
{
    for (int p = 0; p < g->n_pairs; p++) {
        double low = INFINITY;
        for (size_t i = 0; i < n; i++) {
            double gap = imp_contact_gap(g, p, states + i * stride);
            if (gap < low || isnan(gap)) low = gap;
        }
        min_gap[p] = low;
    }
}

/* dir . (v_j - v_i) of pair c (v_i = 0 for a wall), summed from 0 (not
 * imp_contact_plane_gap with offset 0: its -0.0 start could flip a zero's
 * sign). */
static double rel_dot(const imp_contact_geometry *g, const imp_contact_pair *c, const double *dir, const double *v)
{
    double rel[IMP_MAX_DIM], s = 0.0;
    pair_relative(g, c, v, rel);
    for (int a = 0; a < g->dim; a++) s += dir[a] * rel[a];
    return s;
}

double imp_contact_normal_velocity(const imp_contact_geometry *g, int p, const double *v)
{
    return rel_dot(g, &g->pairs[p], g->pairs[p].normal, v);
}

double imp_contact_normal_velocity_at(const imp_contact_geometry *g, int p, const double *q, const double *v)
{
    const imp_contact_pair *c = &g->pairs[p];
    if (c->kind != IMP_PAIR_SPHERE || g->linearized) return imp_contact_normal_velocity(g, p, v);
    double dx[2], r = centre_gap(g, c, q, dx), dv[2];
    for (int a = 0; a < 2; a++) dv[a] = v[c->body_j * g->dim + a] - v[c->body_i * g->dim + a];
    return r > 0.0 ? (dx[0] * dv[0] + dx[1] * dv[1]) / r : dv[1];
}

/* Row r of pair p: body j's part is the row's direction (the normal, or
 * the tangent), body i's minus imp_contact_row_i. */
static const double *row_dir(const imp_contact_pair *c, int r) { return r ? c->tangent : c->normal; }

double imp_contact_row_i(const imp_contact_geometry *g, int p, int r, int a)
{
    return r ? -imp_contact_tangent_i(g, p, a) : g->pairs[p].normal[a];
}

double imp_contact_row_velocity(const imp_contact_geometry *g, int p, int r, const double *v)
{
    const imp_contact_pair *c = &g->pairs[p];
    if (c->kind != IMP_PAIR_SPHERE) return rel_dot(g, c, row_dir(c, r), v);
    double s = 0.0;
    for (int a = 0; a < g->dim; a++)
        s += row_dir(c, r)[a] * v[c->body_j * g->dim + a] - imp_contact_row_i(g, p, r, a) * v[c->body_i * g->dim + a];
    return s;
}

void imp_contact_row_backward(const imp_contact_geometry *g, int p, int r, double s, double *v_bar)
{
    const imp_contact_pair *c = &g->pairs[p];
    if (!v_bar) return;
    for (int a = 0; a < g->dim; a++) {
        v_bar[c->body_j * g->dim + a] += s * row_dir(c, r)[a];
        if (c->body_i != IMP_WALL) v_bar[c->body_i * g->dim + a] -= s * imp_contact_row_i(g, p, r, a);
    }
}

double imp_contact_slip_velocity(const imp_contact_geometry *g, int p, const double *v)
{
    return imp_contact_row_velocity(g, p, 1, v);
}
