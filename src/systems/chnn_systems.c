/* The benchmark systems of [F] with the reference parameters ([chnn]
 * section 1), their initial-state distributions and generalised
 * coordinates. */
#include "impulse/chnn_systems.h"
#include "impulse/constrained_contact.h"
#include "core/num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;
static const double G = 9.81;

/* numpy.random.seed(0); numpy.random.rand(16): the reference draws pendulum
 * masses and lengths as 0.6 + 0.8 u with these (ChainPendulum, m = l = None). */
static const double NP_SEED0_RAND[16] = {
    0.5488135039273248, 0.7151893663724195, 0.6027633760716439, 0.5448831829968969,
    0.4236547993389047, 0.6458941130666561, 0.4375872112626925, 0.8917730007820798,
    0.9636627605010293, 0.3834415188257777, 0.7917250380826646, 0.5288949197529045,
    0.5680445610939323, 0.925596638292661,  0.07103605819788694, 0.08712929970154071};

/* Gyroscope (gyro.obj): centre of mass 0.2217 above the pivot on the body
 * z axis; I = m lambda with lambda = 100 diag(Sigma) ([chnn] section 1). */
static const double GYRO_MASS = 0.1, GYRO_COM_Z = 0.2217;
static const double GYRO_I[3] = {0.02414, 0.02414, 0.00369};
static const double ROTOR_MASS = 0.1;
static const double ROTOR_I[3] = {2.99e-4, 9.91e-3, 2.11e-3};

/* Systems with contacts, after DiffCoSim (Zhong, Dey & Chakraborty 2021,
 * examples/CP3_ground_*.json, systems/chain_pendulum_with_contact.py,
 * systems/gyroscope_with_wall.py; facts only): the three-link chain's
 * masses, lengths and bob radii, the ground y = -1; the gyroscope's mass,
 * moments (I = m lambda), centre of mass 0.5 above the pivot, a rim of radius
 * 0.3 about the centre of mass, the wall y = -0.33. */
static const double CG_MASS[3] = {0.2, 0.13, 0.15}, CG_LEN[3] = {0.35, 0.4, 0.35},
                    CG_RADIUS[3] = {0.15, 0.08, 0.1};
static const double GW_MASS = 0.1, GW_COM_Z = 0.5, GW_LAMBDA[3] = {0.24, 0.24, 0.04}, GW_RIM = 0.3,
                    GW_WALL = -0.33;

/* colliding-pendulums (issue #25, a system with contacts between two
 * constrained bodies): a double pendulum from the origin (bobs 1, 2) and a
 * pendulum from (CP_ANCHOR, 0) (bob 3) in a vertical plane; bob 3's sphere
 * hits bob 2's (e 0.8, mu 0.1) and bob 1's (e 0.6, mu 0.2). */
static const double CP_MASS[3] = {0.3, 0.2, 0.25}, CP_LEN[3] = {0.5, 0.5, 0.8}, CP_RADIUS[3] = {0.1, 0.1, 0.12},
                    CP_ANCHOR = 0.6, CP_E[2] = {0.8, 0.6}, CP_MU[2] = {0.1, 0.2};

static double gyro_com_z(const imp_csys *s) { return s->kind == IMP_CSYS_GYRO_WALL ? GW_COM_Z : GYRO_COM_Z; }

const char *imp_chnn_system_names(void)
{
    return "pendulum-chain:N (N=1..8), coupled-pendulums:N (N=2..8), magnet-pendulum, gyroscope, rotor, "
           "chain-ground:3, chain-ground-elastic:3, gyroscope-wall, colliding-pendulums";
}

static int parse_count(const char *name, const char *prefix, int lo, int hi, int dflt, int *n)
{
    size_t len = strlen(prefix);
    if (strncmp(name, prefix, len) != 0) return 0;
    if (name[len] == '\0') { *n = dflt; return 1; }
    if (name[len] != ':') return 0;
    if (imp_num_parse_int(name + len + 1, "system", lo, hi, n)) return -1;
    return 1;
}

