/* The rigid-body time stepper of include/impulse/rigid_model.h: one spatial
 * rigid body with body-fixed contact points against the ground plane, on
 * the contact module (detection: eqs 1-4, impulses: eqs 5-11 and the
 * reverse pass eqs 12-15 of docs/derivations/contact.md), and its reverse
 * pass. The step is described in the header. */
#include "impulse/rigid_model.h"

#include "contact/contact_internal.h"
#include "impulse/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The impulse solve's relative regularization (imp_contact_solve_opts): a
 * box resting flat has 12 contact rows on 6 degrees of freedom; at the
 * module's default 1e-9 its generalized Newton fails there and the solve
 * takes 0.3-0.8 ms, at 1e-4 it takes 16 us (bench/bench_rigid.c) and leaves
 * the contact law off by 1e-4 tr(A)/rows lambda, 1e-4 of the velocity change.
 * The projected Gauss-Seidel warm start is cut to 10 sweeps. */
#define RIGID_REGULARIZATION 1e-4
#define RIGID_SWEEPS 10

void imp_rigid_model_box(imp_rigid_model *m, const imp_rigid_body *body, double e, double mu, double ground,
                         double gravity)
{
    memset(m, 0, sizeof *m);
    m->mass = body->mass;
    for (int i = 0; i < 3; i++) m->inertia[i] = body->inertia[i];
    m->n_points = 8;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 3; i++) m->points[k][i] = ((k >> i) & 1 ? 0.5 : -0.5) * body->size[i];
    m->e = e, m->mu = mu, m->ground = ground, m->gravity = gravity;
    m->e_threshold = 0.1;
}

int imp_rigid_model_check(const imp_rigid_model *m)
{
    if (!(m->mass > 0) || !isfinite(m->mass)) return imp_fail(IMP_ERR_INVALID, "rigid model: mass %g is not > 0", m->mass);
    for (int i = 0; i < 3; i++)
        if (!(m->inertia[i] > 0) || !isfinite(m->inertia[i]))
            return imp_fail(IMP_ERR_INVALID, "rigid model: inertia[%d] %g is not > 0", i, m->inertia[i]);
    if (m->n_points < 1 || m->n_points > IMP_RIGID_MAX_POINTS)
        return imp_fail(IMP_ERR_INVALID, "rigid model: n_points %d is not in 1..%d", m->n_points,
                        IMP_RIGID_MAX_POINTS);
    for (int k = 0; k < m->n_points; k++)
        for (int i = 0; i < 3; i++)
            if (!isfinite(m->points[k][i]))
                return imp_fail(IMP_ERR_INVALID, "rigid model: points[%d][%d] is not finite", k, i);
    if (!(m->e >= 0 && m->e <= 1)) return imp_fail(IMP_ERR_INVALID, "rigid model: e %g is not in [0, 1]", m->e);
    if (!(m->mu >= 0) || !isfinite(m->mu)) return imp_fail(IMP_ERR_INVALID, "rigid model: mu %g is not >= 0", m->mu);
    if (!(m->e_threshold >= 0) || !isfinite(m->e_threshold))
        return imp_fail(IMP_ERR_INVALID, "rigid model: e_threshold %g is not >= 0", m->e_threshold);
    if (m->warm_start != 0 && m->warm_start != 1)
        return imp_fail(IMP_ERR_INVALID, "rigid model: warm_start %d is not 0 or 1", m->warm_start);
    for (int i = 0; i < 3; i++)
        if (!isfinite(m->dv0[i])) return imp_fail(IMP_ERR_INVALID, "rigid model: dv0[%d] is not finite", i);
    if (!isfinite(m->ground)) return imp_fail(IMP_ERR_INVALID, "rigid model: ground is not finite");
    if (!(m->gravity >= 0) || !isfinite(m->gravity))
        return imp_fail(IMP_ERR_INVALID, "rigid model: gravity %g is not >= 0", m->gravity);
    return IMP_OK;
}

