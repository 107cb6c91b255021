/* The contact module (src/contact/): detection, assembly, solver and their
 * reverse passes, checked by finite differences, and the physics of the
 * impulses (issue #24). */
#include "impulse/contact.h"
#include "test.h"

#include <math.h>
#include <string.h>

static const double FD_H = 1e-6;

static double imp_dot3_test(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* ---- models ---- */

static void add_body(imp_contact_model *m, int kind, double mass, double I0, double I1, double I2)
{
    imp_contact_body *b = &m->bodies[m->n_bodies++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->mass = mass;
    b->inertia[0] = I0;
    if (kind == IMP_BODY_SPATIAL) b->inertia[4] = I1, b->inertia[8] = I2;
}

static int add_plane(imp_contact_model *m, int body, const double *p, double r, double nx, double ny, double nz,
                     double off, double e, double mu)
{
    imp_contact_candidate *c = &m->cand[m->n_candidates];
    memset(c, 0, sizeof *c);
    c->kind = IMP_CONTACT_PLANE;
    c->body_a = IMP_WALL;
    c->body_b = body;
    if (p) memcpy(c->point_b, p, 3 * sizeof(double));
    c->radius_b = r;
    double L = sqrt(nx * nx + ny * ny + nz * nz);
    c->normal[0] = nx / L, c->normal[1] = ny / L, c->normal[2] = nz / L;
    c->offset = off;
    c->e = e, c->mu = mu;
    return m->n_candidates++;
}

static int add_spheres(imp_contact_model *m, int a, const double *pa, double ra, int b, const double *pb, double rb,
                       double e, double mu)
{
    imp_contact_candidate *c = &m->cand[m->n_candidates];
    memset(c, 0, sizeof *c);
    c->kind = IMP_CONTACT_SPHERES;
    c->body_a = a, c->body_b = b;
    if (pa) memcpy(c->point_a, pa, 3 * sizeof(double));
    if (pb) memcpy(c->point_b, pb, 3 * sizeof(double));
    c->radius_a = ra, c->radius_b = rb;
    c->e = e, c->mu = mu;
    return m->n_candidates++;
}

static void model_start(imp_contact_model *m, int dim)
{
    memset(m, 0, sizeof *m);
    m->dim = dim;
    m->gap_tol = 1e-6;
}

static void normalize_quat(double *qq)
{
    double n = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
    for (int i = 0; i < 4; i++) qq[i] /= n;
}

/* A model with every body kind and candidate kind: 2-D (point, planar disk,
 * planar box with a corner) or 3-D (point, ball, spatial box). */
static void mixed_model(imp_contact_model *m, int dim, double *q, double *v, imp_rng *rng, unsigned seed)
{
    imp_rng_seed(rng, seed);
    model_start(m, dim);
    if (dim == 2) {
        add_body(m, IMP_BODY_POINT, 1.3, 0, 0, 0);
        add_body(m, IMP_BODY_PLANAR, 0.7, 0.05, 0, 0);
        add_body(m, IMP_BODY_PLANAR, 2.0, 0.4, 0, 0);
        double corner[3] = {0.3, -0.2, 0}, off[3] = {0.05, 0.02, 0};
        add_plane(m, 0, NULL, 0.1, 0.1, 1, 0, -0.2, 0.5, 0.3);
        add_plane(m, 1, NULL, 0.25, -1, 0.2, 0, -3, 0.7, 0.2);
        add_plane(m, 2, corner, 0.0, 0, 1, 0, 0.1, 0.2, 0.6);
        add_spheres(m, 0, NULL, 0.1, 1, off, 0.25, 0.9, 0.1);
        add_spheres(m, 1, off, 0.25, 2, corner, 0.05, 0.4, 0.5);
    } else {
        add_body(m, IMP_BODY_POINT, 1.3, 0, 0, 0);
        add_body(m, IMP_BODY_SPATIAL, 0.7, 0.05, 0.07, 0.06);
        add_body(m, IMP_BODY_SPATIAL, 2.0, 0.4, 0.3, 0.5);
        m->bodies[2].inertia[1] = m->bodies[2].inertia[3] = 0.05;
        double corner[3] = {0.3, -0.2, 0.25}, off[3] = {0.05, 0.02, -0.03};
        add_plane(m, 0, NULL, 0.1, 0.1, 0.2, 1, -0.2, 0.5, 0.3);
        add_plane(m, 1, off, 0.25, -1, 0.2, 0.1, -3, 0.7, 0.2);
        add_plane(m, 2, corner, 0.0, 0, 0.95, 0.3, 0.1, 0.2, 0.6); /* |n_y| > 0.9: the other helper axis */
        add_spheres(m, 0, NULL, 0.1, 1, off, 0.25, 0.9, 0.1);
        add_spheres(m, 1, off, 0.25, 2, corner, 0.05, 0.4, 0.5);
    }
    CHECK_OK(imp_contact_model_init(m));
    for (int i = 0; i < m->nq; i++) q[i] = imp_rng_uniform_range(rng, -1, 1);
    for (int i = 0; i < m->nv; i++) v[i] = imp_rng_uniform_range(rng, -1, 1);
    for (int k = 0; k < m->n_bodies; k++)
        if (m->bodies[k].kind == IMP_BODY_SPATIAL) normalize_quat(q + m->q_offset[k] + 3);
}

/* ---- stage 1: detection ---- */

static double cand_phi(const imp_contact_model *m, const double *q, int c)
{
    imp_contact_frame f[IMP_MAX_CONTACTS];
    if (imp_contact_detect(m, q, f)) return NAN;
    return f[c].phi;
}

/* World position at time h of the material point of body k that is at p at h = 0. */
static void material_point(const imp_contact_model *m, const double *q, const double *v, int k, const double *p,
                           double h, double out[3])
{
    double q1[IMP_CONTACT_MAX_NQ];
    imp_contact_advance(m, q, v, h, q1);
    const double *x0 = q + m->q_offset[k], *x1 = q1 + m->q_offset[k];
    double l[3] = {0, 0, 0}, lb[3];
    for (int i = 0; i < m->dim; i++) l[i] = p[i] - x0[i];
    int kind = m->bodies[k].kind;
    if (kind == IMP_BODY_POINT) {
        for (int i = 0; i < 3; i++) out[i] = (i < m->dim ? x1[i] : 0.0) + l[i];
        return;
    }
    double R0[9], R1[9];
    if (kind == IMP_BODY_PLANAR) {
        double c0 = cos(x0[2]), s0 = sin(x0[2]), c1 = cos(x1[2]), s1 = sin(x1[2]);
        lb[0] = c0 * l[0] + s0 * l[1], lb[1] = -s0 * l[0] + c0 * l[1];
        out[0] = x1[0] + c1 * lb[0] - s1 * lb[1], out[1] = x1[1] + s1 * lb[0] + c1 * lb[1], out[2] = 0;
        return;
    }
    double qa[4], qb[4];
    memcpy(qa, x0 + 3, sizeof qa);
    memcpy(qb, x1 + 3, sizeof qb);
    /* R via the public detect path would hide errors: build it here */
    double w = qa[0], x = qa[1], y = qa[2], z = qa[3];
    double A[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 2 * (x * y + w * z),
                   1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 2 * (x * z - w * y), 2 * (y * z + w * x),
                   1 - 2 * (x * x + y * y)};
    memcpy(R0, A, sizeof A);
    w = qb[0], x = qb[1], y = qb[2], z = qb[3];
    double B[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 2 * (x * y + w * z),
                   1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 2 * (x * z - w * y), 2 * (y * z + w * x),
                   1 - 2 * (x * x + y * y)};
    memcpy(R1, B, sizeof B);
    for (int j = 0; j < 3; j++) lb[j] = R0[j] * l[0] + R0[3 + j] * l[1] + R0[6 + j] * l[2];
    for (int i = 0; i < 3; i++) out[i] = x1[i] + R1[3 * i] * lb[0] + R1[3 * i + 1] * lb[1] + R1[3 * i + 2] * lb[2];
}

/* phi_bar phi + <J_bar, J> of candidate c at q (NaN if detection fails) */
static double geom_loss(const imp_contact_model *m, const double *q, int c, double phib, const double *Jb)
{
    imp_contact_frame f[IMP_MAX_CONTACTS];
    double J[3 * IMP_CONTACT_MAX_NV];
    if (imp_contact_detect(m, q, f) != IMP_OK) return NAN;
    imp_contact_jacobian(m, q, &f[c], c, J);
    double s = phib * f[c].phi;
    for (int i = 0; i < m->dim * m->nv; i++) s += Jb[i] * J[i];
    return s;
}

static void test_detect_jacobians(int dim, unsigned seed)
{
    imp_rng rng;
    imp_contact_model m;
    double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV];
    mixed_model(&m, dim, q, v, &rng, seed);
    imp_contact_frame f[IMP_MAX_CONTACTS];
    CHECK_OK(imp_contact_detect(&m, q, f));
    double J[3 * IMP_CONTACT_MAX_NV];
    for (int c = 0; c < m.n_candidates; c++) {
        imp_contact_jacobian(&m, q, &f[c], c, J);
        /* frame orthonormal */
        for (int a = 0; a < dim; a++)
            for (int b = 0; b < dim; b++) {
                const double *da = a ? f[c].t[a - 1] : f[c].n, *db = b ? f[c].t[b - 1] : f[c].n;
                CHECK_CLOSE(da[0] * db[0] + da[1] * db[1] + da[2] * db[2], a == b ? 1.0 : 0.0, 0, 1e-12);
            }
        /* J_n v = d phi / dt along the motion (eq 4) */
        double jv[3] = {0, 0, 0};
        for (int r = 0; r < dim; r++)
            for (int i = 0; i < m.nv; i++) jv[r] += J[r * m.nv + i] * v[i];
        double qp[IMP_CONTACT_MAX_NQ], qm[IMP_CONTACT_MAX_NQ];
        imp_contact_advance(&m, q, v, FD_H, qp);
        imp_contact_advance(&m, q, v, -FD_H, qm);
        double dphi = (cand_phi(&m, qp, c) - cand_phi(&m, qm, c)) / (2 * FD_H);
        CHECK_CLOSE(jv[0], dphi, 1e-6, 1e-7);
        /* every row = frame component of the relative velocity of the material contact points */
        double bp[3], bm[3], ap[3] = {0, 0, 0}, am[3] = {0, 0, 0}, rel[3];
        material_point(&m, q, v, m.cand[c].body_b, f[c].pb, FD_H, bp);
        material_point(&m, q, v, m.cand[c].body_b, f[c].pb, -FD_H, bm);
        if (m.cand[c].body_a != IMP_WALL) {
            material_point(&m, q, v, m.cand[c].body_a, f[c].pa, FD_H, ap);
            material_point(&m, q, v, m.cand[c].body_a, f[c].pa, -FD_H, am);
        }
        for (int i = 0; i < 3; i++) rel[i] = ((bp[i] - bm[i]) - (ap[i] - am[i])) / (2 * FD_H);
        for (int r = 0; r < dim; r++) {
            const double *d = r ? f[c].t[r - 1] : f[c].n;
            CHECK_CLOSE(jv[r], d[0] * rel[0] + d[1] * rel[1] + d[2] * rel[2], 1e-6, 1e-7);
        }
        /* reverse pass: phi_bar phi + <J_bar, J> against central differences in q and the geometry */
        double Jb[3 * IMP_CONTACT_MAX_NV], qb[IMP_CONTACT_MAX_NQ] = {0}, phib = imp_rng_uniform_range(&rng, -1, 1);
        for (int i = 0; i < dim * m.nv; i++) Jb[i] = imp_rng_uniform_range(&rng, -1, 1);
        imp_contact_geom_grad g;
        memset(&g, 0, sizeof g);
        imp_contact_jacobian_backward(qb, &g, phib, Jb, &m, q, &f[c], c);
        double num[IMP_CONTACT_MAX_NQ];
        for (int i = 0; i < m.nq; i++) {
            double x0 = q[i];
            q[i] = x0 + FD_H;
            double lp = geom_loss(&m, q, c, phib, Jb);
            q[i] = x0 - FD_H;
            double lm = geom_loss(&m, q, c, phib, Jb);
            q[i] = x0;
            num[i] = (lp - lm) / (2 * FD_H);
        }
        double err = test_grad_rel_err(qb, num, (size_t)m.nq, 1e-3);
        CHECK_MSG(err < 1e-6, "dim %d cand %d: q gradient rel err %g", dim, c, err);
        /* geometry: point_a, point_b, radii, offset */
        double *params[9] = {&m.cand[c].point_a[0], &m.cand[c].point_a[1], &m.cand[c].point_a[2],
                             &m.cand[c].point_b[0], &m.cand[c].point_b[1], &m.cand[c].point_b[2],
                             &m.cand[c].radius_a, &m.cand[c].radius_b, &m.cand[c].offset};
        double ana[9] = {g.point_a[0], g.point_a[1], g.point_a[2], g.point_b[0], g.point_b[1],
                         g.point_b[2], g.radius_a, g.radius_b, g.offset};
        for (int p = 0; p < 9; p++) {
            if ((p % 3 == 2 && p < 6 && dim == 2) || (p < 3 && m.cand[c].body_a == IMP_WALL) ||
                (p == 6 && m.cand[c].body_a == IMP_WALL) || (p == 8 && m.cand[c].body_a != IMP_WALL)) {
                CHECK(ana[p] == 0.0);
                continue;
            }
            double x0 = *params[p];
            *params[p] = x0 + FD_H;
            double lp = geom_loss(&m, q, c, phib, Jb);
            *params[p] = x0 - FD_H;
            double lm = geom_loss(&m, q, c, phib, Jb);
            *params[p] = x0;
            double nd = (lp - lm) / (2 * FD_H);
            CHECK_MSG(fabs(ana[p] - nd) < 1e-6 * (1 + fabs(nd)), "dim %d cand %d param %d: %g vs %g", dim, c, p,
                      ana[p], nd);
        }
    }
}

static void test_model_errors(void)
{
    imp_contact_model m;
    model_start(&m, 2);
    add_body(&m, IMP_BODY_POINT, 1, 0, 0, 0);
    add_plane(&m, 3, NULL, 0, 0, 1, 0, 0, 0.5, 0.1);
    CHECK_FAILS(imp_contact_model_init(&m), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "cand[0].body_b") != NULL);
    m.cand[0].body_b = 0;
    m.cand[0].normal[0] = m.cand[0].normal[1] = 0.0;
    CHECK_FAILS(imp_contact_model_init(&m), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "cand[0].normal") != NULL && strstr(imp_last_error(), "degenerate"));
    m.cand[0].normal[1] = 1.0;
    m.cand[0].e = -0.1;
    CHECK_FAILS(imp_contact_model_init(&m), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "cand[0].e") != NULL);
    m.cand[0].e = 0.5;
    m.cand[0].mu = -1;
    CHECK_FAILS(imp_contact_model_init(&m), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "cand[0].mu") != NULL);
    m.cand[0].mu = 0.1;
    m.bodies[0].mass = 0;
    CHECK_FAILS(imp_contact_model_init(&m), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "bodies[0].mass") != NULL);
    m.bodies[0].mass = 1;
    m.bodies[0].kind = IMP_BODY_SPATIAL;
    CHECK_FAILS(imp_contact_model_init(&m), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "bodies[0].kind") != NULL);
    m.bodies[0].kind = IMP_BODY_POINT;
    CHECK_OK(imp_contact_model_init(&m));
    /* coincident sphere centres: degenerate normal */
    model_start(&m, 3);
    add_body(&m, IMP_BODY_POINT, 1, 0, 0, 0);
    add_body(&m, IMP_BODY_SPATIAL, 1, 1, 1, 1);
    add_spheres(&m, 0, NULL, 0.1, 1, NULL, 0.1, 0.5, 0.1);
    CHECK_OK(imp_contact_model_init(&m));
    double q[10] = {1, 2, 3, 1, 2, 3, 1, 0, 0, 0};
    imp_contact_frame f[1];
    CHECK_FAILS(imp_contact_detect(&m, q, f), IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "cand[0]") && strstr(imp_last_error(), "degenerate normal"));
    q[0] = 0;
    q[6] = 1.1; /* non-unit quaternion */
    CHECK_FAILS(imp_contact_detect(&m, q, f), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "q[body 1]") && strstr(imp_last_error(), "quaternion"));
    q[6] = 1.0;
    CHECK_OK(imp_contact_detect(&m, q, f));
}