static int build_chain(imp_csys *s, int n)
{
    int st = imp_csys_init(s, "", 2);
    if (st) return st;
    snprintf(s->name, sizeof s->name, "pendulum-chain:%d", n);
    s->kind = IMP_CSYS_PENDULUM_CHAIN;
    /* masses are the first n draws and lengths the next n, both popped from
     * the end, so body 0 (top) gets draw n-1 and tether length draw 2n-1 */
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "bob%d", i + 1);
        double m = 0.6 + 0.8 * NP_SEED0_RAND[n - 1 - i];
        if ((st = imp_csys_add_body(s, name, m, 0, NULL, NULL))) return st;
        double l = 0.6 + 0.8 * NP_SEED0_RAND[2 * n - 1 - i];
        st = i == 0 ? imp_csys_add_tether(s, 0, NULL, l, 0) : imp_csys_add_link(s, i - 1, i, l, 0);
        if (st) return st;
    }
    if ((st = imp_csys_add_gravity(s, G, 1))) return st;
    s->dt = 0.03;
    s->n_gen = n;
    for (int i = 0; i < n; i++) s->gen_is_angle[i] = 1;
    return IMP_OK;
}

static int build_coupled(imp_csys *s, int n)
{
    int st = imp_csys_init(s, "", 3);
    if (st) return st;
    snprintf(s->name, sizeof s->name, "coupled-pendulums:%d", n);
    s->kind = IMP_CSYS_COUPLED;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "bob%d", i + 1);
        if ((st = imp_csys_add_body(s, name, 1.0, 0, NULL, NULL))) return st;
        /* Δ the code anchors at 0, v, 2v (the paper says v, 2v, 3v) */
        double anchor[3] = {(double)i, 0, 0};
        if ((st = imp_csys_add_tether(s, i, anchor, 1.0, 0))) return st;
    }
    if ((st = imp_csys_add_gravity(s, G, 2))) return st;
    for (int i = 0; i + 1 < n; i++)
        if ((st = imp_csys_add_spring(s, i, i + 1, NULL, 10.0, 1.0))) return st;
    s->dt = 0.05;
    s->n_gen = 2 * n;
    for (int i = 0; i < 2 * n; i++) s->gen_is_angle[i] = 1;
    return IMP_OK;
}

static int build_magnet(imp_csys *s)
{
    int st = imp_csys_init(s, "magnet-pendulum", 3);
    if (st) return st;
    s->kind = IMP_CSYS_MAGNET;
    if ((st = imp_csys_add_body(s, "bob", 3.0, 0, NULL, NULL))) return st;
    if ((st = imp_csys_add_tether(s, 0, NULL, 1.0, 0))) return st;
    if ((st = imp_csys_add_gravity(s, G, 2))) return st;
    /* two magnets at angles 0 and pi on a circle of radius 0.1, 1.05 l below
     * the pivot, dipoles q z-hat */
    for (int i = 0; i < 2; i++) {
        double pos[3] = {i ? -0.1 : 0.1, 0, -1.05}, mom[3] = {0, 0, 0.3};
        if ((st = imp_csys_add_magnet(s, 0, 0.3, pos, mom))) return st;
    }
    s->dt = 0.05;
    s->n_gen = 2;
    s->gen_is_angle[0] = s->gen_is_angle[1] = 1;
    return IMP_OK;
}

static int build_gyroscope(imp_csys *s)
{
    int st = imp_csys_init(s, "gyroscope", 3);
    if (st) return st;
    s->kind = IMP_CSYS_GYROSCOPE;
    if ((st = imp_csys_add_body(s, "gyro", GYRO_MASS, 3, GYRO_I, NULL))) return st;
    /* the body point c = -com is tied to the origin */
    double c[3] = {0, 0, -GYRO_COM_Z};
    if ((st = imp_csys_add_joint(s, 0, c, -1, NULL, NULL, 0))) return st;
    if ((st = imp_csys_add_gravity(s, G, 2))) return st;
    s->dt = 0.02;
    s->n_gen = 3;
    for (int i = 0; i < 3; i++) s->gen_is_angle[i] = 1;
    return IMP_OK;
}

static int build_rotor(imp_csys *s)
{
    int st = imp_csys_init(s, "rotor", 3);
    if (st) return st;
    s->kind = IMP_CSYS_ROTOR;
    if ((st = imp_csys_add_body(s, "rotor", ROTOR_MASS, 3, ROTOR_I, NULL))) return st;
    s->dt = 0.05;
    s->n_gen = 6;
    for (int i = 3; i < 6; i++) s->gen_is_angle[i] = 1;
    return IMP_OK;
}

