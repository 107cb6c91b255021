/* CHNN and CLNN dynamics in Cartesian coordinates with explicit constraints
 * ([F] section 5) and their exact reverse mode.
 *
 * Both models learn V_theta(x) (an MLP) and a constant mass matrix M(phi)
 * ([F] eq 9, reference form): per body, M^-1 = e^-phi_0 11^T + diag(0, e^-phi_j).
 * With g = grad V, W = M^-1, D = DPhi(x) (C x nd), A = dPhidot/dx = L(v)
 * (the linear part of DPhi applied to v) and Wd = W D^T:
 *
 * CHNN: zdot = P(J grad H), P(u) = u - J G (G^T J G)^-1 G^T u ([F] eq 6) on
 * z = (x, p). With G = [[D^T, A^T], [0, W D^T]] the 2C x 2C system
 * G^T J G = [[0, S], [-S, K]], S = D W D^T, K = A Wd - (A Wd)^T, splits into
 * two C x C solves with S (derivation in docs/chnn.md):
 *   b = S^-1 D v,  a = S^-1 (K b - A v - D f),  f = -W g,
 *   xdot = v - Wd b,  pdot = -g + D^T a + A^T b.
 * Since M is constant we integrate (x, v = W p): vdot = f + Wd a + W A^T b.
 *
 * CLNN: xddot = f - W D^T S^-1 (D f + A v) ([F] eq 7 with f_c = 0), which is
 * the same computation with b = 0. */
#include "chnn_internal.h"

#include <math.h>
#include <string.h>

/* Per-sample scratch layout (doubles). */
typedef struct proj_buf {
    double *D, *A, *WdT, *S, *L, *Q, *K;
    double *f, *r1, *r2, *b, *c, *a, *e, *We;
    double *Dbar, *Abar, *WdTbar, *Sbar, *Kbar;
    double *abar, *bbar, *cbar, *r1bar, *r2bar, *fbar, *ebar, *tmp;
    double *winv, *xd_s, *vd_s;
} proj_buf;

size_t imp_chnn_small_size_(const imp_cmodel *m)
{
    size_t nd = (size_t)m->sys.n_points * m->sys.d, C = (size_t)m->sys.n_rows;
    return 6 * C * nd + 6 * C * C + 4 * nd + 5 * C + 2 * nd + 5 * C + 3 * nd + (size_t)m->sys.n_points + 2 * nd;
}

static void proj_layout(const imp_cmodel *m, double *p, proj_buf *q)
{
    size_t nd = (size_t)m->sys.n_points * m->sys.d, C = (size_t)m->sys.n_rows;
#define TAKE(ptr, n) do { (ptr) = p; p += (n); } while (0)
    TAKE(q->D, C * nd); TAKE(q->A, C * nd); TAKE(q->WdT, C * nd);
    TAKE(q->S, C * C); TAKE(q->L, C * C); TAKE(q->Q, C * C); TAKE(q->K, C * C);
    TAKE(q->f, nd); TAKE(q->e, nd); TAKE(q->We, nd); TAKE(q->tmp, nd);
    TAKE(q->r1, C); TAKE(q->r2, C); TAKE(q->b, C); TAKE(q->c, C); TAKE(q->a, C);
    TAKE(q->Dbar, C * nd); TAKE(q->Abar, C * nd); TAKE(q->WdTbar, C * nd);
    TAKE(q->Sbar, C * C);
    TAKE(q->fbar, nd); TAKE(q->ebar, nd);
    TAKE(q->abar, C); TAKE(q->bbar, C); TAKE(q->cbar, C); TAKE(q->r1bar, C); TAKE(q->r2bar, C);
    TAKE(q->Kbar, C * C);
    TAKE(q->winv, (size_t)m->sys.n_points);
    TAKE(q->xd_s, nd); TAKE(q->vd_s, nd);
#undef TAKE
}

