/* Model construction, parameters, scratch, dispatch and checkpoints of the
 * CD-Lagrange strand's models. */
#include "cdl_internal.h"
#include "core/num.h"
#include "impulse/io.h"
#include "io/meta.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_names[] = {"cdl", "vin", "resnet", "resnet-contact"};

int imp_model_kind_from_name(const char *name, imp_model_kind *out)
{
    for (int k = 0; k < 4; k++)
        if (!strcmp(name, kind_names[k])) {
            *out = (imp_model_kind)k;
            return IMP_OK;
        }
    return imp_fail(IMP_ERR_NOT_FOUND, "model: unknown '%s' (cdl, vin, resnet, resnet-contact)", name);
}

const char *imp_model_kind_name(imp_model_kind k)
{
    return (int)k >= 0 && (int)k < 4 ? kind_names[k] : "unknown";
}

void imp_cdl_config_default(imp_cdl_config *cfg, imp_model_kind kind)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kind = kind;
    cfg->hidden = 500;
    cfg->hidden_layers = 1;
    cfg->act = IMP_ACT_SOFTPLUS;
    cfg->contact_hidden = 100;
    cfg->touch = 1;
    cfg->contact_tol = IMP_CONTACT_TOL_AUTO;
}

void imp_model_inverse_masses(const imp_model *m, const double *params, double *w)
{
    for (int k = 0; k < m->K; k++)
        w[k] = m->cfg.learn_mass ? exp(-params[m->off_mass + k]) : 1.0 / m->geom.mass[k];
}

double imp_model_law_value(int mu, double a) { return mu ? exp(a) : 1.0 / (1.0 + exp(-a)); }

double imp_model_law_raw(int mu, double x) { return mu ? log(x) : log(x / (1.0 - x)); }

int imp_model_contact_law(const imp_model *m, const double *params, double *e, double *mu)
{
    for (int p = 0; p < m->geom.n_pairs; p++)
        e[p] = m->cfg.learn_restitution ? imp_model_law_value(0, params[m->off_restitution + p]) : m->geom.restitution;
    if (!m->cfg.friction) return 0;
    for (int p = 0; p < m->geom.n_pairs; p++) mu[p] = imp_model_law_value(1, params[m->off_friction + p]);
    return 1;
}

void imp_model_get_contact_law(const imp_model *m, double *e, double *mu)
{
    double tmp[IMP_MAX_CONTACTS];
    if (!imp_model_contact_law(m, m->params, e, mu ? mu : tmp) && mu)
        for (int p = 0; p < m->geom.n_pairs; p++) mu[p] = 0.0;
}

int imp_model_set_projection(imp_model *m, int on)
{
    if (!m) return imp_fail(IMP_ERR_INVALID, "projection: NULL model");
    if (on && (m->cfg.kind != IMP_MODEL_CDL || !m->has_contact_net))
        return imp_fail(IMP_ERR_INVALID, "projection: a %s model has no impacts to project (cdl with a contact network only)",
                        imp_model_kind_name(m->cfg.kind));
    m->cfg.projection = on != 0;
    return IMP_OK;
}

int imp_model_set_contact_law(imp_model *m, const double *e, const double *mu)
{
    for (int p = 0; p < m->geom.n_pairs; p++) {
        if (e && m->cfg.learn_restitution) {
            if (!(e[p] > 0.0 && e[p] < 1.0))
                return imp_fail(IMP_ERR_INVALID, "restitution[%d]: initial value %g outside (0, 1)", p, e[p]);
            m->params[m->off_restitution + p] = imp_model_law_raw(0, fmin(fmax(e[p], 1e-3), 1.0 - 1e-3));
        }
        if (mu && m->cfg.friction) {
            if (!(mu[p] > 0.0) || !isfinite(mu[p]))
                return imp_fail(IMP_ERR_INVALID, "friction[%d]: initial value %g must be positive", p, mu[p]);
            m->params[m->off_friction + p] = imp_model_law_raw(1, fmin(fmax(mu[p], 1e-4), 10.0));
        }
    }
    return IMP_OK;
}

int imp_model_set_gravity_potential(imp_model *m, double g)
{
    const int K = m->K, d = m->geom.dim, D = m->D;
    if (m->cfg.kind != IMP_MODEL_CDL || m->cfg.hidden != 2 * K || m->cfg.hidden_layers != 1 ||
        m->cfg.act != IMP_ACT_SOFTPLUS || d < 2)
        return imp_fail(IMP_ERR_INVALID, "gravity potential: needs cdl with %d softplus units in one layer", 2 * K);
    double *net = m->params + m->off_net, *W0 = net + m->net.w_off[0], *W1 = net + m->net.w_off[1];
    memset(net, 0, m->net.n_params * sizeof(double));
    for (int k = 0; k < K; k++) {
        W0[(size_t)(2 * k) * D + d * k + 1] = 1.0;
        W0[(size_t)(2 * k + 1) * D + d * k + 1] = -1.0;
        W1[2 * k] = m->geom.mass[k] * g;
        W1[2 * k + 1] = -m->geom.mass[k] * g;
    }
    return IMP_OK;
}

void imp_model_damping(const imp_model *m, const double *params, double *C)
{
    for (int i = 0; i < m->D; i++) C[i] = m->cfg.learn_damping ? exp(params[m->off_damping + i]) : 0.0;
}

