/* The contact module (src/contact/): detection, assembly, solver and their
 * reverse passes, checked by finite differences, and the physics of the
 * impulses (issue #24). */
#include "impulse/contact.h"
#include "test.h"

#include <math.h>
#include <string.h>

static const double FD_H = 1e-6;

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
static void mixed_model(imp_contact_model *m, int dim, double *q, double *v, imp_rng *rng)
{
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
    imp_rng_seed(&rng, seed);
    imp_contact_model m;
    double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV];
    mixed_model(&m, dim, q, v, &rng);
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
    imp_rng_seed(&rng, seed);
    imp_contact_model m;
    double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV];
    mixed_model(&m, dim, q, v, &rng);
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
    imp_rng_seed(&rng, seed);
    imp_contact_model m;
    double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV];
    mixed_model(&m, dim, q, v, &rng);
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
    CHECK_OK(imp_contact_attribute_labels(&m, f, touch, lab));
    CHECK(lab[0] == 1 && lab[1] == 1 && lab[2] == 0);
    double qn[2] = {0.8, 0.15}; /* touching per the sensor, not penetrating: the nearest (the floor) */
    CHECK_OK(imp_contact_detect(&m, qn, f));
    CHECK_OK(imp_contact_attribute_labels(&m, f, touch, lab));
    CHECK(lab[0] == 1 && lab[1] == 0 && lab[2] == 0);
    touch[0] = 0;
    CHECK_OK(imp_contact_attribute_labels(&m, f, touch, lab));
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
    CHECK_FAILS(imp_contact_attribute_labels(&m2, f, t2, lab), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "body 1") != NULL);
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
    TEST_MAIN_END();
}
