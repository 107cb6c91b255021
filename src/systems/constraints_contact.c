/* Contacts of constrained systems in Cartesian coordinates (issue #25):
 * planes and body contacts as declared in system files (a body's sphere or
 * disk rim against a plane, or two bodies' spheres against each other),
 * their gaps and Jacobian rows (and the reverse of a body-body contact's),
 * and the impulse solved through the constrained inverse mass
 * (docs/derivations/contact.md eqs 16-19, 17a), so that a post-impact
 * velocity satisfies the joints and the contact law together. */
#include "impulse/constrained_contact.h"
#include "contact/contact_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int imp_csys_plane_index(const imp_csys *s, const char *name)
{
    for (int p = 0; p < s->n_planes; p++)
        if (strcmp(s->planes[p].name, name) == 0) return p;
    return -1;
}

int imp_csys_add_plane(imp_csys *s, const char *name, const double *normal, double offset, int *index)
{
    if (!s || !name || !normal) return imp_fail(IMP_ERR_INVALID, "plane: NULL");
    if (s->n_planes >= IMP_CSYS_MAX_PLANES)
        return imp_fail(IMP_ERR_INVALID, "plane '%.32s': too many planes (max %d)", name, IMP_CSYS_MAX_PLANES);
    if (strlen(name) >= sizeof s->planes[0].name || !name[0])
        return imp_fail(IMP_ERR_INVALID, "plane: name '%.40s' empty or longer than 31 characters", name);
    if (imp_csys_plane_index(s, name) >= 0) return imp_fail(IMP_ERR_INVALID, "plane '%s': declared twice", name);
    double nn = 0;
    for (int k = 0; k < s->d; k++) {
        if (!isfinite(normal[k])) return imp_fail(IMP_ERR_INVALID, "plane '%s': normal not finite", name);
        nn += normal[k] * normal[k];
    }
    if (!(nn > 1e-24)) return imp_fail(IMP_ERR_INVALID, "plane '%s': zero normal", name);
    if (!isfinite(offset)) return imp_fail(IMP_ERR_INVALID, "plane '%s': offset not finite", name);
    imp_cplane *p = &s->planes[s->n_planes];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    for (int k = 0; k < s->d; k++) p->normal[k] = normal[k] / sqrt(nn);
    p->offset = offset;
    if (index) *index = s->n_planes;
    s->n_planes++;
    return IMP_OK;
}

/* The sphere centre's weights over a body's points: c~ = (1 - sum c, c). */
static int centre_weights(const imp_cbody *B, const double *at, double *w, double *at_out)
{
    double sum = 0;
    for (int a = 0; a < B->n_axes; a++) {
        double ca = at ? at[a] : 0.0;
        if (!isfinite(ca)) return imp_fail(IMP_ERR_INVALID, "contact %s: 'at' not finite", B->name);
        at_out[a] = ca;
        w[a + 1] = ca;
        sum += ca;
    }
    w[0] = 1.0 - sum;
    return IMP_OK;
}

