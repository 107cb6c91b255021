/* The flat binding layer (include/impulse/flat.h). */
#include "impulse/flat.h"
#include "impulse/constrained_contact.h"

#include <string.h>

int imp_flat_simulate(const char *system, int n_traj, int n_steps, double dt, double noise,
                      double restitution, unsigned long long seed, const char *out_path)
{
    if (!system || !out_path) return imp_fail(IMP_ERR_INVALID, "system/out_path: NULL");
    imp_sim_opts o;
    int st = imp_sim_defaults(system, &o);
    if (st) return st;
    o.n_traj = n_traj;
    if (n_steps > 0) o.n_steps = n_steps;
    if (dt > 0) o.dt = dt;
    o.noise = noise;
    o.restitution = restitution;
    o.seed = seed;
    imp_trajset ts;
    if ((st = imp_simulate(system, &o, &ts))) return st;
    st = imp_trajset_save(&ts, out_path);
    imp_trajset_free(&ts);
    return st;
}

int imp_flat_train(const char *model, const char *data_path, int epochs, double lr, double l2, int touch,
                   unsigned long long seed, const char *out_path)
{
    if (!model || !data_path || !out_path) return imp_fail(IMP_ERR_INVALID, "model/data_path/out_path: NULL");
    imp_cdl_config cfg;
    imp_model_kind kind;
    int st = imp_model_kind_from_name(model, &kind);
    if (st) return st;
    imp_cdl_config_default(&cfg, kind);
    cfg.touch = touch != 0;
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    if (epochs > 0) to.epochs = epochs;
    if (lr > 0) to.lr = lr;
    if (l2 >= 0) to.l2 = l2;
    to.seed = seed;
    imp_trajset data;
    if ((st = imp_trajset_load(&data, data_path))) return st;
    imp_model *m = NULL;
    st = imp_model_create(&m, &cfg, &data.geom, data.dt, seed);
    if (!st) st = imp_model_train(m, &data, &to, NULL);
    if (!st) st = imp_model_save(m, out_path, NULL);
    imp_model_free(m);
    imp_trajset_free(&data);
    return st;
}

int imp_model_sizes(const imp_model *m, int *D, int *K)
{
    if (!m) return imp_fail(IMP_ERR_INVALID, "model: NULL");
    if (D) *D = m->D;
    if (K) *K = m->K;
    return IMP_OK;
}

int imp_flat_evaluate(const imp_model *m, const char *data_path, double *rmse, double *rmse_code)
{
    imp_trajset ts;
    int st = imp_trajset_load(&ts, data_path);
    if (st) return st;
    imp_eval_result r;
    st = imp_model_evaluate(m, &ts, 0, &r, NULL, NULL, NULL);
    if (!st) {
        if (rmse) *rmse = r.rmse;
        if (rmse_code) *rmse_code = r.rmse_code;
    }
    imp_trajset_free(&ts);
    return st;
}

#include "impulse/chnn_systems.h"
#include "impulse/gp.h"
#include "impulse/impact_analysis.h"
#include "impulse/impact_models.h"
#include "impulse/sweep.h"

#include <stdio.h>
#include <stdlib.h>

size_t imp_abi_sizeof(const char *type_name)
{
    if (!type_name) return 0;
#define IMP_ABI(T) if (!strcmp(type_name, #T)) return sizeof(T);
    IMP_ABI(imp_cdl_config) IMP_ABI(imp_train_opts) IMP_ABI(imp_loss_parts) IMP_ABI(imp_trajset)
    IMP_ABI(imp_contact_geometry) IMP_ABI(imp_sim_opts) IMP_ABI(imp_eval_result) IMP_ABI(imp_rng)
    IMP_ABI(imp_csys) IMP_ABI(imp_csystem) IMP_ABI(imp_cmodel) IMP_ABI(imp_ctraj) IMP_ABI(imp_ctrain_opts)
    IMP_ABI(imp_ctrain_result) IMP_ABI(imp_ceval_opts) IMP_ABI(imp_ceval_result) IMP_ABI(imp_contact)
    IMP_ABI(imp_impact_law) IMP_ABI(imp_ident_options) IMP_ABI(imp_gp_options)
    IMP_ABI(imp_train_hooks) IMP_ABI(imp_epoch_info) IMP_ABI(imp_train_report) IMP_ABI(imp_loss_part)
    IMP_ABI(imp_sweep_plan) IMP_ABI(imp_sweep_chnn_opts) IMP_ABI(imp_sweep_cdl_opts) IMP_ABI(imp_sweep_impact_opts)
    IMP_ABI(imp_sweep_your_data_opts) IMP_ABI(imp_sweep_contact_opts)
    IMP_ABI(imp_sweep_run_opts) IMP_ABI(imp_sweep_summary) IMP_ABI(imp_law_refit_opts) IMP_ABI(imp_law_refit_report)
#undef IMP_ABI
    return 0;
}

int imp_flat_cmodel_info(const imp_cmodel *m, int *cartesian, int *dim, size_t *n_params)
{
    if (!m) return imp_fail(IMP_ERR_INVALID, "model: NULL");
    if (cartesian) *cartesian = m->cartesian;
    if (dim) *dim = m->dim;
    if (n_params) *n_params = m->n_params;
    return IMP_OK;
}

int imp_flat_csystem_contacts(const imp_csystem *cs) { return cs ? cs->full.n_contacts : 0; }

int imp_flat_cmodel_contacts(const imp_cmodel *m) { return m && m->contact ? m->sys.full.n_contacts : 0; }