static int build_chain_ground(imp_csys *s, int n, double e, double mu, const char *prefix)
{
    int st = imp_csys_init(s, "", 2), ground;
    if (st) return st;
    snprintf(s->name, sizeof s->name, "%s:%d", prefix, n);
    s->kind = IMP_CSYS_CHAIN_GROUND;
    double up[2] = {0, 1};
    if ((st = imp_csys_add_plane(s, "ground", up, -1.0, &ground))) return st;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "bob%d", i + 1);
        if ((st = imp_csys_add_body(s, name, CG_MASS[i], 0, NULL, NULL))) return st;
        st = i == 0 ? imp_csys_add_tether(s, 0, NULL, CG_LEN[0], 0) : imp_csys_add_link(s, i - 1, i, CG_LEN[i], 0);
        if (st || (st = imp_csys_add_contact(s, i, NULL, CG_RADIUS[i], ground, e, mu, 0))) return st;
    }
    if ((st = imp_csys_add_gravity(s, G, 1))) return st;
    s->dt = 0.01;
    s->n_gen = n;
    for (int i = 0; i < n; i++) s->gen_is_angle[i] = 1;
    return IMP_OK;
}

static int build_gyro_wall(imp_csys *s)
{
    int st = imp_csys_init(s, "gyroscope-wall", 3), wall;
    if (st) return st;
    s->kind = IMP_CSYS_GYRO_WALL;
    double I[3], c[3] = {0, 0, -GW_COM_Z}, ny[3] = {0, 1, 0}, axis[3] = {0, 0, 1};
    for (int i = 0; i < 3; i++) I[i] = GW_MASS * GW_LAMBDA[i];
    if ((st = imp_csys_add_body(s, "gyro", GW_MASS, 3, I, NULL))) return st;
    if ((st = imp_csys_add_joint(s, 0, c, -1, NULL, NULL, 0))) return st;
    if ((st = imp_csys_add_gravity(s, G, 2))) return st;
    if ((st = imp_csys_add_plane(s, "wall", ny, GW_WALL, &wall))) return st;
    if ((st = imp_csys_add_disk_contact(s, 0, NULL, axis, GW_RIM, wall, 0.8, 0.1, 0))) return st;
    s->dt = 0.02;
    s->n_gen = 3;
    for (int i = 0; i < 3; i++) s->gen_is_angle[i] = 1;
    return IMP_OK;
}

static int build_colliding_pendulums(imp_csys *s)
{
    int st = imp_csys_init(s, "colliding-pendulums", 2);
    if (st) return st;
    s->kind = IMP_CSYS_COLLIDING_PENDULUMS;
    const char *names[3] = {"bob1", "bob2", "bob3"};
    for (int i = 0; i < 3; i++)
        if ((st = imp_csys_add_body(s, names[i], CP_MASS[i], 0, NULL, NULL))) return st;
    double anchor[2] = {CP_ANCHOR, 0};
    if ((st = imp_csys_add_tether(s, 0, NULL, CP_LEN[0], 0)) || (st = imp_csys_add_link(s, 0, 1, CP_LEN[1], 0)) ||
        (st = imp_csys_add_tether(s, 2, anchor, CP_LEN[2], 0)))
        return st;
    if ((st = imp_csys_add_body_contact(s, 2, NULL, CP_RADIUS[2], 1, NULL, CP_RADIUS[1], CP_E[0], CP_MU[0], 0)) ||
        (st = imp_csys_add_body_contact(s, 2, NULL, CP_RADIUS[2], 0, NULL, CP_RADIUS[0], CP_E[1], CP_MU[1], 0)))
        return st;
    if ((st = imp_csys_add_gravity(s, G, 1))) return st;
    s->dt = 0.02;
    s->n_gen = 3;
    for (int i = 0; i < 3; i++) s->gen_is_angle[i] = 1;
    return IMP_OK;
}

