/* CHNN and CLNN with contact (issue #25): the contact map after a step of
 * the learned flow, solved through the learned constrained inverse mass
 * P = W - W D^T (D W D^T)^-1 D W with the contact module's solver, and its
 * exact reverse pass to the state, the learned masses and e, mu
 * (docs/derivations/contact.md section 10). */
#include "chnn_internal.h"
#include "core/dense.h"
#include "impulse/constrained_contact.h"
#include "impulse/contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NMAX (IMP_CSYS_MAX_POINTS * 3)
#define CONTACT_JAM_REGULARIZATION 1e-3
#define GN_STEPS 2 /* Gauss-Newton steps of the positions onto the joints (eq 26) */

static double sigmoid(double z) { return z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z)); }
static double softplus(double z) { return z > 30 ? z : log1p(exp(z)); }

int imp_cmodel_enable_contact(imp_cmodel *m)
{
    if (!m) return imp_fail(IMP_ERR_INVALID, "model: NULL");
    if (m->kind != IMP_CMODEL_CHNN && m->kind != IMP_CMODEL_CLNN)
        return imp_fail(IMP_ERR_UNSUPPORTED, "contact: only chnn and clnn learn contacts (not %s)",
                        imp_cmodel_kind_name(m->kind));
    int nc = m->sys.full.n_contacts;
    if (nc < 1) return imp_fail(IMP_ERR_INVALID, "contact: system '%s' declares no contacts", m->sys.name);
    if (m->contact) return IMP_OK;
    m->contact = 1;
    m->contact_scale = IMP_CMODEL_CONTACT_SCALE;
    m->off_contact = m->n_params;
    m->n_params += 2 * (size_t)nc;
    return IMP_OK;
}

void imp_cmodel_init_contact_params(const imp_cmodel *m, double *params)
{
    if (!m->contact) return;
    for (int c = 0; c < m->sys.full.n_contacts; c++) imp_cmodel_set_contact(m, params, c, 0.5, 0.25);
}

int imp_cmodel_set_contact(const imp_cmodel *m, double *params, int c, double e, double mu)
{
    if (!m || !params || !m->contact) return imp_fail(IMP_ERR_INVALID, "contact: no contact parameters");
    if (c < 0 || c >= m->sys.full.n_contacts)
        return imp_fail(IMP_ERR_INVALID, "contact: %d is not a contact (%d)", c, m->sys.full.n_contacts);
    if (!(e > 0 && e < 1) || !(mu > 0) || !isfinite(mu))
        return imp_fail(IMP_ERR_INVALID, "contact %d: e %g must be in (0, 1) and mu %g > 0", c, e, mu);
    params[m->off_contact + 2 * c] = log(e / (1 - e)) / m->contact_scale;
    params[m->off_contact + 2 * c + 1] = (mu > 30 ? mu : log(expm1(mu))) / m->contact_scale;
    return IMP_OK;
}

void imp_cmodel_contact_values(const imp_cmodel *m, const double *params, double *e, double *mu)
{
    for (int c = 0; m->contact && c < m->sys.full.n_contacts; c++) {
        if (e) e[c] = sigmoid(m->contact_scale * params[m->off_contact + 2 * c]);
        if (mu) mu[c] = softplus(m->contact_scale * params[m->off_contact + 2 * c + 1]);
    }
}

/* ---- the learned constrained inverse mass, dense ---- */
typedef struct pmat {
    int N, C;
    double winv[IMP_CSYS_MAX_POINTS];
    double *W, *D, *Z, *S, *Y, *P; /* N x N, C x N, C x N, C x C (LU), C x N, N x N */
    int *piv;
} pmat;

static size_t pmat_doubles(int N, int C) { return 2 * (size_t)N * N + 3 * (size_t)C * N + (size_t)C * C; }

static void pmat_layout(pmat *p, int N, int C, double *buf, int *ibuf)
{
    p->N = N;
    p->C = C;
    p->W = buf;
    p->P = p->W + (size_t)N * N;
    p->D = p->P + (size_t)N * N;
    p->Z = p->D + (size_t)C * N;
    p->Y = p->Z + (size_t)C * N;
    p->S = p->Y + (size_t)C * N;
    p->piv = ibuf;
}

