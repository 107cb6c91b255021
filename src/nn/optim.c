/* Optimisers and learning-rate schedules.
 * Adam: Kingma & Ba, ICLR 2015, Algorithm 1 (bias-corrected moments; the
 * "epsilon hat" variant of their section 2 is what Keras implements).
 * AdamW: Loshchilov & Hutter, ICLR 2019, Algorithm 2, in PyTorch's form.
 * Cosine schedule: Loshchilov & Hutter, ICLR 2017 (SGDR), eq. 5 without
 * restarts. Gradient-norm clipping: Pascanu, Mikolov & Bengio, ICML 2013,
 * Algorithm 2, with PyTorch's clip_grad_norm_ coefficient. */
#include "impulse/nn.h"
#include "nn/mlp_internal.h"

#include <math.h>
#include <stdlib.h>

int imp_adam_init(imp_adam *opt, size_t n, double lr, double beta1, double beta2, double eps,
                  double weight_decay)
{
    if (!opt) return imp_fail(IMP_ERR_INVALID, "adam: NULL optimiser");
    opt->m = opt->v = NULL;
    if (n == 0) return imp_fail(IMP_ERR_INVALID, "n: no parameters to optimise");
    if (!(lr > 0.0) || !isfinite(lr)) return imp_fail(IMP_ERR_INVALID, "lr: %g, want > 0", lr);
    if (!(beta1 >= 0.0 && beta1 < 1.0))
        return imp_fail(IMP_ERR_INVALID, "beta1: %g, want [0, 1)", beta1);
    if (!(beta2 >= 0.0 && beta2 < 1.0))
        return imp_fail(IMP_ERR_INVALID, "beta2: %g, want [0, 1)", beta2);
    if (!(eps >= 0.0) || !isfinite(eps)) return imp_fail(IMP_ERR_INVALID, "eps: %g, want >= 0", eps);
    if (!(weight_decay >= 0.0) || !isfinite(weight_decay))
        return imp_fail(IMP_ERR_INVALID, "weight_decay: %g, want >= 0", weight_decay);
    opt->m = calloc(n, sizeof(double));
    opt->v = calloc(n, sizeof(double));
    if (!opt->m || !opt->v) {
        imp_adam_free(opt);
        return imp_fail(IMP_ERR_NOMEM, "adam: cannot allocate moments for %zu parameters", n);
    }
    opt->n = n;
    opt->lr = lr;
    opt->beta1 = beta1;
    opt->beta2 = beta2;
    opt->eps = eps;
    opt->weight_decay = weight_decay;
    opt->t = 0;
    opt->eps_hat = 0;
    return IMP_OK;
}

void imp_adam_free(imp_adam *opt)
{
    if (!opt) return;
    free(opt->m);
    free(opt->v);
    opt->m = opt->v = NULL;
}

/* The two update loops (eps_hat: the Keras form), vectorised per ISA. */
static inline __attribute__((always_inline)) void adam_loop_body(int eps_hat, size_t n, double *restrict params,
                                                                 double *restrict m, double *restrict v,
                                                                 const double *restrict grad, double b1, double b2,
                                                                 double eps, double decay, double step,
                                                                 double inv_sqrt_bc2)
{
    if (eps_hat)
        for (size_t i = 0; i < n; i++) {
            double g = grad[i];
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            v[i] = b2 * v[i] + (1.0 - b2) * g * g;
            params[i] = params[i] * decay - step * m[i] / (sqrt(v[i]) + eps);
        }
    else
        for (size_t i = 0; i < n; i++) {
            double g = grad[i];
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            v[i] = b2 * v[i] + (1.0 - b2) * g * g;
            params[i] = params[i] * decay - step * m[i] / (sqrt(v[i]) * inv_sqrt_bc2 + eps);
        }
}
IMP_ISA_VERSIONS(adam_loop,
                 (int eps_hat, size_t n, double *restrict params, double *restrict m, double *restrict v,
                  const double *restrict grad, double b1, double b2, double eps, double decay, double step,
                  double inv_sqrt_bc2),
                 (eps_hat, n, params, m, v, grad, b1, b2, eps, decay, step, inv_sqrt_bc2))

void imp_adam_step(imp_adam *opt, double *params, const double *grad, double lr)
{
    opt->t++;
    double b1 = opt->beta1, b2 = opt->beta2, eps = opt->eps;
    double bc1 = 1.0 - pow(b1, (double)opt->t), bc2 = 1.0 - pow(b2, (double)opt->t);
    /* AdamW (Loshchilov & Hutter 2019, PyTorch semantics): the decay uses
     * the scheduled lr and acts before, and apart from, the moment update. */
    double decay = 1.0 - lr * opt->weight_decay;
    const unsigned csr = imp_flush_subnormals_begin(); /* decayed moments: mlp_internal.h */
    if (opt->eps_hat)
        adam_loop(1, opt->n, params, opt->m, opt->v, grad, b1, b2, eps, decay, lr * sqrt(bc2) / bc1, 0.0);
    else
        adam_loop(0, opt->n, params, opt->m, opt->v, grad, b1, b2, eps, decay, lr / bc1, 1.0 / sqrt(bc2));
    imp_flush_subnormals_end(csr);
}

double imp_clip_grad_norm(double *grad, size_t n, double max_norm)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += grad[i] * grad[i];
    double norm = sqrt(s);
    if (max_norm > 0 && norm > max_norm) {
        double c = max_norm / (norm + 1e-6);
        for (size_t i = 0; i < n; i++) grad[i] *= c;
    }
    return norm;
}

double imp_cosine_lr(double lr0, double lr_min, long step, long total)
{
    if (total <= 0) return lr0;
    if (step < 0) step = 0;
    if (step > total) step = total;
    const double pi = 3.14159265358979323846;
    return lr_min + (lr0 - lr_min) * 0.5 * (1.0 + cos(pi * (double)step / (double)total));
}