/* ---- stage 2: assembly ---- */

static void test_minv(int dim, unsigned seed)
{
    imp_rng rng;
    imp_contact_model m;
    double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV];
    mixed_model(&m, dim, q, v, &rng, seed);
    int nv = m.nv;
    /* M from the kinetic energy by polarization; M (M^-1 e_j) = e_j */
    static double M[IMP_CONTACT_MAX_NV * IMP_CONTACT_MAX_NV], Mi[IMP_CONTACT_MAX_NV * IMP_CONTACT_MAX_NV];
    double e1[IMP_CONTACT_MAX_NV], e2[IMP_CONTACT_MAX_NV];
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) {
            memset(e1, 0, sizeof e1);
            memset(e2, 0, sizeof e2);
            e1[i] += 1, e1[j] += 1, e2[i] = 1;
            double Tij = imp_contact_kinetic_energy(&m, e1), Ti = imp_contact_kinetic_energy(&m, e2);
            memset(e2, 0, sizeof e2);
            e2[j] = 1;
            M[i * nv + j] = Tij - Ti - imp_contact_kinetic_energy(&m, e2);
        }
    for (int j = 0; j < nv; j++) {
        memset(e1, 0, sizeof e1);
        e1[j] = 1;
        CHECK_OK(imp_contact_minv_bodies(Mi + j * nv, e1, nv, 1, &m));
    }
    double err = 0;
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) {
            double s = 0;
            for (int k = 0; k < nv; k++) s += M[i * nv + k] * Mi[j * nv + k];
            err = fmax(err, fabs(s - (i == j)));
        }
    CHECK_MSG(err < 1e-12, "dim %d: M M^-1 - I = %g", dim, err);
    /* the dense table gives the same */
    double x[IMP_CONTACT_MAX_NV], y1[IMP_CONTACT_MAX_NV], y2[IMP_CONTACT_MAX_NV];
    for (int i = 0; i < nv; i++) x[i] = imp_rng_normal(&rng);
    CHECK_OK(imp_contact_minv_bodies(y1, x, nv, 1, &m));
    CHECK_OK(imp_contact_minv_dense(y2, x, nv, 1, Mi));
    for (int i = 0; i < nv; i++) CHECK_CLOSE(y1[i], y2[i], 1e-12, 1e-12);
    /* masses and inertias from a gradient of M^-1 */
    static double Mb[IMP_CONTACT_MAX_NV * IMP_CONTACT_MAX_NV];
    for (int i = 0; i < nv * nv; i++) Mb[i] = imp_rng_normal(&rng);
    double mass_bar[IMP_MAX_BODIES] = {0}, in_bar[9 * IMP_MAX_BODIES] = {0};
    imp_contact_minv_bodies_backward(mass_bar, in_bar, Mb, &m);
    for (int k = 0; k < m.n_bodies; k++)
        for (int p = -1; p < 9; p++) {
            double *par = p < 0 ? &m.bodies[k].mass : &m.bodies[k].inertia[p];
            if (p >= 0 && (m.bodies[k].kind == IMP_BODY_POINT || (m.bodies[k].kind == IMP_BODY_PLANAR && p > 0)))
                continue;
            double x0 = *par, l[2];
            for (int sgn = 0; sgn < 2; sgn++) {
                *par = x0 + (sgn ? -FD_H : FD_H);
                l[sgn] = 0;
                for (int j = 0; j < nv; j++) {
                    memset(e1, 0, sizeof e1);
                    e1[j] = 1;
                    imp_contact_minv_bodies(y1, e1, nv, 1, &m);
                    for (int i = 0; i < nv; i++) l[sgn] += Mb[i * nv + j] * y1[i];
                }
            }
            *par = x0;
            double nd = (l[0] - l[1]) / (2 * FD_H), an = p < 0 ? mass_bar[k] : in_bar[9 * k + p];
            CHECK_MSG(fabs(an - nd) < 1e-6 * (1 + fabs(nd)), "dim %d body %d param %d: %g vs %g", dim, k, p, an, nd);
        }
}

static double compliance_loss(const double *J, int rows, int nv, const imp_contact_model *m, const double *Ab,
                              const double *Bb)
{
    static double A[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_ROWS], BT[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV];
    if (imp_contact_compliance(A, BT, J, rows, nv, imp_contact_minv_bodies, (void *)m)) return NAN;
    double s = 0;
    for (int i = 0; i < rows * rows; i++) s += Ab[i] * A[i];
    for (int i = 0; i < rows * nv; i++) s += Bb[i] * BT[i];
    return s;
}

