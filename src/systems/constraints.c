/* Holonomic constraints on embedded bodies and their derivatives, built
 * from the body graph ([F] section 4 and appendix D): Phi(x), the time
 * derivative Phidot = DPhi(x) v, the Jacobians DPhi = dPhi/dx = dPhidot/dv
 * and dPhidot/dx, and the reverse mode of the Jacobians. */
#include "impulse/constrained.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static imp_ccon *begin_con(imp_csys *s, int n_rows, int line, const char *fmt, const char *a,
                           const char *b)
{
    if (s->n_cons >= IMP_CSYS_MAX_CONS || s->n_rows + n_rows > IMP_CSYS_MAX_ROWS) {
        imp_fail(IMP_ERR_INVALID, "constraints: too many (max %d constraints, %d rows)",
                 IMP_CSYS_MAX_CONS, IMP_CSYS_MAX_ROWS);
        return NULL;
    }
    imp_ccon *c = &s->cons[s->n_cons];
    char la[32], lb[32]; /* body names are at most 31 characters; the label (80) holds both */
    snprintf(la, sizeof la, "%s", a);
    snprintf(lb, sizeof lb, "%s", b);
    snprintf(c->label, sizeof c->label, fmt, la, lb);
    c->line = line;
    c->first_row = s->n_rows;
    c->n_rows = n_rows;
    return c;
}

static int check_body(const imp_csys *s, int b, const char *what)
{
    if (b < 0 || b >= s->n_bodies)
        return imp_fail(IMP_ERR_INVALID, "%s: body index %d does not exist (%d bodies)", what, b,
                        s->n_bodies);
    return IMP_OK;
}

static int add_distance(imp_csys *s, int i, int j, const double *anchor, double length, int line,
                        const char *label_a, const char *label_b, const char *fmt)
{
    if (!(length > 0.0) || !isfinite(length))
        return imp_fail(IMP_ERR_INVALID, "%s: length %g must be positive and finite", fmt[0] == 't' ? "tether" : "link", length);
    imp_ccon *c = begin_con(s, 1, line, fmt, label_a, label_b);
    if (!c) return IMP_ERR_INVALID;
    imp_crow *r = &s->rows[s->n_rows++];
    memset(r, 0, sizeof *r);
    r->kind = IMP_CROW_DISTANCE;
    r->i = i;
    r->j = j;
    if (j < 0 && anchor)
        for (int k = 0; k < s->d; k++) r->anchor[k] = anchor[k];
    r->length = length;
    r->con = s->n_cons++;
    return IMP_OK;
}

int imp_csys_add_link(imp_csys *s, int body_a, int body_b, double length, int line)
{
    int st = check_body(s, body_a, "link");
    if (!st) st = check_body(s, body_b, "link");
    if (st) return st;
    if (body_a == body_b) return imp_fail(IMP_ERR_INVALID, "link: body '%s' linked to itself", s->bodies[body_a].name);
    return add_distance(s, s->bodies[body_a].first_point, s->bodies[body_b].first_point, NULL, length,
                        line, s->bodies[body_a].name, s->bodies[body_b].name, "link %s %s");
}

int imp_csys_add_tether(imp_csys *s, int body, const double *anchor, double length, int line)
{
    int st = check_body(s, body, "tether");
    if (st) return st;
    if (anchor)
        for (int k = 0; k < s->d; k++)
            if (!isfinite(anchor[k])) return imp_fail(IMP_ERR_INVALID, "tether: anchor is not finite");
    return add_distance(s, s->bodies[body].first_point, -1, anchor, length, line,
                        s->bodies[body].name, "", "tether %s%s");
}

/* One linear vector constraint sum_alpha wa_alpha X_A[alpha] - sum wb X_B - value = 0,
 * one row per coordinate. */
