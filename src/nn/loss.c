/* Losses with their gradients with respect to the prediction. */
#include "impulse/nn.h"

#include <math.h>

double imp_mse(const double *pred, const double *target, size_t n, double *grad)
{
    if (n == 0) return 0.0;
    double sum = 0.0, inv_n = 1.0 / (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = pred[i] - target[i];
        sum += d * d;
        if (grad) grad[i] = 2.0 * d * inv_n;
    }
    return sum * inv_n;
}

double imp_l1(const double *pred, const double *target, size_t n, double *grad)
{
    if (n == 0) return 0.0;
    double sum = 0.0, inv_n = 1.0 / (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = pred[i] - target[i];
        sum += fabs(d);
        if (grad) grad[i] = (d > 0.0 ? inv_n : d < 0.0 ? -inv_n : 0.0);
    }
    return sum * inv_n;
}

/* Keras clips p to [eps, 1-eps], eps = 1e-7 (backend.epsilon()); as with
 * tf.clip_by_value, no gradient flows through a clipped entry. */
#define IMP_BCE_EPS 1e-7

double imp_bce(const double *p, const double *label, size_t n, double *grad)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double pi = p[i], y = label[i];
        int clipped = !(pi > IMP_BCE_EPS && pi < 1.0 - IMP_BCE_EPS);
        if (pi < IMP_BCE_EPS) pi = IMP_BCE_EPS;
        if (pi > 1.0 - IMP_BCE_EPS) pi = 1.0 - IMP_BCE_EPS;
        sum -= y * log(pi) + (1.0 - y) * log1p(-pi);
        if (grad) grad[i] = clipped ? 0.0 : -y / pi + (1.0 - y) / (1.0 - pi);
    }
    return sum;
}

double imp_bce_logits(const double *z, const double *label, size_t n, double *grad)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double zi = z[i], y = label[i], e = exp(-fabs(zi));
        sum += (zi > 0.0 ? zi : 0.0) - zi * y + log1p(e);
        if (grad) {
            double sig = zi >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
            grad[i] = sig - y;
        }
    }
    return sum;
}