/* W, D = DPhi(x), Z = D W, S = Z D^T, Y = S^-1 Z, P = W - Z^T Y. */
static int pmat_build(const imp_cmodel *m, const double *params, const double *x, pmat *p)
{
    const imp_csystem *cs = &m->sys;
    int N = p->N, C = p->C;
    imp_chnn_load_winv_(m, params, p->winv);
    double *u = p->P; /* scratch before P is formed */
    for (int j = 0; j < N; j++) {
        memset(u, 0, (size_t)N * sizeof(double));
        u[j] = 1;
        double col[NMAX];
        imp_chnn_apply_winv_(cs, p->winv, u, col);
        for (int i = 0; i < N; i++) p->W[(size_t)i * N + j] = col[i];
    }
    imp_csys_jacobian(&cs->full, x, p->D);
    for (int c = 0; c < C; c++) imp_chnn_apply_winv_(cs, p->winv, p->D + (size_t)c * N, p->Z + (size_t)c * N);
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += p->Z[(size_t)i * N + k] * p->D[(size_t)j * N + k];
            p->S[(size_t)i * C + j] = s;
        }
    if (imp_lu_factor(C, p->S, p->piv, 1e-14))
        return imp_fail(IMP_ERR_NUMERIC, "contact: constraint Gram matrix DPhi M^-1 DPhi^T singular");
    double col[IMP_CSYS_MAX_ROWS];
    for (int k = 0; k < N; k++) {
        for (int i = 0; i < C; i++) col[i] = p->Z[(size_t)i * N + k];
        imp_lu_solve(C, p->S, p->piv, col);
        for (int i = 0; i < C; i++) p->Y[(size_t)i * N + k] = col[i];
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = p->W[(size_t)i * N + j];
            for (int c = 0; c < C; c++) s -= p->Z[(size_t)c * N + i] * p->Y[(size_t)c * N + j];
            p->P[(size_t)i * N + j] = s;
        }
    return IMP_OK;
}

/* The common tail of the reverses through Z = D W and S = D W D^T (W the
 * learned inverse mass, D = DPhi(x)): from Zb, Sb (C x N, C x C), Db
 * (C x N, accumulated in place) and G (N x N, a direct W gradient; may be
 * NULL): W_bar = G + D^T S_bar D + D^T Z_bar, D_bar += (S_bar + S_bar^T) Z
 * + Z_bar W; then xbar += D_bar's adjoint, phibar += W_bar's. */
static void zs_backward(const imp_cmodel *m, const pmat *p, const double *G, const double *Zb, const double *Sb,
                        double *Db, double *Wb, double *xbar, double *phibar)
{
    const imp_csystem *cs = &m->sys;
    int N = p->N, C = p->C;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = G ? G[(size_t)i * N + j] : 0.0;
            for (int a = 0; a < C; a++) {
                double da = p->D[(size_t)a * N + i];
                if (da == 0.0) continue;
                s += da * Zb[(size_t)a * N + j];
                for (int b = 0; b < C; b++) s += da * Sb[(size_t)a * C + b] * p->D[(size_t)b * N + j];
            }
            Wb[(size_t)i * N + j] = s;
        }
    for (int a = 0; a < C; a++)
        for (int k = 0; k < N; k++) {
            double s = 0;
            for (int b = 0; b < C; b++) s += (Sb[(size_t)a * C + b] + Sb[(size_t)b * C + a]) * p->Z[(size_t)b * N + k];
            for (int j = 0; j < N; j++) s += Zb[(size_t)a * N + j] * p->W[(size_t)j * N + k];
            Db[(size_t)a * N + k] += s;
        }
    imp_csys_jacobian_vjp(&cs->full, Db, xbar);
    double u[NMAX], yb[NMAX];
    for (int j = 0; j < N; j++) {
        memset(u, 0, (size_t)N * sizeof(double));
        u[j] = 1;
        for (int i = 0; i < N; i++) yb[i] = Wb[(size_t)i * N + j];
        imp_chnn_apply_winv_phi_vjp_(cs, p->winv, u, yb, phibar);
    }
}

/* Reverse of pmat_build from G = P_bar (N x N): xbar += dL/dx, phibar +=
 * dL/dphi (mass parameters). With Y = S^-1 Z (sec 10, eq 24):
 * Z_bar = -Y (G + G^T), S_bar = Y G Y^T, then zs_backward. */
static void pmat_backward(const imp_cmodel *m, const pmat *p, const double *G, double *xbar, double *phibar,
                          double *scratch)
{
    int N = p->N, C = p->C;
    double *Zb = scratch, *Sb = Zb + (size_t)C * N, *Wb = Sb + (size_t)C * C, *Db = Wb + (size_t)N * N;
    double *YG = Db + (size_t)C * N; /* C x N */
    for (int c = 0; c < C; c++)
        for (int j = 0; j < N; j++) {
            double s = 0, t = 0;
            for (int i = 0; i < N; i++) {
                s += p->Y[(size_t)c * N + i] * G[(size_t)i * N + j];
                t += p->Y[(size_t)c * N + i] * G[(size_t)j * N + i];
            }
            YG[(size_t)c * N + j] = s;
            Zb[(size_t)c * N + j] = -(s + t);
        }
    for (int a = 0; a < C; a++)
        for (int b = 0; b < C; b++) {
            double s = 0;
            for (int j = 0; j < N; j++) s += YG[(size_t)a * N + j] * p->Y[(size_t)b * N + j];
            Sb[(size_t)a * C + b] = s;
        }
    memset(Db, 0, (size_t)C * N * sizeof(double));
    zs_backward(m, p, G, Zb, Sb, Db, Wb, xbar, phibar);
}