/* Layout of the parameter vector, then (unless it differs from a declared
 * count expect != 0: a checkpoint's params array) its allocation. */
static int build(imp_model *m, size_t expect)
{
    const imp_cdl_config *c = &m->cfg;
    int D = m->D, K = m->K, st;
    if (c->hidden < 1 || c->hidden > IMP_MODEL_MAX_WIDTH)
        return imp_fail(IMP_ERR_INVALID, "hidden: %d units outside [1, %d]", c->hidden, IMP_MODEL_MAX_WIDTH);
    if (c->hidden_layers < 1 || c->hidden_layers > IMP_MLP_MAX_LAYERS - 1)
        return imp_fail(IMP_ERR_INVALID, "hidden_layers: %d outside [1, %d]", c->hidden_layers, IMP_MLP_MAX_LAYERS - 1);
    if (c->contact_hidden < 1 || c->contact_hidden > IMP_MODEL_MAX_WIDTH)
        return imp_fail(IMP_ERR_INVALID, "contact_hidden: %d units outside [1, %d]", c->contact_hidden,
                        IMP_MODEL_MAX_WIDTH);
    int sizes[IMP_MLP_MAX_LAYERS + 1];
    int L = c->hidden_layers + 1;
    for (int l = 1; l < L; l++) sizes[l] = c->hidden;
    int structured = c->kind == IMP_MODEL_CDL || c->kind == IMP_MODEL_VIN;
    m->has_contact_net = c->kind == IMP_MODEL_CDL || c->kind == IMP_MODEL_RESNET_CONTACT;
    if (structured) {
        /* potential U: R^D -> R, last layer without bias (reference code) */
        sizes[0] = D;
        sizes[L] = 1;
        st = imp_mlp_init(&m->net, L, sizes, c->act, IMP_ACT_IDENTITY, 0);
    } else {
        sizes[0] = 2 * D + (m->has_contact_net ? K : 0);
        sizes[L] = 2 * D;
        st = imp_mlp_init(&m->net, L, sizes, c->act, IMP_ACT_IDENTITY, 1);
    }
    if (st) return st;
    if (m->has_contact_net) {
        int cs[4] = {2 * D, c->contact_hidden, c->contact_hidden, K};
        st = imp_mlp_init(&m->contact, 3, cs, IMP_ACT_RELU, IMP_ACT_SIGMOID, 1);
        if (st) return st;
    }
    if (!structured && (c->learn_damping || c->learn_mass || c->projection))
        return imp_fail(IMP_ERR_INVALID, "options: damping, mass and projection apply to cdl/vin only");
    if (c->kind != IMP_MODEL_CDL && (c->learn_restitution || c->friction || c->impact_law))
        return imp_fail(IMP_ERR_INVALID, "options: learned restitution, friction and the impact law apply to cdl only");
    if (c->gate_geometry && (c->kind != IMP_MODEL_CDL || c->touch))
        return imp_fail(IMP_ERR_INVALID, "gate_geometry: for cdl without touch feedback only (the labels would gate)");
    if (c->contact_tol != IMP_CONTACT_TOL_AUTO && !(c->contact_tol >= 0.0 && c->contact_tol <= 1e12))
        return imp_fail(IMP_ERR_INVALID, "contact_tol: %g must be >= 0 (or IMP_CONTACT_TOL_AUTO)", c->contact_tol);
    if (c->impact_law != IMP_CDL_IMPACT_PAPER && c->impact_law != IMP_CDL_IMPACT_NEWTON)
        return imp_fail(IMP_ERR_INVALID, "impact_law: unknown id %d (0 paper, 1 newton)", c->impact_law);
    if (c->impact_timing != IMP_CDL_TIMING_STEP && c->impact_timing != IMP_CDL_TIMING_EVENT)
        return imp_fail(IMP_ERR_INVALID, "impact_timing: unknown id %d (0 step, 1 event)", c->impact_timing);
    if (c->impact_timing == IMP_CDL_TIMING_EVENT && c->kind != IMP_MODEL_CDL)
        return imp_fail(IMP_ERR_INVALID, "impact_timing: event applies to cdl only");
    if (c->impact_timing == IMP_CDL_TIMING_EVENT && c->projection)
        return imp_fail(IMP_ERR_INVALID,
                        "impact_timing: event has no reverse pass through the projection (train without it; eval --projection projects the rollouts)");
    if (c->kind == IMP_MODEL_CDL && !c->learn_restitution && m->geom.n_pairs > 0 && isnan(m->geom.restitution))
        return imp_fail(IMP_ERR_INVALID, "restitution: unknown (the data's meta has none): learn it instead of keeping it fixed");
    if (c->friction) {
        int any = 0;
        for (int p = 0; p < m->geom.n_pairs; p++) any |= imp_contact_pair_has_tangent(&m->geom, p);
        if (!any) return imp_fail(IMP_ERR_INVALID, "friction: no contact pair has a tangent (contact_tangents): nothing can slide");
    }
    m->off_net = 0;
    m->off_contact = m->net.n_params;
    m->off_damping = m->off_contact + (m->has_contact_net ? m->contact.n_params : 0);
    m->off_mass = m->off_damping + (c->learn_damping ? (size_t)D : 0);
    m->off_restitution = m->off_mass + (c->learn_mass ? (size_t)K : 0);
    m->off_friction = m->off_restitution + (c->learn_restitution ? (size_t)m->geom.n_pairs : 0);
    m->n_params = m->off_friction + (c->friction ? (size_t)m->geom.n_pairs : 0);
    if (expect && expect != m->n_params)
        return imp_fail(IMP_ERR_SHAPE, "params: %zu values, but the model the meta describes (%s, hidden %d x %d, "
                                       "contact_hidden %d) has %zu", expect, imp_model_kind_name(c->kind), c->hidden,
                        c->hidden_layers, c->contact_hidden, m->n_params);
    m->params = calloc(m->n_params, sizeof(double));
    return m->params ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "params: cannot allocate %zu", m->n_params);
}