static int add_linear_vector(imp_csys *s, int body_a, const double *wa, int body_b,
                             const double *wb, const double *value, int line, const char *fmt)
{
    const imp_cbody *A = &s->bodies[body_a];
    const imp_cbody *B = body_b >= 0 ? &s->bodies[body_b] : NULL;
    imp_ccon *c = begin_con(s, s->d, line, fmt, A->name, B ? B->name : "(fixed)");
    if (!c) return IMP_ERR_INVALID;
    for (int k = 0; k < s->d; k++) {
        imp_crow *r = &s->rows[s->n_rows++];
        memset(r, 0, sizeof *r);
        r->kind = IMP_CROW_LINEAR;
        for (int a = 0; a <= A->n_axes; a++)
            if (wa[a] != 0.0) {
                r->idx[r->n_terms] = (A->first_point + a) * s->d + k;
                r->w[r->n_terms++] = wa[a];
            }
        if (B)
            for (int a = 0; a <= B->n_axes; a++)
                if (wb[a] != 0.0) {
                    r->idx[r->n_terms] = (B->first_point + a) * s->d + k;
                    r->w[r->n_terms++] = -wb[a];
                }
        r->value = value ? value[k] : 0.0;
        r->con = s->n_cons;
    }
    s->n_cons++;
    return IMP_OK;
}

/* c~ = (1 - sum c, c): the weights that express a body-frame point as an
 * affine combination of the body's embedded points ([F] appendix D.4). */
static int point_weights(const imp_csys *s, int b, const double *c, double *w, int direction,
                         const char *what)
{
    const imp_cbody *body = &s->bodies[b];
    double sum = 0;
    for (int a = 0; a < body->n_axes; a++) {
        double ca = c ? c[a] : 0.0;
        if (!isfinite(ca)) return imp_fail(IMP_ERR_INVALID, "%s: body '%s' coordinates not finite", what, body->name);
        w[a + 1] = ca;
        sum += ca;
    }
    w[0] = direction ? -sum : 1.0 - sum;
    return IMP_OK;
}

int imp_csys_add_joint(imp_csys *s, int body_a, const double *at_a, int body_b,
                       const double *at_b, const double *anchor, int line)
{
    int st = check_body(s, body_a, "joint");
    if (st) return st;
    if (body_b >= 0 && (st = check_body(s, body_b, "joint"))) return st;
    if (body_a == body_b) return imp_fail(IMP_ERR_INVALID, "joint: body '%s' joined to itself", s->bodies[body_a].name);
    double wa[4], wb[4] = {0};
    if ((st = point_weights(s, body_a, at_a, wa, 0, "joint"))) return st;
    if (body_b >= 0 && (st = point_weights(s, body_b, at_b, wb, 0, "joint"))) return st;
    double zero[3] = {0, 0, 0};
    if (body_b < 0 && anchor)
        for (int k = 0; k < s->d; k++)
            if (!isfinite(anchor[k])) return imp_fail(IMP_ERR_INVALID, "joint: anchor is not finite");
    return add_linear_vector(s, body_a, wa, body_b, wb, body_b < 0 ? (anchor ? anchor : zero) : NULL,
                             line, "joint %s %s");
}

int imp_csys_add_hinge(imp_csys *s, int body_a, const double *axis_a, int body_b,
                       const double *axis_b, int line)
{
    int st = check_body(s, body_a, "hinge");
    if (!st) st = check_body(s, body_b, "hinge");
    if (st) return st;
    if (body_a == body_b) return imp_fail(IMP_ERR_INVALID, "hinge: body '%s' hinged to itself", s->bodies[body_a].name);
    const imp_cbody *A = &s->bodies[body_a], *B = &s->bodies[body_b];
    if (s->d != 3 || A->n_axes != 3 || B->n_axes != 3)
        return imp_fail(IMP_ERR_INVALID, "hinge: bodies '%s' and '%s' must be 3D bodies with 3 axes",
                        A->name, B->name);
    if (!axis_a || !axis_b) return imp_fail(IMP_ERR_INVALID, "hinge: missing axis");
    double na = 0, nb = 0;
    for (int k = 0; k < 3; k++) {
        if (!isfinite(axis_a[k]) || !isfinite(axis_b[k]))
            return imp_fail(IMP_ERR_INVALID, "hinge: axis not finite");
        na += axis_a[k] * axis_a[k];
        nb += axis_b[k] * axis_b[k];
    }
    if (!(na > 1e-24) || !(nb > 1e-24)) return imp_fail(IMP_ERR_INVALID, "hinge: zero axis");
    /* orthonormal complement p1, p2 of u_B (body-B frame) */
    double u[3], p1[3], p2[3];
    for (int k = 0; k < 3; k++) u[k] = axis_b[k] / sqrt(nb);
    int m = fabs(u[0]) < 0.9 ? 0 : 1;
    double e[3] = {0, 0, 0};
    e[m] = 1;
    double dot = u[m];
    double nrm = 0;
    for (int k = 0; k < 3; k++) { p1[k] = e[k] - dot * u[k]; nrm += p1[k] * p1[k]; }
    for (int k = 0; k < 3; k++) p1[k] /= sqrt(nrm);
    p2[0] = u[1] * p1[2] - u[2] * p1[1];
    p2[1] = u[2] * p1[0] - u[0] * p1[2];
    p2[2] = u[0] * p1[1] - u[1] * p1[0];
    imp_ccon *c = begin_con(s, 2, line, "hinge %s %s", A->name, B->name);
    if (!c) return IMP_ERR_INVALID;
    double wa[4];
    point_weights(s, body_a, axis_a, wa, 1, "hinge");
    for (int r2 = 0; r2 < 2; r2++) {
        const double *pk = r2 ? p2 : p1;
        double wb[4];
        point_weights(s, body_b, pk, wb, 1, "hinge");
        imp_crow *r = &s->rows[s->n_rows++];
        memset(r, 0, sizeof *r);
        r->kind = IMP_CROW_DOT;
        for (int t = 0; t < 4; t++) {
            if (wa[t] != 0.0) { r->pa[r->n_a] = A->first_point + t; r->wa[r->n_a++] = wa[t]; }
            if (wb[t] != 0.0) { r->pb[r->n_b] = B->first_point + t; r->wb[r->n_b++] = wb[t]; }
        }
        r->con = s->n_cons;
    }
    s->n_cons++;
    return IMP_OK;
}

