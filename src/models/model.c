/* Model construction, parameters, scratch, dispatch and checkpoints of the
 * CD-Lagrange strand's models. */
#include "cdl_internal.h"
#include "impulse/io.h"

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
}

void imp_model_inverse_masses(const imp_model *m, const double *params, double *w)
{
    for (int k = 0; k < m->K; k++)
        w[k] = m->cfg.learn_mass ? exp(-params[m->off_mass + k]) : 1.0 / m->geom.mass[k];
}

static double sigmoid(double a) { return 1.0 / (1.0 + exp(-a)); }

int imp_model_contact_law(const imp_model *m, const double *params, double *e, double *mu)
{
    for (int p = 0; p < m->geom.n_pairs; p++)
        e[p] = m->cfg.learn_restitution ? sigmoid(params[m->off_restitution + p]) : m->geom.restitution;
    if (!m->cfg.friction) return 0;
    for (int p = 0; p < m->geom.n_pairs; p++) mu[p] = exp(params[m->off_friction + p]);
    return 1;
}

void imp_model_get_contact_law(const imp_model *m, double *e, double *mu)
{
    double tmp[IMP_MAX_CONTACTS];
    if (!imp_model_contact_law(m, m->params, e, mu ? mu : tmp) && mu)
        for (int p = 0; p < m->geom.n_pairs; p++) mu[p] = 0.0;
}

int imp_model_set_contact_law(imp_model *m, const double *e, const double *mu)
{
    for (int p = 0; p < m->geom.n_pairs; p++) {
        if (e && m->cfg.learn_restitution) {
            if (!(e[p] > 0.0 && e[p] < 1.0))
                return imp_fail(IMP_ERR_INVALID, "restitution[%d]: initial value %g outside (0, 1)", p, e[p]);
            double v = fmin(fmax(e[p], 1e-3), 1.0 - 1e-3);
            m->params[m->off_restitution + p] = log(v / (1.0 - v));
        }
        if (mu && m->cfg.friction) {
            if (!(mu[p] > 0.0) || !isfinite(mu[p]))
                return imp_fail(IMP_ERR_INVALID, "friction[%d]: initial value %g must be positive", p, mu[p]);
            m->params[m->off_friction + p] = log(fmin(fmax(mu[p], 1e-4), 10.0));
        }
    }
    return IMP_OK;
}

void imp_model_damping(const imp_model *m, const double *params, double *C)
{
    for (int i = 0; i < m->D; i++) C[i] = m->cfg.learn_damping ? exp(params[m->off_damping + i]) : 0.0;
}

static int build(imp_model *m)
{
    const imp_cdl_config *c = &m->cfg;
    int D = m->D, K = m->K, st;
    if (c->hidden < 1 || c->hidden > 100000) return imp_fail(IMP_ERR_INVALID, "hidden: %d units", c->hidden);
    if (c->hidden_layers < 1 || c->hidden_layers > IMP_MLP_MAX_LAYERS - 1)
        return imp_fail(IMP_ERR_INVALID, "hidden_layers: %d outside [1, %d]", c->hidden_layers, IMP_MLP_MAX_LAYERS - 1);
    if (c->contact_hidden < 1 || c->contact_hidden > 100000)
        return imp_fail(IMP_ERR_INVALID, "contact_hidden: %d units", c->contact_hidden);
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
    if (c->kind != IMP_MODEL_CDL && (c->learn_restitution || c->friction))
        return imp_fail(IMP_ERR_INVALID, "options: learned restitution and friction apply to cdl only");
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
    m->params = calloc(m->n_params, sizeof(double));
    return m->params ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "params: cannot allocate %zu", m->n_params);
}

int imp_model_create(imp_model **out, const imp_cdl_config *cfg, const imp_contact_geometry *geom,
                     double dt, unsigned long long seed)
{
    *out = NULL;
    int st = imp_contact_geometry_check(geom);
    if (st) return st;
    if (!(dt > 0.0) || !isfinite(dt)) return imp_fail(IMP_ERR_INVALID, "dt: %g must be positive", dt);
    imp_model *m = calloc(1, sizeof *m);
    if (!m) return imp_fail(IMP_ERR_NOMEM, "model: out of memory");
    m->cfg = *cfg;
    m->geom = *geom;
    m->dt = dt;
    m->K = geom->n_bodies;
    m->D = geom->n_bodies * geom->dim;
    st = build(m);
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
                 (w->active = calloc(S1 * B * P, 1)) && (w->in = calloc(B * width, sizeof(double))) &&
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
    free(w->in_stack), free(w->din_stack);
    free(w->q), free(w->v), free(w->g), free(w->vh), free(w->qt), free(w->vS);
    free(w->qbar), free(w->vbar), free(w->gbar);
    free(w->p), free(w->gate), free(w->pbar), free(w->lab), free(w->active);
    free(w->in), free(w->din), free(w->out), free(w->dout), free(w->xs), free(w->xbar);
    free(w);
}

static int structured(const imp_model *m)
{
    return m->cfg.kind == IMP_MODEL_CDL || m->cfg.kind == IMP_MODEL_VIN;
}

