/* HNN and DeLaN baselines in generalised coordinates ([F] section 7 and
 * appendix D, [chnn] section 2), with exact reverse mode.
 *
 * Both learn V(q) (an MLP on the angle embedding (cos q, sin q)) and a
 * Cholesky factor L(q) (a second MLP with k^2 outputs; lower triangle used,
 * softplus diagonal): S(q) = L L^T + 1e-4 I.
 *   DeLaN ([F] eq 3 with T = 1/2 qdot^T M qdot, M = S):
 *     M qddot = grad_q(T - V) - (d/dt M) qdot,
 *     i.e. r_i = 1/2 qdot^T M_i qdot - sum_j qdot_j (M_j qdot)_i - dV/dq_i.
 *   HNN (H = 1/2 p^T S p + V, S = M^-1 as the reference):
 *     p = S^-1 qdot, pdot_i = -1/2 p^T S_i p - dV/dq_i,
 *     qddot = d/dt (S p) = sum_j qdot_j S_j p + S pdot.
 * with S_j = dS/dq_j from forward-mode tangents of the mass network
 * (src/models/massnet.c). The state is (q, qdot) for both. */
#include "chnn_internal.h"
#include "massnet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KMAX 8
static const double mass_eps = 1e-4;

int imp_hnn_embed_size_(const imp_csystem *sys)
{
    int n = 0;
    for (int i = 0; i < sys->n_gen; i++) n += sys->gen_is_angle[i] ? 2 : 1;
    return n;
}

/* x = embed(q); t_j = d embed / d q_j (rows j of t, ne each). */
static void embed_with_tangents(const imp_csystem *sys, const double *q, double *x, double *t)
{
    int k = sys->n_gen, ne = imp_hnn_embed_size_(sys), o = 0;
    memset(t, 0, (size_t)k * ne * sizeof(double));
    for (int i = 0; i < k; i++) {
        if (sys->gen_is_angle[i]) {
            x[o] = cos(q[i]);
            x[o + 1] = sin(q[i]);
            t[(size_t)i * ne + o] = -sin(q[i]);
            t[(size_t)i * ne + o + 1] = cos(q[i]);
            o += 2;
        } else {
            x[o] = q[i];
            t[(size_t)i * ne + o] = 1.0;
            o += 1;
        }
    }
}

/* qbar += (d embed/dq)^T xbar + sum_j (d t_j/d q_j)^T tbar_j (angles only). */
static void embed_adjoint(const imp_csystem *sys, const double *q, const double *xbar, const double *tbar,
                          double *qbar)
{
    int k = sys->n_gen, ne = imp_hnn_embed_size_(sys), o = 0;
    for (int i = 0; i < k; i++) {
        if (sys->gen_is_angle[i]) {
            double c = cos(q[i]), s = sin(q[i]);
            qbar[i] += -s * xbar[o] + c * xbar[o + 1];
            if (tbar) qbar[i] += -c * tbar[(size_t)i * ne + o] - s * tbar[(size_t)i * ne + o + 1];
            o += 2;
        } else {
            qbar[i] += xbar[o];
            o += 1;
        }
    }
}

static double softplus(double z) { return z > 0 ? z + log1p(exp(-z)) : log1p(exp(z)); }
static double sigmoid(double z) { return z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z)); }

/* Per-sample intermediates of the small dense part. */
typedef struct small_fw {
    int k;
    double L[KMAX * KMAX], Ld[KMAX][KMAX * KMAX], S[KMAX * KMAX], Sd[KMAX][KMAX * KMAX];
    double C[KMAX * KMAX]; /* Cholesky factor of S */
    double p[KMAX], u[KMAX][KMAX], r[KMAX], pd[KMAX], a[KMAX];
} small_fw;

static int chol(const double *S, int n, double *L)
{
    memset(L, 0, (size_t)n * n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double s = S[i * n + j];
            for (int q = 0; q < j; q++) s -= L[i * n + q] * L[j * n + q];
            if (i == j) {
                if (!(s > 0)) return -1;
                L[i * n + i] = sqrt(s);
            } else {
                L[i * n + j] = s / L[j * n + j];
            }
        }
    return 0;
}

