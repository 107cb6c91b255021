/* Benchmark systems as the constrained models see them: points, bodies,
 * constraint rows, generalised coordinates of the baselines, and the true
 * masses/potential used only for evaluation energies. Values follow the
 * reference implementation ([chnn] section 1). */
#include "impulse/chnn_models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ChainPendulum(N) masses and lengths, top to bottom, drawn by the
 * reference from U(0.6, 1.4) with numpy seed 0 ([chnn] section 1 table). */
static const double pend_m[6][5] = {
    {0}, {1.039}, {1.172, 1.039}, {1.082, 1.172, 1.039}, {0}, {0.939, 1.036, 1.082, 1.172, 1.039}};
static const double pend_l[6][5] = {
    {0}, {1.172}, {1.036, 1.082}, {1.117, 0.939, 1.036}, {0}, {0.907, 1.371, 1.313, 0.950, 1.117}};

static void add_distance(imp_csystem *cs, int i, int j, const double *anchor, double length)
{
    imp_cs_row *r = &cs->rows[cs->n_rows++];
    memset(r, 0, sizeof *r);
    r->kind = IMP_CS_DISTANCE;
    r->i = i;
    r->j = j;
    if (anchor)
        for (int a = 0; a < cs->d; a++) r->anchor[a] = anchor[a];
    r->length = length;
}

/* Rigid body b (d+1 points: com, then com + unit principal axes): the
 * C(d+1, 2) internal distance constraints, l = 1 for com-axis pairs and
 * sqrt 2 for axis-axis pairs ([F] section 6). */
static void add_rigid_internal(imp_csystem *cs, int b)
{
    int f = cs->body_first[b], k = cs->body_size[b];
    for (int a = 0; a < k; a++)
        for (int c = a + 1; c < k; c++) add_distance(cs, f + a, f + c, NULL, a == 0 ? 1.0 : sqrt(2.0));
}

/* Ball joint of body-frame point c of body b to the fixed point pos:
 * Phi = X c~ - pos with c~ = (1 - sum c, c) ([F] appendix D.4). */
static void add_ball_joint_fixed(imp_csystem *cs, int b, const double *c, const double *pos)
{
    int d = cs->d, f = cs->body_first[b];
    double ct[4];
    double s = 0;
    for (int a = 0; a < d; a++) s += c[a];
    ct[0] = 1.0 - s;
    for (int a = 0; a < d; a++) ct[a + 1] = c[a];
    for (int axis = 0; axis < d; axis++) {
        imp_cs_row *r = &cs->rows[cs->n_rows++];
        memset(r, 0, sizeof *r);
        r->kind = IMP_CS_LINEAR;
        r->n_terms = d + 1;
        for (int a = 0; a <= d; a++) {
            r->idx[a] = (f + a) * d + axis;
            r->w[a] = ct[a];
        }
        r->value = pos[axis];
    }
}

int imp_csystem_from_name(imp_csystem *cs, const char *name)
{
    if (!cs || !name) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    memset(cs, 0, sizeof *cs);
    snprintf(cs->name, sizeof cs->name, "%s", name);
    cs->gravity = 9.81;
    int N = 0;
    const char *colon = strchr(name, ':');
    if (!strncmp(name, "pendulum-chain", 14) || !strncmp(name, "pendulum", 8)) {
        size_t base = colon ? (size_t)(colon - name) : strlen(name);
        if (!((base == 14 && !strncmp(name, "pendulum-chain", 14)) || (base == 8)))
            return imp_fail(IMP_ERR_NOT_FOUND, "system: unknown '%s'", name);
        N = colon ? atoi(colon + 1) : 1;
        if (N < 1 || N > 8 || (colon && strspn(colon + 1, "0123456789") != strlen(colon + 1)))
            return imp_fail(IMP_ERR_INVALID, "system: '%s' needs 1 <= N <= 8", name);
        cs->d = 2;
        cs->n_points = cs->n_bodies = N;
        cs->dt = 0.03;
        double origin[3] = {0, 0, 0};
        for (int i = 0; i < N; i++) {
            cs->body_first[i] = i;
            cs->body_size[i] = 1;
            /* Systems without a table row (N = 4, 6..8) get unit masses/lengths. */
            int tab = (N <= 5 && pend_m[N][0] > 0);
            cs->mass[i] = tab ? pend_m[N][i] : 1.0;
            double l = tab ? pend_l[N][i] : 1.0;
            if (i == 0) add_distance(cs, 0, -1, origin, l);
            else add_distance(cs, i - 1, i, NULL, l);
            cs->gen_is_angle[i] = 1;
        }
        cs->n_gen = N;
        return IMP_OK;
    }
    if (!strcmp(name, "gyroscope")) {
        /* One body, 4 points; m = 0.1, lambda~ = m * 100 diag Sigma; the
         * pivot c = -com in the body frame is tied to the origin. */
        cs->d = 3;
        cs->n_points = 4;
        cs->n_bodies = 1;
        cs->body_first[0] = 0;
        cs->body_size[0] = 4;
        cs->mass[0] = 0.1;
        cs->lam[0][0] = 0.02414;
        cs->lam[0][1] = 0.02414;
        cs->lam[0][2] = 0.00369;
        cs->dt = 0.02;
        add_rigid_internal(cs, 0);
        double c[3] = {0, 0, -0.2217}, pos[3] = {0, 0, 0};
        add_ball_joint_fixed(cs, 0, c, pos);
        cs->n_gen = 3;
        for (int i = 0; i < 3; i++) cs->gen_is_angle[i] = 1;
        return IMP_OK;
    }
    if (!strcmp(name, "rotor")) {
        /* Free rigid body without gravity: m = 0.1, lambda~ = m diag Sigma. */
        cs->d = 3;
        cs->n_points = 4;
        cs->n_bodies = 1;
        cs->body_first[0] = 0;
        cs->body_size[0] = 4;
        cs->mass[0] = 0.1;
        cs->lam[0][0] = 2.99e-4;
        cs->lam[0][1] = 9.91e-3;
        cs->lam[0][2] = 2.11e-3;
        cs->gravity = 0.0;
        cs->dt = 0.05;
        add_rigid_internal(cs, 0);
        cs->n_gen = 6;
        for (int i = 0; i < 6; i++) cs->gen_is_angle[i] = i >= 3;
        return IMP_OK;
    }
    return imp_fail(IMP_ERR_NOT_FOUND, "system: unknown '%s' (pendulum-chain:N, gyroscope, rotor)",
                    name);
}