static void test_compliance(int dim, unsigned seed)
{
    imp_rng rng;
    imp_contact_model m;
    double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV];
    mixed_model(&m, dim, q, v, &rng, seed);
    int nv = m.nv, rows = 4;
    static double J[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV], A[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_ROWS],
        BT[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV], Ab[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_ROWS],
        Bb[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV], Jb[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV],
        tmp[2 * IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV];
    for (int i = 0; i < rows * nv; i++) J[i] = imp_rng_normal(&rng), Bb[i] = imp_rng_normal(&rng), Jb[i] = 0;
    for (int i = 0; i < rows * rows; i++) Ab[i] = imp_rng_normal(&rng);
    CHECK_OK(imp_contact_compliance(A, BT, J, rows, nv, imp_contact_minv_bodies, &m));
    static double Mib[IMP_CONTACT_MAX_NV * IMP_CONTACT_MAX_NV];
    memset(Mib, 0, sizeof Mib);
    CHECK_OK(imp_contact_compliance_backward(Jb, Mib, Ab, Bb, J, BT, rows, nv, imp_contact_minv_bodies, &m, tmp));
    double num[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV];
    for (int i = 0; i < rows * nv; i++) {
        double x0 = J[i];
        J[i] = x0 + FD_H;
        double lp = compliance_loss(J, rows, nv, &m, Ab, Bb);
        J[i] = x0 - FD_H;
        double lm = compliance_loss(J, rows, nv, &m, Ab, Bb);
        J[i] = x0;
        num[i] = (lp - lm) / (2 * FD_H);
    }
    double err = test_grad_rel_err(Jb, num, (size_t)(rows * nv), 1e-3);
    CHECK_MSG(err < 1e-7, "dim %d: compliance J gradient rel err %g", dim, err);
    /* the M^-1 gradient through the bodies' masses */
    double mass_bar[IMP_MAX_BODIES] = {0};
    imp_contact_minv_bodies_backward(mass_bar, NULL, Mib, &m);
    for (int k = 0; k < m.n_bodies; k++) {
        double x0 = m.bodies[k].mass;
        m.bodies[k].mass = x0 + FD_H;
        double lp = compliance_loss(J, rows, nv, &m, Ab, Bb);
        m.bodies[k].mass = x0 - FD_H;
        double lm = compliance_loss(J, rows, nv, &m, Ab, Bb);
        m.bodies[k].mass = x0;
        CHECK_CLOSE(mass_bar[k], (lp - lm) / (2 * FD_H), 1e-6, 1e-7);
    }
}

/* A ball (disk) of radius 0.1 in a 2-D box: floor y = 0, walls x = 0 and x = 1. */
static void ball_box_model(imp_contact_model *m, double e, double mu)
{
    model_start(m, 2);
    add_body(m, IMP_BODY_POINT, 1, 0, 0, 0);
    add_plane(m, 0, NULL, 0.1, 0, 1, 0, 0, e, mu);  /* floor */
    add_plane(m, 0, NULL, 0.1, 1, 0, 0, 0, e, mu);  /* left wall */
    add_plane(m, 0, NULL, 0.1, -1, 0, 0, -1, e, mu); /* right wall: -x >= -1 */
    CHECK_OK(imp_contact_model_init(m));
}

static void test_active_and_labels(void)
{
    imp_contact_model m;
    ball_box_model(&m, 0.8, 0.0);
    imp_contact_frame f[3];
    int act[3];
    /* a floor bounce far from the walls: only the floor is active (the minimal case) */
    double q[2] = {0.5, 0.1 - 1e-4}, v[2] = {1.0, -2.0};
    CHECK_OK(imp_contact_detect(&m, q, f));
    CHECK(imp_contact_active_set(&m, q, f, v, NULL, act) == 1 && act[0] == 0);
    /* moving away: nothing */
    v[1] = 2.0;
    CHECK(imp_contact_active_set(&m, q, f, v, NULL, act) == 0);
    /* a ball in the corner closing on both */
    double qc[2] = {0.1 - 1e-5, 0.1 - 1e-5}, vc[2] = {-1, -1};
    CHECK_OK(imp_contact_detect(&m, qc, f));
    CHECK(imp_contact_active_set(&m, qc, f, vc, NULL, act) == 2 && act[0] == 0 && act[1] == 1);
    /* per-contact labels override the geometry */
    signed char lab[3] = {IMP_CONTACT_LABEL_NONE, 0, 1};
    CHECK(imp_contact_active_set(&m, qc, f, vc, lab, act) == 2 && act[0] == 0 && act[1] == 2);
    /* per-body touch labels attributed by geometry */
    unsigned char touch[1] = {1};
    CHECK_OK(imp_contact_attribute_labels(&m, f, touch, INFINITY, lab));
    CHECK(lab[0] == 1 && lab[1] == 1 && lab[2] == 0);
    double qn[2] = {0.8, 0.15}; /* touching per the sensor, not penetrating: the nearest (the floor) */
    CHECK_OK(imp_contact_detect(&m, qn, f));
    CHECK_OK(imp_contact_attribute_labels(&m, f, touch, INFINITY, lab));
    CHECK(lab[0] == 1 && lab[1] == 0 && lab[2] == 0);
    /* labelled touching, 5 cm from the floor: inconsistent with the geometry at 1 cm */
    CHECK_FAILS(imp_contact_attribute_labels(&m, f, touch, 0.01, lab), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "body 0") && strstr(imp_last_error(), "cand[0]") &&
          strstr(imp_last_error(), "inconsistent"));
    CHECK_OK(imp_contact_attribute_labels(&m, f, touch, 0.1, lab));
    touch[0] = 0;
    CHECK_OK(imp_contact_attribute_labels(&m, f, touch, INFINITY, lab));
    CHECK(lab[0] == 0 && lab[1] == 0 && lab[2] == 0);
    /* a touching body without any candidate */
    imp_contact_model m2;
    model_start(&m2, 2);
    add_body(&m2, IMP_BODY_POINT, 1, 0, 0, 0);
    add_body(&m2, IMP_BODY_POINT, 1, 0, 0, 0);
    add_plane(&m2, 0, NULL, 0.1, 0, 1, 0, 0, 0.5, 0.1);
    CHECK_OK(imp_contact_model_init(&m2));
    double q2[4] = {0, 1, 0, 2};
    unsigned char t2[2] = {0, 1};
    CHECK_OK(imp_contact_detect(&m2, q2, f));
    CHECK_FAILS(imp_contact_attribute_labels(&m2, f, t2, INFINITY, lab), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "body 1") != NULL);
}


/* ---- stage 3: solver ---- */

static double g_work[1 << 17];
static int g_iwork[4 * IMP_CONTACT_MAX_ROWS];

/* One impulse step on the candidates act[0..na-1] at (q, v-): v+, the solution. */
static int impulse(const imp_contact_model *m, const double *q, const double *v, const int *act, int na, double *vp,
                   imp_contact_solution *sol, double *J_out)
{
    imp_contact_frame f[IMP_MAX_CONTACTS];
    static double J[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV];
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    int st = imp_contact_detect(m, q, f);
    if (st) return st;
    imp_contact_assemble_jacobian(m, q, f, act, na, J);
    for (int k = 0; k < na; k++) e[k] = m->cand[act[k]].e, mu[k] = m->cand[act[k]].mu;
    if (J_out) memcpy(J_out, J, (size_t)na * m->dim * m->nv * sizeof(double));
    if (imp_contact_impulse_work_doubles(na, m->dim, m->nv) > sizeof g_work / sizeof(double)) return -99;
    return imp_contact_impulse_forward(vp, sol, v, J, na, m->dim, m->nv, imp_contact_minv_bodies, (void *)m, e, mu,
                                       NULL, g_work, g_iwork);
}

typedef struct scenario {
    const char *name;
    imp_contact_model m;
    double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV];
    int act[IMP_MAX_CONTACTS], na;
    int branches[IMP_MAX_CONTACTS]; /* expected; -1: any */
    int check_lambda;               /* weight lambda in the loss (A non-singular) */
} scenario;

/* L = w_v . v+ + w_l . lambda */
static double scen_loss(scenario *sc, const double *wv, const double *wl)
{
    double vp[IMP_CONTACT_MAX_NV];
    imp_contact_solution sol;
    if (impulse(&sc->m, sc->q, sc->v, sc->act, sc->na, vp, &sol, NULL)) return NAN;
    double L = 0;
    for (int i = 0; i < sc->m.nv; i++) L += wv[i] * vp[i];
    if (sc->check_lambda)
        for (int k = 0; k < sc->na * sc->m.dim; k++) L += wl[k] * sol.lambda[k];
    return L;
}

static void check_fd(scenario *sc, double *x, double analytic, const double *wv, const double *wl, const char *what,
                     int idx)
{
    double x0 = *x, h = (strcmp(what, "q") ? 1e-6 : 1e-7) * fmax(1.0, fabs(x0));
    *x = x0 + h;
    double lp = scen_loss(sc, wv, wl);
    *x = x0 - h;
    double lm = scen_loss(sc, wv, wl);
    *x = x0;
    double nd = (lp - lm) / (2 * h);
    CHECK_MSG(fabs(analytic - nd) <= 2e-5 * (1 + fabs(nd)), "%s: d/d %s[%d]: analytic %.10g, numeric %.10g", sc->name,
              what, idx, analytic, nd);
}

/* The whole chain q, v-, e, mu, masses, inertias, body-fixed points -> v+, lambda
 * against central differences, on the scenario's branches. */
static void check_scenario(scenario *sc, unsigned seed)
{
    imp_contact_model *m = &sc->m;
    int d = m->dim, nv = m->nv, na = sc->na;
    double vp[IMP_CONTACT_MAX_NV];
    imp_contact_solution sol;
    static double J[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV];
    CHECK_OK(impulse(m, sc->q, sc->v, sc->act, na, vp, &sol, J));
    CHECK_MSG(!sol.fallback, "%s: fallback", sc->name);
    for (int k = 0; k < na; k++)
        if (sc->branches[k] >= 0)
            CHECK_MSG(sol.branch[k] == sc->branches[k], "%s: contact %d branch %d, expected %d", sc->name, k,
                      sol.branch[k], sc->branches[k]);
    /* physics: no active contact ends closing, energy never increases where the law guarantees it */
    imp_contact_frame f[IMP_MAX_CONTACTS];
    CHECK_OK(imp_contact_detect(m, sc->q, f));
    double vs = 0;
    for (int i = 0; i < nv; i++) vs = fmax(vs, fabs(sc->v[i]));
    for (int k = 0; k < na; k++) {
        double un = 0;
        for (int i = 0; i < nv; i++) un += J[(size_t)k * d * nv + i] * vp[i];
        CHECK_MSG(un >= -1e-7 * vs, "%s: contact %d ends closing (u_n+ = %g)", sc->name, k, un);
    }
    double T0 = imp_contact_kinetic_energy(m, sc->v), T1 = imp_contact_kinetic_energy(m, vp);
    CHECK_MSG(T1 <= T0 * (1 + 1e-9), "%s: energy %.12g -> %.12g", sc->name, T0, T1);
    /* reverse pass */
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    double wv[IMP_CONTACT_MAX_NV], wl[IMP_CONTACT_MAX_ROWS];
    for (int i = 0; i < nv; i++) wv[i] = imp_rng_normal(&rng);
    for (int k = 0; k < na * d; k++) wl[k] = imp_rng_normal(&rng);
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    for (int k = 0; k < na; k++) e[k] = m->cand[sc->act[k]].e, mu[k] = m->cand[sc->act[k]].mu;
    static double Jb[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV], Mib[IMP_CONTACT_MAX_NV * IMP_CONTACT_MAX_NV];
    double vb[IMP_CONTACT_MAX_NV] = {0}, eb[IMP_MAX_CONTACTS] = {0}, mub[IMP_MAX_CONTACTS] = {0};
    memset(Jb, 0, sizeof Jb);
    memset(Mib, 0, sizeof Mib);
    CHECK_OK(imp_contact_impulse_backward(vb, Jb, Mib, eb, mub, wv, sc->check_lambda ? wl : NULL, &sol, sc->v, J, nv,
                                          imp_contact_minv_bodies, m, e, mu, g_work, g_iwork));
    double qb[IMP_CONTACT_MAX_NQ] = {0}, massb[IMP_MAX_BODIES] = {0}, inb[9 * IMP_MAX_BODIES] = {0};
    imp_contact_geom_grad gg[IMP_MAX_CONTACTS];
    memset(gg, 0, sizeof gg);
    for (int k = 0; k < na; k++)
        imp_contact_jacobian_backward(qb, &gg[k], 0.0, Jb + (size_t)k * d * nv, m, sc->q, &f[sc->act[k]], sc->act[k]);
    imp_contact_minv_bodies_backward(massb, inb, Mib, m);
    for (int i = 0; i < nv; i++) check_fd(sc, &sc->v[i], vb[i], wv, wl, "v-", i);
    for (int i = 0; i < m->nq; i++) check_fd(sc, &sc->q[i], qb[i], wv, wl, "q", i);
    for (int k = 0; k < na; k++) {
        imp_contact_candidate *c = &m->cand[sc->act[k]];
        if (c->e > 0) check_fd(sc, &c->e, eb[k], wv, wl, "e", k);
        check_fd(sc, &c->mu, mub[k], wv, wl, "mu", k);
        for (int a = 0; a < d; a++) check_fd(sc, &c->point_b[a], gg[k].point_b[a], wv, wl, "point_b", k * 10 + a);
        check_fd(sc, &c->radius_b, gg[k].radius_b, wv, wl, "radius_b", k);
    }
    for (int b = 0; b < m->n_bodies; b++) {
        check_fd(sc, &m->bodies[b].mass, massb[b], wv, wl, "mass", b);
        if (m->bodies[b].kind == IMP_BODY_PLANAR) check_fd(sc, &m->bodies[b].inertia[0], inb[9 * b], wv, wl, "I", b);
        if (m->bodies[b].kind == IMP_BODY_SPATIAL)
            for (int p = 0; p < 9; p += 4) check_fd(sc, &m->bodies[b].inertia[p], inb[9 * b + p], wv, wl, "I", b);
    }
}