/* The contact module's model of m: one spatial body, a plane candidate per point. */
static int contact_model(const imp_rigid_model *m, imp_contact_model *cm)
{
    memset(cm, 0, sizeof *cm);
    cm->dim = 3;
    cm->n_bodies = 1;
    cm->bodies[0].kind = IMP_BODY_SPATIAL;
    cm->bodies[0].mass = m->mass;
    for (int i = 0; i < 3; i++) cm->bodies[0].inertia[4 * i] = m->inertia[i];
    cm->n_candidates = m->n_points;
    for (int k = 0; k < m->n_points; k++) {
        imp_contact_candidate *c = &cm->cand[k];
        c->kind = IMP_CONTACT_PLANE;
        c->body_a = IMP_WALL, c->body_b = 0;
        memcpy(c->point_b, m->points[k], sizeof c->point_b);
        c->normal[2] = 1.0;
        c->offset = m->ground;
        c->e = m->e, c->mu = m->mu;
    }
    cm->gap_tol = 0.0;
    return imp_contact_model_init(cm);
}

/* ---- quaternions (w x y z) ---- */
static void qconj(const double q[4], double out[4])
{
    out[0] = q[0], out[1] = -q[1], out[2] = -q[2], out[3] = -q[3];
}

/* exp(a/2) = (cos(|a|/2), f(|a|) a), f(t) = sin(t/2)/t; fp = f'(t)/t */
static void half_exp(const double a[3], double E[4], double *f, double *fp)
{
    double t = sqrt(imp_dot3(a, a));
    if (t < 1e-4) {
        double t2 = t * t;
        *f = 0.5 - t2 / 48.0 + t2 * t2 / 3840.0;
        *fp = -1.0 / 24.0 + t2 / 960.0;
    } else {
        *f = sin(0.5 * t) / t;
        *fp = (0.5 * cos(0.5 * t) * t - sin(0.5 * t)) / (t * t * t);
    }
    E[0] = cos(0.5 * t);
    for (int i = 0; i < 3; i++) E[1 + i] = *f * a[i];
}

/* y_bar of y = x / |x| (4-vectors): (y_bar - y (y . y_bar)) / |x| */
static void normalise_backward(double x_bar[4], const double y[4], double norm, const double y_bar[4])
{
    double d = y[0] * y_bar[0] + y[1] * y_bar[1] + y[2] * y_bar[2] + y[3] * y_bar[3];
    for (int i = 0; i < 4; i++) x_bar[i] += (y_bar[i] - y[i] * d) / norm;
}

/* The previous step's impulses per contact point (warm starts, m->warm_start). */
typedef struct rigid_warm {
    int valid;
    double lambda[IMP_RIGID_MAX_POINTS][3];
} rigid_warm;

static int step_forward(const imp_rigid_model *m, double h, const double s[13], double s_out[13],
                        imp_rigid_step_trace *tr, rigid_warm *warm);

int imp_rigid_step_forward(const imp_rigid_model *m, double h, const double s[13], double s_out[13],
                           imp_rigid_step_trace *tr)
{
    return step_forward(m, h, s, s_out, tr, NULL);
}