static void chol_solve(const double *L, int n, const double *b, double *x)
{
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int q = 0; q < i; q++) s -= L[i * n + q] * x[q];
        x[i] = s / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (int q = i + 1; q < n; q++) s -= L[q * n + i] * x[q];
        x[i] = s / L[i * n + i];
    }
}

static void matvec(const double *A, int n, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
        y[i] = s;
    }
}

/* o: k^2 mass-network outputs, od[j]: their derivatives along q_j (k^2 each),
 * qd: qdot, g: dV/dq. Writes qddot into fw->a. */
static int small_forward(int hamiltonian, int k, const double *o, const double *od, const double *qd,
                         const double *g, small_fw *fw)
{
    fw->k = k;
    memset(fw->L, 0, sizeof fw->L);
    for (int i = 0; i < k; i++)
        for (int j = 0; j <= i; j++) fw->L[i * k + j] = i == j ? softplus(o[i * k + i]) : o[i * k + j];
    for (int v = 0; v < k; v++) {
        double *Ld = fw->Ld[v];
        memset(Ld, 0, (size_t)k * k * sizeof(double));
        for (int i = 0; i < k; i++)
            for (int j = 0; j <= i; j++)
                Ld[i * k + j] = i == j ? sigmoid(o[i * k + i]) * od[v * k * k + i * k + i] : od[v * k * k + i * k + j];
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            double s = i == j ? mass_eps : 0.0;
            for (int q = 0; q < k; q++) s += fw->L[i * k + q] * fw->L[j * k + q];
            fw->S[i * k + j] = s;
            for (int v = 0; v < k; v++) {
                double sd = 0;
                for (int q = 0; q < k; q++) sd += fw->Ld[v][i * k + q] * fw->L[j * k + q] + fw->L[i * k + q] * fw->Ld[v][j * k + q];
                fw->Sd[v][i * k + j] = sd;
            }
        }
    if (chol(fw->S, k, fw->C)) return -1;
    if (!hamiltonian) {
        /* DeLaN: u_j = M_j qdot; r_i = 1/2 qdot.u_i - sum_j qdot_j u_j[i] - g_i; M a = r */
        for (int v = 0; v < k; v++) matvec(fw->Sd[v], k, qd, fw->u[v]);
        for (int i = 0; i < k; i++) {
            double s = 0;
            for (int q = 0; q < k; q++) s += qd[q] * fw->u[i][q];
            s *= 0.5;
            for (int v = 0; v < k; v++) s -= qd[v] * fw->u[v][i];
            fw->r[i] = s - g[i];
        }
        chol_solve(fw->C, k, fw->r, fw->a);
    } else {
        /* HNN: p = S^-1 qdot; u_i = S_i p; pdot_i = -1/2 p.u_i - g_i; a = sum_j qdot_j u_j + S pdot */
        chol_solve(fw->C, k, qd, fw->p);
        for (int v = 0; v < k; v++) matvec(fw->Sd[v], k, fw->p, fw->u[v]);
        for (int i = 0; i < k; i++) {
            double s = 0;
            for (int q = 0; q < k; q++) s += fw->p[q] * fw->u[i][q];
            fw->pd[i] = -0.5 * s - g[i];
        }
        matvec(fw->S, k, fw->pd, fw->a);
        for (int v = 0; v < k; v++)
            for (int i = 0; i < k; i++) fw->a[i] += qd[v] * fw->u[v][i];
    }
    return 0;
}

/* Reverse of small_forward: given abar, accumulate obar (k^2), odbar (k x k^2),
 * qdbar (k), gbar (k). */