int imp_csys_validate(const imp_csys *s)
{
    if (!s) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    if (s->n_bodies == 0) return imp_fail(IMP_ERR_INVALID, "system '%s': no bodies", s->name);
    int N = imp_csys_ndof(s);
    if (s->n_rows >= N)
        return imp_fail(IMP_ERR_INVALID,
                        "system '%s': %d constraint rows leave no degree of freedom (%d coordinates)",
                        s->name, s->n_rows, N);
    return IMP_OK;
}

/* ---- evaluation ---- */

/* a = sum wa x_pa and b = sum wb x_pb of a dot row */
static void dot_ab(const imp_csys *s, const imp_crow *r, const double *x, double *a, double *b)
{
    int d = s->d;
    for (int k = 0; k < d; k++) {
        a[k] = 0;
        b[k] = 0;
        for (int t = 0; t < r->n_a; t++) a[k] += r->wa[t] * x[r->pa[t] * d + k];
        for (int t = 0; t < r->n_b; t++) b[k] += r->wb[t] * x[r->pb[t] * d + k];
    }
}

static void row_r(const imp_csys *s, const imp_crow *r, const double *x, double *out, int is_vel)
{
    int d = s->d;
    for (int k = 0; k < d; k++)
        out[k] = x[r->i * d + k] - (r->j >= 0 ? x[r->j * d + k] : (is_vel ? 0.0 : r->anchor[k]));
}

void imp_csys_phi(const imp_csys *s, const double *x, double *phi)
{
    for (int c = 0; c < s->n_rows; c++) {
        const imp_crow *r = &s->rows[c];
        if (r->kind == IMP_CROW_DISTANCE) {
            double d3[3], r2 = 0;
            row_r(s, r, x, d3, 0);
            for (int k = 0; k < s->d; k++) r2 += d3[k] * d3[k];
            phi[c] = r2 - r->length * r->length;
        } else if (r->kind == IMP_CROW_DOT) {
            double a[3], b[3], acc = -r->value;
            dot_ab(s, r, x, a, b);
            for (int k = 0; k < s->d; k++) acc += a[k] * b[k];
            phi[c] = acc;
        } else {
            double acc = -r->value;
            for (int t = 0; t < r->n_terms; t++) acc += r->w[t] * x[r->idx[t]];
            phi[c] = acc;
        }
    }
}

void imp_csys_phidot(const imp_csys *s, const double *x, const double *v, double *phidot)
{
    for (int c = 0; c < s->n_rows; c++) {
        const imp_crow *r = &s->rows[c];
        if (r->kind == IMP_CROW_DISTANCE) {
            double dx[3], dv[3], acc = 0;
            row_r(s, r, x, dx, 0);
            row_r(s, r, v, dv, 1);
            for (int k = 0; k < s->d; k++) acc += 2.0 * dx[k] * dv[k];
            phidot[c] = acc;
        } else if (r->kind == IMP_CROW_DOT) {
            double a[3], b[3], ad[3], bd[3], acc = 0;
            dot_ab(s, r, x, a, b);
            dot_ab(s, r, v, ad, bd);
            for (int k = 0; k < s->d; k++) acc += ad[k] * b[k] + a[k] * bd[k];
            phidot[c] = acc;
        } else {
            double acc = 0;
            for (int t = 0; t < r->n_terms; t++) acc += r->w[t] * v[r->idx[t]];
            phidot[c] = acc;
        }
    }
}