int imp_chnn_system(imp_csys *s, const char *name)
{
    if (!s || !name) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    int n = 0, r, st;
    if ((r = parse_count(name, "pendulum-chain", 1, 8, 2, &n))) {
        if (r < 0) return imp_fail(IMP_ERR_INVALID, "system '%s': pendulum-chain:N needs N in 1..8", name);
        st = build_chain(s, n);
    } else if ((r = parse_count(name, "coupled-pendulums", 2, 8, 3, &n))) {
        if (r < 0) return imp_fail(IMP_ERR_INVALID, "system '%s': coupled-pendulums:N needs N in 2..8", name);
        st = build_coupled(s, n);
    } else if ((r = parse_count(name, "chain-ground-elastic", 3, 3, 3, &n))) {
        if (r < 0) return imp_fail(IMP_ERR_INVALID, "system '%s': chain-ground-elastic:N needs N = 3", name);
        st = build_chain_ground(s, n, 1.0, 0.0, "chain-ground-elastic");
    } else if ((r = parse_count(name, "chain-ground", 3, 3, 3, &n))) {
        if (r < 0) return imp_fail(IMP_ERR_INVALID, "system '%s': chain-ground:N needs N = 3", name);
        st = build_chain_ground(s, n, 0.0, 0.5, "chain-ground");
    } else if (strcmp(name, "gyroscope-wall") == 0) {
        st = build_gyro_wall(s);
    } else if (strcmp(name, "colliding-pendulums") == 0) {
        st = build_colliding_pendulums(s);
    } else if (strcmp(name, "magnet-pendulum") == 0) {
        st = build_magnet(s);
    } else if (strcmp(name, "gyroscope") == 0) {
        st = build_gyroscope(s);
    } else if (strcmp(name, "rotor") == 0) {
        st = build_rotor(s);
    } else {
        return imp_fail(IMP_ERR_NOT_FOUND, "system '%s': unknown (known: %s)", name,
                        imp_chnn_system_names());
    }
    if (st) return st;
    s->n_steps = 99; /* arange(0, T, dt): 100 states */
    return imp_csys_validate(s);
}

/* ---- rotations: ZXZ Euler angles, R = Rz(a) Rx(b) Rz(c) (scipy 'ZXZ') ---- */

static void euler_to_R(const double *e, double R[3][3])
{
    double ca = cos(e[0]), sa = sin(e[0]), cb = cos(e[1]), sb = sin(e[1]), cc = cos(e[2]),
           sc = sin(e[2]);
    R[0][0] = ca * cc - sa * cb * sc;
    R[0][1] = -ca * sc - sa * cb * cc;
    R[0][2] = sa * sb;
    R[1][0] = sa * cc + ca * cb * sc;
    R[1][1] = -sa * sc + ca * cb * cc;
    R[1][2] = -ca * sb;
    R[2][0] = sb * sc;
    R[2][1] = sb * cc;
    R[2][2] = cb;
}

static void R_to_euler(double R[3][3], double *e)
{
    double cb = R[2][2] > 1 ? 1 : (R[2][2] < -1 ? -1 : R[2][2]);
    e[1] = acos(cb);
    e[0] = atan2(R[0][2], -R[1][2]);
    e[2] = atan2(R[2][0], R[2][1]);
}

/* body angular velocity w = E(b, c) edot (biases eulerdot2omega) */
static void eulerdot_to_omega(const double *e, const double *ed, double *w)
{
    double sb = sin(e[1]), cb = cos(e[1]), sc = sin(e[2]), cc = cos(e[2]);
    w[0] = sb * sc * ed[0] + cc * ed[1];
    w[1] = sb * cc * ed[0] - sc * ed[1];
    w[2] = cb * ed[0] + ed[2];
}

static void omega_to_eulerdot(const double *e, const double *w, double *ed)
{
    double sb = sin(e[1]), cb = cos(e[1]), sc = sin(e[2]), cc = cos(e[2]);
    ed[0] = (w[0] * sc + w[1] * cc) / sb;
    ed[1] = w[0] * cc - w[1] * sc;
    ed[2] = w[2] - cb * ed[0];
}