int imp_flat_cmodel_contact_values(const imp_cmodel *m, const double *params, double *e, double *mu,
                                   double *e_declared, double *mu_declared)
{
    if (!m || !params) return imp_fail(IMP_ERR_INVALID, "model: NULL");
    if (!m->contact) return imp_fail(IMP_ERR_INVALID, "model: no contact parameters");
    imp_cmodel_contact_values(m, params, e, mu);
    for (int c = 0; c < m->sys.full.n_contacts; c++) {
        if (e_declared) e_declared[c] = m->sys.full.contacts[c].e;
        if (mu_declared) mu_declared[c] = m->sys.full.contacts[c].mu;
    }
    return IMP_OK;
}

int imp_flat_cmodel_contact_names(const imp_cmodel *m, int c, char *name, char *body, char *plane, char *other,
                                  size_t n)
{
    if (!m || !name || !body || !plane || !other || n == 0) return imp_fail(IMP_ERR_INVALID, "model: NULL");
    const imp_csys *s = &m->sys.full;
    if (c < 0 || c >= s->n_contacts) return imp_fail(IMP_ERR_INVALID, "contact %d: the system has %d", c, s->n_contacts);
    const imp_ccontact *cc = &s->contacts[c];
    imp_csys_contact_name(s, c, name, n);
    snprintf(body, n, "%s", s->bodies[cc->body].name);
    snprintf(plane, n, "%s", cc->other < 0 ? s->planes[cc->plane].name : "");
    snprintf(other, n, "%s", cc->other >= 0 ? s->bodies[cc->other].name : "");
    return IMP_OK;
}

int imp_flat_chnn_simulate(const char *system, const char *system_file, int n_traj, int steps, double dt,
                           unsigned long long seed, double spread, double noise, double rtol, double atol,
                           int rollout_L, double *traj, double *energy, double *q, int *offsets, int *n_points, int *d,
                           int *n_gen, int *T, double *dt_out, char *name)
{
    if (!system_file && !system) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    if (n_traj < 1) return imp_fail(IMP_ERR_INVALID, "trajectories: %d, want >= 1", n_traj);
    if (!(noise >= 0) || !(spread >= 0)) return imp_fail(IMP_ERR_INVALID, "noise/spread: negative or NaN");
    imp_csys *s = malloc(sizeof *s);
    if (!s) return imp_fail(IMP_ERR_NOMEM, "system");
    int st = system_file ? imp_csys_load(s, system_file) : imp_chnn_system(s, system);
    if (st) {
        free(s);
        return st;
    }
    if (!(dt > 0)) dt = s->dt > 0 ? s->dt : 0.03;
    if (steps < 0) steps = s->n_steps > 0 ? s->n_steps : 99;
    int N = imp_csys_ndof(s), dim = 2 * N;
    if (n_points) *n_points = s->n_points;
    if (d) *d = s->d;
    if (n_gen) *n_gen = s->n_gen;
    if (T) *T = steps + 1;
    if (dt_out) *dt_out = dt;
    if (name) snprintf(name, 64, "%s", s->name);
    if (!traj) {
        free(s);
        return IMP_OK;
    }
    imp_chnn_sim_opts so = {rtol > 0 ? rtol : 1e-10, atol > 0 ? atol : 1e-12};
    imp_csys_work *w = imp_csys_work_new(s);
    double *xv = malloc((size_t)dim * sizeof(double));
    if (!w || !xv) st = imp_fail(IMP_ERR_NOMEM, "simulation work");
    imp_rng rng;
    imp_rng_seed(&rng, (uint64_t)seed);
    size_t Tn = (size_t)steps + 1;
    for (int i = 0; i < n_traj && !st; i++) {
        double *ti = traj + (size_t)i * Tn * dim;
        if (rollout_L > 0) {
            int off = 0;
            st = imp_chnn_sample_rollout_start(s, &rng, spread, rollout_L, &so, xv, &off, w);
            if (offsets) offsets[i] = off;
        } else {
            st = imp_chnn_sample_state(s, &rng, spread, xv, w);
        }
        if (!st) st = imp_chnn_simulate(s, xv, dt, steps, &so, ti, NULL);
        if (st) imp_fail_context(st, "trajectory %d", i);
        for (size_t t = 0; !st && energy && t < Tn; t++)
            energy[(size_t)i * Tn + t] = imp_csys_energy(s, ti + t * dim, ti + t * dim + N);
    }
    if (!st && noise > 0)
        for (size_t j = 0; j < (size_t)n_traj * Tn * dim; j++) traj[j] += noise * imp_rng_normal(&rng);
    int k = s->n_gen;
    for (int i = 0; !st && q && k > 0 && i < n_traj; i++) {
        for (size_t t = 0; t < Tn && !st; t++)
            st = imp_chnn_to_generalized(s, traj + ((size_t)i * Tn + t) * dim, q + ((size_t)i * Tn + t) * 2 * k);
        imp_chnn_unwrap(s, q + (size_t)i * Tn * 2 * k, (int)Tn);
    }
    free(xv);
    imp_csys_work_free(w);
    free(s);
    return st;
}

int imp_flat_model_contact_law(const imp_model *m, int *n_pairs, int *learned, int *friction, double *e,
                               double *mu)
{
    if (!m || !e || !mu) return imp_fail(IMP_ERR_INVALID, "contact law: NULL argument");
    if (n_pairs) *n_pairs = m->geom.n_pairs;
    if (learned) *learned = m->cfg.learn_restitution;
    if (friction) *friction = m->cfg.friction;
    imp_model_get_contact_law(m, e, mu);
    return IMP_OK;
}
