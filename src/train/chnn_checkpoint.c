/* Checkpoints of the constrained-network models: one .npz with the flat
 * parameter vector "params" and meta naming the model kind, the system and
 * the network shape, so that `impulse eval` can rebuild and dispatch. */
#include "impulse/chnn_models.h"
#include "impulse/io.h"

#include <stdlib.h>
#include <string.h>

int imp_cmodel_save(const char *path, const imp_cmodel *m, const double *params,
                    const imp_ctrain_opts *opts, const imp_ctrain_result *res)
{
    if (!path || !m || !params) return imp_fail(IMP_ERR_INVALID, "checkpoint: NULL argument");
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "format", "impulse-cmodel");
    imp_json_kv_string(&j, "model", imp_cmodel_kind_name(m->kind));
    imp_json_kv_string(&j, "system", m->sys.name);
    /* a system described in a file: its text, so the checkpoint is self-contained */
    if (m->sys.full.source[0]) imp_json_kv_string(&j, "system_text", m->sys.full.source);
    imp_json_kv_int(&j, "hidden", m->hidden);
    imp_json_kv_int(&j, "depth", m->depth);
    imp_json_kv_int(&j, "n_params", (long long)m->n_params);
    imp_json_kv_string(&j, "version", IMP_VERSION_STRING);
    if (opts) {
        imp_json_kv_int(&j, "epochs", opts->epochs);
        imp_json_kv_number(&j, "lr", opts->lr);
        imp_json_kv_number(&j, "weight_decay", opts->weight_decay);
        imp_json_kv_int(&j, "batch", opts->batch);
        imp_json_kv_int(&j, "n_chunks", opts->n_chunks);
        imp_json_kv_int(&j, "seed", (long long)opts->seed);
        imp_json_kv_int(&j, "threads", opts->threads);
        imp_json_kv_int(&j, "warmup_steps", imp_ctrain_warmup_steps(m, opts));
        imp_json_kv_string(&j, "windows", opts->all_windows ? "all" : "one");
    }
    if (res) {
        imp_json_kv_number(&j, "final_loss", res->final_loss);
        imp_json_kv_number(&j, "train_seconds", res->seconds);
    }
    imp_json_end_object(&j);
    const char *text = imp_json_text(&j);
    int st;
    imp_npz *z = imp_npz_new();
    if (!z || !text) {
        imp_json_free(&j);
        imp_npz_free(z);
        return imp_fail(IMP_ERR_NOMEM, "checkpoint: out of memory");
    }
    size_t shape[1] = {m->n_params};
    st = imp_npz_add_f64(z, "params", 1, shape, params);
    if (!st) st = imp_npz_set_meta(z, text);
    if (!st) st = imp_npz_save(z, path);
    imp_npz_free(z);
    imp_json_free(&j);
    return st;
}

int imp_cmodel_peek_kind(const char *path, char *kind, size_t cap)
{
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return imp_fail_context(st, "loading %s", path);
    const char *meta = imp_npz_meta(z);
    if (!meta || imp_json_get_string(meta, "model", kind, cap))
        st = imp_fail(IMP_ERR_FORMAT, "%s: meta: missing \"model\"", path);
    imp_npz_free(z);
    return st;
}

int imp_cmodel_load(const char *path, imp_cmodel *m, double **params)
{
    if (!path || !m || !params) return imp_fail(IMP_ERR_INVALID, "checkpoint: NULL argument");
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return imp_fail_context(st, "loading %s", path);
    const char *meta = imp_npz_meta(z);
    char kind[32], sys[64];
    double hidden, depth;
    imp_cmodel_kind k;
    imp_csystem cs;
    if (!meta || imp_json_get_string(meta, "model", kind, sizeof kind) ||
        imp_json_get_string(meta, "system", sys, sizeof sys) || imp_json_get_number(meta, "hidden", &hidden) ||
        imp_json_get_number(meta, "depth", &depth)) {
        imp_npz_free(z);
        return imp_fail(IMP_ERR_FORMAT, "%s: meta: needs \"model\", \"system\", \"hidden\", \"depth\"", path);
    }
    st = imp_cmodel_kind_from_name(kind, &k);
    if (!st) st = imp_csystem_from_meta(&cs, meta, "checkpoint");
    if (!st) st = imp_cmodel_init(m, k, &cs, (int)hidden, (int)depth);
    const double *p = NULL;
    size_t expect[1], shape[1];
    if (!st) {
        expect[0] = m->n_params;
        st = imp_npz_get_f64(z, "params", 1, expect, &p, shape);
    }
    if (st) {
        imp_npz_free(z);
        return imp_fail_context(st, "%s", path);
    }
    *params = malloc(m->n_params * sizeof(double));
    if (!*params) {
        imp_npz_free(z);
        return imp_fail(IMP_ERR_NOMEM, "checkpoint: out of memory");
    }
    memcpy(*params, p, m->n_params * sizeof(double));
    imp_npz_free(z);
    return IMP_OK;
}