/* The velocity onto the joints' tangent space at x in the learned mass
 * metric (sec 10, eq 25): v' = v - Z^T S^-1 D v, with p built at x. */
static void vproj_forward(const pmat *p, const double *v, double *vout, double *yc)
{
    int N = p->N, C = p->C;
    for (int c = 0; c < C; c++) {
        double r = 0;
        for (int k = 0; k < N; k++) r += p->D[(size_t)c * N + k] * v[k];
        yc[c] = r;
    }
    imp_lu_solve(C, p->S, p->piv, yc);
    for (int k = 0; k < N; k++) {
        double s = v[k];
        for (int c = 0; c < C; c++) s -= p->Z[(size_t)c * N + k] * yc[c];
        vout[k] = s;
    }
}

/* One Gauss-Newton step of the positions onto the joints in the same
 * metric (eq 26): x' = x - Z^T S^-1 Phi(x), with p built at x. */
static void gn_forward(const imp_cmodel *m, const pmat *p, const double *x, double *xout, double *yc)
{
    int N = p->N, C = p->C;
    imp_csys_phi(&m->sys.full, x, yc);
    imp_lu_solve(C, p->S, p->piv, yc);
    for (int k = 0; k < N; k++) {
        double s = x[k];
        for (int c = 0; c < C; c++) s -= p->Z[(size_t)c * N + k] * yc[c];
        xout[k] = s;
    }
}

/* The reverse of vproj_forward (v given) or of gn_forward (v NULL: r =
 * Phi(x), whose Jacobian is D): vbar (in: dL/dv' or dL/dx'; out: dL/dv or
 * the x' part of dL/dx), xbar += dL/dx through D(x), Z and S (may alias
 * vbar when v is NULL), phibar +=. */
static void vproj_backward(const imp_cmodel *m, const pmat *p, const double *v, const double *yc, double *vbar,
                           double *xbar, double *phibar, double *scratch)
{
    int N = p->N, C = p->C;
    double *Zb = scratch, *Sb = Zb + (size_t)C * N, *Wb = Sb + (size_t)C * C, *Db = Wb + (size_t)N * N;
    double rb[IMP_CSYS_MAX_ROWS];
    for (int c = 0; c < C; c++) {
        double s = 0;
        for (int k = 0; k < N; k++) {
            Zb[(size_t)c * N + k] = -yc[c] * vbar[k];
            s -= p->Z[(size_t)c * N + k] * vbar[k];
        }
        rb[c] = s;
    }
    imp_lu_solve_transpose(C, p->S, p->piv, rb);
    for (int a = 0; a < C; a++)
        for (int b = 0; b < C; b++) Sb[(size_t)a * C + b] = -rb[a] * yc[b];
    for (int c = 0; c < C; c++)
        for (int k = 0; k < N; k++) Db[(size_t)c * N + k] = v ? rb[c] * v[k] : 0.0;
    for (int k = 0; k < N; k++) {
        double s = 0;
        for (int c = 0; c < C; c++) s += p->D[(size_t)c * N + k] * rb[c];
        vbar[k] += s;
    }
    zs_backward(m, p, NULL, Zb, Sb, Db, Wb, xbar, phibar);
}

static size_t pmat_back_doubles(int N, int C) { return 3 * (size_t)C * N + (size_t)C * C + (size_t)N * N; }

/* ---- reverse of imp_csys_contact_frame (gap and Jacobian rows) ---- */
/* xbar += d(phi_bar phi + <J_bar, J>)/dx for contact c at x (J_bar: d x N or
 * NULL). The plane is fixed. */