static int create(imp_model **out, const imp_cdl_config *cfg, const imp_contact_geometry *geom, double dt,
                  unsigned long long seed, size_t expect)
{
    *out = NULL;
    int st = imp_contact_geometry_check(geom);
    if (st) return st;
    if (!(dt >= IMP_MODEL_MIN_DT && dt <= IMP_MODEL_MAX_DT))
        return imp_fail(IMP_ERR_INVALID, "dt: %g outside [%g, %g] s", dt, IMP_MODEL_MIN_DT, IMP_MODEL_MAX_DT);
    imp_model *m = calloc(1, sizeof *m);
    if (!m) return imp_fail(IMP_ERR_NOMEM, "model: out of memory");
    m->cfg = *cfg;
    m->geom = *geom;
    m->dt = dt;
    m->K = geom->n_bodies;
    m->D = geom->n_bodies * geom->dim;
    st = build(m, expect);
    if (st) {
        imp_model_free(m);
        return st;
    }
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    imp_mlp_init_params(&m->net, m->params + m->off_net, &rng);
    if (m->has_contact_net) imp_mlp_init_params(&m->contact, m->params + m->off_contact, &rng);
    if (cfg->learn_damping)
        for (int i = 0; i < m->D; i++) m->params[m->off_damping + i] = log(1e-3);
    /* learned masses start at 1 (log m = 0), not at the true masses */
    /* learned restitution starts at the geometry's value if known, else 0.5;
     * friction at 0.3 (imp_model_set_contact_law overrides both) */
    double e0[IMP_MAX_CONTACTS], mu0[IMP_MAX_CONTACTS];
    for (int p = 0; p < m->geom.n_pairs; p++) {
        double e = geom->restitution;
        e0[p] = isnan(e) ? 0.5 : fmin(fmax(e, 0.01), 0.99);
        mu0[p] = 0.3;
    }
    imp_model_set_contact_law(m, e0, mu0);
    *out = m;
    return IMP_OK;
}

int imp_model_create(imp_model **out, const imp_cdl_config *cfg, const imp_contact_geometry *geom,
                     double dt, unsigned long long seed)
{
    return create(out, cfg, geom, dt, seed, 0);
}

void imp_model_free(imp_model *m)
{
    if (!m) return;
    free(m->params);
    free(m);
}

imp_model_work *imp_model_work_new(const imp_model *m, int B, int H)
{
    if (B < 1 || H < 1 || B > INT_MAX / (H + 1)) return NULL; /* H*B rows are stacked */
    imp_model_work *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->B = B, w->H = H, w->D = m->D, w->K = m->K;
    w->structured = m->cfg.kind == IMP_MODEL_CDL || m->cfg.kind == IMP_MODEL_VIN;
    int ok = 1;
    w->net = calloc((size_t)H + 1, sizeof *w->net);
    w->contact = calloc((size_t)H + 1, sizeof *w->contact);
    ok = w->net && w->contact;
    for (int k = 0; ok && k <= H; k++) {
        w->net[k] = imp_mlp_work_new(&m->net, B);
        ok = w->net[k] != NULL;
        if (ok && m->has_contact_net) {
            w->contact[k] = imp_mlp_work_new(&m->contact, B);
            ok = w->contact[k] != NULL;
        }
    }
    size_t sBD = (size_t)B * m->D, sBK = (size_t)B * m->K, S1 = (size_t)H + 1;
    if (ok && m->has_contact_net && w->structured)
        ok = (w->contact_stack = imp_mlp_work_new(&m->contact, B * H)) &&
             (w->in_stack = calloc((size_t)H * 2 * sBD, sizeof(double))) &&
             (w->din_stack = calloc((size_t)H * 2 * sBD, sizeof(double)));
    size_t P = m->geom.n_pairs > 0 ? (size_t)m->geom.n_pairs : 1;
    size_t width = (size_t)(2 * m->D + m->K);
    double **arrays[] = {&w->q, &w->v, &w->g, &w->vh, &w->qt, &w->vS, &w->qbar, &w->vbar, &w->gbar};
    for (size_t i = 0; ok && i < sizeof arrays / sizeof arrays[0]; i++) ok = (*arrays[i] = calloc(S1 * sBD, sizeof(double))) != NULL;
    if (ok) ok = (w->p = calloc(S1 * sBK, sizeof(double))) && (w->gate = calloc(S1 * sBK, sizeof(double))) &&
                 (w->pbar = calloc(S1 * sBK, sizeof(double))) && (w->lab = calloc(S1 * sBK, sizeof(double))) &&
                 (w->active = calloc(S1 * B * P, 1)) && (w->pact = calloc(S1 * B * P, 1)) &&
                 (w->acted = calloc(S1 * B * P, 1)) && (w->in = calloc(B * width, sizeof(double))) &&
                 (w->din = calloc(B * width, sizeof(double))) && (w->out = calloc(B * width, sizeof(double))) &&
                 (w->dout = calloc(B * width, sizeof(double))) && (w->xs = calloc(S1 * 2 * sBD, sizeof(double))) &&
                 (w->xbar = calloc(S1 * 2 * sBD, sizeof(double)));
    if (!ok) {
        imp_model_work_free(w);
        return NULL;
    }
    return w;
}