static void scen_init(scenario *sc, const char *name, int dim)
{
    memset(sc, 0, sizeof *sc);
    sc->name = name;
    model_start(&sc->m, dim);
    for (int k = 0; k < IMP_MAX_CONTACTS; k++) sc->branches[k] = -1;
    sc->check_lambda = 1;
}

static void scen_all_active(scenario *sc)
{
    CHECK_OK(imp_contact_model_init(&sc->m));
    sc->na = sc->m.n_candidates;
    for (int k = 0; k < sc->na; k++) sc->act[k] = k;
}

/* A planar box (half sizes 0.3 x 0.2) corner on the floor, tilted, moving sideways. */
static void scen_planar_corner(scenario *sc, const char *name, double mu, double vx, int branch)
{
    scen_init(sc, name, 2);
    add_body(&sc->m, IMP_BODY_PLANAR, 1.5, 1.5 * (0.36 + 0.16) / 12, 0, 0);
    double corner[3] = {-0.3, -0.2, 0};
    add_plane(&sc->m, 0, corner, 0.0, 0, 1, 0, 0.0, 0.6, mu);
    scen_all_active(sc);
    double th = 0.3, c = cos(th), s = sin(th);
    sc->q[0] = 0.5, sc->q[1] = -(s * corner[0] + c * corner[1]), sc->q[2] = th;
    sc->v[0] = vx, sc->v[1] = -2.0, sc->v[2] = 0.7;
    sc->branches[0] = branch;
}

static void test_solver_branches(void)
{
    scenario sc;
    /* stick and slide of one rigid corner */
    scen_planar_corner(&sc, "planar corner, stick", 2.0, 0.3, IMP_CONTACT_STICK);
    check_scenario(&sc, 11);
    scen_planar_corner(&sc, "planar corner, slide", 0.1, 1.5, IMP_CONTACT_SLIDE);
    check_scenario(&sc, 12);
    scen_planar_corner(&sc, "planar corner, slide back", 0.1, -1.5, IMP_CONTACT_SLIDE);
    check_scenario(&sc, 13);

    /* a ball in a corner touching floor and wall (2-D point, singular A) */
    scen_init(&sc, "ball in a corner", 2);
    add_body(&sc.m, IMP_BODY_POINT, 0.8, 0, 0, 0);
    add_plane(&sc.m, 0, NULL, 0.1, 0, 1, 0, 0, 0.7, 0.3);
    add_plane(&sc.m, 0, NULL, 0.1, 1, 0, 0, 0, 0.4, 0.5);
    scen_all_active(&sc);
    sc.q[0] = 0.1, sc.q[1] = 0.1, sc.v[0] = -1.0, sc.v[1] = -2.0;
    sc.check_lambda = 0;
    check_scenario(&sc, 14);

    /* spatial ball (sphere on a rigid body, spinning) in a 3-D corner: floor and wall, stick and slide */
    scen_init(&sc, "3-D spinning ball in a corner", 3);
    add_body(&sc.m, IMP_BODY_SPATIAL, 0.8, 0.01, 0.012, 0.011);
    add_plane(&sc.m, 0, NULL, 0.25, 0, 0, 1, 0, 0.7, 0.9);
    add_plane(&sc.m, 0, NULL, 0.25, 1, 0, 0, 0, 0.4, 0.05);
    scen_all_active(&sc);
    sc.q[0] = 0.25, sc.q[1] = 0.3, sc.q[2] = 0.25, sc.q[3] = 1;
    double ax[3] = {0.3, -0.5, 0.2};
    double an = 0.4, axn = sqrt(imp_dot3_test(ax, ax));
    sc.q[3] = cos(an / 2);
    for (int i = 0; i < 3; i++) sc.q[4 + i] = sin(an / 2) * ax[i] / axn;
    sc.v[0] = -1.0, sc.v[1] = 0.4, sc.v[2] = -2.0, sc.v[3] = 3.0, sc.v[4] = -2.0, sc.v[5] = 1.0;
    sc.branches[0] = IMP_CONTACT_STICK, sc.branches[1] = IMP_CONTACT_SLIDE;
    check_scenario(&sc, 15);

    /* two spheres colliding while one rests on the floor (3-D point masses); the floor contact
       separates when the blow comes from below */
    scen_init(&sc, "two spheres and the floor", 3);
    add_body(&sc.m, IMP_BODY_POINT, 1.0, 0, 0, 0);
    add_body(&sc.m, IMP_BODY_POINT, 2.0, 0, 0, 0);
    add_plane(&sc.m, 1, NULL, 0.2, 0, 0, 1, 0, 0.5, 0.4);
    add_spheres(&sc.m, 0, NULL, 0.1, 1, NULL, 0.2, 0.9, 0.2);
    scen_all_active(&sc);
    /* body 1 on the floor at the origin, body 0 hitting it from above and the side */
    sc.q[3] = 0, sc.q[4] = 0, sc.q[5] = 0.2;
    sc.q[0] = -0.2, sc.q[1] = 0.05, sc.q[2] = 0.2 + sqrt(0.09 - 0.04 - 0.0025);
    sc.v[0] = 2.0, sc.v[1] = 0.3, sc.v[2] = -3.0, sc.v[3] = 0.1, sc.v[4] = -0.2, sc.v[5] = -0.05;
    sc.branches[0] = -1, sc.branches[1] = -1;
    check_scenario(&sc, 16);
    int act_branch[2];
    {
        double vp[IMP_CONTACT_MAX_NV];
        imp_contact_solution sol;
        CHECK_OK(impulse(&sc.m, sc.q, sc.v, sc.act, sc.na, vp, &sol, NULL));
        act_branch[0] = sol.branch[0], act_branch[1] = sol.branch[1];
        CHECK(act_branch[0] != IMP_CONTACT_SEPARATE && act_branch[1] != IMP_CONTACT_SEPARATE);
    }
    /* from below: the floor contact separates */
    sc.name = "two spheres, floor separates";
    sc.q[2] = 0.2 - sqrt(0.09 - 0.04 - 0.0025) + 0.2, sc.q[5] = 0.2;
    sc.q[2] = 0.2 + 0.1; /* beside-below: centre height of body 0 */
    sc.q[0] = -sqrt(0.09 - 0.0025 - 0.01), sc.q[1] = 0.05;
    sc.q[2] = 0.2 - 0.1;
    sc.v[0] = 3.0, sc.v[1] = 0.0, sc.v[2] = 2.0, sc.v[3] = 0, sc.v[4] = 0, sc.v[5] = -0.05;
    sc.branches[0] = IMP_CONTACT_SEPARATE, sc.branches[1] = -1;
    check_scenario(&sc, 17);
}


/* ---- physics ---- */

static void test_frictionless_point(void)
{
    imp_contact_model m;
    ball_box_model(&m, 0.8, 0.0);
    double q[2] = {0.5, 0.1}, v[2] = {1.0, -2.0}, vp[2];
    int act[1] = {0};
    imp_contact_solution sol;
    CHECK_OK(impulse(&m, q, v, act, 1, vp, &sol, NULL));
    CHECK_CLOSE(vp[1], 0.8 * 2.0, 1e-8, 0); /* the default regularization: 1e-9 relative */
    CHECK_CLOSE(vp[0], 1.0, 1e-12, 1e-12);
    /* without regularization exactly -e u- */
    imp_contact_frame f[3];
    double J[2 * 2], e = 0.8, mu = 0.0;
    CHECK_OK(imp_contact_detect(&m, q, f));
    imp_contact_jacobian(&m, q, &f[0], 0, J);
    imp_contact_solve_opts o;
    imp_contact_solve_opts_default(&o);
    o.regularization = 0;
    CHECK_OK(imp_contact_impulse_forward(vp, &sol, v, J, 1, 2, 2, imp_contact_minv_bodies, &m, &e, &mu, &o, g_work,
                                         g_iwork));
    CHECK(vp[1] == 0.8 * 2.0 || fabs(vp[1] - 1.6) <= 4e-16);
    CHECK_CLOSE(vp[0], 1.0, 0, 1e-15);
    /* the minimal case: a floor bounce with vx = 1 and two walls far away keeps vx */
    int n = imp_contact_active_set(&m, q, f, v, NULL, act);
    CHECK(n == 1);
}