/* y = W u, W = M(phi)^-1 per body and per coordinate ([F] eq 9). */
void imp_chnn_apply_winv_(const imp_csystem *cs, const double *winv, const double *u, double *y)
{
    int d = cs->d;
    for (int bd = 0; bd < cs->n_bodies; bd++) {
        int f = cs->body_first[bd], k = cs->body_size[bd];
        for (int a = 0; a < d; a++) {
            double s = 0;
            for (int j = 0; j < k; j++) s += u[(f + j) * d + a];
            s *= winv[f];
            y[f * d + a] = s;
            for (int j = 1; j < k; j++) y[(f + j) * d + a] = s + winv[f + j] * u[(f + j) * d + a];
        }
    }
}

/* phibar += d(ybar . W(phi) u)/dphi, with W entries e^-phi. */
void imp_chnn_apply_winv_phi_vjp_(const imp_csystem *cs, const double *winv, const double *u,
                               const double *ybar, double *phibar)
{
    int d = cs->d;
    for (int bd = 0; bd < cs->n_bodies; bd++) {
        int f = cs->body_first[bd], k = cs->body_size[bd];
        double g0 = 0;
        for (int a = 0; a < d; a++) {
            double su = 0, sy = 0;
            for (int j = 0; j < k; j++) {
                su += u[(f + j) * d + a];
                sy += ybar[(f + j) * d + a];
            }
            g0 += su * sy;
        }
        phibar[f] -= winv[f] * g0;
        for (int j = 1; j < k; j++) {
            double gj = 0;
            for (int a = 0; a < d; a++) gj += ybar[(f + j) * d + a] * u[(f + j) * d + a];
            phibar[f + j] -= winv[f + j] * gj;
        }
    }
}

/* D = DPhi(x) and A = dPhidot/dx = L(v), dense C x nd (constrained.h). */
static void build_jacobians(const imp_csystem *cs, const double *x, const double *v, double *D,
                            double *A)
{
    imp_csys_jacobian(&cs->full, x, D);
    imp_csys_jacobian_dot(&cs->full, v, A);
}

/* xbar += L^T(Dbar): the adjoint of x -> D(x) (and of v -> A(v)). */
static void jacobian_adjoint(const imp_csystem *cs, const double *Dbar, double *xbar)
{
    imp_csys_jacobian_vjp(&cs->full, Dbar, xbar);
}

/* In-place Cholesky S = L L^T (lower part of L). Returns -1 if S is not SPD. */
static int cholesky(const double *S, int n, double *L)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double s = S[i * n + j];
            for (int k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
            if (i == j) {
                if (!(s > 0.0)) return -1;
                L[i * n + i] = sqrt(s);
            } else {
                L[i * n + j] = s / L[j * n + j];
            }
        }
    return 0;
}