static int step_forward(const imp_rigid_model *m, double h, const double s[13], double s_out[13],
                        imp_rigid_step_trace *tr, rigid_warm *warm)
{
    int st = imp_rigid_model_check(m);
    if (st) return st;
    if (!(h > 0) || !isfinite(h)) return imp_fail(IMP_ERR_INVALID, "rigid step: h %g is not > 0", h);
    if ((st = imp_check_finite(s, 13, "rigid step: state"))) return st;
    imp_rigid_step_trace local;
    if (!tr) tr = &local;
    tr->h = h;
    memcpy(tr->s, s, sizeof tr->s);
    double qn2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + s[3] * s[3];
    if (!(qn2 > 1e-12)) return imp_fail(IMP_ERR_INVALID, "rigid step: state quaternion is zero");
    tr->qnorm = sqrt(qn2);
    for (int i = 0; i < 4; i++) tr->qn[i] = s[i] / tr->qnorm;
    imp_contact_model cm;
    if ((st = contact_model(m, &cm))) return st;
    double q[7] = {s[4], s[5], s[6], tr->qn[0], tr->qn[1], tr->qn[2], tr->qn[3]};
    /* 1. kick */
    const double *w = s + 7, *I = m->inertia;
    double Iw[3] = {I[0] * w[0], I[1] * w[1], I[2] * w[2]}, gyr[3];
    imp_cross3(Iw, w, gyr);
    for (int i = 0; i < 3; i++) {
        tr->vm[i] = s[10 + i];
        tr->vm[3 + i] = w[i] + h * gyr[i] / I[i];
    }
    tr->vm[2] -= h * m->gravity;
    /* 2. detection, 3. active set */
    imp_contact_frame frames[IMP_RIGID_MAX_POINTS];
    if ((st = imp_contact_detect(&cm, q, frames))) return st;
    tr->n_active = 0;
    for (int c = 0; c < m->n_points; c++) {
        double Jc[18];
        imp_contact_jacobian(&cm, q, &frames[c], c, Jc);
        double b = fmax(frames[c].phi, 0.0) / h, un = 0.0;
        for (int i = 0; i < 6; i++) un += Jc[i] * tr->vm[i];
        if (un + b < 0.0) {
            int a = tr->n_active++;
            tr->active[a] = c;
            tr->phi[a] = frames[c].phi;
            tr->frames[a] = frames[c];
            memcpy(tr->J + 18 * a, Jc, sizeof Jc);
            /* a bouncing point (e > 0) gets Newton's law on its velocity, u+_n = e |u-_n|
               (it may leave up to h |u-_n| early); a plastic one (e = 0: slow, or e is 0)
               the shifted target u+_n >= -b, so that it lands on the plane */
            tr->e[a] = un < -m->e_threshold ? m->e : 0.0;
            if (tr->e[a] > 0) b = 0.0;
            for (int r = 0; r < 3; r++) {
                double u = 0.0;
                for (int i = 0; i < 6; i++) u += Jc[6 * r + i] * tr->vm[i];
                tr->um[3 * a + r] = u + (r == 0 ? b : 0.0);
            }
        }
    }
    /* 4. impulses */
    memcpy(tr->vp, tr->vm, sizeof tr->vp);
    int n = tr->n_active, R = 3 * n;
    if (n > 0) {
        if ((st = imp_contact_compliance(tr->A, tr->BT, tr->J, R, 6, imp_contact_minv_bodies, &cm))) return st;
        double e[IMP_RIGID_MAX_POINTS], mu[IMP_RIGID_MAX_POINTS];
        for (int a = 0; a < n; a++) e[a] = tr->e[a], mu[a] = m->mu;
        double work[2 * 24 * 24 + 7 * 24 + 8];
        int iwork[24 + 8 + 1];
        imp_contact_solve_opts o;
        imp_contact_solve_opts_default(&o);
        o.regularization = RIGID_REGULARIZATION;
        o.max_sweeps = RIGID_SWEEPS;
        double lambda0[3 * IMP_RIGID_MAX_POINTS];
        if (warm && warm->valid) {
            for (int a = 0; a < n; a++)
                for (int r = 0; r < 3; r++) lambda0[3 * a + r] = warm->lambda[tr->active[a]][r];
            o.lambda0 = lambda0;
            o.max_sweeps = 0; /* generalized Newton directly from the previous step's impulses */
        }
        /* near-redundant contacts (a box almost flat) whose shifted targets disagree
           can defeat the solve at eps 1e-9: retry with a larger regularization */
        for (int tries = 0;; tries++) {
            st = imp_contact_solve_forward(&tr->sol, tr->A, tr->um, e, mu, n, 3, &o, work, iwork);
            if (st != IMP_ERR_NUMERIC || tries == 3) break;
            o.regularization *= 1e3;
            o.lambda0 = NULL, o.max_sweeps = RIGID_SWEEPS;
        }
        if (st) return st;
        for (int i = 0; i < 6; i++)
            for (int k = 0; k < R; k++) tr->vp[i] += tr->BT[6 * k + i] * tr->sol.lambda[k]; /* eq 11 */
    }
    if (warm) {
        memset(warm, 0, sizeof *warm);
        warm->valid = 1;
        for (int a = 0; a < n; a++)
            for (int r = 0; r < 3; r++) warm->lambda[tr->active[a]][r] = tr->sol.lambda[3 * a + r];
    }
    /* 5. positions */
    double out[13];
    for (int i = 0; i < 3; i++) {
        out[4 + i] = s[4 + i] + (n > 0 ? h * tr->vp[i] : 0.5 * h * (s[10 + i] + tr->vp[i]));
        out[7 + i] = tr->vp[3 + i];
        out[10 + i] = tr->vp[i];
    }
    double a[3] = {h * tr->vp[3], h * tr->vp[4], h * tr->vp[5]}, E[4], f, fp;
    half_exp(a, E, &f, &fp);
    imp_quat_mul(tr->qn, E, tr->r);
    tr->rnorm = sqrt(tr->r[0] * tr->r[0] + tr->r[1] * tr->r[1] + tr->r[2] * tr->r[2] + tr->r[3] * tr->r[3]);
    for (int i = 0; i < 4; i++) out[i] = tr->r[i] / tr->rnorm;
    memcpy(s_out, out, sizeof out);
    return IMP_OK;
}