static int add_contact(imp_csys *s, int body, const double *at, const double *axis, double radius, int plane,
                       double e, double mu, int line)
{
    if (!s) return imp_fail(IMP_ERR_INVALID, "contact: NULL");
    if (body < 0 || body >= s->n_bodies)
        return imp_fail(IMP_ERR_INVALID, "contact: body index %d does not exist (%d bodies)", body, s->n_bodies);
    const imp_cbody *B = &s->bodies[body];
    if (plane < 0 || plane >= s->n_planes)
        return imp_fail(IMP_ERR_INVALID, "contact %s: plane index %d does not exist (%d planes)", B->name, plane,
                        s->n_planes);
    if (s->n_contacts >= IMP_CSYS_MAX_CONTACTS)
        return imp_fail(IMP_ERR_INVALID, "contact %s: too many contacts (max %d)", B->name, IMP_CSYS_MAX_CONTACTS);
    if (!(radius >= 0) || !isfinite(radius))
        return imp_fail(IMP_ERR_INVALID, "contact %s: radius %g must be >= 0", B->name, radius);
    if (!(e >= 0 && e <= 1)) return imp_fail(IMP_ERR_INVALID, "contact %s: e %g must be in [0, 1]", B->name, e);
    if (!(mu >= 0) || !isfinite(mu)) return imp_fail(IMP_ERR_INVALID, "contact %s: mu %g must be >= 0", B->name, mu);
    imp_ccontact *c = &s->contacts[s->n_contacts];
    memset(c, 0, sizeof *c);
    c->body = body;
    c->plane = plane;
    c->radius = radius;
    c->e = e;
    c->mu = mu;
    c->line = line;
    c->other = -1;
    int st = centre_weights(B, at, c->w, c->at);
    if (st) return st;
    if (axis) {
        if (s->d != 3 || B->n_axes != 3)
            return imp_fail(IMP_ERR_INVALID, "contact %s: a disk needs a 3-D body with 3 axes", B->name);
        double na = 0;
        for (int k = 0; k < 3; k++) na += axis[k] * axis[k];
        if (!(na > 1e-24) || !isfinite(na)) return imp_fail(IMP_ERR_INVALID, "contact %s: zero disk axis", B->name);
        for (int k = 0; k < 3; k++) c->axis[k] = axis[k] / sqrt(na);
        c->shape = IMP_CSHAPE_DISK;
    }
    s->n_contacts++;
    return IMP_OK;
}

int imp_csys_add_contact(imp_csys *s, int body, const double *at, double radius, int plane, double e,
                         double mu, int line)
{
    return add_contact(s, body, at, NULL, radius, plane, e, mu, line);
}

int imp_csys_add_disk_contact(imp_csys *s, int body, const double *at, const double *axis, double radius,
                              int plane, double e, double mu, int line)
{
    if (!axis) return imp_fail(IMP_ERR_INVALID, "contact: disk without axis");
    return add_contact(s, body, at, axis, radius, plane, e, mu, line);
}

int imp_csys_add_body_contact(imp_csys *s, int body, const double *at, double radius, int other,
                              const double *at_other, double radius_other, double e, double mu, int line)
{
    if (!s) return imp_fail(IMP_ERR_INVALID, "contact: NULL");
    if (body < 0 || body >= s->n_bodies)
        return imp_fail(IMP_ERR_INVALID, "contact: body index %d does not exist (%d bodies)", body, s->n_bodies);
    const imp_cbody *A = &s->bodies[body];
    if (other < 0 || other >= s->n_bodies)
        return imp_fail(IMP_ERR_INVALID, "contact %s: other body index %d does not exist (%d bodies)", A->name,
                        other, s->n_bodies);
    const imp_cbody *B = &s->bodies[other];
    if (other == body) return imp_fail(IMP_ERR_INVALID, "contact %s %s: a body cannot touch itself", A->name, B->name);
    if (s->n_contacts >= IMP_CSYS_MAX_CONTACTS)
        return imp_fail(IMP_ERR_INVALID, "contact %s %s: too many contacts (max %d)", A->name, B->name,
                        IMP_CSYS_MAX_CONTACTS);
    if (!(radius > 0) || !isfinite(radius))
        return imp_fail(IMP_ERR_INVALID, "contact %s %s: radius %g of %s must be > 0", A->name, B->name, radius,
                        A->name);
    if (!(radius_other > 0) || !isfinite(radius_other))
        return imp_fail(IMP_ERR_INVALID, "contact %s %s: radius %g of %s must be > 0", A->name, B->name,
                        radius_other, B->name);
    if (!(e >= 0 && e <= 1))
        return imp_fail(IMP_ERR_INVALID, "contact %s %s: e %g must be in [0, 1]", A->name, B->name, e);
    if (!(mu >= 0) || !isfinite(mu))
        return imp_fail(IMP_ERR_INVALID, "contact %s %s: mu %g must be >= 0", A->name, B->name, mu);
    imp_ccontact c;
    memset(&c, 0, sizeof c);
    int st = centre_weights(A, at, c.w, c.at);
    if (!st) st = centre_weights(B, at_other, c.w2, c.at2);
    if (st) return st;
    /* two centres of mass held at a fixed distance closer than the radii
     * overlap in every configuration */
    for (int r = 0; r < s->n_rows && !at && !at_other; r++) {
        const imp_crow *row = &s->rows[r];
        int pa = A->first_point, pb = B->first_point;
        if (row->kind == IMP_CROW_DISTANCE && row->j >= 0 &&
            ((row->i == pa && row->j == pb) || (row->i == pb && row->j == pa)) &&
            row->length < radius + radius_other)
            return imp_fail(IMP_ERR_INVALID,
                            "contact %s %s: their centres are held %g apart (%s), closer than the radii's sum %g: "
                            "the spheres overlap in every configuration",
                            A->name, B->name, row->length, s->cons[row->con].label, radius + radius_other);
    }
    c.body = body;
    c.plane = -1;
    c.other = other;
    c.radius = radius;
    c.radius2 = radius_other;
    c.e = e;
    c.mu = mu;
    c.line = line;
    s->contacts[s->n_contacts++] = c;
    return IMP_OK;
}

