/* Checkpoints of the constrained-network models (schema in
 * docs/data-format.md, "Checkpoints"): one .npz with the flat parameter
 * vector "params" and meta naming the model kind, the system and the
 * network shape, so that `impulse eval` can rebuild and dispatch, plus a
 * checksum over that description and the parameters. Every field is checked
 * on loading, sizes before anything is allocated. */
#include "impulse/chnn_models.h"
#include "impulse/io.h"
#include "io/meta.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMODEL_FORMAT "impulse-cmodel"
#define CMODEL_VERSION 2 /* 1: no format_version and no checksum (still loaded) */

/* FNV-1a of the model description and the parameter bytes, as 16 hex digits. */
static void checksum(const imp_cmodel *m, const double *params, char hex[17])
{
    char desc[256];
    snprintf(desc, sizeof desc, "%s|model=%s|system=%s|hidden=%d|depth=%d|n_params=%zu|", CMODEL_FORMAT,
             imp_cmodel_kind_name(m->kind), m->sys.name, m->hidden, m->depth, m->n_params);
    uint64_t h = imp_fnv1a(desc, strlen(desc), IMP_FNV_START);
    if (m->sys.full.source[0]) h = imp_fnv1a(m->sys.full.source, strlen(m->sys.full.source), h);
    h = imp_fnv1a(params, m->n_params * sizeof(double), h);
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
}

int imp_cmodel_save(const char *path, const imp_cmodel *m, const double *params,
                    const imp_ctrain_opts *opts, const imp_ctrain_result *res)
{
    if (!path || !m || !params) return imp_fail(IMP_ERR_INVALID, "checkpoint: NULL argument");
    int st = imp_check_finite(params, m->n_params, "params");
    if (st) return imp_fail_context(st, "checkpoint %s", path);
    char hex[17];
    checksum(m, params, hex);
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "format", CMODEL_FORMAT);
    imp_json_kv_int(&j, "format_version", CMODEL_VERSION);
    imp_json_kv_string(&j, "model", imp_cmodel_kind_name(m->kind));
    imp_json_kv_string(&j, "system", m->sys.name);
    /* a system described in a file: its text, so the checkpoint is self-contained */
    if (m->sys.full.source[0]) imp_json_kv_string(&j, "system_text", m->sys.full.source);
    imp_json_kv_int(&j, "hidden", m->hidden);
    imp_json_kv_int(&j, "depth", m->depth);
    imp_json_kv_int(&j, "n_params", (long long)m->n_params);
    /* only with contact, so that other checkpoints keep their bytes */
    if (m->contact) {
        imp_json_kv_int(&j, "contact", 1);
        imp_json_kv_number(&j, "contact_scale", m->contact_scale);
        double e[IMP_CSYS_MAX_CONTACTS], mu[IMP_CSYS_MAX_CONTACTS];
        imp_cmodel_contact_values(m, params, e, mu);
        imp_json_key(&j, "contact_e");
        imp_json_begin_array(&j);
        for (int c = 0; c < m->sys.full.n_contacts; c++) imp_json_number(&j, e[c]);
        imp_json_end_array(&j);
        imp_json_key(&j, "contact_mu");
        imp_json_begin_array(&j);
        for (int c = 0; c < m->sys.full.n_contacts; c++) imp_json_number(&j, mu[c]);
        imp_json_end_array(&j);
    }
    imp_json_kv_string(&j, "checksum", hex);
    imp_json_kv_string(&j, "version", IMP_VERSION_STRING);
    /* provenance only (not read back): no wall times, so that the same run
     * gives the same bytes */
    if (opts) {
        imp_json_kv_int(&j, "epochs", opts->epochs);
        imp_json_kv_number(&j, "lr", opts->lr);
        imp_json_kv_number(&j, "weight_decay", opts->weight_decay);
        imp_json_kv_int(&j, "batch", opts->batch);
        imp_json_kv_int(&j, "n_chunks", opts->n_chunks);
        imp_json_kv_int(&j, "seed", (long long)opts->seed);
        imp_json_kv_int(&j, "threads", opts->threads);
        imp_json_kv_int(&j, "warmup_steps", imp_ctrain_warmup_steps(m, opts));
        imp_json_kv_number(&j, "grad_clip", imp_ctrain_grad_clip(m, opts));
        imp_json_kv_string(&j, "windows", opts->all_windows ? "all" : "one");
        imp_json_kv_string(&j, "precision", imp_ctrain_single_products(m, opts) ? "single" : "double");
        if (opts->skip_factor > 0) imp_json_kv_number(&j, "skip_factor", opts->skip_factor);
    }
    if (res) imp_json_kv_number(&j, "final_loss", res->final_loss);
    /* only when some window was substepped, so that other checkpoints keep their bytes */
    if (res && res->substepped_windows > 0) {
        imp_json_kv_int(&j, "substepped_windows", res->substepped_windows);
        imp_json_kv_int(&j, "max_substeps", res->max_substeps);
    }
    if (res && opts && opts->skip_factor > 0) imp_json_kv_int(&j, "skipped_batches", res->skipped_batches);
    /* only when on, so that other checkpoints keep their bytes */
    if (res && opts && res->contact_windows > 0) {
        imp_json_kv_int(&j, "contact_substeps", imp_ctrain_contact_substeps(m, opts));
        imp_json_kv_int(&j, "contact_windows", res->contact_windows);
    }
    imp_json_end_object(&j);
    const char *text = imp_json_text(&j);
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
    if (st) return st; /* the message names the file */
    const char *meta = imp_npz_meta(z);
    if (!meta) st = imp_fail(IMP_ERR_FORMAT, "no 'meta' JSON (not an impulse checkpoint?)");
    if (!st) st = imp_json_check_object(meta, "meta");
    if (!st) st = imp_meta_string(meta, "model", kind, cap);
    imp_npz_free(z);
    return st ? imp_fail_context(st, "%s", path) : IMP_OK;
}