int imp_rigid_step_backward(const imp_rigid_model *m, const imp_rigid_step_trace *tr, const double s_out_bar[13],
                            double s_bar[13], imp_rigid_model_grad *g)
{
    imp_contact_model cm;
    int st = contact_model(m, &cm);
    if (st) return st;
    double h = tr->h;
    int n = tr->n_active, R = 3 * n;
    const double *s = tr->s;
    /* 5. positions */
    double vp_bar[6], vm_bar[6] = {0}, qn_bar[4] = {0}, q_bar[7] = {0};
    for (int i = 0; i < 3; i++) {
        double pb = s_out_bar[4 + i];
        s_bar[4 + i] += pb;
        if (n > 0) {
            vp_bar[i] = h * pb;
        } else {
            vp_bar[i] = 0.5 * h * pb;
            s_bar[10 + i] += 0.5 * h * pb;
        }
        vp_bar[i] += s_out_bar[10 + i];
        vp_bar[3 + i] = s_out_bar[7 + i];
    }
    double y[4], r_bar[4] = {0};
    for (int i = 0; i < 4; i++) y[i] = tr->r[i] / tr->rnorm;
    normalise_backward(r_bar, y, tr->rnorm, s_out_bar);
    double a[3] = {h * tr->vp[3], h * tr->vp[4], h * tr->vp[5]}, E[4], Ec[4], qc[4], f, fp, t4[4], E_bar[4];
    half_exp(a, E, &f, &fp);
    qconj(E, Ec);
    imp_quat_mul(r_bar, Ec, t4); /* r = qn (x) E: qn_bar = r_bar (x) E*, E_bar = qn* (x) r_bar */
    for (int i = 0; i < 4; i++) qn_bar[i] += t4[i];
    qconj(tr->qn, qc);
    imp_quat_mul(qc, r_bar, E_bar);
    double ad = imp_dot3(a, E_bar + 1);
    for (int i = 0; i < 3; i++) vp_bar[3 + i] += h * (-0.5 * f * a[i] * E_bar[0] + f * E_bar[1 + i] + fp * a[i] * ad);
    /* 4. impulses: v+ = v- + BT^T lambda (eq 11), lambda = solve(A, u-, e, mu) */
    for (int i = 0; i < 6; i++) vm_bar[i] += vp_bar[i];
    if (n > 0) {
        double lb[24], BTb[24 * 6], Ab[24 * 24], umb[24], Jb[24 * 6], e_bar[8] = {0}, mu_bar[8] = {0};
        for (int k = 0; k < R; k++) {
            double acc = 0.0;
            for (int i = 0; i < 6; i++) {
                acc += tr->BT[6 * k + i] * vp_bar[i];
                BTb[6 * k + i] = tr->sol.lambda[k] * vp_bar[i];
            }
            lb[k] = acc;
        }
        memset(Ab, 0, sizeof Ab);
        memset(umb, 0, sizeof umb);
        memset(Jb, 0, sizeof Jb);
        double e[8], mu[8];
        for (int c = 0; c < n; c++) e[c] = tr->e[c], mu[c] = m->mu;
        double work[2 * 24 * 24 + 7 * 24 + 8], tmp[2 * 24 * 6];
        int iwork[24 + 8 + 1];
        if ((st = imp_contact_solve_backward(Ab, umb, e_bar, mu_bar, lb, &tr->sol, tr->A, tr->um, e, mu, work,
                                             iwork)))
            return st;
        /* u- = J v- + b, b = max(phi, 0)/h on the normal rows */
        for (int k = 0; k < R; k++)
            for (int i = 0; i < 6; i++) {
                Jb[6 * k + i] += umb[k] * tr->vm[i];
                vm_bar[i] += tr->J[6 * k + i] * umb[k];
            }
        if ((st = imp_contact_compliance_backward(Jb, NULL, Ab, BTb, tr->J, tr->BT, R, 6, imp_contact_minv_bodies,
                                                  &cm, tmp)))
            return st;
        double q[7] = {s[4], s[5], s[6], tr->qn[0], tr->qn[1], tr->qn[2], tr->qn[3]};
        for (int c = 0; c < n; c++) {
            double phi_bar = tr->phi[c] > 0 && tr->e[c] == 0 ? umb[3 * c] / h : 0.0;
            imp_contact_geom_grad gg;
            memset(&gg, 0, sizeof gg);
            imp_contact_jacobian_backward(q_bar, &gg, phi_bar, Jb + 18 * c, &cm, q, &tr->frames[c], tr->active[c]);
            if (g) {
                for (int i = 0; i < 3; i++) g->points[tr->active[c]][i] += gg.point_b[i];
                g->ground += gg.offset;
                g->e += tr->e[c] > 0 ? e_bar[c] : 0.0;
                g->mu += mu_bar[c];
            }
        }
    }
    /* 1. kick: w- = w + h I^-1 ((I w) x w): w_bar += w-_bar + h (I (w x y) + y x (I w)), y = I^-1 w-_bar */
    const double *w = s + 7, *I = m->inertia;
    double yv[3], Iw[3], c1[3], c2[3];
    for (int i = 0; i < 3; i++) yv[i] = vm_bar[3 + i] / I[i], Iw[i] = I[i] * w[i];
    imp_cross3(w, yv, c1);
    imp_cross3(yv, Iw, c2);
    for (int i = 0; i < 3; i++) {
        s_bar[7 + i] += vm_bar[3 + i] + h * (I[i] * c1[i] + c2[i]);
        s_bar[10 + i] += vm_bar[i];
        s_bar[4 + i] += q_bar[i];
    }
    for (int i = 0; i < 4; i++) qn_bar[i] += q_bar[3 + i];
    normalise_backward(s_bar, tr->qn, tr->qnorm, qn_bar);
    return IMP_OK;
}