static void frame_vjp(const imp_csys *s, const double *x, int c, double phi_bar, const double *J_bar, double *xbar)
{
    const imp_ccontact *cc = &s->contacts[c];
    if (cc->other >= 0) {
        /* a body-body contact: its normal turns with x. The forward pass has
           already solved at this x, so the centres are apart and this cannot fail. */
        (void)imp_csys_body_contact_vjp(s, x, c, phi_bar, J_bar, xbar);
        return;
    }
    const imp_cbody *B = &s->bodies[cc->body];
    const imp_cplane *Pl = &s->planes[cc->plane];
    int d = s->d, N = imp_csys_ndof(s), p0 = B->first_point, k_ax = B->n_axes;
    const double *n = Pl->normal;
    double pc[3], dirs[3][3];
    imp_csys_contact_frame(s, x, c, pc, dirs, NULL);
    double pcb[3] = {0, 0, 0};
    for (int k = 0; k < d; k++) pcb[k] = phi_bar * n[k];
    if (J_bar && k_ax > 0) {
        /* J[r][(p0+t)d+k] = wt[t] dirs[r][k]; wt[i] = (pc - x0).(x_i - x0), wt[0] = 1 - sum */
        double wtb[4] = {0, 0, 0, 0};
        for (int t = 0; t <= k_ax; t++)
            for (int r = 0; r < d; r++)
                for (int k = 0; k < d; k++) wtb[t] += J_bar[(size_t)r * N + (p0 + t) * d + k] * dirs[r][k];
        const double *x0 = x + p0 * d;
        for (int i = 1; i <= k_ax; i++) {
            double g = wtb[i] - wtb[0];
            const double *xi = x + (p0 + i) * d;
            for (int k = 0; k < d; k++) {
                pcb[k] += g * (xi[k] - x0[k]);
                xbar[(p0 + i) * d + k] += g * (pc[k] - x0[k]);
                xbar[p0 * d + k] -= g * (xi[k] - x0[k]) + g * (pc[k] - x0[k]);
            }
        }
    }
    /* pc = sum_t w_t x_(p0+t) + off(x) */
    for (int t = 0; t <= k_ax; t++)
        for (int k = 0; k < d; k++) xbar[(p0 + t) * d + k] += cc->w[t] * pcb[k];
    if (cc->shape != IMP_CSHAPE_DISK) return;
    /* off = -r u/|u|, u = n - (n.ah) ah, ah = a/|a|, a = sum_i axis_i (x_(p0+1+i) - x_p0) */
    double a[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) a[k] += cc->axis[i] * (x[(p0 + 1 + i) * d + k] - x[p0 * d + k]);
    double na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), ah[3], nda = 0;
    for (int k = 0; k < 3; k++) {
        ah[k] = a[k] / na;
        nda += n[k] * ah[k];
    }
    double u[3], nu = 0;
    for (int k = 0; k < 3; k++) {
        u[k] = n[k] - nda * ah[k];
        nu += u[k] * u[k];
    }
    nu = sqrt(nu);
    if (!(nu > 1e-12)) return;
    double uh[3], uhb[3], ub[3], dot_uu = 0;
    for (int k = 0; k < 3; k++) {
        uh[k] = u[k] / nu;
        uhb[k] = -cc->radius * pcb[k];
        dot_uu += uh[k] * uhb[k];
    }
    double ahb[3], dot_au = 0;
    for (int k = 0; k < 3; k++) {
        ub[k] = (uhb[k] - dot_uu * uh[k]) / nu;
        dot_au += ah[k] * ub[k];
    }
    double dot_aa = 0;
    for (int k = 0; k < 3; k++) {
        ahb[k] = -(nda * ub[k] + n[k] * dot_au);
        dot_aa += ah[k] * ahb[k];
    }
    double sum_ax = cc->axis[0] + cc->axis[1] + cc->axis[2];
    for (int k = 0; k < 3; k++) {
        double ab = (ahb[k] - dot_aa * ah[k]) / na;
        for (int i = 0; i < 3; i++) xbar[(p0 + 1 + i) * d + k] += cc->axis[i] * ab;
        xbar[p0 * d + k] -= sum_ax * ab;
    }
}

/* ---- the contact map ---- */
typedef struct cstep {
    int n, active[IMP_CSYS_MAX_CONTACTS];
    double phis[IMP_CSYS_MAX_CONTACTS], alpha;
    int first;       /* the active contact whose crossing fraction is alpha, -1 if alpha is 0 by the clamp */
    double phik_first;
    double e[IMP_CSYS_MAX_CONTACTS], mu[IMP_CSYS_MAX_CONTACTS];
    imp_contact_solution sol;
} cstep;

static int contact_dims(const imp_cmodel *m, int *N, int *C, int *d)
{
    if (!m->contact) return imp_fail(IMP_ERR_INVALID, "contact: the model has no contact parameters");
    *N = m->sys.n_points * m->sys.d;
    *C = m->sys.n_rows;
    *d = m->sys.d;
    return IMP_OK;
}

/* v+ = v + P J^T lambda for n contacts with rows J (n d x N) through the
 * contact module's solve with the metric p, e and mu per row block. */
static int solve_impulse(const pmat *p, const double *J, int n, int d, const double *v, const double *e,
                         const double *mu, double *vp, imp_contact_solution *sol, double *work, int *iwork)
{
    imp_contact_solve_opts o;
    imp_contact_solve_opts_default(&o);
    int st = imp_contact_impulse_forward(vp, sol, v, J, n, d, p->N, imp_contact_minv_dense, p->P, e, mu, &o, work,
                                         iwork);
    if (st == IMP_ERR_NUMERIC) {
        /* a jam (no impulse satisfies the law at the default regularization,
         * sec 9 "Jamming"): the law regularized by 1e-3 tr(A) / rows, the
         * start of the solver's own continuation, whose impulses are bounded;
         * the reverse pass differentiates that (sol.eps) */
        o.regularization = CONTACT_JAM_REGULARIZATION;
        st = imp_contact_impulse_forward(vp, sol, v, J, n, d, p->N, imp_contact_minv_dense, p->P, e, mu, &o, work,
                                         iwork);
    }
    return st;
}