void imp_csys_contact_name(const imp_csys *s, int c, char *buf, size_t n)
{
    if (!buf || n == 0) return;
    if (!s || c < 0 || c >= s->n_contacts) {
        snprintf(buf, n, "contact %d", c);
        return;
    }
    const imp_ccontact *cc = &s->contacts[c];
    if (cc->other >= 0)
        snprintf(buf, n, "%s-%s", s->bodies[cc->body].name, s->bodies[cc->other].name);
    else
        snprintf(buf, n, "%s-%s", s->bodies[cc->body].name, s->planes[cc->plane].name);
}

int imp_csys_check_contact_normals(const imp_csys *s, const double *x)
{
    if (!s || !x) return imp_fail(IMP_ERR_INVALID, "contact normals: NULL");
    for (int c = 0; c < s->n_contacts; c++) {
        const imp_ccontact *cc = &s->contacts[c];
        if (cc->other < 0) continue;
        double dist = imp_csys_contact_centre_distance(s, x, c);
        if (!(dist > 1e-9)) {
            char name[80], line[32] = "";
            imp_csys_contact_name(s, c, name, sizeof name);
            if (cc->line > 0) snprintf(line, sizeof line, " (line %d)", cc->line);
            return imp_fail(IMP_ERR_INVALID,
                            "contact %s%s: the two sphere centres coincide (distance %.3g), so the contact normal "
                            "is undefined; give the bodies distinct positions",
                            name, line, dist);
        }
    }
    return IMP_OK;
}

/* Contact directions: the plane's normal, then tangents (eq 16). */
static void contact_dirs(int d, const double *n, double dirs[3][3])
{
    memset(dirs, 0, 9 * sizeof(double));
    for (int k = 0; k < d; k++) dirs[0][k] = n[k];
    if (d == 2) {
        dirs[1][0] = n[1];
        dirs[1][1] = -n[0];
        return;
    }
    int m = 0;
    for (int k = 1; k < 3; k++) if (fabs(n[k]) < fabs(n[m])) m = k;
    double t[3] = {0, 0, 0}, nt = 0;
    t[m] = 1;
    double dot = n[m];
    for (int k = 0; k < 3; k++) { t[k] -= dot * n[k]; nt += t[k] * t[k]; }
    for (int k = 0; k < 3; k++) dirs[1][k] = t[k] / sqrt(nt);
    /* t2 = n x t1, so that t1 x t2 = n */
    const double *a = n, *b = dirs[1];
    dirs[2][0] = a[1] * b[2] - a[2] * b[1];
    dirs[2][1] = a[2] * b[0] - a[0] * b[2];
    dirs[2][2] = a[0] * b[1] - a[1] * b[0];
}