int imp_rigid_model_rollout(const imp_rigid_model *m, double dt, int substeps, const double x0[13], size_t n,
                            double *out)
{
    if (substeps < 1) return imp_fail(IMP_ERR_INVALID, "rigid rollout: substeps %d is not >= 1", substeps);
    if (n == 0) return IMP_OK;
    memcpy(out, x0, 13 * sizeof(double));
    double h = dt / substeps, x[13];
    memcpy(x, x0, sizeof x);
    for (int i = 0; i < 3; i++) x[10 + i] += m->dv0[i];
    rigid_warm warm = {0}, *wp = m->warm_start ? &warm : NULL;
    for (size_t k = 1; k < n; k++) {
        for (int j = 0; j < substeps; j++) {
            int st = step_forward(m, h, x, x, NULL, wp);
            if (st) return st;
        }
        memcpy(out + 13 * k, x, sizeof x);
    }
    return IMP_OK;
}

int imp_rigid_model_rollout_fn(const double x0[13], size_t n, void *ctx, double *out)
{
    const imp_rigid_model_ctx *c = ctx;
    return imp_rigid_model_rollout(c->model, c->dt, c->substeps, x0, n, out);
}

double imp_rigid_model_energy(const imp_rigid_model *m, const double s[13])
{
    double T = 0.0;
    for (int i = 0; i < 3; i++) T += 0.5 * m->mass * s[10 + i] * s[10 + i] + 0.5 * m->inertia[i] * s[7 + i] * s[7 + i];
    return T + m->mass * m->gravity * s[6];
}

