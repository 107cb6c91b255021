/* Stage 2, assembly: the active set per contact, per-body labels attributed
 * to contacts, the stacked Jacobian rows and the compliance A = J M^-1 J^T
 * with M^-1 through a callback (docs/derivations/contact.md sec 2). */
#include "contact/contact_internal.h"

#include <math.h>
#include <string.h>

/* Inverse of a symmetric positive definite 3 x 3 matrix by cofactors. */
static void inv3(const double *I, double *out)
{
    double c00 = I[4] * I[8] - I[5] * I[7], c01 = I[5] * I[6] - I[3] * I[8], c02 = I[3] * I[7] - I[4] * I[6];
    double det = I[0] * c00 + I[1] * c01 + I[2] * c02;
    out[0] = c00 / det, out[3] = c01 / det, out[6] = c02 / det;
    out[1] = (I[2] * I[7] - I[1] * I[8]) / det, out[4] = (I[0] * I[8] - I[2] * I[6]) / det,
    out[7] = (I[1] * I[6] - I[0] * I[7]) / det;
    out[2] = (I[1] * I[5] - I[2] * I[4]) / det, out[5] = (I[2] * I[3] - I[0] * I[5]) / det,
    out[8] = (I[0] * I[4] - I[1] * I[3]) / det;
}

int imp_contact_minv_bodies(double *out, const double *in, int nv, int ncol, void *user_data)
{
    const imp_contact_model *m = user_data;
    if (!m || nv != m->nv) return imp_fail(IMP_ERR_SHAPE, "contact M^-1: nv %d is not the model's %d", nv, m ? m->nv : -1);
    for (int k = 0; k < m->n_bodies; k++) {
        const imp_contact_body *b = &m->bodies[k];
        int o = m->v_offset[k], nlin = b->kind == IMP_BODY_POINT ? m->dim : b->kind == IMP_BODY_PLANAR ? 2 : 3;
        double Ii[9];
        if (b->kind == IMP_BODY_SPATIAL) inv3(b->inertia, Ii);
        for (int c = 0; c < ncol; c++) {
            const double *x = in + (size_t)c * nv + o;
            double *y = out + (size_t)c * nv + o;
            for (int i = 0; i < nlin; i++) y[i] = x[i] / b->mass;
            if (b->kind == IMP_BODY_PLANAR) y[2] = x[2] / b->inertia[0];
            if (b->kind == IMP_BODY_SPATIAL) {
                double w0 = x[3], w1 = x[4], w2 = x[5];
                for (int i = 0; i < 3; i++) y[3 + i] = Ii[3 * i] * w0 + Ii[3 * i + 1] * w1 + Ii[3 * i + 2] * w2;
            }
        }
    }
    return IMP_OK;
}

int imp_contact_minv_dense(double *out, const double *in, int nv, int ncol, void *user_data)
{
    const double *Mi = user_data;
    if (!Mi) return imp_fail(IMP_ERR_INVALID, "contact M^-1: NULL table");
    for (int c = 0; c < ncol; c++)
        for (int i = 0; i < nv; i++) {
            double s = 0.0;
            for (int j = 0; j < nv; j++) s += Mi[(size_t)i * nv + j] * in[(size_t)c * nv + j];
            out[(size_t)c * nv + i] = s;
        }
    return IMP_OK;
}