/* The centre X c~ of a contact's sphere on body B (weights w). */
static void sphere_centre(const imp_csys *s, const imp_cbody *B, const double *w, const double *x, double *C)
{
    int d = s->d, p0 = B->first_point;
    C[0] = C[1] = C[2] = 0;
    for (int t = 0; t <= B->n_axes; t++)
        for (int k = 0; k < d; k++) C[k] += w[t] * x[(p0 + t) * d + k];
}

/* Material weights of body B at world point pc (as add_point_rows). */
static void point_weights(const imp_csys *s, const imp_cbody *B, const double *x, const double *pc, double *wt)
{
    int d = s->d, p0 = B->first_point;
    wt[0] = 1, wt[1] = wt[2] = wt[3] = 0;
    double sum = 0;
    for (int i = 1; i <= B->n_axes; i++) {
        double ci = 0;
        for (int k = 0; k < d; k++) ci += (pc[k] - x[p0 * d + k]) * (x[(p0 + i) * d + k] - x[p0 * d + k]);
        wt[i] = ci;
        sum += ci;
    }
    wt[0] = 1 - sum;
}

/* Add sign * (material weights of body B at world point pc) (x) dirs to the
 * Jacobian rows J (d x N): row r maps v to the velocity of that material
 * point along dirs[r]; the weights are its body coordinates along the axes,
 * c_i = (pc - x_0) . (x_i - x_0) (orthonormal frame). */
static void add_point_rows(const imp_csys *s, const imp_cbody *B, const double *x, const double *pc,
                           double dl[3][3], double sign, double *J)
{
    int d = s->d, N = imp_csys_ndof(s), p0 = B->first_point, k_ax = B->n_axes;
    double wt[4];
    point_weights(s, B, x, pc, wt);
    for (int r = 0; r < d; r++)
        for (int t = 0; t <= k_ax; t++)
            for (int k = 0; k < d; k++) J[(size_t)r * N + (p0 + t) * d + k] += sign * wt[t] * dl[r][k];
}

double imp_csys_contact_centre_distance(const imp_csys *s, const double *x, int c)
{
    const imp_ccontact *cc = &s->contacts[c];
    if (cc->other < 0) return INFINITY;
    double CA[3], CB[3], n[3];
    sphere_centre(s, &s->bodies[cc->body], cc->w, x, CA);
    sphere_centre(s, &s->bodies[cc->other], cc->w2, x, CB);
    return imp_contact_sphere_normal(CB, CA, n);
}