/* A spatial box (half sizes 0.2, 0.15, 0.1) and its eight corners against the floor z = 0. */
static void box_model(imp_contact_model *m, double e, double mu)
{
    model_start(m, 3);
    double a = 0.2, b = 0.15, c = 0.1, mass = 1.2;
    add_body(m, IMP_BODY_SPATIAL, mass, mass * (4 * b * b + 4 * c * c) / 12, mass * (4 * a * a + 4 * c * c) / 12,
             mass * (4 * a * a + 4 * b * b) / 12);
    for (int k = 0; k < 8; k++) {
        double p[3] = {k & 1 ? a : -a, k & 2 ? b : -b, k & 4 ? c : -c};
        add_plane(m, 0, p, 0.0, 0, 0, 1, 0, e, mu);
    }
    CHECK_OK(imp_contact_model_init(m));
}

static void test_box_landing(void)
{
    imp_contact_model m;
    box_model(&m, 0.5, 0.3);
    double q[7] = {0, 0, 0.1, 1, 0, 0, 0}, v[6] = {0, 0, -2.0, 0, 0, 0}, vp[6];
    imp_contact_frame f[8];
    int act[8];
    CHECK_OK(imp_contact_detect(&m, q, f));
    int n = imp_contact_active_set(&m, q, f, v, NULL, act);
    CHECK(n == 4);
    imp_contact_solution sol;
    CHECK_OK(impulse(&m, q, v, act, n, vp, &sol, NULL));
    CHECK(!sol.fallback);
    for (int k = 0; k < 4; k++) {
        CHECK_CLOSE(sol.lambda[3 * k], sol.lambda[0], 1e-6, 0);
        CHECK_CLOSE(sol.lambda[3 * k], 1.2 * 1.5 * 2.0 / 4, 1e-6, 0);
        CHECK(fabs(sol.lambda[3 * k + 1]) < 1e-6 * sol.lambda[3 * k] && fabs(sol.lambda[3 * k + 2]) < 1e-6 * sol.lambda[3 * k]);
    }
    CHECK_CLOSE(vp[2], 1.0, 1e-8, 0);
    for (int i = 3; i < 6; i++) CHECK(fabs(vp[i]) < 1e-8);

    /* tilted and sliding onto four corners: the reverse pass on v+ (A singular) */
    scenario sc;
    scen_init(&sc, "box on four corners", 3);
    box_model(&sc.m, 0.5, 0.3);
    sc.na = 4;
    for (int k = 0; k < 4; k++) sc.act[k] = k;
    double ax[3] = {0.2, -0.1, 0.05}, an = 0.05, axn = sqrt(imp_dot3_test(ax, ax));
    sc.q[3] = cos(an / 2);
    for (int i = 0; i < 3; i++) sc.q[4 + i] = sin(an / 2) * ax[i] / axn;
    sc.q[2] = 0.1;
    sc.v[0] = 0.8, sc.v[1] = -0.3, sc.v[2] = -2.0, sc.v[3] = 0.5, sc.v[4] = -0.4, sc.v[5] = 1.5;
    sc.check_lambda = 0;
    /* distinct e per corner: with equal e the restitution targets of the four corners are
       consistent (a rigid motion meets all four), the branch boundary where a corner starts
       to separate */
    for (int k = 0; k < 4; k++) sc.m.cand[k].e = 0.3 + 0.1 * k;
    check_scenario(&sc, 21);
}

/* 1 when the scene jams: no bounded impulses exist (frictional self-locking), so the
 * regularized impulses grow like 1/eps (docs/derivations/contact.md sec 4). */
static int scene_jams(const imp_contact_model *m, const double *q, const double *v, const int *act, int na)
{
    imp_contact_frame f[IMP_MAX_CONTACTS];
    static double J[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV];
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS], vp[IMP_CONTACT_MAX_NV], big[2];
    if (imp_contact_detect(m, q, f)) return 0;
    imp_contact_assemble_jacobian(m, q, f, act, na, J);
    for (int k = 0; k < na; k++) e[k] = m->cand[act[k]].e, mu[k] = m->cand[act[k]].mu;
    for (int t = 0; t < 2; t++) {
        imp_contact_solve_opts o;
        imp_contact_solve_opts_default(&o);
        o.regularization = t ? 1e-5 : 1e-3;
        imp_contact_solution sol;
        if (imp_contact_impulse_forward(vp, &sol, v, J, na, m->dim, m->nv, imp_contact_minv_bodies, (void *)m, e, mu,
                                        &o, g_work, g_iwork))
            return 0;
        big[t] = 0;
        for (int k = 0; k < na * m->dim; k++) big[t] = fmax(big[t], fabs(sol.lambda[k]));
    }
    return big[1] > 30 * big[0];
}

/* Random scenes of points and rigid bodies against the walls of a box and each other:
 * no active contact ends closing, and energy never increases where the law guarantees it
 * (docs/derivations/contact.md sec 5): frictionless contacts (any e), inelastic ones (e = 0,
 * any mu), a single contact of a point mass (any e, mu). CONTACT_MANY=1: 20000 scenes.
 * CONTACT_ANY_LAW=1: e and mu drawn together on several contacts, where the law does not
 * guarantee it: the scenes that gain energy and those that fail are counted and printed,
 * not failed. */
static void test_random_physics(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 99);
    int fails_close = 0, fails_energy = 0, runs = 0, jams = 0, fails = 0;
    int trials = getenv("CONTACT_MANY") ? 20000 : 600;
    for (int trial = 0; trial < trials; trial++) {
        imp_contact_model m;
        int dim = 2 + (trial & 1), mode = (trial / 2) % 3; /* 0 frictionless, 1 inelastic, 2 one point contact */
        int any_law = getenv("CONTACT_ANY_LAW") != NULL;
        if (any_law) mode = 3;
        int rigid = mode != 2 && imp_rng_uniform(&rng) < 0.5;
        double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV], vp[IMP_CONTACT_MAX_NV];
        model_start(&m, dim);
        int nb = mode == 2 ? 1 : 1 + (int)imp_rng_below(&rng, 3);
        for (int b = 0; b < nb; b++) {
            int kind = rigid ? (dim == 2 ? IMP_BODY_PLANAR : IMP_BODY_SPATIAL) : IMP_BODY_POINT;
            add_body(&m, kind, imp_rng_uniform_range(&rng, 0.5, 2), imp_rng_uniform_range(&rng, 0.02, 0.2),
                     imp_rng_uniform_range(&rng, 0.02, 0.2), imp_rng_uniform_range(&rng, 0.02, 0.2));
        }
        int nc = mode == 2 ? 1 : 1 + (int)imp_rng_below(&rng, 6);
        for (int c = 0; c < nc; c++) {
            double e = mode == 1 ? 0.0 : imp_rng_uniform(&rng), mu = mode == 0 ? 0.0 : imp_rng_uniform_range(&rng, 0, 0.9);
            double p[3] = {0, 0, 0};
            for (int i = 0; i < dim; i++) p[i] = rigid ? imp_rng_uniform_range(&rng, -0.3, 0.3) : 0.0;
            int b = (int)imp_rng_below(&rng, (size_t)nb);
            if (nb > 1 && imp_rng_uniform(&rng) < 0.3) {
                int a = (b + 1 + (int)imp_rng_below(&rng, (size_t)nb - 1)) % nb;
                add_spheres(&m, a, p, 0.1, b, NULL, 0.1, e, mu);
            } else {
                /* the walls of a box: axis-aligned normals */
                double nrm[3] = {0, 0, 0};
                nrm[imp_rng_below(&rng, (size_t)dim)] = imp_rng_uniform(&rng) < 0.5 ? -1.0 : 1.0;
                add_plane(&m, b, p, imp_rng_uniform_range(&rng, 0, 0.2), nrm[0], nrm[1], nrm[2], 0.0, e, mu);
            }
        }
        if (imp_contact_model_init(&m)) continue;
        for (int i = 0; i < m.nq; i++) q[i] = imp_rng_uniform_range(&rng, -1, 1);
        for (int i = 0; i < m.nv; i++) v[i] = imp_rng_uniform_range(&rng, -2, 2);
        for (int b = 0; b < nb; b++)
            if (m.bodies[b].kind == IMP_BODY_SPATIAL) normalize_quat(q + m.q_offset[b] + 3);
        /* every candidate that closes is active, wherever it is */
        imp_contact_frame f[IMP_MAX_CONTACTS];
        int act[IMP_MAX_CONTACTS], na = 0;
        if (imp_contact_detect(&m, q, f)) continue;
        for (int c = 0; c < m.n_candidates; c++)
            if (imp_contact_gap_rate(&m, q, &f[c], c, v) < 0) act[na++] = c;
        if (!na) continue;
        imp_contact_solution sol;
        static double J[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV];
        int st = impulse(&m, q, v, act, na, vp, &sol, J);
        if (st) {
            /* only a jam may fail, and it must say so */
            int jam = st == IMP_ERR_NUMERIC && strstr(imp_last_error(), "jamming") && scene_jams(&m, q, v, act, na);
            if (!any_law) CHECK_MSG(jam, "trial %d: %s", trial, imp_last_error());
            jams += jam;
            fails += !jam;
            continue;
        }
        runs++;
        double vs = 0;
        for (int i = 0; i < m.nv; i++) vs = fmax(vs, fabs(v[i]));
        for (int k = 0; k < na; k++) {
            double un = 0;
            for (int i = 0; i < m.nv; i++) un += J[(size_t)k * dim * m.nv + i] * vp[i];
            /* the law holds for A + eps I: the physical u+_n may lag by eps lambda_n (eq 7) */
            if (un < -1e-7 * vs - 1.000001 * sol.eps * sol.lambda[k * dim]) fails_close++;
        }
        double T0 = imp_contact_kinetic_energy(&m, v), T1 = imp_contact_kinetic_energy(&m, vp);
        if (T1 > T0 * (1 + 1e-9) + 1e-12) fails_energy++;
    }
    if (getenv("CONTACT_MANY") || getenv("CONTACT_ANY_LAW"))
        printf("random scenes: %d solved, %d jams, %d failures, %d gain energy\n", runs, jams, fails, fails_energy);
    if (getenv("CONTACT_ANY_LAW")) fails_energy = 0;
    CHECK_MSG(runs > trials / 2, "only %d random scenes ran", runs);
    CHECK_MSG(jams * 100 <= runs, "%d jams in %d scenes", jams, runs);
    CHECK_MSG(fails_close == 0, "%d contacts end closing", fails_close);
    CHECK_MSG(fails_energy == 0, "%d scenes gain energy", fails_energy);
}

