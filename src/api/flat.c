/* The flat binding layer (include/impulse/flat.h). */
#include "impulse/flat.h"

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