double imp_csys_contact_frame(const imp_csys *s, const double *x, int c, double *pc, double dirs[3][3],
                              double *J)
{
    const imp_ccontact *cc = &s->contacts[c];
    const imp_cbody *B = &s->bodies[cc->body];
    int d = s->d, N = imp_csys_ndof(s);
    double C[3], n[3] = {0, 0, 0}, off[3] = {0, 0, 0}, pcl[3], phi;
    sphere_centre(s, B, cc->w, x, C);
    if (cc->other >= 0) {
        /* two spheres: n from B's centre to A's (eq 17a); phi = |d| - rA - rB */
        double CB[3];
        sphere_centre(s, &s->bodies[cc->other], cc->w2, x, CB);
        double dist = imp_contact_sphere_normal(CB, C, n);
        if (!(dist > 1e-300)) n[0] = 1; /* coincident centres: no normal (refused at the start) */
        phi = dist - cc->radius - cc->radius2;
        for (int k = 0; k < d; k++) pcl[k] = C[k] - cc->radius * n[k];
    } else {
        const imp_cplane *P = &s->planes[cc->plane];
        for (int k = 0; k < d; k++) n[k] = P->normal[k];
        /* the touching point: a sphere's lowest point along -n (eq 16); a
         * disk's rim point farthest along -n */
        if (cc->shape == IMP_CSHAPE_DISK) {
            int p0 = B->first_point;
            double a[3] = {0, 0, 0};
            for (int i = 0; i < 3; i++)
                for (int k = 0; k < 3; k++) a[k] += cc->axis[i] * (x[(p0 + 1 + i) * d + k] - x[p0 * d + k]);
            double na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), ndota = 0;
            for (int k = 0; k < 3; k++) { a[k] /= na; ndota += n[k] * a[k]; }
            double u[3], nu = 0;
            for (int k = 0; k < 3; k++) { u[k] = n[k] - ndota * a[k]; nu += u[k] * u[k]; }
            nu = sqrt(nu);
            if (nu > 1e-12)
                for (int k = 0; k < 3; k++) off[k] = -cc->radius * u[k] / nu;
        } else {
            for (int k = 0; k < d; k++) off[k] = -cc->radius * n[k];
        }
        /* at the touching point: n.(c + off) - d, which rounds otherwise than
           imp_contact_detect's (n.c - d) - r (the data would move) */
        for (int k = 0; k < d; k++) pcl[k] = C[k] + off[k];
        phi = imp_contact_plane_gap(n, pcl, d, P->offset);
    }
    if (pc) memcpy(pc, pcl, (size_t)d * sizeof(double));
    double dl[3][3];
    contact_dirs(d, n, dl);
    if (dirs) memcpy(dirs, dl, sizeof dl);
    if (J) {
        memset(J, 0, (size_t)d * N * sizeof(double));
        add_point_rows(s, B, x, pcl, dl, 1.0, J);
        if (cc->other >= 0) {
            /* minus the velocity of B's material point touching A */
            const imp_cbody *O = &s->bodies[cc->other];
            double pb[3], CB[3];
            sphere_centre(s, O, cc->w2, x, CB);
            for (int k = 0; k < d; k++) pb[k] = CB[k] + cc->radius2 * n[k];
            add_point_rows(s, O, x, pb, dl, -1.0, J);
        }
    }
    return phi;
}

double imp_csys_contact_gap_rate(const imp_csys *s, const double *x, const double *v, int c, double *J,
                                 double *un)
{
    double Jl[3 * IMP_CSYS_MAX_POINTS * 3], *Jn = J ? J : Jl, u = 0;
    double phi = imp_csys_contact_frame(s, x, c, NULL, NULL, Jn);
    for (int q = 0, N = imp_csys_ndof(s); q < N; q++) u += Jn[q] * v[q];
    *un = u;
    return phi;
}

/* Reverse of the material weights of body B at world point pc (add_point_rows):
 * wtb (the weights' adjoints) to pc_bar and xbar. */
static void point_weights_vjp(const imp_csys *s, const imp_cbody *B, const double *x, const double *pc,
                              const double *wtb, double *pc_bar, double *xbar)
{
    int d = s->d, p0 = B->first_point;
    const double *x0 = x + p0 * d;
    for (int i = 1; i <= B->n_axes; i++) {
        double g = wtb[i] - wtb[0];
        const double *xi = x + (p0 + i) * d;
        for (int k = 0; k < d; k++) {
            pc_bar[k] += g * (xi[k] - x0[k]);
            xbar[(p0 + i) * d + k] += g * (pc[k] - x0[k]);
            xbar[p0 * d + k] -= g * (xi[k] - x0[k]) + g * (pc[k] - x0[k]);
        }
    }
}

