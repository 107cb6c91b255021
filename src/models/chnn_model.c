/* Constrained-network model descriptions: construction, reference
 * initialisation, scratch, and dispatch of the right-hand sides. */
#include "chnn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_names[] = {"chnn", "clnn", "node", "hnn", "delan", "resnet"};
#define N_KINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

int imp_cmodel_kind_from_name(const char *name, imp_cmodel_kind *out)
{
    for (int k = 0; k < N_KINDS; k++)
        if (name && !strcmp(name, kind_names[k])) {
            *out = (imp_cmodel_kind)k;
            return IMP_OK;
        }
    return imp_fail(IMP_ERR_NOT_FOUND, "model: unknown kind '%s' (chnn, clnn, node, hnn, delan, resnet)",
                    name ? name : "(null)");
}

const char *imp_cmodel_kind_name(imp_cmodel_kind k)
{
    return (int)k >= 0 && (int)k < N_KINDS ? kind_names[k] : "?";
}

int imp_cmodel_discrete(const imp_cmodel *m) { return m && m->kind == IMP_CMODEL_RESNET; }

int imp_cmodel_init(imp_cmodel *m, imp_cmodel_kind kind, const imp_csystem *sys, int hidden,
                    int depth)
{
    if (!m || !sys) return imp_fail(IMP_ERR_INVALID, "model: NULL");
    if (hidden < 1 || hidden > 4096) return imp_fail(IMP_ERR_INVALID, "hidden: %d out of [1, 4096]", hidden);
    if (depth < 1 || depth > IMP_MLP_MAX_LAYERS - 1)
        return imp_fail(IMP_ERR_INVALID, "depth: %d out of [1, %d]", depth, IMP_MLP_MAX_LAYERS - 1);
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->sys = *sys;
    m->hidden = hidden;
    m->depth = depth;
    int sizes[IMP_MLP_MAX_LAYERS + 1];
    int nd = sys->n_points * sys->d;
    switch (kind) {
    case IMP_CMODEL_CHNN:
    case IMP_CMODEL_CLNN:
        if (sys->n_rows < 1) return imp_fail(IMP_ERR_INVALID, "system: '%s' has no constraints", sys->name);
        m->cartesian = 1;
        m->dim = 2 * nd;
        sizes[0] = nd;
        sizes[depth + 1] = 1;
        break;
    case IMP_CMODEL_NODE:
    case IMP_CMODEL_RESNET: /* the same network; ResNet steps with it (imp_cmodel_discrete) */
        if (sys->n_gen < 1)
            return imp_fail(IMP_ERR_UNSUPPORTED, "system: '%s' has no generalised coordinates", sys->name);
        m->cartesian = 0;
        m->dim = 2 * sys->n_gen;
        sizes[0] = imp_node_input_size_(sys);
        sizes[depth + 1] = m->dim;
        break;
    case IMP_CMODEL_HNN:
    case IMP_CMODEL_DELAN:
        if (sys->n_gen < 1)
            return imp_fail(IMP_ERR_UNSUPPORTED, "system: '%s' has no generalised coordinates", sys->name);
        if (sys->n_gen > 8)
            return imp_fail(IMP_ERR_UNSUPPORTED, "system: %d generalised coordinates (HNN/DeLaN support <= 8)",
                            sys->n_gen);
        m->cartesian = 0;
        m->dim = 2 * sys->n_gen;
        sizes[0] = imp_hnn_embed_size_(sys);
        sizes[depth + 1] = 1;
        break;
    default:
        return imp_fail(IMP_ERR_UNSUPPORTED, "model: '%s' is not implemented", imp_cmodel_kind_name(kind));
    }
    for (int l = 1; l <= depth; l++) sizes[l] = hidden;
    int st = imp_mlp_init(&m->net, depth + 1, sizes, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1);
    if (st) return st;
    m->off_mass = m->net.n_params;
    m->n_params = m->net.n_params + (m->cartesian ? (size_t)sys->n_points : 0);
    if (kind == IMP_CMODEL_HNN || kind == IMP_CMODEL_DELAN) {
        /* mass network with q_dim^2 outputs, as the reference */
        sizes[depth + 1] = sys->n_gen * sys->n_gen;
        st = imp_mlp_init(&m->mass_net, depth + 1, sizes, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1);
        if (st) return st;
        m->n_params = m->net.n_params + m->mass_net.n_params;
    }
    return IMP_OK;
}

/* Orthogonal rows/columns by modified Gram-Schmidt on a Gaussian matrix
 * (torch.nn.init.orthogonal_, used by the reference MLPs). */