int imp_model_work_set_single_contact(imp_model_work *w, int on)
{
    if (!w) return imp_fail(IMP_ERR_INVALID, "model work: NULL");
    for (int k = 0; k <= w->H; k++) {
        if (!w->contact[k]) continue;
        int st = imp_mlp_work_set_single(w->contact[k], on);
        if (st) return st;
    }
    if (w->contact_stack) {
        int st = imp_mlp_work_set_single(w->contact_stack, on);
        if (st) return st;
    }
    /* every step of a window evaluates the contact net with the same
     * parameters, and step 0's forward runs first (both window losses):
     * the later steps reuse its rounded weights */
    for (int k = 1; k <= w->H; k++) {
        if (!w->contact[k]) continue;
        int st = imp_mlp_work_single_follow(w->contact[k], on ? w->contact[0] : NULL);
        if (st) return st;
    }
    return IMP_OK;
}

int imp_model_work_set_single_potential(imp_model_work *w, int on)
{
    if (!w) return imp_fail(IMP_ERR_INVALID, "model work: NULL");
    if (!w->structured) return IMP_OK;
    for (int k = 0; k <= w->H; k++) {
        int st = imp_mlp_work_set_single(w->net[k], on);
        if (st) return st;
    }
    return IMP_OK;
}

void imp_model_work_free(imp_model_work *w)
{
    if (!w) return;
    for (int k = 0; k <= w->H; k++) {
        if (w->net) imp_mlp_work_free(w->net[k]);
        if (w->contact) imp_mlp_work_free(w->contact[k]);
    }
    free(w->net), free(w->contact);
    imp_mlp_work_free(w->contact_stack);
    imp_mlp_fixed_free(w->contact_fixed);
    imp_mlp_fixed_free(w->net_fixed);
    free(w->in_stack), free(w->din_stack);
    free(w->q), free(w->v), free(w->g), free(w->vh), free(w->qt), free(w->vS);
    free(w->qbar), free(w->vbar), free(w->gbar);
    free(w->p), free(w->gate), free(w->pbar), free(w->lab), free(w->active), free(w->pact), free(w->acted);
    free(w->in), free(w->din), free(w->out), free(w->dout), free(w->xs), free(w->xbar);
    free(w);
}

static int structured(const imp_model *m)
{
    return m->cfg.kind == IMP_MODEL_CDL || m->cfg.kind == IMP_MODEL_VIN;
}

double imp_cdl_default_contact_tol(const imp_trajset *data)
{
    return isfinite(data->noise) && data->noise > 0.0 ? 3.0 * data->noise : 0.0;
}

int imp_cdl_timing_from_name(const char *name, int *out)
{
    if (!strcmp(name, "step")) *out = IMP_CDL_TIMING_STEP;
    else if (!strcmp(name, "event")) *out = IMP_CDL_TIMING_EVENT;
    else return imp_fail(IMP_ERR_INVALID, "impact timing: '%s' is not step or event", name);
    return IMP_OK;
}

int imp_cdl_default_impact_law(const imp_trajset *data)
{
    return !strcmp(data->labels, "impact") ? IMP_CDL_IMPACT_PAPER : IMP_CDL_IMPACT_NEWTON;
}

int imp_model_window_loss(const imp_model *m, const double *params, imp_model_work *w,
                          const double *x0, const double *target, const double *labels,
                          const double *weight, int B, int H, double l2, double *grad, imp_loss_parts *parts)
{
    if (B < 1 || B > w->B || H < 1 || H > w->H)
        return imp_fail(IMP_ERR_SHAPE, "batch: B = %d, H = %d exceed the work's %d x %d", B, H, w->B, w->H);
    if (m->cfg.touch && m->has_contact_net && !labels)
        return imp_fail(IMP_ERR_INVALID, "labels: touch feedback needs contact labels");
    if (m->cfg.impact_timing == IMP_CDL_TIMING_EVENT && m->cfg.projection)
        return imp_fail(IMP_ERR_INVALID, "projection: no reverse pass with impact_timing event (rollouts only)");
    imp_loss_parts lp = {0};
    int st = structured(m) ? imp_structured_window_loss(m, params, w, x0, target, labels, weight, B, H, grad, &lp)
                           : imp_resnet_window_loss(m, params, w, x0, target, labels, weight, B, H, grad, &lp);
    if (st) return st;
    /* Keras l2 on the potential's kernels: shrinks U towards the zero function
     * so that jumps are explained by impulses, not spurious forces ([P] 3.2) */
    lp.l2 = structured(m) && l2 > 0.0 ? imp_mlp_l2(&m->net, params + m->off_net, l2, grad ? grad + m->off_net : NULL) : 0.0;
    lp.total = lp.state + lp.contact + lp.l2;
    if (parts) *parts = lp;
    return isfinite(lp.total) ? IMP_OK : imp_fail(IMP_ERR_NUMERIC, "loss: non-finite (%g)", lp.total);
}