int imp_csys_body_contact_vjp(const imp_csys *s, const double *x, int c, double phi_bar, const double *J_bar,
                              double *xbar)
{
    if (!s || !x || !xbar) return imp_fail(IMP_ERR_INVALID, "body contact vjp: NULL");
    if (c < 0 || c >= s->n_contacts || s->contacts[c].other < 0)
        return imp_fail(IMP_ERR_INVALID, "body contact vjp: contact %d is not a body-body contact", c);
    const imp_ccontact *cc = &s->contacts[c];
    const imp_cbody *A = &s->bodies[cc->body], *B = &s->bodies[cc->other];
    int d = s->d, N = imp_csys_ndof(s);
    double CA[3], CB[3], n[3];
    sphere_centre(s, A, cc->w, x, CA);
    sphere_centre(s, B, cc->w2, x, CB);
    double dist = imp_contact_sphere_normal(CB, CA, n);
    if (!(dist > 1e-300))
        return imp_fail(IMP_ERR_NUMERIC, "body contact vjp: contact %d: the sphere centres coincide", c);
    double dl[3][3], nb[3] = {0, 0, 0}, CAb[3] = {0, 0, 0}, CBb[3] = {0, 0, 0};
    contact_dirs(d, n, dl);
    if (J_bar) {
        /* J[r] = dl[r] (x) wtA(pA) - dl[r] (x) wtB(pB) */
        double pA[3] = {0, 0, 0}, pB[3] = {0, 0, 0}, wA[4], wB[4], wAb[4] = {0, 0, 0, 0}, wBb[4] = {0, 0, 0, 0}, dlb[3][3];
        memset(dlb, 0, sizeof dlb);
        for (int k = 0; k < d; k++) pA[k] = CA[k] - cc->radius * n[k], pB[k] = CB[k] + cc->radius2 * n[k];
        point_weights(s, A, x, pA, wA);
        point_weights(s, B, x, pB, wB);
        for (int r = 0; r < d; r++)
            for (int k = 0; k < d; k++) {
                for (int t = 0; t <= A->n_axes; t++) {
                    double jb = J_bar[(size_t)r * N + (A->first_point + t) * d + k];
                    dlb[r][k] += wA[t] * jb;
                    wAb[t] += jb * dl[r][k];
                }
                for (int t = 0; t <= B->n_axes; t++) {
                    double jb = J_bar[(size_t)r * N + (B->first_point + t) * d + k];
                    dlb[r][k] -= wB[t] * jb;
                    wBb[t] -= jb * dl[r][k];
                }
            }
        double pAb[3] = {0, 0, 0}, pBb[3] = {0, 0, 0};
        point_weights_vjp(s, A, x, pA, wAb, pAb, xbar);
        point_weights_vjp(s, B, x, pB, wBb, pBb, xbar);
        for (int k = 0; k < d; k++) {
            CAb[k] += pAb[k], nb[k] -= cc->radius * pAb[k];
            CBb[k] += pBb[k], nb[k] += cc->radius2 * pBb[k];
        }
        /* the directions from n (contact_dirs) */
        for (int k = 0; k < d; k++) nb[k] += dlb[0][k];
        if (d == 2) {
            nb[1] += dlb[1][0], nb[0] -= dlb[1][1];
        } else {
            /* t2 = n x t1: n_bar += t1 x t2_bar, t1_bar += t2_bar x n */
            double *t1 = dl[1], t1b[3], cr[3];
            imp_cross3(t1, dlb[2], cr);
            for (int k = 0; k < 3; k++) nb[k] += cr[k];
            imp_cross3(dlb[2], n, cr);
            for (int k = 0; k < 3; k++) t1b[k] = dlb[1][k] + cr[k];
            /* t1 = t/|t|, t = e_m - n_m n */
            int m = 0;
            for (int k = 1; k < 3; k++) if (fabs(n[k]) < fabs(n[m])) m = k;
            double t[3] = {0, 0, 0}, L = 0, dot = 0, tb[3];
            t[m] = 1;
            for (int k = 0; k < 3; k++) t[k] -= n[m] * n[k];
            L = sqrt(imp_dot3(t, t));
            dot = imp_dot3(t1, t1b);
            for (int k = 0; k < 3; k++) tb[k] = (t1b[k] - t1[k] * dot) / L;
            for (int k = 0; k < 3; k++) nb[k] -= n[m] * tb[k];
            nb[m] -= imp_dot3(n, tb);
        }
    }
    /* phi = |D| - rA - rB and n = D/|D| */
    double Db[3], ndn = 0;
    for (int k = 0; k < d; k++) ndn += n[k] * nb[k];
    for (int k = 0; k < d; k++) {
        Db[k] = phi_bar * n[k] + (nb[k] - n[k] * ndn) / dist;
        CAb[k] += Db[k], CBb[k] -= Db[k];
    }
    for (int t = 0; t <= A->n_axes; t++)
        for (int k = 0; k < d; k++) xbar[(A->first_point + t) * d + k] += cc->w[t] * CAb[k];
    for (int t = 0; t <= B->n_axes; t++)
        for (int k = 0; k < d; k++) xbar[(B->first_point + t) * d + k] += cc->w2[t] * CBb[k];
    return IMP_OK;
}