/* Rows of distance constraints are 2 r (+ at i, - at j) with r built from
 * x (DPhi) or from v (dPhidot/dx); dot rows are (wa b, wb a) with a, b
 * built from x or v; linear rows are constant weights in DPhi and zero in
 * dPhidot/dx. */
static void jacobian_rows(const imp_csys *s, const double *xv, int is_vel, double *J)
{
    int N = imp_csys_ndof(s), d = s->d;
    memset(J, 0, (size_t)s->n_rows * N * sizeof(double));
    for (int c = 0; c < s->n_rows; c++) {
        const imp_crow *r = &s->rows[c];
        double *Jc = J + (size_t)c * N;
        if (r->kind == IMP_CROW_DISTANCE) {
            double dr[3];
            row_r(s, r, xv, dr, is_vel);
            for (int k = 0; k < d; k++) {
                Jc[r->i * d + k] += 2.0 * dr[k];
                if (r->j >= 0) Jc[r->j * d + k] -= 2.0 * dr[k];
            }
        } else if (r->kind == IMP_CROW_DOT) {
            double a[3], b[3];
            dot_ab(s, r, xv, a, b);
            for (int k = 0; k < d; k++) {
                for (int t = 0; t < r->n_a; t++) Jc[r->pa[t] * d + k] += r->wa[t] * b[k];
                for (int t = 0; t < r->n_b; t++) Jc[r->pb[t] * d + k] += r->wb[t] * a[k];
            }
        } else if (!is_vel) {
            for (int t = 0; t < r->n_terms; t++) Jc[r->idx[t]] += r->w[t];
        }
    }
}

void imp_csys_jacobian(const imp_csys *s, const double *x, double *J) { jacobian_rows(s, x, 0, J); }

void imp_csys_jacobian_dot(const imp_csys *s, const double *v, double *Jdot)
{
    jacobian_rows(s, v, 1, Jdot);
}

void imp_csys_jacobian_vjp(const imp_csys *s, const double *Jbar, double *xbar)
{
    int N = imp_csys_ndof(s), d = s->d;
    for (int c = 0; c < s->n_rows; c++) {
        const imp_crow *r = &s->rows[c];
        const double *Jb = Jbar + (size_t)c * N;
        if (r->kind == IMP_CROW_DOT) {
            /* <Jbar_c, J_c> = sum_k ga_k b_k + gb_k a_k, ga = sum wa Jbar[pa], gb likewise */
            for (int k = 0; k < d; k++) {
                double ga = 0, gb = 0;
                for (int t = 0; t < r->n_a; t++) ga += r->wa[t] * Jb[r->pa[t] * d + k];
                for (int t = 0; t < r->n_b; t++) gb += r->wb[t] * Jb[r->pb[t] * d + k];
                for (int t = 0; t < r->n_b; t++) xbar[r->pb[t] * d + k] += r->wb[t] * ga;
                for (int t = 0; t < r->n_a; t++) xbar[r->pa[t] * d + k] += r->wa[t] * gb;
            }
            continue;
        }
        if (r->kind != IMP_CROW_DISTANCE) continue;
        for (int k = 0; k < d; k++) {
            double g = 2.0 * (Jb[r->i * d + k] - (r->j >= 0 ? Jb[r->j * d + k] : 0.0));
            xbar[r->i * d + k] += g;
            if (r->j >= 0) xbar[r->j * d + k] -= g;
        }
    }
}

double imp_csys_violation(const imp_csys *s, const double *x, const double *v)
{
    double phi[IMP_CSYS_MAX_ROWS], phid[IMP_CSYS_MAX_ROWS], acc = 0;
    imp_csys_phi(s, x, phi);
    imp_csys_phidot(s, x, v, phid);
    for (int c = 0; c < s->n_rows; c++) acc += phi[c] * phi[c] + phid[c] * phid[c];
    return sqrt(acc);
}