void imp_contact_minv_bodies_backward(double *mass_bar, double *inertia_bar, const double *Minv_bar,
                                      const imp_contact_model *m)
{
    int nv = m->nv;
    for (int k = 0; k < m->n_bodies; k++) {
        const imp_contact_body *b = &m->bodies[k];
        int o = m->v_offset[k], nlin = b->kind == IMP_BODY_POINT ? m->dim : b->kind == IMP_BODY_PLANAR ? 2 : 3;
        double s = 0.0;
        for (int i = 0; i < nlin; i++) s += Minv_bar[(size_t)(o + i) * nv + o + i];
        if (mass_bar) mass_bar[k] -= s / (b->mass * b->mass);
        if (!inertia_bar) continue;
        if (b->kind == IMP_BODY_PLANAR)
            inertia_bar[9 * k] -= Minv_bar[(size_t)(o + 2) * nv + o + 2] / (b->inertia[0] * b->inertia[0]);
        if (b->kind == IMP_BODY_SPATIAL) {
            /* d inv(I) = -inv(I) dI inv(I): I_bar = -inv(I)^T X inv(I)^T */
            double Ii[9], X[9], T[9];
            inv3(b->inertia, Ii);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) X[3 * i + j] = Minv_bar[(size_t)(o + 3 + i) * nv + o + 3 + j];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) T[3 * i + j] = Ii[i] * X[j] + Ii[3 + i] * X[3 + j] + Ii[6 + i] * X[6 + j];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    inertia_bar[9 * k + 3 * i + j] -= T[3 * i] * Ii[j * 3] + T[3 * i + 1] * Ii[j * 3 + 1] +
                                                      T[3 * i + 2] * Ii[j * 3 + 2];
        }
    }
}

double imp_contact_gap_rate(const imp_contact_model *m, const double *q, const imp_contact_frame *f, int c,
                            const double *v)
{
    double J[3 * IMP_CONTACT_MAX_NV], s = 0.0;
    imp_contact_jacobian(m, q, f, c, J);
    for (int i = 0; i < m->nv; i++) s += J[i] * v[i];
    return s;
}

int imp_contact_active_set(const imp_contact_model *m, const double *q, const imp_contact_frame *frames,
                           const double *v, const signed char *labels, int *active)
{
    int n = 0;
    for (int c = 0; c < m->n_candidates; c++) {
        int lab = labels ? labels[c] : IMP_CONTACT_LABEL_NONE;
        int on = lab == IMP_CONTACT_LABEL_NONE
                     ? frames[c].phi <= m->gap_tol && imp_contact_gap_rate(m, q, &frames[c], c, v) < 0.0
                     : lab == 1;
        if (on) active[n++] = c;
    }
    return n;
}

int imp_contact_choose(int n_bodies, int n, const int *body_a, const int *body_b, const unsigned char *level,
                       const double *phi, const unsigned char *bodies, int flags, unsigned char *chosen, int *nearest)
{
    for (int c = 0; c < n; c++) chosen[c] = 0;
    for (int k = 0; k < n_bodies; k++) {
        int count = 0, best = 0, near = -1;
        for (int c = 0; c < n; c++) {
            if (body_a[c] != k && body_b[c] != k) continue;
            count++;
            if (level[c] > best) best = level[c];
            if (near < 0 || phi[c] < phi[near]) near = c;
        }
        if (nearest) nearest[k] = near;
        if (!count || (bodies && !bodies[k])) continue;
        if ((count == 1 && (flags & IMP_CONTACT_CHOOSE_ONLY)) || (!best && (flags & IMP_CONTACT_CHOOSE_NEAREST)))
            chosen[near] = 1;
        else if (best)
            for (int c = 0; c < n; c++)
                if (level[c] == best && (body_a[c] == k || body_b[c] == k)) chosen[c] = 1;
    }
    int total = 0;
    for (int c = 0; c < n; c++) total += chosen[c];
    return total;
}

