/* Private pieces shared by the constrained-network model files. */
#ifndef IMPULSE_CHNN_INTERNAL_H
#define IMPULSE_CHNN_INTERNAL_H

#include "impulse/chnn_models.h"

struct imp_cmodel_work {
    int max_batch;
    int n_slots;      /* network caches kept side by side (training tapes) */
    imp_mlp_work **mlp;
    double **out;     /* per slot: max_batch x net output (NODE) or g = grad V (CHNN/CLNN) */
    double *in;       /* max_batch x net input */
    double *in_bar;   /* max_batch x net input */
    double *out_bar;  /* max_batch x net output, or gbar */
    double *pscratch; /* n_params: sink for parameter gradients nobody asked for */
    double *small;    /* per-sample scratch of the constrained projection */
    int hnn;          /* HNN/DeLaN extras allocated */
    struct imp_tmlp_work **tmlp; /* HNN/DeLaN: mass-network caches per slot */
    double *emb_t;    /* HNN/DeLaN: (max_batch k) x embed tangents */
    double *emb_tbar, *gx, *gxbar, *obar, *odbar, *xbar2;
    size_t small_size;
};

/* CHNN/CLNN right-hand side and its VJP (src/models/chnn.c). */
/* slot: which network cache to use; cached != 0: the slot already holds
 * the network pass at this y (from imp_chnn_rhs_ on the same slot). */
int imp_chnn_rhs_(const imp_cmodel *m, const double *params, const double *y, int B, double *ydot,
                  imp_cmodel_work *w, int slot);
int imp_chnn_rhs_vjp_(const imp_cmodel *m, const double *params, const double *y, int B,
                      const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w,
                      int slot, int cached);
size_t imp_chnn_small_size_(const imp_cmodel *m);
/* The learned inverse mass W = M(phi)^-1 ([F] eq 9): winv (n_points) from
 * the parameters, y = W u, and phibar += d(ybar . W u)/dphi. */
void imp_chnn_load_winv_(const imp_cmodel *m, const double *params, double *winv);
void imp_chnn_apply_winv_(const imp_csystem *cs, const double *winv, const double *u, double *y);
void imp_chnn_apply_winv_phi_vjp_(const imp_csystem *cs, const double *winv, const double *u, const double *ybar,
                                  double *phibar);
/* Neural ODE (src/models/node.c). */
int imp_node_input_size_(const imp_csystem *sys);
int imp_node_rhs_(const imp_cmodel *m, const double *params, const double *y, int B, double *ydot,
                  imp_cmodel_work *w, int slot);
int imp_node_rhs_vjp_(const imp_cmodel *m, const double *params, const double *y, int B,
                      const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w,
                      int slot, int cached);

/* HNN and DeLaN (src/models/hnn.c). */
int imp_hnn_embed_size_(const imp_csystem *sys);
int imp_hnn_alloc_(const imp_cmodel *m, imp_cmodel_work *w);
void imp_hnn_free_(imp_cmodel_work *w);
int imp_hnn_rhs_(const imp_cmodel *m, const double *params, const double *y, int B, double *ydot,
                 imp_cmodel_work *w, int slot);
int imp_hnn_rhs_vjp_(const imp_cmodel *m, const double *params, const double *y, int B,
                     const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w, int slot,
                     int cached);

#endif