static void chol_solve(const double *L, int n, const double *rhs, double *x)
{
    for (int i = 0; i < n; i++) {
        double s = rhs[i];
        for (int k = 0; k < i; k++) s -= L[i * n + k] * x[k];
        x[i] = s / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (int k = i + 1; k < n; k++) s -= L[k * n + i] * x[k];
        x[i] = s / L[i * n + i];
    }
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* Forward projection for one sample; g = grad V(x). Writes xdot, vdot. */
static int proj_forward(const imp_cmodel *m, const double *x, const double *v, const double *g,
                        proj_buf *q, double *xdot, double *vdot)
{
    const imp_csystem *cs = &m->sys;
    int nd = cs->n_points * cs->d, C = cs->n_rows;
    int ham = m->kind == IMP_CMODEL_CHNN;
    build_jacobians(cs, x, v, q->D, q->A);
    for (int c = 0; c < C; c++) imp_chnn_apply_winv_(cs, q->winv, q->D + (size_t)c * nd, q->WdT + (size_t)c * nd);
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            q->S[i * C + j] = dot(q->D + (size_t)i * nd, q->WdT + (size_t)j * nd, nd);
            q->Q[i * C + j] = ham ? dot(q->A + (size_t)i * nd, q->WdT + (size_t)j * nd, nd) : 0.0;
        }
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) q->K[i * C + j] = q->Q[i * C + j] - q->Q[j * C + i];
    if (cholesky(q->S, C, q->L)) return -1;
    imp_chnn_apply_winv_(cs, q->winv, g, q->f);
    for (int i = 0; i < nd; i++) q->f[i] = -q->f[i];
    for (int c = 0; c < C; c++) {
        q->r1[c] = ham ? dot(q->D + (size_t)c * nd, v, nd) : 0.0;
        q->r2[c] = dot(q->A + (size_t)c * nd, v, nd) + dot(q->D + (size_t)c * nd, q->f, nd);
    }
    if (ham) chol_solve(q->L, C, q->r1, q->b);
    else memset(q->b, 0, (size_t)C * sizeof(double));
    for (int i = 0; i < C; i++) q->c[i] = dot(q->K + (size_t)i * C, q->b, C) - q->r2[i];
    chol_solve(q->L, C, q->c, q->a);
    memset(q->e, 0, (size_t)nd * sizeof(double));
    for (int c = 0; c < C; c++)
        for (int k = 0; k < nd; k++) q->e[k] += q->b[c] * q->A[(size_t)c * nd + k];
    imp_chnn_apply_winv_(cs, q->winv, q->e, q->We);
    for (int k = 0; k < nd; k++) {
        double sx = v[k], sv = q->f[k] + q->We[k];
        for (int c = 0; c < C; c++) {
            sx -= q->WdT[(size_t)c * nd + k] * q->b[c];
            sv += q->WdT[(size_t)c * nd + k] * q->a[c];
        }
        xdot[k] = sx;
        vdot[k] = sv;
    }
    return 0;
}

/* Reverse of proj_forward (which must have run on q). Accumulates xbar,
 * vbar, gbar, phibar (mass parameters, one per point). */
