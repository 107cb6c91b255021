/* Neural ODE baseline in generalised coordinates ([F] section 7, [chnn]
 * section 2): zdot = MLP(embed(q), qdot) with angles embedded as
 * (cos q, sin q) so the network never sees the 2 pi jump. */
#include "chnn_internal.h"

#include <math.h>
#include <string.h>

int imp_node_input_size_(const imp_csystem *sys)
{
    int n = 0;
    for (int i = 0; i < sys->n_gen; i++) n += sys->gen_is_angle[i] ? 2 : 1;
    return n + sys->n_gen;
}

static void embed(const imp_csystem *sys, const double *z, double *in)
{
    int k = sys->n_gen, o = 0;
    for (int i = 0; i < k; i++) {
        if (sys->gen_is_angle[i]) {
            in[o++] = cos(z[i]);
            in[o++] = sin(z[i]);
        } else {
            in[o++] = z[i];
        }
    }
    for (int i = 0; i < k; i++) in[o++] = z[k + i];
}

/* zbar += (d embed / dz)^T inbar */
static void embed_vjp(const imp_csystem *sys, const double *z, const double *inbar, double *zbar)
{
    int k = sys->n_gen, o = 0;
    for (int i = 0; i < k; i++) {
        if (sys->gen_is_angle[i]) {
            zbar[i] += -sin(z[i]) * inbar[o] + cos(z[i]) * inbar[o + 1];
            o += 2;
        } else {
            zbar[i] += inbar[o++];
        }
    }
    for (int i = 0; i < k; i++) zbar[k + i] += inbar[o++];
}

int imp_node_rhs_(const imp_cmodel *m, const double *params, const double *y, int B, double *ydot,
                  imp_cmodel_work *w, int slot)
{
    int nin = m->net.sizes[0], dim = m->dim;
    for (int s = 0; s < B; s++) embed(&m->sys, y + (size_t)s * dim, w->in + (size_t)s * nin);
    imp_mlp_forward(&m->net, params, w->in, B, ydot, w->mlp[slot]);
    return IMP_OK;
}

int imp_node_rhs_vjp_(const imp_cmodel *m, const double *params, const double *y, int B,
                      const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w,
                      int slot, int cached)
{
    int nin = m->net.sizes[0], dim = m->dim;
    if (!cached) {
        for (int s = 0; s < B; s++) embed(&m->sys, y + (size_t)s * dim, w->in + (size_t)s * nin);
        imp_mlp_forward(&m->net, params, w->in, B, w->out[slot], w->mlp[slot]);
    }
    memset(w->in_bar, 0, (size_t)B * nin * sizeof(double));
    imp_mlp_backward(&m->net, params, fbar, B, theta_bar, w->in_bar, w->mlp[slot]);
    for (int s = 0; s < B; s++)
        embed_vjp(&m->sys, y + (size_t)s * dim, w->in_bar + (size_t)s * nin, ybar + (size_t)s * dim);
    return IMP_OK;
}