static void orthogonal_init(double *W, int rows, int cols, imp_rng *rng)
{
    int tr = rows < cols; /* orthonormalise the longer side's vectors */
    int nv = tr ? rows : cols, len = tr ? cols : rows;
    for (int i = 0; i < rows * cols; i++) W[i] = imp_rng_normal(rng);
#define EL(v, k) (*(tr ? &W[(size_t)(v) * cols + (k)] : &W[(size_t)(k) * cols + (v)]))
    for (int v = 0; v < nv; v++) {
        for (int u = 0; u < v; u++) {
            double s = 0;
            for (int k = 0; k < len; k++) s += EL(v, k) * EL(u, k);
            for (int k = 0; k < len; k++) EL(v, k) -= s * EL(u, k);
        }
        double nrm = 0;
        for (int k = 0; k < len; k++) nrm += EL(v, k) * EL(v, k);
        nrm = sqrt(nrm);
        for (int k = 0; k < len; k++) EL(v, k) /= nrm;
    }
#undef EL
}

static void init_mlp(const imp_mlp *n, double *params, imp_rng *rng)
{
    for (int l = 0; l < n->n_layers; l++) {
        int in = n->sizes[l], out = n->sizes[l + 1];
        orthogonal_init(params + n->w_off[l], out, in, rng);
        if (n->b_off[l] != (size_t)-1) {
            double bound = 1.0 / sqrt((double)in);
            for (int i = 0; i < out; i++) params[n->b_off[l] + i] = imp_rng_uniform_range(rng, -bound, bound);
        }
    }
}

void imp_cmodel_init_params(const imp_cmodel *m, double *params, imp_rng *rng)
{
    init_mlp(&m->net, params, rng);
    if (m->kind == IMP_CMODEL_HNN || m->kind == IMP_CMODEL_DELAN) {
        init_mlp(&m->mass_net, params + m->off_mass, rng);
        /* Δ reference: the mass network starts at the identity, L = I
         * (output weights 0, diagonal biases softplus^-1(1) = log(e - 1),
         * others 0). With the reference's random output layer the initial
         * L L^T + 1e-4 I can be nearly singular, and its inverse times the
         * random potential's gradient diverges in the first rollout (DeLaN
         * on the rotor: chunk loss 1e8 before any step). */
        const imp_mlp *mn = &m->mass_net;
        int L = mn->n_layers - 1, k = m->sys.n_gen;
        double *p = params + m->off_mass;
        memset(p + mn->w_off[L], 0, (size_t)mn->sizes[L] * mn->sizes[L + 1] * sizeof(double));
        if (mn->b_off[L] != (size_t)-1)
            for (int i = 0; i < k * k; i++) p[mn->b_off[L] + i] = i / k == i % k ? log(exp(1.0) - 1.0) : 0.0;
        return;
    }
    for (size_t p = m->off_mass; p < m->n_params; p++) params[p] = 0.1 * imp_rng_normal(rng);
}

imp_cmodel_work *imp_cmodel_work_new_slots(const imp_cmodel *m, int max_batch, int n_slots)
{
    if (!m || max_batch < 1 || n_slots < 1) {
        imp_fail(IMP_ERR_INVALID, "work: max_batch %d and n_slots %d must be positive", max_batch, n_slots);
        return NULL;
    }
    imp_cmodel_work *w = calloc(1, sizeof *w);
    if (!w) goto nomem;
    w->max_batch = max_batch;
    w->n_slots = n_slots;
    size_t nin = (size_t)m->net.sizes[0], nout = (size_t)m->net.sizes[m->net.n_layers];
    size_t ng = nin > nout ? nin : nout;
    w->mlp = calloc((size_t)n_slots, sizeof *w->mlp);
    w->out = calloc((size_t)n_slots, sizeof *w->out);
    if (!w->mlp || !w->out) {
        imp_cmodel_work_free(w);
        goto nomem;
    }
    for (int s = 0; s < n_slots; s++) {
        w->mlp[s] = imp_mlp_work_new(&m->net, max_batch);
        w->out[s] = malloc((size_t)max_batch * ng * sizeof(double));
        if (!w->mlp[s] || !w->out[s]) {
            imp_cmodel_work_free(w);
            goto nomem;
        }
    }
    w->in = malloc((size_t)max_batch * nin * sizeof(double));
    w->in_bar = malloc((size_t)max_batch * nin * sizeof(double));
    w->out_bar = malloc((size_t)max_batch * ng * sizeof(double));
    w->pscratch = calloc(m->n_params, sizeof(double));
    w->small_size = m->cartesian ? imp_chnn_small_size_(m) : 1;
    w->small = malloc(w->small_size * sizeof(double));
    if (!w->in || !w->in_bar || !w->out_bar || !w->pscratch || !w->small) {
        imp_cmodel_work_free(w);
        goto nomem;
    }
    w->hnn = m->kind == IMP_CMODEL_HNN || m->kind == IMP_CMODEL_DELAN;
    if (w->hnn && imp_hnn_alloc_(m, w)) {
        imp_cmodel_work_free(w);
        goto nomem;
    }
    return w;
nomem:
    imp_fail(IMP_ERR_NOMEM, "model work: out of memory");
    return NULL;
}

int imp_cmodel_work_slots(const imp_cmodel_work *w) { return w ? w->n_slots : 0; }

int imp_cmodel_work_set_single_products(imp_cmodel_work *w, int on)
{
    if (!w) return imp_fail(IMP_ERR_INVALID, "work: NULL");
    for (int s = 0; s < w->n_slots; s++) {
        int st = imp_mlp_work_set_gemm_single(w->mlp[s], on);
        if (st) return st;
    }
    return IMP_OK;
}