static void small_backward(int hamiltonian, const double *o, const double *od, const double *qd,
                           const small_fw *fw, const double *abar, double *obar, double *odbar, double *qdbar,
                           double *gbar)
{
    int k = fw->k;
    double Sbar[KMAX * KMAX] = {0}, Sdbar[KMAX][KMAX * KMAX], ubar[KMAX][KMAX];
    double Lbar[KMAX * KMAX] = {0}, Ldbar[KMAX][KMAX * KMAX];
    memset(Sdbar, 0, sizeof Sdbar);
    memset(ubar, 0, sizeof ubar);
    memset(Ldbar, 0, sizeof Ldbar);
    if (!hamiltonian) {
        double rbar[KMAX];
        chol_solve(fw->C, k, abar, rbar);
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) Sbar[i * k + j] -= rbar[i] * fw->a[j];
        for (int i = 0; i < k; i++) {
            gbar[i] -= rbar[i];
            /* 1/2 qdot . u_i */
            for (int q = 0; q < k; q++) {
                qdbar[q] += 0.5 * rbar[i] * fw->u[i][q];
                ubar[i][q] += 0.5 * rbar[i] * qd[q];
            }
        }
        /* - sum_j qdot_j u_j[i] */
        for (int v = 0; v < k; v++)
            for (int i = 0; i < k; i++) {
                qdbar[v] -= fw->u[v][i] * rbar[i];
                ubar[v][i] -= qd[v] * rbar[i];
            }
        /* u_v = S_v qdot */
        for (int v = 0; v < k; v++)
            for (int i = 0; i < k; i++)
                for (int j = 0; j < k; j++) {
                    Sdbar[v][i * k + j] += ubar[v][i] * qd[j];
                    qdbar[j] += fw->Sd[v][i * k + j] * ubar[v][i];
                }
    } else {
        double pdbar[KMAX], pbar[KMAX] = {0};
        /* a = sum_v qdot_v u_v + S pdot */
        for (int v = 0; v < k; v++)
            for (int i = 0; i < k; i++) {
                qdbar[v] += fw->u[v][i] * abar[i];
                ubar[v][i] += qd[v] * abar[i];
            }
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) Sbar[i * k + j] += abar[i] * fw->pd[j];
        for (int j = 0; j < k; j++) {
            double s = 0;
            for (int i = 0; i < k; i++) s += fw->S[i * k + j] * abar[i];
            pdbar[j] = s;
        }
        /* pdot_i = -1/2 p.u_i - g_i */
        for (int i = 0; i < k; i++) {
            gbar[i] -= pdbar[i];
            for (int q = 0; q < k; q++) {
                pbar[q] -= 0.5 * pdbar[i] * fw->u[i][q];
                ubar[i][q] -= 0.5 * pdbar[i] * fw->p[q];
            }
        }
        /* u_v = S_v p */
        for (int v = 0; v < k; v++)
            for (int i = 0; i < k; i++)
                for (int j = 0; j < k; j++) {
                    Sdbar[v][i * k + j] += ubar[v][i] * fw->p[j];
                    pbar[j] += fw->Sd[v][i * k + j] * ubar[v][i];
                }
        /* p = S^-1 qdot */
        double y[KMAX];
        chol_solve(fw->C, k, pbar, y);
        for (int i = 0; i < k; i++) {
            qdbar[i] += y[i];
            for (int j = 0; j < k; j++) Sbar[i * k + j] -= y[i] * fw->p[j];
        }
    }
    /* S_v = Ld_v L^T + L Ld_v^T;  S = L L^T + eps I */
    for (int v = 0; v < k; v++)
        for (int i = 0; i < k; i++)
            for (int q = 0; q < k; q++) {
                double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
                for (int j = 0; j < k; j++) {
                    double Sb = Sdbar[v][i * k + j], SbT = Sdbar[v][j * k + i];
                    s1 += Sb * fw->L[j * k + q];     /* Ldbar_v[i,q] from Ld L^T */
                    s2 += SbT * fw->L[j * k + q];    /* Ldbar_v[i,q] from L Ld^T */
                    s3 += SbT * fw->Ld[v][j * k + q]; /* Lbar[i,q] from Ld L^T */
                    s4 += Sb * fw->Ld[v][j * k + q];  /* Lbar[i,q] from L Ld^T */
                }
                Ldbar[v][i * k + q] += s1 + s2;
                Lbar[i * k + q] += s3 + s4;
            }
    for (int i = 0; i < k; i++)
        for (int q = 0; q < k; q++) {
            double s = 0;
            for (int j = 0; j < k; j++) s += (Sbar[i * k + j] + Sbar[j * k + i]) * fw->L[j * k + q];
            Lbar[i * k + q] += s;
        }
    /* L and Ld_v from the network outputs (lower triangle) */
    for (int i = 0; i < k; i++)
        for (int j = 0; j <= i; j++) {
            if (i == j) {
                double z = o[i * k + i], sg = sigmoid(z);
                obar[i * k + i] += sg * Lbar[i * k + i];
                for (int v = 0; v < k; v++) {
                    odbar[v * k * k + i * k + i] += sg * Ldbar[v][i * k + i];
                    obar[i * k + i] += sg * (1 - sg) * od[v * k * k + i * k + i] * Ldbar[v][i * k + i];
                }
            } else {
                obar[i * k + j] += Lbar[i * k + j];
                for (int v = 0; v < k; v++) odbar[v * k * k + i * k + j] += Ldbar[v][i * k + j];
            }
        }
}