static void proj_backward(const imp_cmodel *m, const double *x, const double *v, const double *g,
                          proj_buf *q, const double *xdbar, const double *vdbar, double *xbar,
                          double *vbar, double *gbar, double *phibar)
{
    (void)x;
    const imp_csystem *cs = &m->sys;
    int nd = cs->n_points * cs->d, C = cs->n_rows;
    int ham = m->kind == IMP_CMODEL_CHNN;
    size_t CN = (size_t)C * nd;
    memset(q->Dbar, 0, CN * sizeof(double));
    memset(q->Abar, 0, CN * sizeof(double));
    memset(q->WdTbar, 0, CN * sizeof(double));
    memset(q->Sbar, 0, (size_t)C * C * sizeof(double));
    memset(q->bbar, 0, (size_t)C * sizeof(double));
    /* xdot = v - Wd b;  vdot = f + Wd a + W e, e = A^T b */
    for (int k = 0; k < nd; k++) {
        vbar[k] += xdbar[k];
        q->fbar[k] = vdbar[k];
    }
    for (int c = 0; c < C; c++) {
        double *Wr = q->WdT + (size_t)c * nd, *Wrb = q->WdTbar + (size_t)c * nd;
        for (int k = 0; k < nd; k++) Wrb[k] += q->a[c] * vdbar[k] - q->b[c] * xdbar[k];
        q->abar[c] = dot(Wr, vdbar, nd);
        q->bbar[c] -= dot(Wr, xdbar, nd);
    }
    if (ham) {
        imp_chnn_apply_winv_(cs, q->winv, vdbar, q->ebar);
        imp_chnn_apply_winv_phi_vjp_(cs, q->winv, q->e, vdbar, phibar);
        for (int c = 0; c < C; c++) {
            double *Ar = q->A + (size_t)c * nd, *Arb = q->Abar + (size_t)c * nd;
            for (int k = 0; k < nd; k++) Arb[k] += q->b[c] * q->ebar[k];
            q->bbar[c] += dot(Ar, q->ebar, nd);
        }
    }
    /* a = S^-1 c */
    chol_solve(q->L, C, q->abar, q->cbar);
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) q->Sbar[i * C + j] -= q->cbar[i] * q->a[j];
    /* c = K b - r2 */
    for (int i = 0; i < C; i++) q->r2bar[i] = -q->cbar[i];
    if (ham) {
        for (int i = 0; i < C; i++)
            for (int j = 0; j < C; j++) {
                q->Kbar[i * C + j] = q->cbar[i] * q->b[j];
                q->bbar[j] += q->K[i * C + j] * q->cbar[i];
            }
        /* b = S^-1 r1 */
        chol_solve(q->L, C, q->bbar, q->r1bar);
        for (int i = 0; i < C; i++)
            for (int j = 0; j < C; j++) q->Sbar[i * C + j] -= q->r1bar[i] * q->b[j];
        /* r1 = D v */
        for (int c = 0; c < C; c++) {
            double *Dr = q->D + (size_t)c * nd, *Drb = q->Dbar + (size_t)c * nd;
            for (int k = 0; k < nd; k++) {
                Drb[k] += q->r1bar[c] * v[k];
                vbar[k] += q->r1bar[c] * Dr[k];
            }
        }
    }
    /* r2 = A v + D f */
    for (int c = 0; c < C; c++) {
        double *Dr = q->D + (size_t)c * nd, *Drb = q->Dbar + (size_t)c * nd;
        double *Ar = q->A + (size_t)c * nd, *Arb = q->Abar + (size_t)c * nd;
        double r = q->r2bar[c];
        for (int k = 0; k < nd; k++) {
            Arb[k] += r * v[k];
            vbar[k] += r * Ar[k];
            Drb[k] += r * q->f[k];
            q->fbar[k] += r * Dr[k];
        }
    }
    /* f = -W g */
    imp_chnn_apply_winv_(cs, q->winv, q->fbar, q->tmp);
    for (int k = 0; k < nd; k++) gbar[k] -= q->tmp[k];
    for (int k = 0; k < nd; k++) q->tmp[k] = -q->fbar[k];
    imp_chnn_apply_winv_phi_vjp_(cs, q->winv, g, q->tmp, phibar);
    /* K = Q - Q^T, Q = A Wd */
    if (ham) {
        for (int i = 0; i < C; i++)
            for (int j = 0; j < C; j++) {
                double Qb = q->Kbar[i * C + j] - q->Kbar[j * C + i];
                if (Qb == 0.0) continue;
                double *Ai = q->A + (size_t)i * nd, *Aib = q->Abar + (size_t)i * nd;
                double *Wj = q->WdT + (size_t)j * nd, *Wjb = q->WdTbar + (size_t)j * nd;
                for (int k = 0; k < nd; k++) {
                    Aib[k] += Qb * Wj[k];
                    Wjb[k] += Qb * Ai[k];
                }
            }
    }
    /* S = D Wd */
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            double Sb = q->Sbar[i * C + j];
            double *Di = q->D + (size_t)i * nd, *Dib = q->Dbar + (size_t)i * nd;
            double *Wj = q->WdT + (size_t)j * nd, *Wjb = q->WdTbar + (size_t)j * nd;
            for (int k = 0; k < nd; k++) {
                Dib[k] += Sb * Wj[k];
                Wjb[k] += Sb * Di[k];
            }
        }
    /* WdT[c] = W D[c] */
    for (int c = 0; c < C; c++) {
        imp_chnn_apply_winv_(cs, q->winv, q->WdTbar + (size_t)c * nd, q->tmp);
        double *Drb = q->Dbar + (size_t)c * nd;
        for (int k = 0; k < nd; k++) Drb[k] += q->tmp[k];
        imp_chnn_apply_winv_phi_vjp_(cs, q->winv, q->D + (size_t)c * nd, q->WdTbar + (size_t)c * nd, phibar);
    }
    /* D = L(x) + D0, A = L(v) */
    jacobian_adjoint(cs, q->Dbar, xbar);
    jacobian_adjoint(cs, q->Abar, vbar);
}