int imp_model_rollout_single(const imp_model *m, const double *x0, int n_steps, const double *gates,
                             int single, double *states, double *contact)
{
    if (n_steps < 1) return imp_fail(IMP_ERR_INVALID, "steps: %d, need at least 1", n_steps);
    int st = imp_check_finite(x0, 2 * (size_t)m->D, "initial state");
    if (st) return st;
    imp_model_work *w = imp_model_work_new(m, 1, 1);
    if (!w) return imp_fail(IMP_ERR_NOMEM, "rollout: out of memory");
    if ((single & IMP_ROLLOUT_SINGLE_CONTACT) && m->has_contact_net && !gates) {
        /* the rollout's steps use contact[0] (imp_structured_rollout, imp_resnet_rollout) */
        st = imp_mlp_work_set_single(w->contact[0], 1);
        if (!st) st = imp_mlp_work_single_fix(w->contact[0], m->params + m->off_contact);
    } else if (m->has_contact_net && !(single & IMP_ROLLOUT_BLAS)) {
        /* double: the weights fixed once, one row per step by the kernel family's products */
        w->contact_fixed = imp_mlp_fixed_new(&m->contact, m->params + m->off_contact);
        if (!w->contact_fixed) st = imp_fail(IMP_ERR_NOMEM, "rollout: out of memory");
    }
    if (!st && (single & IMP_ROLLOUT_SINGLE_POTENTIAL) && structured(m)) {
        /* the rollout uses net[0] and net[1]; their weights rounded once */
        st = imp_model_work_set_single_potential(w, 1);
        for (int k = 0; !st && k <= w->H; k++) st = imp_mlp_work_single_fix(w->net[k], m->params + m->off_net);
    } else if (!st && structured(m) && !(single & IMP_ROLLOUT_BLAS)) {
        w->net_fixed = imp_mlp_fixed_new(&m->net, m->params + m->off_net);
        if (!w->net_fixed) st = imp_fail(IMP_ERR_NOMEM, "rollout: out of memory");
    }
    if (st) {
        imp_model_work_free(w);
        return st;
    }
    st = structured(m) ? imp_structured_rollout(m, w, x0, n_steps, gates, states, contact)
                       : imp_resnet_rollout(m, w, x0, n_steps, gates, states, contact);
    imp_model_work_free(w);
    return st;
}

int imp_model_rollout(const imp_model *m, const double *x0, int n_steps, const double *gates, double *states,
                      double *contact)
{
    return imp_model_rollout_single(m, x0, n_steps, gates, 0, states, contact);
}

int imp_model_potential_grad(const imp_model *m, const double *q, int nq, double *grad_out)
{
    if (!structured(m)) return imp_fail(IMP_ERR_INVALID, "model: %s has no potential", imp_model_kind_name(m->cfg.kind));
    imp_mlp_work *w = imp_mlp_work_new(&m->net, nq);
    if (!w) return imp_fail(IMP_ERR_NOMEM, "potential: out of memory");
    imp_mlp_grad_input(&m->net, m->params + m->off_net, q, nq, grad_out, NULL, w);
    imp_mlp_work_free(w);
    return IMP_OK;
}

/* ---- checkpoints (schema: docs/data-format.md, "Checkpoints") ---- */

#define MODEL_VERSION 2 /* 1: no format_version and no checksum (still loaded) */

/* FNV-1a of the model description and the parameter bytes, 16 hex digits. */
static void checksum(const imp_model *m, const double *params, char hex[17])
{
    char desc[512], b[IMP_NUM_FMT_CAP];
    const imp_cdl_config *c = &m->cfg;
    snprintf(desc, sizeof desc,
             "impulse-model|model=%s|hidden=%d|hidden_layers=%d|activation=%s|contact_hidden=%d|touch=%d|"
             "projection=%d|learn_damping=%d|learn_mass=%d|learn_restitution=%d|friction=%d|dim=%d|bodies=%d|"
             "pairs=%d|n_params=%zu|dt=%s|",
             imp_model_kind_name(c->kind), c->hidden, c->hidden_layers, imp_activation_name(c->act),
             c->contact_hidden, c->touch, c->projection, c->learn_damping, c->learn_mass, c->learn_restitution,
             c->friction, m->geom.dim, m->K, m->geom.n_pairs, m->n_params, imp_num_format(m->dt, b));
    if (c->contact_tol != IMP_CONTACT_TOL_AUTO) { /* absent before per-pair events */
        size_t len = strlen(desc);
        snprintf(desc + len, sizeof desc - len, "contact_tol=%s|", imp_num_format(c->contact_tol, b));
    }
    if (c->gate_geometry) {
        size_t len = strlen(desc);
        snprintf(desc + len, sizeof desc - len, "gate_geometry=1|");
    }
    if (c->impact_timing) {
        size_t len = strlen(desc);
        snprintf(desc + len, sizeof desc - len, "impact_timing=%d|", c->impact_timing);
    }
    uint64_t h = imp_fnv1a(desc, strlen(desc), IMP_FNV_START);
    h = imp_fnv1a(params, m->n_params * sizeof(double), h);
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
}