/* Everything of the forward map up to v+; buffers from the caller. */
static int forward_core(const imp_cmodel *m, const double *params, const double *xk, const double *ys, cstep *cs,
                        pmat *p, double *J, double *vp, double *work, int *iwork)
{
    const imp_csys *s = &m->sys.full;
    int N = p->N, d = s->d;
    const double *x = ys, *v = ys + N;
    cs->n = 0;
    cs->alpha = 0;
    cs->first = -1;
    for (int c = 0; c < s->n_contacts; c++) {
        double un, phi = imp_csys_contact_gap_rate(s, x, v, c, J + (size_t)cs->n * d * N, &un);
        if (!(phi < 0) || !(un < 0)) continue;
        cs->phis[cs->n] = phi;
        cs->active[cs->n++] = c;
    }
    if (cs->n == 0) return IMP_OK;
    double aval = 1.0;
    for (int i = 0; i < cs->n; i++) {
        double phik = imp_csys_contact_frame(s, xk, cs->active[i], NULL, NULL, NULL);
        double a = phik > 0 ? phik / (phik - cs->phis[i]) : 0.0;
        if (a < aval) {
            aval = a;
            cs->first = phik > 0 ? i : -1;
            cs->phik_first = phik;
        }
    }
    cs->alpha = aval;
    imp_cmodel_contact_values(m, params, cs->e, cs->mu);
    double e[IMP_CSYS_MAX_CONTACTS], mu[IMP_CSYS_MAX_CONTACTS];
    for (int i = 0; i < cs->n; i++) {
        e[i] = cs->e[cs->active[i]];
        mu[i] = cs->mu[cs->active[i]];
    }
    int st = pmat_build(m, params, x, p);
    if (st) return st;
    st = solve_impulse(p, J, cs->n, d, v, e, mu, vp, &cs->sol, work, iwork);
    return st ? imp_fail_context(st, "contact map (%d active contacts)", cs->n) : IMP_OK;
}

typedef struct cbuf {
    double *all, *J, *vp, *work, *pm, *pb, *Jb, *Pb, *pm2[GN_STEPS], *pm3, *yc[GN_STEPS], *yc3, *xg;
    int *iwork, *piv, *piv2[GN_STEPS], *piv3;
} cbuf;

static void cbuf_free(cbuf *b)
{
    free(b->all);
    free(b->iwork);
    b->all = NULL;
    b->iwork = NULL;
}

static int cbuf_new(cbuf *b, int n_c, int d, int N, int C)
{
    size_t nJ = (size_t)n_c * d * N, nw = imp_contact_impulse_work_doubles(n_c, d, N);
    size_t total = 2 * nJ + (size_t)N + nw + (2 + GN_STEPS) * pmat_doubles(N, C) + pmat_back_doubles(N, C) +
                   (size_t)N * N + (1 + GN_STEPS) * (size_t)C + (GN_STEPS + 1) * (size_t)N;
    memset(b, 0, sizeof *b);
    b->all = calloc(total, sizeof(double));
    b->iwork = malloc((imp_contact_solve_work_ints(n_c, d) + (2 + GN_STEPS) * (size_t)C + 1) * sizeof(int));
    if (!b->all || !b->iwork) {
        cbuf_free(b);
        return imp_fail(IMP_ERR_NOMEM, "contact map: out of memory");
    }
    b->J = b->all;
    b->Jb = b->J + nJ;
    b->vp = b->Jb + nJ;
    b->work = b->vp + N;
    b->pm = b->work + nw;
    b->pb = b->pm + pmat_doubles(N, C);
    b->Pb = b->pb + pmat_back_doubles(N, C);
    double *q = b->Pb + (size_t)N * N;
    b->piv = b->iwork + imp_contact_solve_work_ints(n_c, d);
    int *iq = b->piv + C;
    for (int g = 0; g < GN_STEPS; g++) {
        b->pm2[g] = q;
        q += pmat_doubles(N, C);
        b->yc[g] = q;
        q += C;
        b->piv2[g] = iq;
        iq += C;
    }
    b->pm3 = q;
    b->yc3 = q + pmat_doubles(N, C);
    b->xg = b->yc3 + C; /* (GN_STEPS + 1) N: the positions before each step and after the last */
    b->piv3 = iq;
    return IMP_OK;
}

/* Whether any contact is active at y* (penetrating and closing, as
 * forward_core decides): most maps of a rollout have none, and need neither
 * buffers nor the metric. */