int imp_hnn_alloc_(const imp_cmodel *m, imp_cmodel_work *w)
{
    int k = m->sys.n_gen, ne = imp_hnn_embed_size_(&m->sys), no = k * k;
    size_t B = (size_t)w->max_batch;
    w->tmlp = calloc((size_t)w->n_slots, sizeof *w->tmlp);
    if (!w->tmlp) return IMP_ERR_NOMEM;
    for (int s = 0; s < w->n_slots; s++)
        if (!(w->tmlp[s] = imp_tmlp_work_new(&m->mass_net, w->max_batch, k))) return IMP_ERR_NOMEM;
    w->emb_t = malloc(B * k * ne * sizeof(double));
    w->emb_tbar = malloc(B * k * ne * sizeof(double));
    w->gx = malloc(B * ne * sizeof(double));
    w->gxbar = malloc(B * ne * sizeof(double));
    w->obar = malloc(B * no * sizeof(double));
    w->odbar = malloc(B * k * no * sizeof(double));
    w->xbar2 = malloc(B * ne * sizeof(double));
    if (!w->emb_t || !w->emb_tbar || !w->gx || !w->gxbar || !w->obar || !w->odbar || !w->xbar2) return IMP_ERR_NOMEM;
    return IMP_OK;
}

void imp_hnn_free_(imp_cmodel_work *w)
{
    if (w->tmlp)
        for (int s = 0; s < w->n_slots; s++) imp_tmlp_work_free(w->tmlp[s]);
    free(w->tmlp);
    free(w->emb_t);
    free(w->emb_tbar);
    free(w->gx);
    free(w->gxbar);
    free(w->obar);
    free(w->odbar);
    free(w->xbar2);
}

/* Both networks at the batch's q: V gradient in embed space (w->out[slot],
 * network cache in slot), mass outputs and tangents (tmlp slot). */
static void networks_forward(const imp_cmodel *m, const double *params, const double *y, int B,
                             imp_cmodel_work *w, int slot)
{
    int k = m->sys.n_gen, ne = imp_hnn_embed_size_(&m->sys), dim = m->dim;
    for (int s = 0; s < B; s++)
        embed_with_tangents(&m->sys, y + (size_t)s * dim, w->in + (size_t)s * ne, w->emb_t + (size_t)s * k * ne);
    imp_mlp_grad_input(&m->net, params, w->in, B, w->out[slot], NULL, w->mlp[slot]);
    imp_tmlp_forward(&m->mass_net, params + m->off_mass, w->in, w->emb_t, B, w->tmlp[slot]);
}

static void grad_q(int k, int ne, const double *t, const double *gx, double *g)
{
    for (int j = 0; j < k; j++) {
        double s = 0;
        for (int i = 0; i < ne; i++) s += t[(size_t)j * ne + i] * gx[i];
        g[j] = s;
    }
}