static int add_mlp_arrays(imp_npz *z, const char *prefix, const imp_mlp *mlp, const double *params)
{
    char name[64];
    for (int l = 0; l < mlp->n_layers; l++) {
        size_t sh[2] = {(size_t)mlp->sizes[l + 1], (size_t)mlp->sizes[l]};
        snprintf(name, sizeof name, "%s.W%d", prefix, l);
        int st = imp_npz_add_f64(z, name, 2, sh, params + mlp->w_off[l]);
        if (st) return st;
        if (mlp->b_off[l] != (size_t)-1) {
            snprintf(name, sizeof name, "%s.b%d", prefix, l);
            st = imp_npz_add_f64(z, name, 1, sh, params + mlp->b_off[l]);
            if (st) return st;
        }
    }
    return IMP_OK;
}

/* The per-layer copies must be present, shaped as the layout says, and
 * equal (bit for bit) to their slices of params. */
static int check_mlp_arrays(const imp_npz *z, const char *prefix, const imp_mlp *mlp, const double *params)
{
    char name[64];
    for (int l = 0; l < mlp->n_layers; l++) {
        for (int bias = 0; bias < 2; bias++) {
            if (bias && mlp->b_off[l] == (size_t)-1) {
                snprintf(name, sizeof name, "%s.b%d", prefix, l);
                if (imp_npz_find(z, name)) return imp_fail(IMP_ERR_FORMAT, "%s: the layer has no bias", name);
                continue;
            }
            snprintf(name, sizeof name, "%s.%c%d", prefix, bias ? 'b' : 'W', l);
            size_t sh[2] = {(size_t)mlp->sizes[l + 1], (size_t)mlp->sizes[l]};
            const double *a;
            int st = imp_npz_get_f64(z, name, bias ? 1 : 2, sh, &a, NULL);
            if (st) return st;
            size_t n = bias ? sh[0] : sh[0] * sh[1], off = bias ? mlp->b_off[l] : mlp->w_off[l];
            for (size_t i = 0; i < n; i++)
                if (memcmp(&a[i], &params[off + i], sizeof(double))) {
                    char x[IMP_NUM_FMT_CAP], y[IMP_NUM_FMT_CAP];
                    return imp_fail(IMP_ERR_FORMAT, "%s[%zu] = %s differs from its copy params[%zu] = %s", name, i,
                                    imp_num_format(a[i], x), off + i, imp_num_format(params[off + i], y));
                }
        }
    }
    snprintf(name, sizeof name, "%s.W%d", prefix, mlp->n_layers);
    if (imp_npz_find(z, name)) return imp_fail(IMP_ERR_FORMAT, "%s: the network has %d layers", name, mlp->n_layers);
    return IMP_OK;
}

int imp_model_save(const imp_model *m, const char *path, const char *extra_meta)
{
    int st = imp_check_finite(m->params, m->n_params, "params");
    if (st) return imp_fail_context(st, "checkpoint %s", path);
    char hex[17];
    checksum(m, m->params, hex);
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "kind", "model");
    imp_json_kv_int(&j, "format_version", MODEL_VERSION);
    imp_json_kv_string(&j, "model", imp_model_kind_name(m->cfg.kind));
    imp_json_kv_int(&j, "hidden", m->cfg.hidden);
    imp_json_kv_int(&j, "hidden_layers", m->cfg.hidden_layers);
    imp_json_kv_string(&j, "activation", imp_activation_name(m->cfg.act));
    imp_json_kv_int(&j, "contact_hidden", m->cfg.contact_hidden);
    imp_json_kv_int(&j, "touch", m->cfg.touch);
    imp_json_kv_int(&j, "projection", m->cfg.projection);
    imp_json_kv_int(&j, "learn_damping", m->cfg.learn_damping);
    imp_json_kv_int(&j, "learn_mass", m->cfg.learn_mass);
    imp_json_kv_int(&j, "learn_restitution", m->cfg.learn_restitution);
    imp_json_kv_int(&j, "friction", m->cfg.friction);
    imp_json_kv_int(&j, "impact_law", m->cfg.impact_law);
    if (m->cfg.contact_tol != IMP_CONTACT_TOL_AUTO) imp_json_kv_number(&j, "contact_tol", m->cfg.contact_tol);
    if (m->cfg.gate_geometry) imp_json_kv_int(&j, "gate_geometry", 1);
    if (m->cfg.impact_timing) imp_json_kv_string(&j, "impact_timing", "event");
    imp_json_kv_number(&j, "dt", m->dt);
    imp_json_kv_int(&j, "dim", m->geom.dim);
    imp_json_kv_number(&j, "restitution", m->geom.restitution);
    imp_json_kv_string(&j, "system", m->system);
    imp_json_kv_number(&j, "gravity", m->gravity);
    imp_json_kv_number(&j, "length", m->length);
    imp_json_kv_string(&j, "checksum", hex);
    imp_json_kv_string(&j, "impulse_version", IMP_VERSION_STRING);
    if (extra_meta && extra_meta[0]) {
        imp_json_key(&j, "training");
        imp_json_raw(&j, extra_meta); /* a complete JSON object from the caller */
    }
    imp_json_end_object(&j);
    imp_npz *z = imp_npz_new();
    st = z ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "checkpoint: out of memory");
    size_t shp[1] = {m->n_params};
    if (!st) st = imp_npz_add_f64(z, "params", 1, shp, m->params);
    if (!st) st = add_mlp_arrays(z, "net", &m->net, m->params + m->off_net);
    if (!st && m->has_contact_net) st = add_mlp_arrays(z, "contact", &m->contact, m->params + m->off_contact);
    if (!st) st = imp_contact_geometry_to_npz(&m->geom, z);
    /* the contact law in use, readable without the model (per pair) */
    if (!st && m->cfg.kind == IMP_MODEL_CDL && m->geom.n_pairs > 0) {
        double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
        size_t shc[1] = {(size_t)m->geom.n_pairs};
        imp_model_get_contact_law(m, e, mu);
        st = imp_npz_add_f64(z, "restitution", 1, shc, e);
        if (!st && m->cfg.friction) st = imp_npz_add_f64(z, "friction", 1, shc, mu);
    }
    if (!st) st = imp_json_text(&j) ? imp_npz_set_meta(z, imp_json_text(&j)) : imp_fail(IMP_ERR_NOMEM, "meta: out of memory");
    if (!st) st = imp_npz_save(z, path);
    imp_npz_free(z);
    imp_json_free(&j);
    return st;
}