static int any_active(const imp_cmodel *m, const double *ys)
{
    const imp_csys *s = &m->sys.full;
    int N = m->sys.n_points * m->sys.d;
    for (int c = 0; c < s->n_contacts; c++) {
        double un, phi = imp_csys_contact_gap_rate(s, ys, ys + N, c, NULL, &un);
        if (phi < 0 && un < 0) return 1;
    }
    return 0;
}

/* The sizes, the buffers and the impulse (forward_core) of one map at
 * (x_k, y*); the caller frees b (cbuf_free) whatever the status. */
static int map_begin(const imp_cmodel *m, const double *params, const double *xk, const double *ys, cbuf *b,
                     cstep *cs, pmat *p, int *N, int *C, int *d)
{
    memset(b, 0, sizeof *b);
    int st = contact_dims(m, N, C, d);
    if (st || (st = cbuf_new(b, m->sys.full.n_contacts, *d, *N, *C))) return st;
    pmat_layout(p, *N, *C, b->pm, b->piv);
    return forward_core(m, params, xk, ys, cs, p, b->J, b->vp, b->work, b->iwork);
}

/* x+ = x* + f (v+ - v*) (eq 23, v+ in b->vp), GN_STEPS Gauss-Newton steps
 * onto the joints (eq 26; the positions in b->xg, the last one the result)
 * and the metric at the result for eq 25 (b->pm3). */
static int project_forward(const imp_cmodel *m, const double *params, cbuf *b, const double *x, const double *v,
                           double f, int N, int C)
{
    for (int q = 0; q < N; q++) b->xg[q] = x[q] + f * (b->vp[q] - v[q]);
    int st = IMP_OK;
    for (int g = 0; !st && g < GN_STEPS; g++) {
        pmat p2;
        pmat_layout(&p2, N, C, b->pm2[g], b->piv2[g]);
        st = pmat_build(m, params, b->xg + (size_t)g * N, &p2);
        if (!st) gn_forward(m, &p2, b->xg + (size_t)g * N, b->xg + (size_t)(g + 1) * N, b->yc[g]);
    }
    pmat p3;
    pmat_layout(&p3, N, C, b->pm3, b->piv3);
    return st ? st : pmat_build(m, params, b->xg + (size_t)GN_STEPS * N, &p3);
}

int imp_cmodel_contact_step(const imp_cmodel *m, const double *params, const double *xk, double *y, double h,
                            int *n_active)
{
    int N = 0, C = 0, d = 0;
    if (!m || !params || !xk || !y) return imp_fail(IMP_ERR_INVALID, "contact map: NULL argument");
    if (n_active) *n_active = 0;
    if (m->contact && !any_active(m, y)) return IMP_OK;
    cbuf b;
    cstep cs;
    pmat p;
    int st = map_begin(m, params, xk, y, &b, &cs, &p, &N, &C, &d);
    if (!st && cs.n > 0) {
        st = project_forward(m, params, &b, y, y + N, (1 - cs.alpha) * h, N, C);
        if (!st) {
            memcpy(y, b.xg + (size_t)GN_STEPS * N, (size_t)N * sizeof(double));
            pmat p3;
            pmat_layout(&p3, N, C, b.pm3, b.piv3);
            vproj_forward(&p3, b.vp, y + N, b.yc3);
        }
    }
    if (!st && n_active) *n_active = cs.n;
    cbuf_free(&b);
    return st;
}