int imp_model_window_loss(const imp_model *m, const double *params, imp_model_work *w,
                          const double *x0, const double *target, const double *labels, int B, int H,
                          double l2, double *grad, imp_loss_parts *parts)
{
    if (B < 1 || B > w->B || H < 1 || H > w->H)
        return imp_fail(IMP_ERR_SHAPE, "batch: B = %d, H = %d exceed the work's %d x %d", B, H, w->B, w->H);
    if (m->cfg.touch && m->has_contact_net && !labels)
        return imp_fail(IMP_ERR_INVALID, "labels: touch feedback needs contact labels");
    imp_loss_parts lp = {0};
    int st = structured(m) ? imp_structured_window_loss(m, params, w, x0, target, labels, B, H, grad, &lp)
                           : imp_resnet_window_loss(m, params, w, x0, target, labels, B, H, grad, &lp);
    if (st) return st;
    /* Keras l2 on the potential's kernels: shrinks U towards the zero function
     * so that jumps are explained by impulses, not spurious forces ([P] 3.2) */
    lp.l2 = structured(m) && l2 > 0.0 ? imp_mlp_l2(&m->net, params + m->off_net, l2, grad ? grad + m->off_net : NULL) : 0.0;
    lp.total = lp.state + lp.contact + lp.l2;
    if (parts) *parts = lp;
    return isfinite(lp.total) ? IMP_OK : imp_fail(IMP_ERR_NUMERIC, "loss: non-finite (%g)", lp.total);
}

int imp_model_rollout(const imp_model *m, const double *x0, int n_steps, const double *gates,
                      double *states, double *contact)
{
    if (n_steps < 1) return imp_fail(IMP_ERR_INVALID, "steps: %d, need at least 1", n_steps);
    int st = imp_check_finite(x0, 2 * (size_t)m->D, "initial state");
    if (st) return st;
    imp_model_work *w = imp_model_work_new(m, 1, 1);
    if (!w) return imp_fail(IMP_ERR_NOMEM, "rollout: out of memory");
    st = structured(m) ? imp_structured_rollout(m, w, x0, n_steps, gates, states, contact)
                       : imp_resnet_rollout(m, w, x0, n_steps, gates, states, contact);
    imp_model_work_free(w);
    return st;
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

/* ---- checkpoints ---- */

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

int imp_model_save(const imp_model *m, const char *path, const char *extra_meta)
{
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "kind", "model");
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
    imp_json_kv_number(&j, "dt", m->dt);
    imp_json_kv_int(&j, "dim", m->geom.dim);
    imp_json_kv_number(&j, "restitution", m->geom.restitution);
    imp_json_kv_string(&j, "system", m->system);
    imp_json_kv_number(&j, "gravity", m->gravity);
    imp_json_kv_number(&j, "length", m->length);
    imp_json_kv_string(&j, "impulse_version", IMP_VERSION_STRING);
    if (extra_meta && extra_meta[0]) {
        imp_json_key(&j, "training");
        imp_json_raw(&j, extra_meta); /* a complete JSON object from the caller */
    }
    imp_json_end_object(&j);
    imp_npz *z = imp_npz_new();
    int st = z ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "checkpoint: out of memory");
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

static int meta_int(const char *meta, const char *key, int *out)
{
    double v;
    if (imp_json_get_number(meta, key, &v) || v != floor(v) || fabs(v) > 1e9)
        return imp_fail(IMP_ERR_FORMAT, "meta: missing or invalid integer '%s'", key);
    *out = (int)v;
    return IMP_OK;
}

int imp_model_load(imp_model **out, const char *path)
{
    *out = NULL;
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    const char *meta = imp_npz_meta(z);
    char name[64] = "", act[32] = "";
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    imp_contact_geometry g;
    double dt = 0;
    if (!meta) st = imp_fail(IMP_ERR_NOT_FOUND, "no 'meta' JSON (not an impulse checkpoint?)");
    if (!st && imp_json_get_string(meta, "model", name, sizeof name))
        st = imp_fail(IMP_ERR_FORMAT, "meta: missing 'model'");
    if (!st) st = imp_model_kind_from_name(name, &cfg.kind);
    if (!st && imp_json_get_string(meta, "activation", act, sizeof act))
        st = imp_fail(IMP_ERR_FORMAT, "meta: missing 'activation'");
    if (!st) st = imp_activation_from_name(act, &cfg.act);
    if (!st) st = meta_int(meta, "hidden", &cfg.hidden);
    if (!st) st = meta_int(meta, "hidden_layers", &cfg.hidden_layers);
    if (!st) st = meta_int(meta, "contact_hidden", &cfg.contact_hidden);
    if (!st) st = meta_int(meta, "touch", &cfg.touch);
    if (!st) st = meta_int(meta, "projection", &cfg.projection);
    if (!st) st = meta_int(meta, "learn_damping", &cfg.learn_damping);
    if (!st) st = meta_int(meta, "learn_mass", &cfg.learn_mass);
    /* absent in checkpoints written before learned contact laws: 0 */
    if (!st && imp_json_get_number(meta, "learn_restitution", &(double){0}) == IMP_OK)
        st = meta_int(meta, "learn_restitution", &cfg.learn_restitution);
    if (!st && imp_json_get_number(meta, "friction", &(double){0}) == IMP_OK)
        st = meta_int(meta, "friction", &cfg.friction);
    if (!st && imp_json_get_number(meta, "dt", &dt)) st = imp_fail(IMP_ERR_FORMAT, "meta: missing 'dt'");
    if (!st) st = imp_contact_geometry_from_npz(z, meta, &g);
    imp_model *m = NULL;
    if (!st) st = imp_model_create(&m, &cfg, &g, dt, 0);
    const double *params;
    if (!st) st = imp_npz_get_f64(z, "params", 1, (size_t[]){m->n_params}, &params, NULL);
    if (!st) {
        memcpy(m->params, params, m->n_params * sizeof(double));
        imp_json_get_string(meta, "system", m->system, sizeof m->system);
        imp_json_get_number(meta, "gravity", &m->gravity);
        imp_json_get_number(meta, "length", &m->length);
        *out = m;
    } else {
        imp_model_free(m);
    }
    imp_npz_free(z);
    return st ? imp_fail_context(st, "%s", path) : IMP_OK;
}