int imp_rigid_window_loss(const imp_rigid_model *m, double dt, int substeps, const double *meas, size_t n,
                          double width, double *loss, imp_rigid_model_grad *g, double x0_bar[13])
{
    return imp_rigid_window_loss_w(m, dt, substeps, meas, n, width, 1.0, loss, g, x0_bar);
}

int imp_rigid_window_loss_w(const imp_rigid_model *m, double dt, int substeps, const double *meas, size_t n,
                            double width, double rot_weight, double *loss, imp_rigid_model_grad *g,
                            double x0_bar[13])
{
    if (!(rot_weight >= 0) || !isfinite(rot_weight))
        return imp_fail(IMP_ERR_INVALID, "rigid window: rot_weight %g is not >= 0", rot_weight);
    if (substeps < 1) return imp_fail(IMP_ERR_INVALID, "rigid window: substeps %d is not >= 1", substeps);
    if (n < 2) return imp_fail(IMP_ERR_INVALID, "rigid window: n %zu is not >= 2", n);
    if (!(width > 0)) return imp_fail(IMP_ERR_INVALID, "rigid window: width %g is not > 0", width);
    size_t steps = (n - 1) * (size_t)substeps;
    imp_rigid_step_trace *tr = malloc(steps * sizeof *tr);
    double *pred = malloc(n * 13 * sizeof(double));
    if (!tr || !pred) {
        free(tr), free(pred);
        return imp_fail(IMP_ERR_NOMEM, "rigid window: out of memory for %zu steps", steps);
    }
    int st = IMP_OK;
    double x[13], h = dt / substeps, L = 0.0, wk = 1.0 / (double)(n - 1);
    memcpy(x, meas, sizeof x);
    memcpy(pred, meas, sizeof x);
    for (int i = 0; i < 3; i++) x[10 + i] += m->dv0[i];
    rigid_warm warm = {0}, *wp = m->warm_start ? &warm : NULL;
    for (size_t k = 1; k < n && !st; k++) {
        for (int j = 0; j < substeps && !st; j++)
            st = step_forward(m, h, x, x, &tr[(k - 1) * substeps + j], wp);
        memcpy(pred + 13 * k, x, sizeof x);
        const double *y = meas + 13 * k;
        double d2 = 0.0, dq = 0.0;
        for (int i = 0; i < 3; i++) d2 += (x[4 + i] - y[4 + i]) * (x[4 + i] - y[4 + i]);
        for (int i = 0; i < 4; i++) dq += x[i] * y[i];
        L += wk * (d2 / (width * width) + rot_weight * (1.0 - dq * dq));
    }
    if (!st) {
        double bar[13] = {0}, sb[13];
        for (size_t k = n - 1; k >= 1 && !st; k--) {
            const double *xp = pred + 13 * k, *y = meas + 13 * k;
            double dq = 0.0;
            for (int i = 0; i < 4; i++) dq += xp[i] * y[i];
            for (int i = 0; i < 4; i++) bar[i] += -2.0 * wk * rot_weight * dq * y[i];
            for (int i = 0; i < 3; i++) bar[4 + i] += 2.0 * wk * (xp[4 + i] - y[4 + i]) / (width * width);
            for (int j = substeps - 1; j >= 0 && !st; j--) {
                memset(sb, 0, sizeof sb);
                st = imp_rigid_step_backward(m, &tr[(k - 1) * substeps + j], bar, sb, g);
                memcpy(bar, sb, sizeof sb);
            }
        }
        if (!st && x0_bar) memcpy(x0_bar, bar, sizeof bar);
    }
    if (!st && loss) *loss = L;
    free(tr), free(pred);
    return st;
}