void imp_chnn_load_winv_(const imp_cmodel *m, const double *params, double *winv)
{
    for (int p = 0; p < m->sys.n_points; p++) winv[p] = exp(-params[m->off_mass + p]);
}

static void gather_x(const imp_cmodel *m, const double *y, int B, double *xb)
{
    int nd = m->sys.n_points * m->sys.d;
    for (int s = 0; s < B; s++) memcpy(xb + (size_t)s * nd, y + (size_t)s * 2 * nd, (size_t)nd * sizeof(double));
}

int imp_chnn_rhs_(const imp_cmodel *m, const double *params, const double *y, int B, double *ydot,
                  imp_cmodel_work *w, int slot)
{
    double *g = w->out[slot];
    int nd = m->sys.n_points * m->sys.d;
    proj_buf q;
    proj_layout(m, w->small, &q);
    imp_chnn_load_winv_(m, params, q.winv);
    gather_x(m, y, B, w->in);
    imp_mlp_grad_input(&m->net, params, w->in, B, g, NULL, w->mlp[slot]);
    for (int s = 0; s < B; s++) {
        const double *ys = y + (size_t)s * 2 * nd;
        double *yd = ydot + (size_t)s * 2 * nd;
        if (proj_forward(m, ys, ys + nd, g + (size_t)s * nd, &q, yd, yd + nd))
            return imp_fail(IMP_ERR_NUMERIC,
                            "model: constraint Gram matrix DPhi M^-1 DPhi^T not positive definite (sample %d)", s);
    }
    return IMP_OK;
}

int imp_chnn_rhs_vjp_(const imp_cmodel *m, const double *params, const double *y, int B,
                      const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w,
                      int slot, int cached)
{
    int nd = m->sys.n_points * m->sys.d;
    double *g = w->out[slot];
    proj_buf q;
    proj_layout(m, w->small, &q);
    imp_chnn_load_winv_(m, params, q.winv);
    if (!cached) {
        gather_x(m, y, B, w->in);
        imp_mlp_grad_input(&m->net, params, w->in, B, g, NULL, w->mlp[slot]);
    }
    memset(w->out_bar, 0, (size_t)B * nd * sizeof(double));
    double *phibar = theta_bar ? theta_bar + m->off_mass : w->pscratch + m->off_mass;
    for (int s = 0; s < B; s++) {
        const double *ys = y + (size_t)s * 2 * nd;
        double *yb = ybar + (size_t)s * 2 * nd;
        const double *fb = fbar + (size_t)s * 2 * nd;
        double *xd = q.xd_s, *vd = q.vd_s; /* the recomputed output is not needed */
        if (proj_forward(m, ys, ys + nd, g + (size_t)s * nd, &q, xd, vd))
            return imp_fail(IMP_ERR_NUMERIC,
                            "model: constraint Gram matrix DPhi M^-1 DPhi^T not positive definite (sample %d)", s);
        proj_backward(m, ys, ys + nd, g + (size_t)s * nd, &q, fb, fb + nd, yb, yb + nd,
                      w->out_bar + (size_t)s * nd, phibar);
    }
    /* gbar -> Hessian-vector product and weight gradients (sweep 2) */
    memset(w->in_bar, 0, (size_t)B * nd * sizeof(double));
    /* theta_bar == NULL: a Hessian-vector product only, no weight products */
    imp_mlp_grad_input_vjp(&m->net, params, w->out_bar, B, theta_bar, w->in_bar, w->mlp[slot]);
    for (int s = 0; s < B; s++) {
        double *yb = ybar + (size_t)s * 2 * nd;
        const double *xb = w->in_bar + (size_t)s * nd;
        for (int k = 0; k < nd; k++) yb[k] += xb[k];
    }
    return IMP_OK;
}
