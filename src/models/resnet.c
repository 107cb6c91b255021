/* The black-box baselines of the CD-Lagrange paper ([A] eqs 53-54):
 *   ResNet:        x_{n+1} = x_n + h f(x_n)
 *   ResNetContact: x_{n+1} = x_n + h f(x_n, c_{n+1}),  c_{n+1} ~ head(x_n)
 * f is an MLP (one hidden layer of 500 units in the reference code), the
 * contact head has the contact network's architecture. With touch feedback
 * the observed c_{n+1} is fed during training (teacher forcing) and the head
 * is trained by cross-entropy; at rollout the head's thresholded prediction
 * is fed. (The paper writes c_n; we feed the signal of the step being taken,
 * the same information the CD-Lagrange network's impulse gate receives.) */
#include "cdl_internal.h"

#include <string.h>

static int n_inputs(const imp_model *m) { return 2 * m->D + (m->has_contact_net ? m->K : 0); }

/* One forward step n for the batch: xs[n] -> xs[n+1]. c: B x K signal fed. */
static void step_forward(const imp_model *m, const double *params, imp_model_work *w, int n, int B,
                         const double *c)
{
    const int S = 2 * m->D, K = m->K, I = n_inputs(m);
    const double *x = w->xs + (size_t)n * B * S;
    double *xn = w->xs + (size_t)(n + 1) * B * S;
    for (int b = 0; b < B; b++) {
        memcpy(w->in + (size_t)b * I, x + (size_t)b * S, S * sizeof(double));
        if (m->has_contact_net) memcpy(w->in + (size_t)b * I + S, c + (size_t)b * K, K * sizeof(double));
    }
    imp_mlp_forward(&m->net, params + m->off_net, w->in, B, w->out, w->net[n]);
    for (size_t i = 0; i < (size_t)B * S; i++) xn[i] = x[i] + m->dt * w->out[i];
}

int imp_resnet_window_loss(const imp_model *m, const double *params, imp_model_work *w,
                           const double *x0, const double *target, const double *labels,
                           const double *weight, int B, int H, double *grad, imp_loss_parts *parts)
{
    const int S = 2 * m->D, K = m->K, I = n_inputs(m);
    const size_t sBS = (size_t)B * S, sBK = (size_t)B * K;
    if (m->has_contact_net && !labels)
        return imp_fail(IMP_ERR_INVALID, "labels: resnet-contact needs observed contact labels (touch feedback)");
    memcpy(w->xs, x0, sBS * sizeof(double));
    double Lc = 0.0;
    for (int n = 0; n < H; n++) {
        double *lab = w->lab + (size_t)n * sBK;
        if (m->has_contact_net) {
            for (int b = 0; b < B; b++)
                memcpy(lab + (size_t)b * K, labels + ((size_t)b * H + n) * K, K * sizeof(double));
            double *p = w->p + (size_t)n * sBK, *pb = w->pbar + (size_t)n * sBK;
            imp_mlp_forward(&m->contact, params + m->off_contact, w->xs + (size_t)n * sBS, B, p, w->contact[n]);
            for (int b = 0; b < B; b++) {
                Lc += imp_bce(p + (size_t)b * K, lab + (size_t)b * K, K, pb + (size_t)b * K) / K;
                for (int k = 0; k < K; k++) pb[(size_t)b * K + k] /= K * (double)B;
            }
        }
        step_forward(m, params, w, n, B, lab);
    }
    Lc /= B;
    double Ls = 0.0;
    memset(w->xbar, 0, sBS * sizeof(double));
    for (int n = 1; n <= H; n++)
        for (int b = 0; b < B; b++) {
            const double wt = weight ? weight[(size_t)b * H + (n - 1)] : 1.0;
            for (int i = 0; i < S; i++) {
                double e = w->xs[(size_t)n * sBS + (size_t)b * S + i] - target[((size_t)b * H + n - 1) * S + i];
                Ls += wt * e * e / S;
                w->xbar[(size_t)n * sBS + (size_t)b * S + i] = 2.0 * wt * e / (S * (double)B);
            }
        }
    Ls /= B;
    if (parts) {
        parts->state = Ls;
        parts->contact = Lc;
        parts->l2 = 0.0;
        parts->total = Ls + Lc;
    }
    if (!grad) return IMP_OK;
    for (int n = H - 1; n >= 0; n--) {
        double *xb = w->xbar + (size_t)n * sBS;
        const double *xb1 = w->xbar + (size_t)(n + 1) * sBS;
        for (size_t i = 0; i < sBS; i++) {
            xb[i] += xb1[i];
            w->dout[i] = m->dt * xb1[i];
        }
        memset(w->din, 0, (size_t)B * I * sizeof(double));
        imp_mlp_backward(&m->net, params + m->off_net, w->dout, B, grad + m->off_net, w->din, w->net[n]);
        for (int b = 0; b < B; b++)
            for (int i = 0; i < S; i++) xb[(size_t)b * S + i] += w->din[(size_t)b * I + i];
        if (m->has_contact_net) {
            memset(w->din, 0, sBS * sizeof(double));
            imp_mlp_backward(&m->contact, params + m->off_contact, w->pbar + (size_t)n * sBK, B,
                             grad + m->off_contact, w->din, w->contact[n]);
            for (size_t i = 0; i < sBS; i++) xb[i] += w->din[i];
        }
    }
    return IMP_OK;
}

int imp_resnet_rollout(const imp_model *m, imp_model_work *w, const double *x0, int n_steps,
                       const double *gates, double *states, double *contact)
{
    const int S = 2 * m->D, K = m->K;
    memcpy(w->xs, x0, S * sizeof(double));
    memcpy(states, x0, S * sizeof(double));
    for (int k = 0; k < K; k++) contact[k] = 0.0;
    double c[IMP_MAX_BODIES] = {0};
    for (int t = 1; t < n_steps; t++) {
        if (m->has_contact_net) {
            if (w->contact_fixed)
                imp_mlp_fixed_forward(w->contact_fixed, w->xs, w->p);
            else
                imp_mlp_forward(&m->contact, m->params + m->off_contact, w->xs, 1, w->p, w->contact[0]);
            for (int k = 0; k < K; k++) c[k] = gates ? gates[(size_t)t * K + k] : (w->p[k] > 0.5);
        }
        step_forward(m, m->params, w, 0, 1, c);
        memcpy(states + (size_t)t * S, w->xs + S, S * sizeof(double));
        for (int k = 0; k < K; k++) contact[(size_t)t * K + k] = c[k];
        if (imp_check_finite(states + (size_t)t * S, S, "rollout state"))
            return imp_fail(IMP_ERR_NUMERIC, "rollout: state became non-finite at step %d", t);
        memcpy(w->xs, w->xs + S, S * sizeof(double));
    }
    return IMP_OK;
}