imp_cmodel_work *imp_cmodel_work_new(const imp_cmodel *m, int max_batch)
{
    return imp_cmodel_work_new_slots(m, max_batch, 1);
}

void imp_cmodel_work_free(imp_cmodel_work *w)
{
    if (!w) return;
    if (w->hnn) imp_hnn_free_(w);
    for (int s = 0; s < w->n_slots; s++) {
        if (w->mlp) imp_mlp_work_free(w->mlp[s]);
        if (w->out) free(w->out[s]);
    }
    free(w->mlp);
    free(w->out);
    free(w->in);
    free(w->in_bar);
    free(w->out_bar);
    free(w->pscratch);
    free(w->small);
    free(w);
}

/* NODE's network and inputs: NODE's vector field, ResNet's residual */
static int node_net(const imp_cmodel *m) { return m->kind == IMP_CMODEL_NODE || m->kind == IMP_CMODEL_RESNET; }

static int check_call(const imp_cmodel *m, const double *params, const double *y, int B,
                      const imp_cmodel_work *w)
{
    if (!m || !params || !y || !w) return imp_fail(IMP_ERR_INVALID, "model: NULL argument");
    if (B < 1 || B > w->max_batch)
        return imp_fail(IMP_ERR_INVALID, "B: batch %d outside [1, %d] of the work buffers", B, w->max_batch);
    return IMP_OK;
}

static int check_slot(const imp_cmodel_work *w, int slot)
{
    if (slot < 0 || slot >= w->n_slots)
        return imp_fail(IMP_ERR_INVALID, "slot: %d outside [0, %d)", slot, w->n_slots);
    return IMP_OK;
}

int imp_cmodel_rhs_slot(const imp_cmodel *m, const double *params, const double *y, int B,
                        double *ydot, imp_cmodel_work *w, int slot)
{
    int st = check_call(m, params, y, B, w);
    if (!st) st = check_slot(w, slot);
    if (st) return st;
    if (m->cartesian) return imp_chnn_rhs_(m, params, y, B, ydot, w, slot);
    if (node_net(m)) return imp_node_rhs_(m, params, y, B, ydot, w, slot);
    return imp_hnn_rhs_(m, params, y, B, ydot, w, slot);
}

int imp_cmodel_rhs_vjp_slot(const imp_cmodel *m, const double *params, const double *y, int B,
                            const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w,
                            int slot)
{
    int st = check_call(m, params, y, B, w);
    if (!st) st = check_slot(w, slot);
    if (st) return st;
    if (!fbar || !ybar) return imp_fail(IMP_ERR_INVALID, "fbar/ybar: NULL");
    if (m->cartesian) return imp_chnn_rhs_vjp_(m, params, y, B, fbar, ybar, theta_bar, w, slot, 1);
    if (node_net(m)) return imp_node_rhs_vjp_(m, params, y, B, fbar, ybar, theta_bar, w, slot, 1);
    return imp_hnn_rhs_vjp_(m, params, y, B, fbar, ybar, theta_bar, w, slot, 1);
}

int imp_cmodel_rhs(const imp_cmodel *m, const double *params, const double *y, int B,
                   double *ydot, imp_cmodel_work *w)
{
    return imp_cmodel_rhs_slot(m, params, y, B, ydot, w, 0);
}

int imp_cmodel_rhs_vjp(const imp_cmodel *m, const double *params, const double *y, int B,
                       const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w)
{
    int st = check_call(m, params, y, B, w);
    if (st) return st;
    if (!fbar || !ybar) return imp_fail(IMP_ERR_INVALID, "fbar/ybar: NULL");
    if (m->cartesian) return imp_chnn_rhs_vjp_(m, params, y, B, fbar, ybar, theta_bar, w, 0, 0);
    if (node_net(m)) return imp_node_rhs_vjp_(m, params, y, B, fbar, ybar, theta_bar, w, 0, 0);
    return imp_hnn_rhs_vjp_(m, params, y, B, fbar, ybar, theta_bar, w, 0, 0);
}

static int bound_rhs(void *user, double t, const double *y, int B, double *ydot)
{
    (void)t;
    imp_cmodel_binding *b = user;
    return imp_cmodel_rhs(b->m, b->params, y, B, ydot, b->w);
}

static int bound_rhs_vjp(void *user, double t, const double *y, int B, const double *fbar,
                         double *ybar, double *theta_bar)
{
    (void)t;
    imp_cmodel_binding *b = user;
    return imp_cmodel_rhs_vjp(b->m, b->params, y, B, fbar, ybar, theta_bar, b->w);
}

void imp_cmodel_ode(imp_ode *ode, imp_cmodel_binding *bind)
{
    ode->dim = bind->m->dim;
    ode->n_theta = bind->m->n_params;
    ode->rhs = bound_rhs;
    ode->rhs_vjp = bound_rhs_vjp;
    ode->user = bind;
}