/* Frame points of a rigid body: x_i = x0 + R e_i, v_i = v0 + R [w]x e_i. */
static void frame_from_euler(const double *com, const double *comdot, const double *e,
                             const double *ed, double *x, double *v)
{
    double R[3][3], w[3];
    euler_to_R(e, R);
    eulerdot_to_omega(e, ed, w);
    for (int k = 0; k < 3; k++) {
        x[k] = com[k];
        v[k] = comdot[k];
    }
    for (int i = 0; i < 3; i++) {
        double ei[3] = {0, 0, 0}, wxe[3];
        ei[i] = 1;
        wxe[0] = w[1] * ei[2] - w[2] * ei[1];
        wxe[1] = w[2] * ei[0] - w[0] * ei[2];
        wxe[2] = w[0] * ei[1] - w[1] * ei[0];
        for (int k = 0; k < 3; k++) {
            x[(1 + i) * 3 + k] = com[k] + R[k][i];
            v[(1 + i) * 3 + k] = comdot[k] + R[k][0] * wxe[0] + R[k][1] * wxe[1] + R[k][2] * wxe[2];
        }
    }
}

static void euler_from_frame(const double *x, const double *v, double *e, double *ed)
{
    double R[3][3], Rd[3][3], w[3];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            R[k][i] = x[(1 + i) * 3 + k] - x[k];
            Rd[k][i] = v[(1 + i) * 3 + k] - v[k];
        }
    /* Omega = R^T Rdot (skew), w = its axial vector */
    double O[3][3];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += R[k][a] * Rd[k][b];
            O[a][b] = acc;
        }
    w[0] = 0.5 * (O[2][1] - O[1][2]);
    w[1] = 0.5 * (O[0][2] - O[2][0]);
    w[2] = 0.5 * (O[1][0] - O[0][1]);
    R_to_euler(R, e);
    omega_to_eulerdot(e, w, ed);
}

/* ---- spherical angles of the coupled and magnet pendulums, in the
 * reference frame rotated 90 degrees about y ---- */
static void sph_to_cart(double phi, double th, double phid, double thd, double l, double *r,
                        double *rd)
{
    double sp = sin(phi), cp = cos(phi), st = sin(th), ct = cos(th);
    r[0] = -l * ct;
    r[1] = l * st * sp;
    r[2] = l * st * cp;
    rd[0] = l * st * thd;
    rd[1] = l * (ct * sp * thd + st * cp * phid);
    rd[2] = l * (ct * cp * thd - st * sp * phid);
}

static void cart_to_sph(const double *r, const double *rd, double *phi, double *th, double *phid,
                        double *thd)
{
    double x = r[2], y = r[1], z = -r[0], xd = rd[2], yd = rd[1], zd = -rd[0];
    double rz2 = x * x + y * y, rz = sqrt(rz2), rr2 = rz2 + z * z;
    *phi = atan2(y, x);
    *th = atan2(rz, z);
    *phid = (x * yd - y * xd) / rz2;
    *thd = ((xd * x * z + yd * y * z) / rz - rz * zd) / rr2;
}

static double tether_length(const imp_csys *s, int point, double *anchor)
{
    for (int c = 0; c < s->n_rows; c++) {
        const imp_crow *r = &s->rows[c];
        if (r->kind == IMP_CROW_DISTANCE && r->i == point && r->j < 0) {
            if (anchor) memcpy(anchor, r->anchor, 3 * sizeof(double));
            return r->length;
        }
    }
    return 1.0;
}

/* pendulum chain: row c is the tether (c = 0) or link c -> length l_c */
static double chain_length(const imp_csys *s, int i) { return s->rows[i].length; }

/* The point a chain's bob i hangs from: its tether's anchor (at rest), or
 * the previous bob already placed in x, v (a link; the running base). */
static void chain_base(const imp_csys *s, int i, const double *x, const double *v, double *px, double *py,
                       double *vx, double *vy)
{
    const imp_crow *r = &s->rows[i];
    if (r->j < 0) {
        *px = r->anchor[0], *py = r->anchor[1], *vx = 0, *vy = 0;
    } else {
        int b = r->i == i ? r->j : r->i;
        *px = x[2 * b], *py = x[2 * b + 1], *vx = v[2 * b], *vy = v[2 * b + 1];
    }
}