/* Everything but the parameter values: meta fields, layout, shape. */
static int check_meta(const imp_npz *z, imp_cmodel *m, const double **p, char *sum, size_t sum_cap)
{
    const char *meta = imp_npz_meta(z);
    if (!meta) return imp_fail(IMP_ERR_FORMAT, "no 'meta' JSON (not an impulse checkpoint?)");
    int st = imp_json_check_object(meta, "meta");
    if (st) return st;
    char fmt[32], kind[32], sys[64];
    if ((st = imp_meta_string(meta, "format", fmt, sizeof fmt))) return st;
    if (strcmp(fmt, CMODEL_FORMAT))
        return imp_fail(IMP_ERR_FORMAT, "meta: format '%s' is not '%s'", fmt, CMODEL_FORMAT);
    int version = 1;
    if (imp_json_get_token(meta, "format_version", sum, sum_cap) != IMP_ERR_NOT_FOUND &&
        (st = imp_meta_int(meta, "format_version", 1, 1000000, &version)))
        return st;
    if (version > CMODEL_VERSION)
        return imp_fail(IMP_ERR_UNSUPPORTED, "meta: format_version %d is newer than this build reads (1..%d): use a newer impulse", version, CMODEL_VERSION);
    sum[0] = '\0';
    if (version >= 2 && (st = imp_meta_string(meta, "checksum", sum, sum_cap))) return st;
    imp_cmodel_kind k;
    int hidden, depth;
    int64_t n_params;
    imp_csystem cs;
    if ((st = imp_meta_string(meta, "model", kind, sizeof kind))) return st;
    if ((st = imp_cmodel_kind_from_name(kind, &k))) return imp_fail_context(IMP_ERR_FORMAT, "meta");
    if ((st = imp_meta_string(meta, "system", sys, sizeof sys))) return st;
    /* a built-in benchmark by name, or the text of a system file ("system_text") */
    if ((st = imp_csystem_from_meta(&cs, meta, "meta"))) return imp_fail_context(IMP_ERR_FORMAT, "meta");
    if ((st = imp_meta_int(meta, "hidden", 1, 4096, &hidden))) return st;
    if ((st = imp_meta_int(meta, "depth", 1, IMP_MLP_MAX_LAYERS - 1, &depth))) return st;
    if ((st = imp_meta_int64(meta, "n_params", 1, INT64_MAX, &n_params))) return st;
    if ((st = imp_cmodel_init(m, k, &cs, hidden, depth))) return imp_fail_context(IMP_ERR_FORMAT, "meta");
    int contact = 0;
    char tok[32];
    if (imp_json_get_token(meta, "contact", tok, sizeof tok) != IMP_ERR_NOT_FOUND &&
        (st = imp_meta_int(meta, "contact", 0, 1, &contact)))
        return st;
    if (contact && (st = imp_cmodel_enable_contact(m))) return imp_fail_context(IMP_ERR_FORMAT, "meta");
    /* written since the scale exists; 1 before */
    if (contact) {
        double sc = 1.0;
        if (imp_json_get_token(meta, "contact_scale", tok, sizeof tok) != IMP_ERR_NOT_FOUND &&
            (st = imp_meta_double(meta, "contact_scale", 1e-6, 1e6, &sc)))
            return st;
        if (!(sc > 0) || !isfinite(sc)) return imp_fail(IMP_ERR_FORMAT, "meta: contact_scale %g must be positive", sc);
        m->contact_scale = sc;
    }
    if ((uint64_t)n_params != m->n_params)
        return imp_fail(IMP_ERR_FORMAT, "meta: n_params %lld, but a %s of width %d and depth %d on %s has %zu",
                        (long long)n_params, kind, hidden, depth, sys, m->n_params);
    /* the shape is checked before anything is copied */
    return imp_npz_get_f64(z, "params", 1, (size_t[]){m->n_params}, p, NULL);
}

int imp_cmodel_load(const char *path, imp_cmodel *m, double **params)
{
    if (!path || !m || !params) return imp_fail(IMP_ERR_INVALID, "checkpoint: NULL argument");
    *params = NULL;
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st; /* the message names the file */
    const double *p = NULL;
    char sum[64];
    st = check_meta(z, m, &p, sum, sizeof sum);
    if (!st && sum[0]) {
        char hex[17];
        checksum(m, p, hex);
        if (strcmp(hex, sum))
            st = imp_fail(IMP_ERR_FORMAT, "meta: checksum %s does not match the model description and parameters "
                                          "(%s): the file was changed after it was written (to load a deliberate "
                                          "edit, remove \"checksum\" and \"format_version\" from meta)",
                          sum, hex);
    }
    if (!st && !(*params = malloc(m->n_params * sizeof(double))))
        st = imp_fail(IMP_ERR_NOMEM, "checkpoint: out of memory");
    if (!st) memcpy(*params, p, m->n_params * sizeof(double));
    imp_npz_free(z);
    return st ? imp_fail_context(st, "%s", path) : IMP_OK;
}