/* The contact law arrays ("restitution", "friction" per pair) are copies of
 * what the parameters and geometry give: present exactly when the model has
 * them (restitution: optional in files written before they existed) and
 * equal to the recomputed values. */
static int check_contact_law(const imp_npz *z, const imp_model *m)
{
    double law[2][IMP_MAX_CONTACTS];
    int has = m->cfg.kind == IMP_MODEL_CDL && m->geom.n_pairs > 0;
    imp_model_get_contact_law(m, law[0], law[1]);
    const char *names[2] = {"restitution", "friction"};
    for (int k = 0; k < 2; k++) {
        int want = has && (k == 0 || m->cfg.friction);
        if (!imp_npz_find(z, names[k])) {
            if (want && (k == 1 || m->cfg.learn_restitution))
                return imp_fail(IMP_ERR_NOT_FOUND, "%s: missing (the model learns it)", names[k]);
            continue;
        }
        if (!want) return imp_fail(IMP_ERR_FORMAT, "%s: present, but this %s has no %s parameters", names[k],
                                   imp_model_kind_name(m->cfg.kind), names[k]);
        const double *a;
        int st = imp_npz_get_f64(z, names[k], 1, (size_t[]){(size_t)m->geom.n_pairs}, &a, NULL);
        if (st) return st;
        for (int p = 0; p < m->geom.n_pairs; p++)
            if (memcmp(&a[p], &law[k][p], sizeof(double))) {
                char x[IMP_NUM_FMT_CAP], y[IMP_NUM_FMT_CAP];
                return imp_fail(IMP_ERR_FORMAT, "%s[%d] = %s differs from the value of the parameters and geometry, %s",
                                names[k], p, imp_num_format(a[p], x), imp_num_format(law[k][p], y));
            }
    }
    return IMP_OK;
}

static int meta_flag(const char *meta, const char *key, int *out) { return imp_meta_int(meta, key, 0, 1, out); }

/* A finite number in [lo, hi], or null (unknown: NaN). */
static int meta_number_or_null(const char *meta, const char *key, double lo, double hi, double *out)
{
    char tok[8];
    if (imp_json_get_token(meta, key, tok, sizeof tok) == IMP_OK && !strcmp(tok, "null")) {
        *out = NAN;
        return IMP_OK;
    }
    return imp_meta_double(meta, key, lo, hi, out);
}

