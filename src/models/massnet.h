/* Private: tanh MLP with forward-mode tangents and their reverse mode
 * (src/models/massnet.c), for the mass-matrix networks of HNN and DeLaN. */
#ifndef IMPULSE_MASSNET_H
#define IMPULSE_MASSNET_H

#include "impulse/nn.h"

typedef struct imp_tmlp_work {
    int max_batch, k;
    double *a[IMP_MLP_MAX_LAYERS + 1];   /* B x sizes[l]: input, tanh activations, output */
    double *ad[IMP_MLP_MAX_LAYERS + 1];  /* (B k) x sizes[l]: tangents */
    double *gb, *gb2, *gd, *gd2;         /* reverse-sweep scratch */
    double *slab;
} imp_tmlp_work;

/* k tangents per sample (rows r*k + j of t and of the tangent outputs). */
imp_tmlp_work *imp_tmlp_work_new(const imp_mlp *m, int max_batch, int k);
void imp_tmlp_work_free(imp_tmlp_work *w);
/* o = w->a[L] (B x out), odot = w->ad[L] ((B k) x out). Hidden layers tanh,
 * identity output (the description's activations are not consulted). */
void imp_tmlp_forward(const imp_mlp *m, const double *params, const double *x, const double *t, int B,
                      imp_tmlp_work *w);
/* Accumulate dparams (may be NULL), xbar (B x in), tbar ((B k) x in), both may be NULL. */
void imp_tmlp_backward(const imp_mlp *m, const double *params, const double *obar, const double *odbar,
                       int B, double *dparams, double *xbar, double *tbar, imp_tmlp_work *w);

#endif
