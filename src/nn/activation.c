/* Activations: names, and the fused value + first-derivative kernel used by
 * every MLP pass. Second derivatives are in mlp_internal.h (they are
 * functions of the cached value and first derivative). */
#include "nn/mlp_internal.h"

#include <math.h>
#include <string.h>

int imp_activation_from_name(const char *name, imp_activation *out)
{
    static const struct { const char *name; imp_activation act; } table[] = {
        {"identity", IMP_ACT_IDENTITY}, {"linear", IMP_ACT_IDENTITY},
        {"tanh", IMP_ACT_TANH},         {"softplus", IMP_ACT_SOFTPLUS},
        {"relu", IMP_ACT_RELU},         {"sigmoid", IMP_ACT_SIGMOID},
    };
    if (!name || !out) return imp_fail(IMP_ERR_INVALID, "activation: name is NULL");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) {
            *out = table[i].act;
            return IMP_OK;
        }
    return imp_fail(IMP_ERR_NOT_FOUND,
                    "activation: unknown name '%s' (want tanh, softplus, relu, sigmoid, identity)",
                    name);
}

const char *imp_activation_name(imp_activation a)
{
    switch (a) {
    case IMP_ACT_IDENTITY: return "identity";
    case IMP_ACT_TANH: return "tanh";
    case IMP_ACT_SOFTPLUS: return "softplus";
    case IMP_ACT_RELU: return "relu";
    case IMP_ACT_SIGMOID: return "sigmoid";
    }
    return "unknown";
}

void imp_act_forward(imp_activation act, double *z, double *s, size_t n)
{
    switch (act) {
    case IMP_ACT_IDENTITY:
        for (size_t i = 0; i < n; i++) s[i] = 1.0;
        break;
    case IMP_ACT_TANH:
        for (size_t i = 0; i < n; i++) {
            double a = tanh(z[i]);
            z[i] = a;
            s[i] = 1.0 - a * a;
        }
        break;
    case IMP_ACT_SOFTPLUS:
        /* softplus(z) = max(z,0) + log1p(exp(-|z|)) never overflows; its
         * derivative sigmoid(z) shares the exponential. */
        for (size_t i = 0; i < n; i++) {
            double zi = z[i], e = exp(-fabs(zi));
            double sig_abs = 1.0 / (1.0 + e); /* sigmoid(|z|) */
            z[i] = (zi > 0.0 ? zi : 0.0) + log1p(e);
            s[i] = zi >= 0.0 ? sig_abs : e * sig_abs;
        }
        break;
    case IMP_ACT_RELU:
        for (size_t i = 0; i < n; i++) {
            int pos = z[i] > 0.0;
            s[i] = pos ? 1.0 : 0.0;
            z[i] = pos ? z[i] : 0.0;
        }
        break;
    case IMP_ACT_SIGMOID:
        /* s = e/(1+e)^2 with e = exp(-|z|) keeps the tiny tails of
         * sigmoid' that a(1-a) would round to zero. */
        for (size_t i = 0; i < n; i++) {
            double zi = z[i], e = exp(-fabs(zi));
            double inv = 1.0 / (1.0 + e);
            z[i] = zi >= 0.0 ? inv : e * inv;
            s[i] = e * inv * inv;
        }
        break;
    }
}