static void test_solve_errors(void)
{
    double A[4] = {1, 0, 0, 1}, u[2] = {-1, 0}, e = 0.5, mu = 0.2;
    imp_contact_solution sol;
    double bad = -0.1;
    CHECK_FAILS(imp_contact_solve_forward(&sol, A, u, &bad, &mu, 1, 2, NULL, g_work, g_iwork), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "e[0]") != NULL);
    CHECK_FAILS(imp_contact_solve_forward(&sol, A, u, &e, &bad, 1, 2, NULL, g_work, g_iwork), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "mu[0]") != NULL);
    u[1] = NAN;
    CHECK_FAILS(imp_contact_solve_forward(&sol, A, u, &e, &mu, 1, 2, NULL, g_work, g_iwork), IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "u_minus") != NULL);
    u[1] = 0;
    A[0] = 0;
    CHECK_FAILS(imp_contact_solve_forward(&sol, A, u, &e, &mu, 1, 2, NULL, g_work, g_iwork), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "A[0][0]") != NULL && strstr(imp_last_error(), "along its normal") != NULL);
    A[0] = 1;
    /* a tangent row that cannot move (a bob at the bottom of its swing hit
     * head-on, issue #25): no friction impulse, the normal law exact up to
     * eps; without regularization it is refused, naming the row */
    A[3] = 0;
    CHECK_OK(imp_contact_solve_forward(&sol, A, u, &e, &mu, 1, 2, NULL, g_work, g_iwork));
    CHECK_MSG(fabs(sol.lambda[0] - 1.5) < 1e-8 && fabs(sol.lambda[1]) < 1e-12, "lambda (%g, %g)", sol.lambda[0],
              sol.lambda[1]);
    imp_contact_solve_opts o0;
    imp_contact_solve_opts_default(&o0);
    o0.regularization = 0;
    CHECK_FAILS(imp_contact_solve_forward(&sol, A, u, &e, &mu, 1, 2, &o0, g_work, g_iwork), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "A[1][1]") != NULL && strstr(imp_last_error(), "tangent") != NULL);
    A[3] = 1;
    CHECK_OK(imp_contact_solve_forward(&sol, A, u, &e, &mu, 1, 2, NULL, g_work, g_iwork));
    /* a start (lambda0): the same verified solution from a poor start and from the solution */
    imp_contact_solve_opts so;
    imp_contact_solve_opts_default(&so);
    double l0[2] = {5, -3};
    imp_contact_solution sw;
    so.lambda0 = l0;
    CHECK_OK(imp_contact_solve_forward(&sw, A, u, &e, &mu, 1, 2, &so, g_work, g_iwork));
    CHECK(fabs(sw.lambda[0] - sol.lambda[0]) < 1e-9 && fabs(sw.lambda[1] - sol.lambda[1]) < 1e-9);
    so.lambda0 = sol.lambda, so.max_sweeps = 0;
    CHECK_OK(imp_contact_solve_forward(&sw, A, u, &e, &mu, 1, 2, &so, g_work, g_iwork));
    CHECK(fabs(sw.lambda[0] - sol.lambda[0]) < 1e-12 && fabs(sw.lambda[1] - sol.lambda[1]) < 1e-12);
    l0[1] = NAN, so.lambda0 = l0;
    CHECK_FAILS(imp_contact_solve_forward(&sw, A, u, &e, &mu, 1, 2, &so, g_work, g_iwork), IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "lambda0") != NULL);
    CHECK_FAILS(imp_contact_solve_forward(&sol, A, u, &e, &mu, 1, 4, NULL, g_work, g_iwork), IMP_ERR_INVALID);
    /* no active contact: v+ = v- */
    imp_contact_model m;
    ball_box_model(&m, 0.5, 0.1);
    double v[2] = {1, -2}, vp[2] = {0, 0}, J[1] = {0};
    CHECK_OK(imp_contact_impulse_forward(vp, &sol, v, J, 0, 2, 2, imp_contact_minv_bodies, &m, &e, &mu, NULL, g_work,
                                         g_iwork));
    CHECK(vp[0] == 1 && vp[1] == -2 && sol.n == 0);
    double vb[2] = {0, 0}, wv[2] = {1, 1};
    CHECK_OK(imp_contact_impulse_backward(vb, NULL, NULL, NULL, NULL, wv, NULL, &sol, v, J, 2, imp_contact_minv_bodies,
                                          &m, &e, &mu, g_work, g_iwork));
    CHECK(vb[0] == 1 && vb[1] == 1);
}

/* ---- the equality laws (IMP_CONTACT_LAW_PAPER, _HALFSTEP): CD-Lagrange's ---- */

typedef struct law_case {
    const char *name;
    int law, n, dim;
    double A[81], u[9], ur[9], e[3], mu[3];
    double reg;
    int branches[3]; /* expected; -1: any */
} law_case;

static double law_beta(int law, double e, double un, double ur)
{
    if (law == IMP_CONTACT_LAW_NEWTON) return e * fmax(-ur, 0.0);
    return law == IMP_CONTACT_LAW_PAPER ? -e * ur : fmax(un - (1.0 + e) * ur, 0.0);
}

static double max_abs_test(const double *x, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

/* L = wl . lambda */
static double law_loss(law_case *c, const double *wl)
{
    imp_contact_solve_opts o;
    imp_contact_solve_opts_default(&o);
    o.regularization = c->reg;
    imp_contact_solution sol;
    if (imp_contact_solve_law_forward(&sol, c->A, c->u, c->ur, c->e, c->mu, c->n, c->dim, c->law, &o, g_work,
                                      g_iwork))
        return NAN;
    double L = 0;
    for (int k = 0; k < c->n * c->dim; k++) L += wl[k] * sol.lambda[k];
    return L;
}

static void law_fd(law_case *c, double *x, double analytic, const double *wl, const char *what, int idx)
{
    double x0 = *x, h = 1e-6 * fmax(1.0, fabs(x0));
    *x = x0 + h;
    double lp = law_loss(c, wl);
    *x = x0 - h;
    double lm = law_loss(c, wl);
    *x = x0;
    double nd = (lp - lm) / (2 * h);
    CHECK_MSG(fabs(analytic - nd) <= 2e-6 * (1 + fabs(nd)), "%s: d/d %s[%d]: analytic %.10g, numeric %.10g", c->name,
              what, idx, analytic, nd);
}

/* The law at the solution (the normal rows exactly, Coulomb on the tangent
 * rows where lambda_n > 0, none where lambda_n <= 0), the expected
 * branches, and the reverse pass in A, u-, u_ref, e and mu against central
 * differences. */
static void check_law_case(law_case *c, unsigned seed)
{
    int n = c->n, d = c->dim, R = n * d;
    imp_contact_solve_opts o;
    imp_contact_solve_opts_default(&o);
    o.regularization = c->reg;
    imp_contact_solution sol;
    CHECK_OK(imp_contact_solve_law_forward(&sol, c->A, c->u, c->ur, c->e, c->mu, n, d, c->law, &o, g_work, g_iwork));
    double tol = 1e-8 * (1 + max_abs_test(c->u, R));
    for (int i = 0; i < n; i++) {
        int r0 = i * d;
        double ln = sol.lambda[r0], lt = 0, ut = 0, beta = law_beta(c->law, c->e[i], c->u[r0], c->ur[r0]);
        for (int a = 1; a < d; a++) lt += sol.lambda[r0 + a] * sol.lambda[r0 + a], ut += sol.u_plus[r0 + a] * sol.u_plus[r0 + a];
        lt = sqrt(lt), ut = sqrt(ut);
        if (c->law == IMP_CONTACT_LAW_NEWTON) /* eq 8: 0 <= lambda_n _|_ u+_n - beta >= 0 */
            CHECK_MSG(ln >= -tol && sol.u_plus[r0] >= beta - tol && (ln <= tol || fabs(sol.u_plus[r0] - beta) <= tol),
                      "%s: contact %d: lambda_n %.12g, u+_n %.12g, beta %.12g", c->name, i, ln, sol.u_plus[r0], beta);
        else
            CHECK_MSG(fabs(sol.u_plus[r0] - beta) <= tol, "%s: contact %d: u+_n %.12g, law %.12g", c->name, i,
                      sol.u_plus[r0], beta);
        if (c->branches[i] >= 0)
            CHECK_MSG(sol.branch[i] == c->branches[i], "%s: contact %d: branch %d, expected %d", c->name, i,
                      sol.branch[i], c->branches[i]);
        if (d == 1) continue;
        if (ln <= 0.0 || c->mu[i] == 0.0)
            CHECK_MSG(lt <= tol, "%s: contact %d pulls (lambda_n %g) with friction %g", c->name, i, ln, lt);
        else if (ut <= tol)
            CHECK_MSG(lt <= c->mu[i] * ln + tol, "%s: contact %d sticks outside the cone", c->name, i);
        else
            CHECK_MSG(fabs(lt - c->mu[i] * ln) <= tol, "%s: contact %d slides inside the cone", c->name, i);
    }
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    double wl[IMP_CONTACT_MAX_ROWS], Ab[81] = {0}, ub[9] = {0}, urb[9] = {0}, eb[3] = {0},
                                                                      mb[3] = {0};
    for (int k = 0; k < R; k++) wl[k] = imp_rng_uniform_range(&rng, -1, 1);
    CHECK_OK(imp_contact_solve_law_backward(Ab, ub, urb, eb, mb, wl, &sol, c->A, c->u, c->ur, c->e, c->mu, g_work,
                                            g_iwork));
    for (int k = 0; k < R * R; k++) law_fd(c, &c->A[k], Ab[k], wl, "A", k);
    for (int k = 0; k < R; k++) law_fd(c, &c->u[k], ub[k], wl, "u_minus", k);
    for (int k = 0; k < R; k++) law_fd(c, &c->ur[k], urb[k], wl, "u_ref", k);
    for (int i = 0; i < n; i++) law_fd(c, &c->e[i], eb[i], wl, "e", i);
    for (int i = 0; i < n; i++)
        if (d > 1 && c->mu[i] > 0) law_fd(c, &c->mu[i], mb[i], wl, "mu", i);
    /* with u_ref NULL the reference is u-: its share goes to u_minus_bar */
    double ub2[9] = {0};
    CHECK_OK(imp_contact_solve_law_forward(&sol, c->A, c->u, NULL, c->e, c->mu, n, d, c->law, &o, g_work, g_iwork));
    CHECK_OK(imp_contact_solve_law_backward(NULL, ub2, NULL, NULL, NULL, wl, &sol, c->A, c->u, NULL, c->e, c->mu,
                                            g_work, g_iwork));
    double ur0[9];
    memcpy(ur0, c->ur, sizeof ur0);
    memcpy(c->ur, c->u, sizeof ur0);
    memset(ub, 0, sizeof ub), memset(urb, 0, sizeof urb);
    CHECK_OK(imp_contact_solve_law_forward(&sol, c->A, c->u, c->ur, c->e, c->mu, n, d, c->law, &o, g_work, g_iwork));
    CHECK_OK(imp_contact_solve_law_backward(NULL, ub, urb, NULL, NULL, wl, &sol, c->A, c->u, c->ur, c->e, c->mu,
                                            g_work, g_iwork));
    for (int k = 0; k < R; k++)
        CHECK_MSG(fabs(ub2[k] - ub[k] - urb[k]) <= 1e-12 * (1 + fabs(ub2[k])), "%s: u_ref NULL: u_minus_bar[%d]",
                  c->name, k);
    memcpy(c->ur, ur0, sizeof ur0);
}

/* A (R x R) = B B^T + 0.3 I from a seeded B. */
static void random_spd(double *A, int R, unsigned seed)
{
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    double B[81];
    for (int k = 0; k < R * R; k++) B[k] = imp_rng_uniform_range(&rng, -0.6, 0.6);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < R; j++) {
            double s = i == j ? 0.3 : 0.0;
            for (int k = 0; k < R; k++) s += B[i * R + k] * B[j * R + k];
            A[i * R + j] = s;
        }
}