int imp_chnn_from_generalized(const imp_csys *s, const double *qv, double *xv)
{
    if (!s || !qv || !xv) return imp_fail(IMP_ERR_INVALID, "from_generalized: NULL");
    int N = imp_csys_ndof(s), k = s->n_gen;
    double *x = xv, *v = xv + N;
    const double *q = qv, *qd = qv + k;
    memset(xv, 0, 2 * (size_t)N * sizeof(double));
    switch (s->kind) {
    case IMP_CSYS_PENDULUM_CHAIN:
    case IMP_CSYS_CHAIN_GROUND:
    case IMP_CSYS_COLLIDING_PENDULUMS: {
        double px = 0, py = 0, vx = 0, vy = 0;
        for (int i = 0; i < s->n_points; i++) {
            double l = chain_length(s, i);
            chain_base(s, i, x, v, &px, &py, &vx, &vy);
            px += l * sin(q[i]);
            py += -l * cos(q[i]);
            vx += l * cos(q[i]) * qd[i];
            vy += l * sin(q[i]) * qd[i];
            x[2 * i] = px; x[2 * i + 1] = py;
            v[2 * i] = vx; v[2 * i + 1] = vy;
        }
        return IMP_OK;
    }
    case IMP_CSYS_COUPLED:
    case IMP_CSYS_MAGNET:
        for (int i = 0; i < s->n_points; i++) {
            double anchor[3] = {0, 0, 0}, r[3], rd[3];
            double l = tether_length(s, i, anchor);
            sph_to_cart(q[2 * i], q[2 * i + 1], qd[2 * i], qd[2 * i + 1], l, r, rd);
            for (int c = 0; c < 3; c++) {
                x[3 * i + c] = anchor[c] + r[c];
                v[3 * i + c] = rd[c];
            }
        }
        return IMP_OK;
    case IMP_CSYS_GYROSCOPE:
    case IMP_CSYS_GYRO_WALL: {
        double zero[3] = {0, 0, 0}, cz = gyro_com_z(s);
        frame_from_euler(zero, zero, q, qd, x, v);
        /* translate so that the pivot c = -com (weights (1 - sum c, c)) is at
         * rest at the origin */
        double wgt[4] = {1 + cz, 0, 0, -cz}, px[3] = {0, 0, 0}, pv[3] = {0, 0, 0};
        for (int p = 0; p < 4; p++)
            for (int c = 0; c < 3; c++) {
                px[c] += wgt[p] * x[3 * p + c];
                pv[c] += wgt[p] * v[3 * p + c];
            }
        for (int p = 0; p < 4; p++)
            for (int c = 0; c < 3; c++) {
                x[3 * p + c] -= px[c];
                v[3 * p + c] -= pv[c];
            }
        return IMP_OK;
    }
    case IMP_CSYS_ROTOR:
        frame_from_euler(q, qd, q + 3, qd + 3, x, v);
        return IMP_OK;
    case IMP_CSYS_CUSTOM:
        if (k < 1 || k != N) break;
        memcpy(xv, qv, 2 * (size_t)N * sizeof(double));
        return IMP_OK;
    default:
        break;
    }
    return imp_fail(IMP_ERR_UNSUPPORTED, "system '%s': no generalised coordinates", s->name);
}