static int load_checked(const imp_npz *z, imp_model **out)
{
    const char *meta = imp_npz_meta(z);
    if (!meta) return imp_fail(IMP_ERR_NOT_FOUND, "no 'meta' JSON (not an impulse checkpoint?)");
    int st = imp_json_check_object(meta, "meta");
    if (st) return st;
    char name[64] = "", act[32] = "", sum[32] = "", vtok[32];
    if ((st = imp_meta_string(meta, "kind", name, sizeof name))) return st;
    if (strcmp(name, "model"))
        return imp_fail(IMP_ERR_FORMAT, "meta: kind '%s' is not \"model\" (a %s file, not a checkpoint?)", name, name);
    int version = 1;
    if (imp_json_get_token(meta, "format_version", vtok, sizeof vtok) != IMP_ERR_NOT_FOUND &&
        (st = imp_meta_int(meta, "format_version", 1, 1000000, &version)))
        return st;
    if (version > MODEL_VERSION)
        return imp_fail(IMP_ERR_UNSUPPORTED, "meta: format_version %d is newer than this build reads (1..%d): use a newer impulse", version, MODEL_VERSION);
    if (version >= 2 && (st = imp_meta_string(meta, "checksum", sum, sizeof sum))) return st;
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    if ((st = imp_meta_string(meta, "model", name, sizeof name))) return st;
    if ((st = imp_model_kind_from_name(name, &cfg.kind))) return imp_fail_context(IMP_ERR_FORMAT, "meta");
    if ((st = imp_meta_string(meta, "activation", act, sizeof act))) return st;
    if ((st = imp_activation_from_name(act, &cfg.act))) return imp_fail_context(IMP_ERR_FORMAT, "meta");
    if ((st = imp_meta_int(meta, "hidden", 1, IMP_MODEL_MAX_WIDTH, &cfg.hidden)) ||
        (st = imp_meta_int(meta, "hidden_layers", 1, IMP_MLP_MAX_LAYERS - 1, &cfg.hidden_layers)) ||
        (st = imp_meta_int(meta, "contact_hidden", 1, IMP_MODEL_MAX_WIDTH, &cfg.contact_hidden)) ||
        (st = meta_flag(meta, "touch", &cfg.touch)) || (st = meta_flag(meta, "projection", &cfg.projection)) ||
        (st = meta_flag(meta, "learn_damping", &cfg.learn_damping)) ||
        (st = meta_flag(meta, "learn_mass", &cfg.learn_mass)))
        return st;
    /* absent in checkpoints written before learned contact laws: 0 */
    char tok[32];
    if (imp_json_get_token(meta, "learn_restitution", tok, sizeof tok) != IMP_ERR_NOT_FOUND &&
        (st = meta_flag(meta, "learn_restitution", &cfg.learn_restitution)))
        return st;
    if (imp_json_get_token(meta, "friction", tok, sizeof tok) != IMP_ERR_NOT_FOUND &&
        (st = meta_flag(meta, "friction", &cfg.friction)))
        return st;
    if (imp_json_get_token(meta, "impact_law", tok, sizeof tok) != IMP_ERR_NOT_FOUND &&
        (st = imp_meta_int(meta, "impact_law", IMP_CDL_IMPACT_PAPER, IMP_CDL_IMPACT_NEWTON, &cfg.impact_law)))
        return st;
    if (imp_json_get_token(meta, "gate_geometry", tok, sizeof tok) != IMP_ERR_NOT_FOUND &&
        (st = meta_flag(meta, "gate_geometry", &cfg.gate_geometry)))
        return st;
    /* absent before event-time impacts: step */
    if (imp_json_get_token(meta, "impact_timing", tok, sizeof tok) != IMP_ERR_NOT_FOUND) {
        char timing[16];
        if ((st = imp_meta_string(meta, "impact_timing", timing, sizeof timing))) return st;
        if (imp_cdl_timing_from_name(timing, &cfg.impact_timing))
            return imp_fail(IMP_ERR_FORMAT, "meta: impact_timing '%s' is not step or event", timing);
    }
    /* absent before per-pair events (and in never-trained models): auto */
    if (imp_json_get_token(meta, "contact_tol", tok, sizeof tok) != IMP_ERR_NOT_FOUND &&
        (st = imp_meta_double(meta, "contact_tol", 0.0, 1e12, &cfg.contact_tol)))
        return st;
    double dt, gravity, length;
    if ((st = imp_meta_double(meta, "dt", IMP_MODEL_MIN_DT, IMP_MODEL_MAX_DT, &dt))) return st;
    if ((st = meta_number_or_null(meta, "gravity", 0, 1e6, &gravity)) ||
        (st = meta_number_or_null(meta, "length", 0, 1e6, &length)))
        return st;
    char system[64];
    if ((st = imp_meta_string(meta, "system", system, sizeof system))) return st;
    imp_contact_geometry g;
    if ((st = imp_contact_geometry_from_npz(z, meta, &g))) return st;
    /* sizes declared in meta against the params array, before allocating */
    const double *params;
    size_t shape[1];
    if ((st = imp_npz_get_f64(z, "params", 1, (size_t[]){0}, &params, shape))) return st;
    imp_model *m = NULL;
    if ((st = create(&m, &cfg, &g, dt, 0, shape[0]))) return st;
    memcpy(m->params, params, m->n_params * sizeof(double));
    snprintf(m->system, sizeof m->system, "%s", system);
    m->gravity = gravity;
    m->length = length;
    if (sum[0]) {
        char hex[17];
        checksum(m, m->params, hex);
        if (strcmp(hex, sum))
            st = imp_fail(IMP_ERR_FORMAT, "meta: checksum %s does not match the model description and parameters "
                                          "(%s): the file was changed after it was written (to load a deliberate "
                                          "edit, remove \"checksum\" and \"format_version\" from meta)",
                          sum, hex);
    }
    if (!st) st = check_mlp_arrays(z, "net", &m->net, m->params + m->off_net);
    if (!st && m->has_contact_net) st = check_mlp_arrays(z, "contact", &m->contact, m->params + m->off_contact);
    if (!st) st = check_contact_law(z, m);
    if (!st && !m->has_contact_net && imp_npz_find(z, "contact.W0"))
        st = imp_fail(IMP_ERR_FORMAT, "contact.W0: a %s has no contact network", name);
    if (st) {
        imp_model_free(m);
        return st;
    }
    *out = m;
    return IMP_OK;
}

int imp_model_load(imp_model **out, const char *path)
{
    *out = NULL;
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    st = load_checked(z, out);
    imp_npz_free(z);
    return st ? imp_fail_context(st, "%s", path) : IMP_OK;
}