int imp_cmodel_contact_impulse(const imp_cmodel *m, const double *params, const double *x, const double *v,
                               const int *active, int n, double *vout, double *kin, double *A)
{
    int N = 0, C = 0, d = 0;
    if (!m || !params || !x || !v || !active || !vout) return imp_fail(IMP_ERR_INVALID, "contact impulse: NULL argument");
    int st = contact_dims(m, &N, &C, &d);
    if (st) return st;
    const imp_csys *s = &m->sys.full;
    if (n < 1 || n > s->n_contacts)
        return imp_fail(IMP_ERR_INVALID, "contact impulse: %d contacts (1..%d)", n, s->n_contacts);
    for (int i = 0; i < n; i++)
        if (active[i] < 0 || active[i] >= s->n_contacts)
            return imp_fail(IMP_ERR_INVALID, "contact impulse: %d is not a contact (%d)", active[i], s->n_contacts);
    cbuf b;
    if ((st = cbuf_new(&b, s->n_contacts, d, N, C))) return st;
    pmat p;
    pmat_layout(&p, N, C, b.pm, b.piv);
    double e_all[IMP_CSYS_MAX_CONTACTS], mu_all[IMP_CSYS_MAX_CONTACTS], e[IMP_CSYS_MAX_CONTACTS],
        mu[IMP_CSYS_MAX_CONTACTS];
    imp_cmodel_contact_values(m, params, e_all, mu_all);
    for (int i = 0; i < n; i++) {
        imp_csys_contact_frame(s, x, active[i], NULL, NULL, b.J + (size_t)i * d * N);
        e[i] = e_all[active[i]];
        mu[i] = mu_all[active[i]];
    }
    imp_contact_solution sol;
    st = pmat_build(m, params, x, &p);
    if (!st) st = solve_impulse(&p, b.J, n, d, v, e, mu, b.vp, &sol, b.work, b.iwork);
    if (!st) memcpy(vout, b.vp, (size_t)N * sizeof(double));
    /* J P J^T (Jb: scratch for P J^T) */
    if (!st && A) st = imp_contact_compliance(A, b.Jb, b.J, n * d, N, imp_contact_minv_dense, p.P);
    if (!st && kin) {
        /* 1/2 v^T M v with M = W^-1: W factored in Pb */
        int piv[NMAX];
        memcpy(b.Pb, p.W, (size_t)N * N * sizeof(double));
        if (imp_lu_factor(N, b.Pb, piv, 1e-14)) st = imp_fail(IMP_ERR_NUMERIC, "contact impulse: learned mass singular");
        for (int q = 0; !st && q < 2; q++) {
            const double *u = q ? vout : v;
            double y[NMAX];
            memcpy(y, u, (size_t)N * sizeof(double));
            imp_lu_solve(N, b.Pb, piv, y);
            double acc = 0;
            for (int k = 0; k < N; k++) acc += u[k] * y[k];
            kin[q] = 0.5 * acc;
        }
    }
    cbuf_free(&b);
    return st ? imp_fail_context(st, "contact impulse") : IMP_OK;
}

int imp_cmodel_contact_step_vjp(const imp_cmodel *m, const double *params, const double *xk, const double *ystar,
                                double h, double *ybar, double *xkbar, double *theta_bar)
{
    int N = 0, C = 0, d = 0;
    if (!m || !params || !xk || !ystar || !ybar || !xkbar)
        return imp_fail(IMP_ERR_INVALID, "contact map: NULL argument");
    if (m->contact && !any_active(m, ystar)) return IMP_OK;
    cbuf b;
    cstep cs;
    pmat p;
    int st = map_begin(m, params, xk, ystar, &b, &cs, &p, &N, &C, &d);
    if (st || cs.n == 0) {
        cbuf_free(&b);
        return st;
    }
    const imp_csys *s = &m->sys.full;
    const double *x = ystar, *v = ystar + N;
    double *xb = ybar, *vb = ybar + N; /* in: dL/dx+, dL/dv'; out: dL/dx*, dL/dv* */
    double vpb[NMAX], vmb[NMAX], abar = 0, f = (1 - cs.alpha) * h;
    double *phibar = theta_bar ? theta_bar + m->off_mass : NULL;
    double phisink[IMP_CSYS_MAX_POINTS];
    if (!phibar) {
        memset(phisink, 0, sizeof phisink);
        phibar = phisink;
    }
    {
        /* the projections (eqs 25, 26) in reverse: vb <- dL/dv+, xb <- dL/dx+ */
        if ((st = project_forward(m, params, &b, x, v, f, N, C))) {
            cbuf_free(&b);
            return st;
        }
        double vtmp[NMAX];
        pmat p3;
        pmat_layout(&p3, N, C, b.pm3, b.piv3);
        imp_chnn_load_winv_(m, params, p3.winv);
        vproj_forward(&p3, b.vp, vtmp, b.yc3);
        vproj_backward(m, &p3, b.vp, b.yc3, vb, xb, phibar, b.pb);
        for (int g = GN_STEPS - 1; g >= 0; g--) {
            pmat p2;
            pmat_layout(&p2, N, C, b.pm2[g], b.piv2[g]);
            imp_chnn_load_winv_(m, params, p2.winv);
            vproj_backward(m, &p2, NULL, b.yc[g], xb, xb, phibar, b.pb);
        }
    }
    for (int q = 0; q < N; q++) {
        vpb[q] = vb[q] + f * xb[q];
        vmb[q] = -f * xb[q];
        abar -= h * (b.vp[q] - v[q]) * xb[q];
    }
    /* alpha = phik / (phik - phis) of the earliest crossing */
    if (cs.first >= 0) {
        double pk = cs.phik_first, ps = cs.phis[cs.first], den = (pk - ps) * (pk - ps);
        frame_vjp(s, xk, cs.active[cs.first], abar * (-ps / den), NULL, xkbar);
        frame_vjp(s, x, cs.active[cs.first], abar * (pk / den), NULL, xb);
    }
    double e[IMP_CSYS_MAX_CONTACTS], mu[IMP_CSYS_MAX_CONTACTS], eb[IMP_CSYS_MAX_CONTACTS] = {0},
                                                                 mb[IMP_CSYS_MAX_CONTACTS] = {0};
    for (int i = 0; i < cs.n; i++) {
        e[i] = cs.e[cs.active[i]];
        mu[i] = cs.mu[cs.active[i]];
    }
    size_t nJ = (size_t)cs.n * d * N;
    memset(b.Jb, 0, nJ * sizeof(double));
    memset(b.Pb, 0, (size_t)N * N * sizeof(double));
    st = imp_contact_impulse_backward(vmb, b.Jb, b.Pb, eb, mb, vpb, NULL, &cs.sol, v, b.J, N, imp_contact_minv_dense,
                                      p.P, e, mu, b.work, b.iwork);
    if (st) {
        cbuf_free(&b);
        return imp_fail_context(st, "contact map reverse pass");
    }
    for (int q = 0; q < N; q++) vb[q] = vmb[q];
    for (int i = 0; i < cs.n; i++) frame_vjp(s, x, cs.active[i], 0.0, b.Jb + (size_t)i * d * N, xb);
    pmat_backward(m, &p, b.Pb, xb, phibar, b.pb);
    if (theta_bar)
        for (int i = 0; i < cs.n; i++) {
            int c = cs.active[i];
            double sc = m->contact_scale, ev = cs.e[c], th = sc * params[m->off_contact + 2 * c + 1];
            theta_bar[m->off_contact + 2 * c] += sc * eb[i] * ev * (1 - ev);
            theta_bar[m->off_contact + 2 * c + 1] += sc * mb[i] * sigmoid(th);
        }
    cbuf_free(&b);
    return IMP_OK;
}

