/* Contacts of constrained systems in Cartesian coordinates (issue #25):
 * planes and body contacts as declared in system files, their gaps and
 * Jacobian rows, and the impulse solved through the constrained inverse
 * mass (docs/derivations/contact.md eqs 16-19), so that a post-impact
 * velocity satisfies the joints and the contact law together. */
#include "impulse/constrained_contact.h"

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
    double sum = 0;
    for (int a = 0; a < B->n_axes; a++) {
        double ca = at ? at[a] : 0.0;
        if (!isfinite(ca)) return imp_fail(IMP_ERR_INVALID, "contact %s: 'at' not finite", B->name);
        c->at[a] = ca;
        c->w[a + 1] = ca;
        sum += ca;
    }
    c->w[0] = 1.0 - sum;
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

double imp_csys_contact_frame(const imp_csys *s, const double *x, int c, double *pc, double dirs[3][3],
                              double *J)
{
    const imp_ccontact *cc = &s->contacts[c];
    const imp_cbody *B = &s->bodies[cc->body];
    const imp_cplane *P = &s->planes[cc->plane];
    int d = s->d, N = imp_csys_ndof(s), p0 = B->first_point, k_ax = B->n_axes;
    const double *n = P->normal;
    double C[3] = {0, 0, 0};
    for (int t = 0; t <= k_ax; t++)
        for (int k = 0; k < d; k++) C[k] += cc->w[t] * x[(p0 + t) * d + k];
    /* the touching point: a sphere's lowest point along -n (eq 16); a disk's
     * rim point farthest along -n */
    double off[3] = {0, 0, 0};
    if (cc->shape == IMP_CSHAPE_DISK) {
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
    double pcl[3], phi = -P->offset;
    for (int k = 0; k < d; k++) {
        pcl[k] = C[k] + off[k];
        phi += n[k] * pcl[k];
    }
    if (pc) memcpy(pc, pcl, (size_t)d * sizeof(double));
    double dl[3][3];
    contact_dirs(d, n, dl);
    if (dirs) memcpy(dirs, dl, sizeof dl);
    if (J) {
        /* weights of the material point at pc: its body coordinates along
         * the axes, c_i = (pc - x_0) . (x_i - x_0) (orthonormal frame) */
        double wt[4] = {1, 0, 0, 0};
        if (k_ax > 0) {
            double sum = 0;
            for (int i = 1; i <= k_ax; i++) {
                double ci = 0;
                for (int k = 0; k < d; k++) ci += (pcl[k] - x[p0 * d + k]) * (x[(p0 + i) * d + k] - x[p0 * d + k]);
                wt[i] = ci;
                sum += ci;
            }
            wt[0] = 1 - sum;
        }
        memset(J, 0, (size_t)d * N * sizeof(double));
        for (int r = 0; r < d; r++)
            for (int t = 0; t <= k_ax; t++)
                for (int k = 0; k < d; k++) J[(size_t)r * N + (p0 + t) * d + k] = wt[t] * dl[r][k];
    }
    return phi;
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
    int N = imp_csys_ndof(s), n = 0;
    double J[3 * IMP_CSYS_MAX_POINTS * 3];
    for (int c = 0; c < s->n_contacts; c++) {
        double phi = imp_csys_contact_frame(s, x, c, NULL, NULL, J);
        if (phi > tol) continue;
        double un = 0;
        for (int q = 0; q < N; q++) un += J[q] * v[q];
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