static void law_case_init(law_case *c, const char *name, int law, int n, int dim, unsigned seed)
{
    memset(c, 0, sizeof *c);
    c->name = name, c->law = law, c->n = n, c->dim = dim;
    random_spd(c->A, n * dim, seed);
    for (int i = 0; i < 3; i++) c->e[i] = 0.3 + 0.2 * i, c->mu[i] = 0.4, c->branches[i] = -1;
}

static void test_solve_laws(void)
{
    law_case c;
    const int P = IMP_CONTACT_LAW_PAPER, H = IMP_CONTACT_LAW_HALFSTEP;
    /* frictionless rows (dim 1): pushing, pulling (the paper's law may pull), rest */
    law_case_init(&c, "paper, frictionless, pushing", P, 1, 1, 1);
    c.u[0] = -1.3, c.ur[0] = -1.0;
    check_law_case(&c, 1);
    law_case_init(&c, "paper, frictionless, pulling", P, 1, 1, 2);
    c.u[0] = 0.4, c.ur[0] = 0.5;
    check_law_case(&c, 2);
    law_case_init(&c, "halfstep, frictionless, bounce", H, 1, 1, 3);
    c.u[0] = 0.2, c.ur[0] = -1.0; /* u+ = u- - (1 + e) ur > 0 */
    check_law_case(&c, 3);
    law_case_init(&c, "halfstep, frictionless, rest", H, 1, 1, 4);
    c.u[0] = -2.0, c.ur[0] = -1.0; /* u- - (1 + e) ur < 0: u+ = 0 */
    check_law_case(&c, 4);
    /* one contact with a tangent (coupled through A): stick, slide both ways, pulling */
    law_case_init(&c, "paper, 2-D, stick", P, 1, 2, 5);
    c.u[0] = -1.2, c.u[1] = 0.1, c.ur[0] = -1.0, c.mu[0] = 2.0, c.branches[0] = IMP_CONTACT_STICK;
    check_law_case(&c, 5);
    law_case_init(&c, "paper, 2-D, slide", P, 1, 2, 6);
    c.u[0] = -1.2, c.u[1] = 2.0, c.ur[0] = -1.0, c.mu[0] = 0.2, c.branches[0] = IMP_CONTACT_SLIDE;
    check_law_case(&c, 6);
    law_case_init(&c, "halfstep, 2-D, slide back", H, 1, 2, 7);
    c.u[0] = -1.2, c.u[1] = -2.0, c.ur[0] = -1.0, c.mu[0] = 0.2, c.branches[0] = IMP_CONTACT_SLIDE;
    check_law_case(&c, 7);
    law_case_init(&c, "paper, 2-D, pulling", P, 1, 2, 8);
    c.u[0] = 0.6, c.u[1] = 1.0, c.ur[0] = 0.5, c.branches[0] = IMP_CONTACT_SEPARATE;
    check_law_case(&c, 8);
    /* several contacts at once */
    law_case_init(&c, "paper, 2-D, three contacts", P, 3, 2, 9);
    c.u[0] = -1.0, c.u[1] = 0.05, c.u[2] = -0.8, c.u[3] = 1.5, c.u[4] = 0.3, c.u[5] = 0.2;
    c.ur[0] = -0.9, c.ur[2] = -0.7, c.ur[4] = 0.4;
    c.mu[0] = 3.0, c.mu[1] = 0.1;
    check_law_case(&c, 9);
    law_case_init(&c, "halfstep, 3-D, two contacts", H, 2, 3, 10);
    c.u[0] = 0.1, c.u[1] = 0.3, c.u[2] = -0.2, c.u[3] = -0.5, c.u[4] = 1.0, c.u[5] = 0.7;
    c.ur[0] = -1.0, c.ur[3] = -0.9;
    c.mu[0] = 0.3, c.mu[1] = 0.05;
    check_law_case(&c, 10);
    law_case_init(&c, "paper, 3-D, stick, regularized", P, 1, 3, 11);
    c.u[0] = -1.0, c.u[1] = 0.05, c.u[2] = -0.02, c.ur[0] = -1.0, c.mu[0] = 2.0, c.reg = 1e-3;
    c.branches[0] = IMP_CONTACT_STICK;
    check_law_case(&c, 11);
    /* frictionless rows of several contacts (the general path), and Newton's law with a reference velocity */
    law_case_init(&c, "paper, frictionless, three contacts", P, 3, 1, 12);
    c.u[0] = -1.0, c.u[1] = 0.3, c.u[2] = -0.4, c.ur[0] = -0.8, c.ur[1] = 0.5, c.ur[2] = -0.6;
    check_law_case(&c, 12);
    law_case_init(&c, "halfstep, frictionless, two contacts", H, 2, 1, 13);
    c.u[0] = 0.3, c.u[1] = -2.0, c.ur[0] = -1.0, c.ur[1] = -1.0;
    check_law_case(&c, 13);
    law_case_init(&c, "newton with u_ref, frictionless, two contacts", IMP_CONTACT_LAW_NEWTON, 2, 1, 14);
    c.u[0] = -1.2, c.u[1] = 0.8, c.ur[0] = -1.0, c.ur[1] = -0.3;
    check_law_case(&c, 14);
    law_case_init(&c, "newton with u_ref, 2-D, one contact", IMP_CONTACT_LAW_NEWTON, 1, 2, 15);
    c.u[0] = -1.2, c.u[1] = 0.5, c.ur[0] = -1.0, c.mu[0] = 0.3;
    check_law_case(&c, 15);
    law_case_init(&c, "newton with u_ref, frictionless, one row", IMP_CONTACT_LAW_NEWTON, 1, 1, 16);
    c.u[0] = -1.2, c.ur[0] = -1.0;
    check_law_case(&c, 16);
    /* a law that is none */
    imp_contact_solution sol;
    CHECK_FAILS(imp_contact_solve_law_forward(&sol, c.A, c.u, NULL, c.e, c.mu, 1, 3, 7, NULL, g_work, g_iwork),
                IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "law") != NULL);
}

/* A point in a 2-D corner (floor: normal y, tangent x; wall: normal x,
 * tangent y) with friction 2 under every law: the floor's stick (u+_x = 0)
 * contradicts the wall's law (u+_x = beta_wall), A is singular, and without
 * regularization there is no bounded solution. The solver used to return
 * impulses of 4.75e10 with status OK and u+ missing the law by 0.475
 * (derivation sec 11); it must say the contacts jam. With the default
 * regularization the compliant limit holds the law for A + eps I. */
static void test_corner_jam(void)
{
    double A[16] = {1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1};
    double u[4] = {-1, -0.5, -0.5, -1}, e[2] = {0.95, 0.95}, mu[2] = {2, 2};
    const int laws[3] = {IMP_CONTACT_LAW_NEWTON, IMP_CONTACT_LAW_PAPER, IMP_CONTACT_LAW_HALFSTEP};
    for (int l = 0; l < 3; l++) {
        imp_contact_solve_opts o;
        imp_contact_solve_opts_default(&o);
        imp_contact_solution sol;
        o.regularization = 0.0;
        int st = imp_contact_solve_law_forward(&sol, A, u, u, e, mu, 2, 2, laws[l], &o, g_work, g_iwork);
        CHECK_MSG(st == IMP_ERR_NUMERIC, "law %d: corner at regularization 0: status %d, lambda %g, u+_n %g", laws[l],
                  st, sol.lambda[0], sol.u_plus[0]);
        CHECK(strstr(imp_last_error(), "jam") != NULL && strstr(imp_last_error(), "contact 0") != NULL);
        imp_clear_error();
        imp_contact_solve_opts_default(&o);
        CHECK_OK(imp_contact_solve_law_forward(&sol, A, u, u, e, mu, 2, 2, laws[l], &o, g_work, g_iwork));
        CHECK_CLOSE(sol.u_plus[0], 0.95, 0, 1e-6);
        CHECK_CLOSE(sol.u_plus[2], 0.475, 0, 1e-6);
    }
}

/* The per-body choice (imp_contact_choose): body 0 has one candidate out of
 * reach, body 1 three (levels 0, 1, 1), body 2 two out of reach, one shared
 * with body 1. */
static void test_choose(void)
{
    int a[5] = {IMP_WALL, IMP_WALL, IMP_WALL, 1, IMP_WALL}, b[5] = {0, 1, 1, 2, 2};
    unsigned char level[5] = {0, 0, 1, 0, 0}, chosen[5];
    double phi[5] = {0.5, 0.01, 0.2, 0.3, 0.1};
    int nearest[3];
    /* levels: body 1 takes its level-1 candidate; ONLY gives body 0 its one; NEAREST gives body 2 its nearest */
    CHECK(imp_contact_choose(3, 5, a, b, level, phi, NULL, 0, chosen, nearest) == 1 && chosen[2]);
    CHECK(imp_contact_choose(3, 5, a, b, level, phi, NULL, IMP_CONTACT_CHOOSE_ONLY, chosen, NULL) == 2 && chosen[0] &&
          chosen[2]);
    CHECK(imp_contact_choose(3, 5, a, b, level, phi, NULL, IMP_CONTACT_CHOOSE_NEAREST, chosen, nearest) == 3 &&
          chosen[0] && chosen[2] && chosen[4] && !chosen[1] && !chosen[3]);
    CHECK(nearest[0] == 0 && nearest[1] == 1 && nearest[2] == 4);
    /* two candidates at the highest level both; a body mask leaves the others alone */
    level[3] = 1;
    unsigned char only1[3] = {0, 1, 0};
    CHECK(imp_contact_choose(3, 5, a, b, level, phi, only1, IMP_CONTACT_CHOOSE_NEAREST, chosen, NULL) == 2 &&
          chosen[2] && chosen[3]);
}

/* ---- detection on a trajectory geometry (single-node bodies, sec 1b) ---- */

/* Three disk-like bodies, q_k = (x, y, k theta): a tilted wall under body 0
 * (it slides), a linear body-body pair (1, 2), a sphere pair (0, 1) that
 * slides and a sphere pair (1, 2) that does not. */
static void pair_geometry(imp_contact_geometry *g)
{
    memset(g, 0, sizeof *g);
    g->n_bodies = 3, g->dim = 3, g->restitution = NAN, g->has_radii = 1, g->n_pairs = 4;
    for (int k = 0; k < 3; k++) g->mass[k] = 1.0 + 0.5 * k, g->radius[k] = 0.1 + 0.05 * k;
    g->pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {0.6, 0.8, 0}, .offset = -0.3,
                                     .tangent = {0.8, -0.6, sqrt(2.0)}, .kind = IMP_PAIR_PLANE};
    g->pairs[1] = (imp_contact_pair){.body_i = 1, .body_j = 2, .normal = {1, 0, 0}, .offset = 0.2, .kind = IMP_PAIR_PLANE};
    g->pairs[2] = (imp_contact_pair){.body_i = 0, .body_j = 1, .tangent = {0, 0, sqrt(2.0)}, .kind = IMP_PAIR_SPHERE};
    g->pairs[3] = (imp_contact_pair){.body_i = 1, .body_j = 2, .kind = IMP_PAIR_SPHERE};
    CHECK_OK(imp_contact_geometry_check(g));
}