int imp_contact_attribute_labels(const imp_contact_model *m, const imp_contact_frame *frames,
                                 const unsigned char *touch, double max_gap, signed char *labels)
{
    int a[IMP_MAX_CONTACTS], b[IMP_MAX_CONTACTS], nearest[IMP_MAX_BODIES];
    unsigned char level[IMP_MAX_CONTACTS], chosen[IMP_MAX_CONTACTS];
    double phi[IMP_MAX_CONTACTS];
    for (int c = 0; c < m->n_candidates; c++) {
        a[c] = m->cand[c].body_a, b[c] = m->cand[c].body_b;
        phi[c] = frames[c].phi;
        level[c] = phi[c] <= m->gap_tol; /* penetrating */
    }
    imp_contact_choose(m->n_bodies, m->n_candidates, a, b, level, phi, touch, IMP_CONTACT_CHOOSE_NEAREST, chosen,
                       nearest);
    for (int c = 0; c < m->n_candidates; c++) labels[c] = (signed char)chosen[c];
    for (int k = 0; k < m->n_bodies; k++) {
        if (!touch[k]) continue;
        int near = nearest[k];
        if (near < 0)
            return imp_fail(IMP_ERR_INVALID,
                            "contact labels: body %d is labelled touching but has no contact candidate", k);
        if (!level[near] && phi[near] > max_gap) /* none penetrating (the nearest would) */
            return imp_fail(IMP_ERR_INVALID,
                            "contact labels: body %d is labelled touching but its nearest contact (cand[%d]) is %g "
                            "away (more than %g): labels inconsistent with the geometry",
                            k, near, phi[near], max_gap);
    }
    return IMP_OK;
}

void imp_contact_assemble_jacobian(const imp_contact_model *m, const double *q, const imp_contact_frame *frames,
                                   const int *active, int n_active, double *J)
{
    for (int i = 0; i < n_active; i++)
        imp_contact_jacobian(m, q, &frames[active[i]], active[i], J + (size_t)i * m->dim * m->nv);
}

int imp_contact_compliance(double *A, double *BT, const double *J, int rows, int nv, imp_contact_minv_fn minv,
                           void *minv_data)
{
    int st = minv(BT, J, nv, rows, minv_data);
    if (st) return st;
    for (int k = 0; k < rows; k++)
        for (int l = 0; l <= k; l++) {
            double s = 0.0;
            for (int i = 0; i < nv; i++) s += J[(size_t)k * nv + i] * BT[(size_t)l * nv + i];
            A[(size_t)k * rows + l] = A[(size_t)l * rows + k] = s;
        }
    return IMP_OK;
}

int imp_contact_compliance_backward(double *J_bar, double *Minv_bar, const double *A_bar, const double *BT_bar,
                                    const double *J, const double *BT, int rows, int nv, imp_contact_minv_fn minv,
                                    void *minv_data, double *tmp)
{
    /* A_kl = J_k . BT_l: J_bar_k += sum_l A_bar_kl BT_l, BT_bar_l += sum_k A_bar_kl J_k (into tmp) */
    for (int l = 0; l < rows; l++)
        for (int i = 0; i < nv; i++) {
            double s = BT_bar ? BT_bar[(size_t)l * nv + i] : 0.0;
            for (int k = 0; k < rows; k++) s += A_bar[(size_t)k * rows + l] * J[(size_t)k * nv + i];
            tmp[(size_t)l * nv + i] = s;
        }
    if (J_bar)
        for (int k = 0; k < rows; k++)
            for (int l = 0; l < rows; l++) {
                double a = A_bar[(size_t)k * rows + l];
                if (a != 0.0)
                    for (int i = 0; i < nv; i++) J_bar[(size_t)k * nv + i] += a * BT[(size_t)l * nv + i];
            }
    /* BT_l = M^-1 J_l: Minv_bar_ij += BT_bar_l,i J_l,j; J_bar_l += M^-1 BT_bar_l */
    if (Minv_bar)
        for (int l = 0; l < rows; l++)
            for (int i = 0; i < nv; i++) {
                double b = tmp[(size_t)l * nv + i];
                if (b != 0.0)
                    for (int j = 0; j < nv; j++) Minv_bar[(size_t)i * nv + j] += b * J[(size_t)l * nv + j];
            }
    if (J_bar) {
        double *y = tmp + (size_t)rows * nv;
        int st = minv(y, tmp, nv, rows, minv_data);
        if (st) return st;
        for (size_t i = 0; i < (size_t)rows * nv; i++) J_bar[i] += y[i];
    }
    return IMP_OK;
}