int imp_chnn_to_generalized(const imp_csys *s, const double *xv, double *qv)
{
    if (!s || !qv || !xv) return imp_fail(IMP_ERR_INVALID, "to_generalized: NULL");
    int N = imp_csys_ndof(s), k = s->n_gen;
    const double *x = xv, *v = xv + N;
    double *q = qv, *qd = qv + k;
    switch (s->kind) {
    case IMP_CSYS_PENDULUM_CHAIN:
    case IMP_CSYS_CHAIN_GROUND:
    case IMP_CSYS_COLLIDING_PENDULUMS: {
        double px = 0, py = 0, vx = 0, vy = 0;
        for (int i = 0; i < s->n_points; i++) {
            chain_base(s, i, x, v, &px, &py, &vx, &vy);
            double rx = x[2 * i] - px, ry = x[2 * i + 1] - py;
            double rvx = v[2 * i] - vx, rvy = v[2 * i + 1] - vy;
            q[i] = atan2(rx, -ry);
            qd[i] = (rx * rvy - ry * rvx) / (rx * rx + ry * ry);
            px = x[2 * i]; py = x[2 * i + 1];
            vx = v[2 * i]; vy = v[2 * i + 1];
        }
        return IMP_OK;
    }
    case IMP_CSYS_COUPLED:
    case IMP_CSYS_MAGNET:
        for (int i = 0; i < s->n_points; i++) {
            double anchor[3] = {0, 0, 0}, r[3];
            tether_length(s, i, anchor);
            for (int c = 0; c < 3; c++) r[c] = x[3 * i + c] - anchor[c];
            cart_to_sph(r, v + 3 * i, &q[2 * i], &q[2 * i + 1], &qd[2 * i], &qd[2 * i + 1]);
        }
        return IMP_OK;
    case IMP_CSYS_GYROSCOPE:
    case IMP_CSYS_GYRO_WALL:
        euler_from_frame(x, v, q, qd);
        return IMP_OK;
    case IMP_CSYS_ROTOR:
        for (int c = 0; c < 3; c++) {
            q[c] = x[c];
            qd[c] = v[c];
        }
        euler_from_frame(x, v, q + 3, qd + 3);
        return IMP_OK;
    case IMP_CSYS_CUSTOM:
        if (k < 1 || k != N) break;
        memcpy(qv, xv, 2 * (size_t)N * sizeof(double));
        return IMP_OK;
    default:
        break;
    }
    return imp_fail(IMP_ERR_UNSUPPORTED, "system '%s': no generalised coordinates", s->name);
}

void imp_chnn_unwrap(const imp_csys *s, double *qv, int T)
{
    int k = s->n_gen;
    for (int j = 0; j < k; j++) {
        if (!s->gen_is_angle[j]) continue;
        double offset = 0;
        for (int t = 1; t < T; t++) {
            double *cur = &qv[(size_t)t * 2 * k + j];
            double prev = qv[(size_t)(t - 1) * 2 * k + j]; /* already unwrapped */
            double raw = *cur + offset, d = raw - prev;
            while (d > PI) { offset -= 2 * PI; d -= 2 * PI; }
            while (d < -PI) { offset += 2 * PI; d += 2 * PI; }
            *cur += offset;
        }
    }
}

/* ---- initial states ---- */

static double clamp3(double a) { return a > 3 ? 3 : (a < -3 ? -3 : a); }