/* The angle of pair p's normal in the swept geometry. */
static double swept_angle(const imp_contact_geometry *g, int p, const double *q, const double *w, double h)
{
    imp_contact_geometry buf;
    const imp_contact_geometry *gs = imp_contact_geometry_swept(g, q, w, h, &buf);
    return atan2(gs->pairs[p].normal[1], gs->pairs[p].normal[0]);
}

static void test_pair_detection(void)
{
    imp_contact_geometry g;
    pair_geometry(&g);
    const int D = 9;
    double q[9] = {0.1, 0.2, 0.3, 0.45, 0.33, -0.2, 0.9, 0.4, 0.5};
    double v[9] = {0.7, -0.4, 0.2, -0.9, 0.1, 0.3, 0.2, -0.6, -0.1};

    /* a plane's gap is one expression: imp_contact_detect's phi of the
     * same wall (a point body) equals imp_contact_gap exactly */
    {
        imp_contact_model m;
        memset(&m, 0, sizeof m);
        m.dim = 2, m.gap_tol = 1e-9;
        add_body(&m, IMP_BODY_POINT, 1.0, 0, 0, 0);
        add_plane(&m, 0, NULL, 0.0, 0.6, 0.8, 0.0, -0.3, 0.5, 0.0);
        CHECK_OK(imp_contact_model_init(&m));
        imp_contact_geometry g2 = g;
        g2.dim = 2, g2.n_bodies = 1, g2.n_pairs = 1, g2.has_radii = 0;
        g2.pairs[0].tangent[2] = 0.0;
        memcpy(g2.pairs[0].normal, m.cand[0].normal, 2 * sizeof(double));
        imp_contact_frame f;
        for (int t = 0; t < 20; t++) {
            double x[2] = {0.37 * t - 3.1, 0.11 - 0.23 * t};
            CHECK_OK(imp_contact_detect(&m, x, &f));
            CHECK_MSG(f.phi == imp_contact_gap(&g2, 0, x), "plane gap %.17g (detect) vs %.17g (pair)", f.phi,
                      imp_contact_gap(&g2, 0, x));
        }
    }

    /* gap rows by finite differences (the sphere pairs' true gaps too), and
     * each row's transpose against its velocity */
    imp_contact_geometry gl;
    imp_contact_geometry_at(&g, q, &gl);
    for (int p = 0; p < g.n_pairs; p++) {
        double qb[9] = {0}, num[9];
        imp_contact_gap_backward(&g, p, q, 1.0, qb);
        for (int i = 0; i < D; i++) {
            double qp[9], qm[9];
            memcpy(qp, q, sizeof qp), memcpy(qm, q, sizeof qm);
            qp[i] += FD_H, qm[i] -= FD_H;
            num[i] = (imp_contact_gap(&g, p, qp) - imp_contact_gap(&g, p, qm)) / (2 * FD_H);
        }
        double err = test_grad_rel_err(qb, num, D, 1e-8);
        CHECK_MSG(err < 1e-8, "pair %d: gap row rel err %.3g", p, err);
        for (int r = 0; r < 2; r++) {
            double vb[9] = {0}, s = 0.0;
            imp_contact_row_backward(&gl, p, r, 1.0, vb);
            for (int i = 0; i < D; i++) s += vb[i] * v[i];
            CHECK_CLOSE(s, imp_contact_row_velocity(&gl, p, r, v), 1e-14, 1e-14);
        }
        CHECK(imp_contact_slip_velocity(&gl, p, v) == imp_contact_row_velocity(&gl, p, 1, v));
    }

    /* the first closing root of c + b s + a s^2 within tmax: linear, a
     * parabola that meets twice (the first, closing), one that turns back
     * before meeting, a root past tmax */
    CHECK_CLOSE(imp_contact_first_root(0.0, -2.0, 1.0, 1.0), 0.5, 1e-15, 0);
    CHECK(imp_contact_first_root(0.0, 2.0, 1.0, 1.0) == 2.0);
    CHECK_CLOSE(imp_contact_first_root(1.0, -3.0, 2.0, 5.0), 1.0, 1e-15, 0); /* roots 1 (closing) and 2 (opening) */
    CHECK(imp_contact_first_root(1.0, -1.0, 2.0, 5.0) == 6.0);               /* no real root */
    CHECK(imp_contact_first_root(-1.0, 1.0, 2.0, 1.5) == 2.5);               /* closing root 2, past tmax */
    CHECK_CLOSE(imp_contact_first_root(-1.0, 1.0, 2.0, 3.0), 2.0, 1e-15, 0);

    /* time of impact on the tilted wall under a constant acceleration:
     * inside the step, its gradient through the gap's row matches finite
     * differences in q, v and a0; clamps at 0 (inside) and h (not reached) */
    {
        double h = 0.3, a0[9] = {0, -9.81, 0, 0, -9.81, 0, 0, -9.81, 0};
        double qe[9], ve[9];
        memcpy(qe, q, sizeof qe), memcpy(ve, v, sizeof ve);
        qe[0] = 0.2, qe[1] = -0.12, ve[0] = -0.5, ve[1] = -1.0; /* gap 0.324, closing */
        double dtau[3], tau = imp_contact_time_of_impact(&g, 0, qe, ve, a0, h, dtau);
        CHECK_MSG(tau > 0.0 && tau < h, "tau %g inside (0, %g)", tau, h);
        double qb[9] = {0}, vb[9] = {0}, ab[9] = {0};
        imp_contact_gap_backward(&g, 0, qe, dtau[0], qb);
        imp_contact_gap_backward(&g, 0, qe, dtau[1], vb);
        imp_contact_gap_backward(&g, 0, qe, 0.5 * dtau[2], ab);
        double *x[3] = {qe, ve, a0}, *an[3] = {qb, vb, ab};
        for (int k = 0; k < 3; k++) {
            double num[9], dd[3];
            for (int i = 0; i < D; i++) {
                double s0 = x[k][i];
                x[k][i] = s0 + FD_H;
                double tp = imp_contact_time_of_impact(&g, 0, qe, ve, a0, h, dd);
                x[k][i] = s0 - FD_H;
                double tm = imp_contact_time_of_impact(&g, 0, qe, ve, a0, h, dd);
                x[k][i] = s0;
                num[i] = (tp - tm) / (2 * FD_H);
            }
            double err = test_grad_rel_err(an[k], num, D, 1e-8);
            CHECK_MSG(err < 1e-7, "time of impact: input %d rel err %.3g", k, err);
        }
        double q_in[9];
        memcpy(q_in, qe, sizeof q_in), q_in[1] = -1.0; /* inside the wall */
        CHECK(imp_contact_time_of_impact(&g, 0, q_in, ve, a0, h, dtau) == 0.0 && dtau[0] == 0.0 && dtau[1] == 0.0);
        ve[0] = 0.5, ve[1] = 1.0; /* moving away, not back within h */
        CHECK(imp_contact_time_of_impact(&g, 0, qe, ve, a0, h, dtau) == h && dtau[0] == 0.0 && dtau[2] == 0.0);
    }

    /* the sphere pairs swept over h: the normal at the contact (its angle's
     * gradient by finite differences in q and w), the linear gap at q + h w
     * negative exactly when the pair meets within h */
    {
        const double h = 0.2;
        /* pair 2 (bodies 0, 1: radii 0.1, 0.15): meets inside, overlaps at q, does not meet */
        double qs[3][9] = {{0, 0, 0, 0.4, 0.1, 0, 2, 2, 0}, {0, 0, 0, 0.2, 0.1, 0, 2, 2, 0}, {0, 0, 0, 0.4, 0.1, 0, 2, 2, 0}};
        double ws[3][9] = {{0.3, 0.2, 0, -1.0, -0.4, 0, 0, 0, 0}, {0.3, 0.2, 0, -1.0, -0.4, 0, 0, 0, 0},
                           {0.3, 0.2, 0, 1.0, 0.4, 0, 0, 0, 0}};
        for (int c = 0; c < 3; c++) {
            double *qq = qs[c], *ww = ws[c];
            imp_contact_geometry buf;
            const imp_contact_geometry *gs = imp_contact_geometry_swept(&g, qq, ww, h, &buf);
            CHECK(gs == &buf && gs->linearized);
            double qh[9];
            for (int i = 0; i < D; i++) qh[i] = qq[i] + h * ww[i];
            double gap_h = imp_contact_gap(gs, 2, qh);
            CHECK_MSG((gap_h < 0.0) == (c < 2), "case %d: swept gap at q + h w %g", c, gap_h);
            double qb[9] = {0}, wb[9] = {0}, nq[9], nw[9];
            imp_contact_swept_normal_backward(gs, 2, qq, ww, h, 1.0, qb, wb);
            for (int i = 0; i < D; i++) {
                double s0 = qq[i];
                qq[i] = s0 + FD_H;
                double ap = swept_angle(&g, 2, qq, ww, h);
                qq[i] = s0 - FD_H;
                double am = swept_angle(&g, 2, qq, ww, h);
                qq[i] = s0;
                nq[i] = (ap - am) / (2 * FD_H);
                s0 = ww[i];
                ww[i] = s0 + FD_H;
                ap = swept_angle(&g, 2, qq, ww, h);
                ww[i] = s0 - FD_H;
                am = swept_angle(&g, 2, qq, ww, h);
                ww[i] = s0;
                nw[i] = (ap - am) / (2 * FD_H);
            }
            double eq = test_grad_rel_err(qb, nq, D, 1e-8), ew = test_grad_rel_err(wb, nw, D, 1e-8);
            CHECK_MSG(eq < 1e-7 && ew < 1e-7, "case %d: swept normal angle rel err %.3g (q), %.3g (w)", c, eq, ew);
        }
        imp_contact_geometry planes = g, buf;
        planes.n_pairs = 2;
        CHECK(imp_contact_geometry_swept(&planes, q, v, h, &buf) == &planes); /* no sphere pair: g itself */
    }
}

int main(void)
{
    test_model_errors();
    test_detect_jacobians(2, 1);
    test_detect_jacobians(2, 2);
    test_detect_jacobians(3, 3);
    test_detect_jacobians(3, 4);
    test_minv(2, 5);
    test_minv(3, 6);
    test_compliance(2, 7);
    test_compliance(3, 8);
    test_active_and_labels();
    test_solver_branches();
    test_frictionless_point();
    test_box_landing();
    test_random_physics();
    test_solve_errors();
    test_solve_laws();
    test_corner_jam();
    test_choose();
    test_pair_detection();
    TEST_MAIN_END();
}