int imp_csys_contact_minv(double *out, const double *in, int nv, int ncol, void *user_data)
{
    const imp_csys_minv_ctx *c = user_data;
    if (!c || !c->s) return imp_fail(IMP_ERR_INVALID, "constrained M^-1: NULL context");
    if (nv != imp_csys_ndof(c->s))
        return imp_fail(IMP_ERR_INVALID, "constrained M^-1: nv %d is not the system's %d", nv, imp_csys_ndof(c->s));
    return imp_csys_constrained_minv(c->s, c->x, in, ncol, out, c->w);
}

int imp_csys_contact_active(const imp_csys *s, const double *x, const double *v, double tol, double vtol,
                            int *active)
{
    int n = 0;
    for (int c = 0; c < s->n_contacts; c++) {
        double un, phi = imp_csys_contact_gap_rate(s, x, v, c, NULL, &un);
        if (phi > tol) continue;
        if (un < -vtol) active[n++] = c;
    }
    return n;
}

int imp_csys_contact_impulse(const imp_csys *s, const double *x, double *v, const int *active, int n,
                             imp_contact_solution *sol, imp_csys_work *w)
{
    if (!s || !x || !v || (n > 0 && !active) || !w) return imp_fail(IMP_ERR_INVALID, "contact impulse: NULL");
    if (n <= 0) return IMP_OK;
    int d = s->d, N = imp_csys_ndof(s), st;
    size_t nd = (size_t)n * d * N + 2 * (size_t)N + imp_contact_impulse_work_doubles(n, d, N);
    double *buf = malloc(nd * sizeof(double));
    int *iw = malloc(imp_contact_solve_work_ints(n, d) * sizeof(int));
    imp_contact_solution local;
    if (!buf || !iw) {
        free(buf);
        free(iw);
        return imp_fail(IMP_ERR_NOMEM, "contact impulse: buffers");
    }
    double *J = buf, *vp = J + (size_t)n * d * N, *work = vp + 2 * (size_t)N;
    double e[IMP_CSYS_MAX_CONTACTS], mu[IMP_CSYS_MAX_CONTACTS];
    for (int i = 0; i < n; i++) {
        imp_csys_contact_frame(s, x, active[i], NULL, NULL, J + (size_t)i * d * N);
        e[i] = s->contacts[active[i]].e;
        mu[i] = s->contacts[active[i]].mu;
    }
    imp_contact_solve_opts o;
    imp_contact_solve_opts_default(&o);
    imp_csys_minv_ctx ctx = {s, x, w};
    st = imp_contact_impulse_forward(vp, sol ? sol : &local, v, J, n, d, N, imp_csys_contact_minv, &ctx, e, mu,
                                     &o, work, iw);
    if (!st) memcpy(v, vp, (size_t)N * sizeof(double));
    free(buf);
    free(iw);
    return st;
}