/* The rollouts with contact: each of `substeps` steps per interval by RK4
 * (dop NULL, as training) or by DOPRI5 with dop's tolerances, then the
 * contact map with the step's start x_k. */
static int contact_rollout(const imp_cmodel *m, const double *params, const double *x0, int n_states, double dt,
                           int substeps, const imp_dopri5_opts *dop, double *out, int *impacts, int *acted)
{
    if (!m || !params || !x0 || !out) return imp_fail(IMP_ERR_INVALID, "rollout: NULL argument");
    if (!m->contact) return imp_fail(IMP_ERR_INVALID, "rollout: the model has no contact parameters");
    if (n_states < 1 || substeps < 1 || !(dt > 0))
        return imp_fail(IMP_ERR_INVALID, "rollout: n_states %d, substeps %d, dt %g", n_states, substeps, dt);
    int dim = m->dim, N = dim / 2, st = IMP_OK, hits = 0;
    double h = dt / substeps;
    imp_cmodel_work *w = imp_cmodel_work_new(m, 1);
    double *tr = malloc(3 * (size_t)dim * sizeof(double)), xk[NMAX];
    double *cur = tr ? tr + 2 * (size_t)dim : NULL;
    if (!w || !tr) st = imp_fail(IMP_ERR_NOMEM, "rollout: out of memory");
    imp_cmodel_binding bind = {m, params, w};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    if (!st) memcpy(out, x0, (size_t)dim * sizeof(double));
    if (!st) memcpy(cur, x0, (size_t)dim * sizeof(double));
    if (acted) memset(acted, 0, (size_t)n_states * sizeof(int));
    for (int k = 1; !st && k < n_states; k++) {
        for (int r = 0; !st && r < substeps; r++) {
            memcpy(xk, cur, (size_t)N * sizeof(double));
            if (dop) {
                double t2[2] = {0.0, h};
                imp_dopri5_stats ds;
                st = imp_dopri5_solve(&ode, dop, 0.0, cur, 1, t2, 2, tr, &ds);
            } else
                st = imp_integrate_fixed(&imp_stepper_rk4, &ode, 0.0, h, 1, cur, 1, tr);
            if (st) break;
            memcpy(cur, tr + dim, (size_t)dim * sizeof(double));
            int na = 0;
            st = imp_cmodel_contact_step(m, params, xk, cur, h, &na);
            hits += na > 0;
            if (acted && na > 0) acted[k] = 1;
        }
        if (!st) memcpy(out + (size_t)k * dim, cur, (size_t)dim * sizeof(double));
    }
    if (!st) st = imp_check_finite(out, (size_t)n_states * dim, "rollout states");
    if (impacts) *impacts = hits;
    free(tr);
    imp_cmodel_work_free(w);
    return st;
}

int imp_cmodel_contact_rollout(const imp_cmodel *m, const double *params, const double *x0, int n_states, double dt,
                               int substeps, double *out, int *impacts)
{
    return contact_rollout(m, params, x0, n_states, dt, substeps, NULL, out, impacts, NULL);
}

int imp_cmodel_contact_rollout_dopri5(const imp_cmodel *m, const double *params, const double *x0, int n_states,
                                      double dt, const imp_dopri5_opts *dop, double *out, int *acted)
{
    return contact_rollout(m, params, x0, n_states, dt, 1, dop, out, NULL, acted);
}