static void draw_reference(const imp_csys *s, imp_rng *rng, double *xv)
{
    int N = imp_csys_ndof(s), n = s->n_points;
    double qv[2 * IMP_CSYS_MAX_GEN];
    switch (s->kind) {
    case IMP_CSYS_PENDULUM_CHAIN:
        /* angles and rates ~ N(0, 1); then x += 0.2 N, v <- 1.5 v + 1.2 N */
        for (int i = 0; i < 2 * n; i++) qv[i] = imp_rng_normal(rng);
        imp_chnn_from_generalized(s, qv, xv);
        for (int q = 0; q < N; q++) xv[q] += 0.2 * imp_rng_normal(rng);
        for (int q = 0; q < N; q++) xv[N + q] = 1.5 * xv[N + q] + 1.2 * imp_rng_normal(rng);
        break;
    case IMP_CSYS_COUPLED:
        /* (phi, theta) and rates ~ 0.3 N, theta += pi/2, phi += pi */
        for (int i = 0; i < 4 * n; i++) qv[i] = 0.3 * imp_rng_normal(rng);
        for (int i = 0; i < n; i++) {
            qv[2 * i] += PI;
            qv[2 * i + 1] += PI / 2;
        }
        imp_chnn_from_generalized(s, qv, xv);
        break;
    case IMP_CSYS_MAGNET:
        qv[0] = PI + 0.3 * imp_rng_normal(rng);
        qv[2] = 0.05 * imp_rng_normal(rng);
        qv[1] = PI / 2 + 0.2 * imp_rng_normal(rng);
        qv[3] = 0.4 * imp_rng_normal(rng);
        imp_chnn_from_generalized(s, qv, xv);
        break;
    case IMP_CSYS_CHAIN_GROUND:
        /* DiffCoSim: absolute link angles ~ U(0, 3.14), rates ~ N(0, 1) */
        for (int i = 0; i < n; i++) qv[i] = imp_rng_uniform_range(rng, 0.0, 3.14);
        for (int i = 0; i < n; i++) qv[n + i] = imp_rng_normal(rng);
        imp_chnn_from_generalized(s, qv, xv);
        break;
    case IMP_CSYS_COLLIDING_PENDULUMS:
        /* the double pendulum's absolute angles (from -y) ~ U(0, 2), towards
         * the pendulum; the pendulum's ~ U(-2, 0), towards the double
         * pendulum; rates ~ N(0, 1) */
        qv[0] = imp_rng_uniform_range(rng, 0.0, 2.0);
        qv[1] = imp_rng_uniform_range(rng, 0.0, 2.0);
        qv[2] = imp_rng_uniform_range(rng, -2.0, 0.0);
        for (int i = 0; i < 3; i++) qv[3 + i] = imp_rng_normal(rng);
        imp_chnn_from_generalized(s, qv, xv);
        break;
    case IMP_CSYS_GYROSCOPE:
    case IMP_CSYS_GYRO_WALL: {
        for (int i = 0; i < 3; i++) qv[i] = imp_rng_uniform_range(rng, -1.5, 1.5);
        qv[3] = imp_rng_uniform_range(rng, -4.5, 4.5);
        qv[4] = imp_rng_uniform_range(rng, -0.3, 0.3);
        double sign = imp_rng_uniform(rng) < 0.5 ? -1.0 : 1.0;
        qv[5] = sign * (imp_rng_normal(rng) + 7.0) * 1.5;
        imp_chnn_from_generalized(s, qv, xv);
        break;
    }
    case IMP_CSYS_ROTOR:
        for (int i = 0; i < 12; i++) qv[i] = clamp3(2.0 * imp_rng_normal(rng));
        for (int i = 0; i < 3; i++) {
            qv[i] *= 0.1;
            qv[6 + i] *= 0.1;
        }
        imp_chnn_from_generalized(s, qv, xv);
        break;
    default:
        break;
    }
}

static void draw_custom(const imp_csys *s, imp_rng *rng, double spread, double *xv)
{
    int N = imp_csys_ndof(s);
    imp_csys_nominal_state(s, xv);
    for (int q = 0; q < 2 * N; q++) xv[q] += spread * imp_rng_normal(rng);
}

int imp_chnn_sample_state(const imp_csys *s, imp_rng *rng, double spread, double *xv,
                          imp_csys_work *w)
{
    if (!s || !rng || !xv || !w) return imp_fail(IMP_ERR_INVALID, "sample_state: NULL");
    if (!(spread >= 0) || !isfinite(spread))
        return imp_fail(IMP_ERR_INVALID, "spread: %g must be >= 0 and finite", spread);
    int N = imp_csys_ndof(s), st = IMP_OK;
    /* with contacts, draws that start inside a plane are redrawn (DiffCoSim) */
    int attempts = s->n_contacts > 0 ? 10000 : 20;
    for (int attempt = 0; attempt < attempts; attempt++) {
        if (s->kind == IMP_CSYS_CUSTOM) {
            draw_custom(s, rng, spread, xv);
            imp_csys_project_opts o = {1e-13, 200};
            st = imp_csys_project(s, xv, xv + N, &o, w);
        } else {
            /* the reference's project_onto_constraints: Euclidean Newton on
             * (x, v) jointly. For the pendulum chains (x 0.2 and v 1.2 off
             * the manifold) the mass-metric projection, positions first,
             * gave starts of lower energy (2-pendulum: mean H -14.6 instead
             * of -12.7 over 20000 draws) */
            draw_reference(s, rng, xv);
            st = imp_csys_project_state(s, xv, xv + N, NULL, w);
        }
        int inside = 0;
        for (int c = 0; !st && c < s->n_contacts && !inside; c++)
            inside = imp_csys_contact_frame(s, xv, c, NULL, NULL, NULL) < 0;
        if (!st && !inside) return IMP_OK;
        if (inside) st = imp_fail(IMP_ERR_NUMERIC, "every draw starts with a contact overlapping");
        /* the reference redraws samples its projection cannot handle */
    }
    return imp_fail_context(st, "system '%s': no usable initial state in %d draws", s->name, attempts);
}