int imp_hnn_rhs_(const imp_cmodel *m, const double *params, const double *y, int B, double *ydot,
                 imp_cmodel_work *w, int slot)
{
    int k = m->sys.n_gen, ne = imp_hnn_embed_size_(&m->sys), dim = m->dim, no = k * k;
    int ham = m->kind == IMP_CMODEL_HNN;
    networks_forward(m, params, y, B, w, slot);
    const imp_tmlp_work *tw = w->tmlp[slot];
    int L = m->mass_net.n_layers;
    small_fw fw;
    for (int s = 0; s < B; s++) {
        const double *ys = y + (size_t)s * dim;
        double g[KMAX];
        grad_q(k, ne, w->emb_t + (size_t)s * k * ne, w->out[slot] + (size_t)s * ne, g);
        if (small_forward(ham, k, tw->a[L] + (size_t)s * no, tw->ad[L] + (size_t)s * k * no, ys + k, g, &fw))
            return imp_fail(IMP_ERR_NUMERIC, "model: learned mass matrix not positive definite (sample %d)", s);
        double *f = ydot + (size_t)s * dim;
        memcpy(f, ys + k, (size_t)k * sizeof(double));
        memcpy(f + k, fw.a, (size_t)k * sizeof(double));
    }
    return IMP_OK;
}

int imp_hnn_rhs_vjp_(const imp_cmodel *m, const double *params, const double *y, int B,
                     const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w, int slot,
                     int cached)
{
    int k = m->sys.n_gen, ne = imp_hnn_embed_size_(&m->sys), dim = m->dim, no = k * k;
    int ham = m->kind == IMP_CMODEL_HNN;
    if (!cached) networks_forward(m, params, y, B, w, slot);
    else
        for (int s = 0; s < B; s++)
            embed_with_tangents(&m->sys, y + (size_t)s * dim, w->in + (size_t)s * ne, w->emb_t + (size_t)s * k * ne);
    imp_tmlp_work *tw = w->tmlp[slot];
    int L = m->mass_net.n_layers;
    memset(w->obar, 0, (size_t)B * no * sizeof(double));
    memset(w->odbar, 0, (size_t)B * k * no * sizeof(double));
    small_fw fw;
    for (int s = 0; s < B; s++) {
        const double *ys = y + (size_t)s * dim, *fb = fbar + (size_t)s * dim;
        double *yb = ybar + (size_t)s * dim;
        const double *t = w->emb_t + (size_t)s * k * ne, *gx = w->out[slot] + (size_t)s * ne;
        const double *o = tw->a[L] + (size_t)s * no, *od = tw->ad[L] + (size_t)s * k * no;
        double g[KMAX], gbar[KMAX] = {0};
        grad_q(k, ne, t, gx, g);
        if (small_forward(ham, k, o, od, ys + k, g, &fw))
            return imp_fail(IMP_ERR_NUMERIC, "model: learned mass matrix not positive definite (sample %d)", s);
        /* f = (qdot, qddot) */
        for (int i = 0; i < k; i++) yb[k + i] += fb[i];
        small_backward(ham, o, od, ys + k, &fw, fb + k, w->obar + (size_t)s * no, w->odbar + (size_t)s * k * no,
                       yb + k, gbar);
        /* g_j = t_j . gx: gxbar = sum_j gbar_j t_j, and q_j through t_j */
        double *gxb = w->gxbar + (size_t)s * ne;
        memset(gxb, 0, (size_t)ne * sizeof(double));
        double *tb = w->emb_tbar + (size_t)s * k * ne;
        for (int j = 0; j < k; j++)
            for (int i = 0; i < ne; i++) {
                gxb[i] += gbar[j] * t[(size_t)j * ne + i];
                tb[(size_t)j * ne + i] = gbar[j] * gx[i];
            }
    }
    /* networks' reverse sweeps: x (embed) and tangent adjoints */
    memset(w->xbar2, 0, (size_t)B * ne * sizeof(double));
    imp_mlp_grad_input_vjp(&m->net, params, w->gxbar, B, theta_bar, w->xbar2, w->mlp[slot]);
    imp_tmlp_backward(&m->mass_net, params + m->off_mass, w->obar, w->odbar, B,
                      theta_bar ? theta_bar + m->off_mass : NULL, w->xbar2, w->emb_tbar, tw);
    for (int s = 0; s < B; s++)
        embed_adjoint(&m->sys, y + (size_t)s * dim, w->xbar2 + (size_t)s * ne, w->emb_tbar + (size_t)s * k * ne,
                      ybar + (size_t)s * dim);
    return IMP_OK;
}
