/* The choice of a work's kernel tables (imp_mlp_kernels, mlp_internal.h):
 * precision x instruction set x fused, made once when the work is made and
 * again only when it is configured (imp_mlp_work_set_single, _set_fused,
 * _set_reference), never per call. The instruction set is the one in use
 * when the work was made (imp_act_isa: IMPULSE_ISA and the CPU's features,
 * never a version the CPU lacks; tests force each version the CPU has and
 * make a work under it). */
#include "nn/mlp_internal.h"

/* a layer with more than IMP_MLP_THIN inputs and outputs: the single path
 * has products to gain on */
static int has_wide_layer(const imp_mlp *m)
{
    for (int l = 0; l < m->n_layers; l++)
        if (m->sizes[l] > IMP_MLP_THIN && m->sizes[l + 1] > IMP_MLP_THIN) return 1;
    return 0;
}

void imp_mlp_kernels_choose(imp_mlp_work *w)
{
    const imp_mlp *m = &w->net;
    w->pass_k = NULL;
    w->sweep_k = NULL;
    if (w->use_reference) return;
    if (w->single && w->fslab && has_wide_layer(m))
        w->pass_k = &imp_mlp_single_pass;
    else if (!w->no_fused && imp_mlp_fused_vec_ok(m))
        w->pass_k = imp_mlp_fused_pass(w->isa);
    if (!w->no_fused && imp_mlp_fused_ok(m)) w->sweep_k = imp_mlp_fused_sweeps(w->single && w->ffw, w->isa);
}

void imp_mlp_work_set_fused(imp_mlp_work *w, int on)
{
    w->no_fused = on == 0;
    imp_mlp_kernels_choose(w);
}