void imp_csystem_violation(const imp_csystem *cs, const double *y, double *phi, double *phidot)
{
    int d = cs->d, nd = cs->n_points * d;
    const double *x = y, *v = y + nd;
    for (int c = 0; c < cs->n_rows; c++) {
        const imp_cs_row *r = &cs->rows[c];
        double p = 0, pd = 0;
        if (r->kind == IMP_CS_DISTANCE) {
            for (int a = 0; a < d; a++) {
                double dx = x[r->i * d + a] - (r->j >= 0 ? x[r->j * d + a] : r->anchor[a]);
                double dv = v[r->i * d + a] - (r->j >= 0 ? v[r->j * d + a] : 0.0);
                p += dx * dx;
                pd += 2.0 * dx * dv;
            }
            p -= r->length * r->length;
        } else {
            for (int t = 0; t < r->n_terms; t++) {
                p += r->w[t] * x[r->idx[t]];
                pd += r->w[t] * v[r->idx[t]];
            }
            p -= r->value;
        }
        phi[c] = p;
        phidot[c] = pd;
    }
}

double imp_csystem_energy(const imp_csystem *cs, const double *y)
{
    int d = cs->d, nd = cs->n_points * d;
    const double *x = y, *v = y + nd;
    double T = 0, V = 0;
    for (int b = 0; b < cs->n_bodies; b++) {
        int f = cs->body_first[b], k = cs->body_size[b];
        double m = cs->mass[b];
        /* M = [[m + sum lam, -lam^T], [-lam, diag lam]] ([F] eq 9): with
         * u_j = v_j - v_0 this is 1/2 m |v_0|^2 + 1/2 sum lam_j |u_j|^2. */
        for (int a = 0; a < d; a++) {
            double v0 = v[f * d + a];
            T += 0.5 * m * v0 * v0;
            for (int j = 1; j < k; j++) {
                double u = v[(f + j) * d + a] - v0;
                T += 0.5 * cs->lam[b][j - 1] * u * u;
            }
        }
        V += cs->gravity * m * x[f * d + d - 1];
    }
    return T + V;
}

int imp_csystem_to_generalised(const imp_csystem *cs, const double *y, double *z)
{
    if (strncmp(cs->name, "pendulum", 8))
        return imp_fail(IMP_ERR_UNSUPPORTED, "system: generalised coordinates for '%s' not implemented",
                        cs->name);
    int N = cs->n_points, nd = 2 * N;
    const double *x = y, *v = y + nd;
    for (int i = 0; i < N; i++) {
        double px = i ? x[2 * (i - 1)] : 0, py = i ? x[2 * (i - 1) + 1] : 0;
        double pvx = i ? v[2 * (i - 1)] : 0, pvy = i ? v[2 * (i - 1) + 1] : 0;
        double dx = x[2 * i] - px, dy = x[2 * i + 1] - py;
        double dvx = v[2 * i] - pvx, dvy = v[2 * i + 1] - pvy;
        /* angle from the -y axis: x = l sin q, y = -l cos q */
        z[i] = atan2(dx, -dy);
        z[N + i] = (dx * dvy - dy * dvx) / (dx * dx + dy * dy);
    }
    return IMP_OK;
}

int imp_csystem_from_generalised(const imp_csystem *cs, const double *z, double *y)
{
    if (strncmp(cs->name, "pendulum", 8))
        return imp_fail(IMP_ERR_UNSUPPORTED, "system: generalised coordinates for '%s' not implemented",
                        cs->name);
    int N = cs->n_points, nd = 2 * N;
    double px = 0, py = 0, pvx = 0, pvy = 0;
    for (int i = 0; i < N; i++) {
        double l = cs->rows[i].length, q = z[i], qd = z[N + i];
        px += l * sin(q);
        py -= l * cos(q);
        pvx += l * cos(q) * qd;
        pvy += l * sin(q) * qd;
        y[2 * i] = px;
        y[2 * i + 1] = py;
        y[nd + 2 * i] = pvx;
        y[nd + 2 * i + 1] = pvy;
    }
    return IMP_OK;
}
