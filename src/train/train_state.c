/* The resumable training state: one .npz written atomically, holding
 * everything the rest of a run depends on, so that a resumed run gives
 * bit-identical parameters to an uninterrupted one.
 *
 *   meta         {"format": "impulse-train-state", "version": 1, "family": ...}
 *   fingerprint  JSON text of the options, model layout and data checksum
 *   counters     int64 [epoch, epochs, best_epoch, adam_t, rng_has_spare]
 *   scalars      float64 [seconds, best_loss (the guard's reference), rng_spare]
 *   rng          int64 [4]: the xoshiro256** state (bit pattern)
 *   order        int64 [n_order]: the shuffling permutation
 *   params, best, adam_m, adam_v   float64 [n]
 *   history      float64 [epoch]: mean loss of each completed epoch */
#include "train_internal.h"
#include "impulse/io.h"
#include "io/meta.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATE_FORMAT "impulse-train-state"
#define STATE_VERSION 1

int imp_train_state_save(imp_track *t, const imp_train_state *s)
{
    const char *path = t->h.state_path;
    imp_npz *z = imp_npz_new();
    int64_t *order = malloc((s->n_order ? s->n_order : 1) * sizeof *order);
    imp_json j;
    imp_json_init(&j);
    int st = z && order ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "training state: out of memory");
    if (!st) {
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "format", STATE_FORMAT);
        imp_json_kv_int(&j, "version", STATE_VERSION);
        imp_json_kv_string(&j, "family", s->family);
        imp_json_kv_int(&j, "epoch", t->epoch);
        imp_json_kv_int(&j, "epochs", t->epochs);
        imp_json_kv_string(&j, "impulse_version", IMP_VERSION_STRING);
        imp_json_end_object(&j);
        const char *text = imp_json_text(&j);
        st = text ? imp_npz_set_meta(z, text) : imp_fail(IMP_ERR_NOMEM, "training state: out of memory");
    }
    if (!st) st = imp_npz_add_string(z, "fingerprint", s->fingerprint);
    if (!st) {
        int64_t c[5] = {t->epoch, t->epochs, t->best_epoch, s->opt->t, s->rng->has_spare};
        st = imp_npz_add_i64(z, "counters", 1, (size_t[]){5}, c);
    }
    if (!st) {
        double sc[3] = {imp_track_seconds(t), t->best_loss, s->rng->spare};
        st = imp_npz_add_f64(z, "scalars", 1, (size_t[]){3}, sc);
    }
    if (!st) {
        int64_t r[4];
        for (int i = 0; i < 4; i++) memcpy(&r[i], &s->rng->s[i], sizeof r[i]);
        st = imp_npz_add_i64(z, "rng", 1, (size_t[]){4}, r);
    }
    if (!st) {
        for (size_t i = 0; i < s->n_order; i++) order[i] = (int64_t)s->order[i];
        st = imp_npz_add_i64(z, "order", 1, (size_t[]){s->n_order}, order);
    }
    size_t n[1] = {t->n};
    if (!st) st = imp_npz_add_f64(z, "params", 1, n, s->params);
    if (!st) st = imp_npz_add_f64(z, "best", 1, n, t->best);
    if (!st) st = imp_npz_add_f64(z, "adam_m", 1, n, s->opt->m);
    if (!st) st = imp_npz_add_f64(z, "adam_v", 1, n, s->opt->v);
    if (!st) st = imp_npz_add_f64(z, "history", 1, (size_t[]){(size_t)t->epoch}, t->history);
    if (!st) st = imp_npz_save(z, path);
    if (!st) t->last_state = imp_time_now();
    else imp_fail_context(st, "training state at epoch %d", t->epoch);
    imp_json_free(&j);
    imp_npz_free(z);
    free(order);
    return st;
}

static int get_f64_into(const imp_npz *z, const char *name, size_t n, double *dst)
{
    const double *p;
    int st = imp_npz_get_f64(z, name, 1, (size_t[]){n}, &p, NULL);
    if (!st && n) memcpy(dst, p, n * sizeof(double));
    return st;
}

int imp_train_state_load(imp_track *t, imp_train_state *s)
{
    const char *path = t->h.resume_path;
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return imp_fail_context(st, "resume");
    const char *meta = imp_npz_meta(z);
    char fmt[64] = "", fam[32] = "", *fp = NULL;
    int64_t *c = NULL, *r = NULL, *order = NULL;
    double sc[3];
    if (!meta || imp_json_get_string(meta, "format", fmt, sizeof fmt) || strcmp(fmt, STATE_FORMAT)) {
        st = imp_fail(IMP_ERR_FORMAT, "meta: format is not \"%s\" (not a training state; train writes "
                                      "one beside its output, OUT.state.npz)", STATE_FORMAT);
        goto done;
    }
    double ver;
    if (imp_json_get_number(meta, "version", &ver) || ver != STATE_VERSION) {
        st = imp_fail(IMP_ERR_FORMAT, "meta: version must be %d", STATE_VERSION);
        goto done;
    }
    if (imp_json_get_string(meta, "family", fam, sizeof fam) || strcmp(fam, s->family)) {
        st = imp_fail(IMP_ERR_INVALID, "meta: family '%s' is not this model's '%s'", fam, s->family);
        goto done;
    }
    if ((st = imp_npz_get_string(z, "fingerprint", &fp))) goto done;
    if (strcmp(fp, s->fingerprint)) {
        st = imp_fail(IMP_ERR_INVALID, "fingerprint: the state was written by a run with other options, model "
                                       "or data (%s); this run: %s", fp, s->fingerprint);
        goto done;
    }
    if ((st = imp_npz_get_i64_copy(z, "counters", 1, (size_t[]){5}, &c, NULL))) goto done;
    int epoch = (int)(c[0] < 0 ? -1 : c[0] > t->epochs ? t->epochs + 1 : c[0]);
    if (epoch < 1 || epoch > t->epochs) {
        st = imp_fail(IMP_ERR_INVALID, "counters: epoch %lld outside [1, %d] (the run's epochs)", (long long)c[0],
                      t->epochs);
        goto done;
    }
    if (c[2] < 0 || c[2] > epoch) {
        st = imp_fail(IMP_ERR_FORMAT, "counters: best epoch %lld outside [0, %d]", (long long)c[2], epoch);
        goto done;
    }
    if (c[3] < 0 || c[4] < 0 || c[4] > 1) {
        st = imp_fail(IMP_ERR_FORMAT, "counters: optimiser step %lld or rng flag %lld invalid", (long long)c[3],
                      (long long)c[4]);
        goto done;
    }
    if ((st = get_f64_into(z, "scalars", 3, sc))) goto done;
    if (!(sc[0] >= 0)) {
        st = imp_fail(IMP_ERR_FORMAT, "scalars: seconds %g < 0", sc[0]);
        goto done;
    }
    if ((st = imp_npz_get_i64_copy(z, "rng", 1, (size_t[]){4}, &r, NULL))) goto done;
    if ((st = imp_npz_get_i64_copy(z, "order", 1, (size_t[]){s->n_order}, &order, NULL))) goto done;
    /* a permutation of 0 .. n_order - 1 */
    {
        unsigned char *seen = calloc(s->n_order ? s->n_order : 1, 1);
        if (!seen) {
            st = imp_fail(IMP_ERR_NOMEM, "resume: out of memory");
            goto done;
        }
        for (size_t i = 0; i < s->n_order && !st; i++) {
            if (order[i] < 0 || (uint64_t)order[i] >= s->n_order || seen[order[i]])
                st = imp_fail(IMP_ERR_FORMAT, "order[%zu]: %lld is not part of a permutation of 0..%zu", i,
                              (long long)order[i], s->n_order - 1);
            else seen[order[i]] = 1;
        }
        free(seen);
        if (st) goto done;
    }
    if ((st = get_f64_into(z, "params", t->n, s->params)) || (st = get_f64_into(z, "best", t->n, t->best)) ||
        (st = get_f64_into(z, "adam_m", t->n, s->opt->m)) || (st = get_f64_into(z, "adam_v", t->n, s->opt->v)) ||
        (st = get_f64_into(z, "history", (size_t)epoch, t->history)))
        goto done;
    for (size_t i = 0; i < t->n; i++)
        if (s->opt->v[i] < 0) {
            st = imp_fail(IMP_ERR_FORMAT, "adam_v[%zu]: %g < 0", i, s->opt->v[i]);
            goto done;
        }
    t->epoch = t->resumed_at = epoch;
    t->have_epoch = 1;
    t->best_epoch = (int)c[2];
    t->best_loss = sc[1];
    t->best_epoch_loss = t->best_epoch > 0 ? t->history[t->best_epoch - 1] : INFINITY;
    t->final_loss = t->history[epoch - 1];
    t->seconds_before = sc[0];
    s->opt->t = (long)c[3];
    s->rng->has_spare = (int)c[4];
    s->rng->spare = sc[2];
    for (int i = 0; i < 4; i++) memcpy(&s->rng->s[i], &r[i], sizeof r[i]);
    for (size_t i = 0; i < s->n_order; i++) s->order[i] = (size_t)order[i];
    if (t->h.loss_history) memcpy(t->h.loss_history, t->history, (size_t)epoch * sizeof(double));
done:
    free(fp), free(c), free(r), free(order);
    imp_npz_free(z);
    return st ? imp_fail_context(st, "resume from %s", path) : IMP_OK;
}

int imp_train_state_epoch(const char *state_path, int *epoch)
{
    imp_npz *z = NULL;
    int64_t *c = NULL;
    int st = imp_npz_load(&z, state_path);
    const char *meta = st ? NULL : imp_npz_meta(z);
    char fmt[64] = "";
    if (!st && (!meta || imp_json_get_string(meta, "format", fmt, sizeof fmt) || strcmp(fmt, STATE_FORMAT)))
        st = imp_fail(IMP_ERR_FORMAT, "%s: not a training state (meta format is not \"%s\")", state_path, STATE_FORMAT);
    if (!st) st = imp_npz_get_i64_copy(z, "counters", 1, (size_t[]){5}, &c, NULL);
    if (!st && (c[0] < 0 || c[0] > INT32_MAX))
        st = imp_fail(IMP_ERR_FORMAT, "%s: counters: epoch %lld out of range", state_path, (long long)c[0]);
    if (!st) *epoch = (int)c[0];
    free(c);
    imp_npz_free(z);
    return st;
}

int imp_train_log_truncate(const char *log_path, int epoch)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    if (access(log_path, F_OK) != 0 && errno == ENOENT) return IMP_OK;
    int st = imp_read_file(log_path, &buf, &len);
    if (st) return st;
    /* the leading complete lines of increasing epochs up to `epoch` */
    const char *text = (const char *)buf;
    size_t keep = 0;
    int prev = 0;
    while (keep < len && prev < epoch) {
        const char *nl = memchr(text + keep, '\n', len - keep);
        if (!nl) break; /* torn by a kill */
        size_t n = (size_t)(nl - (text + keep));
        char *line = malloc(n + 1);
        if (!line) {
            free(buf);
            return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", log_path);
        }
        memcpy(line, text + keep, n);
        line[n] = '\0';
        int e = 0;
        int ok = !imp_json_get_int(line, "epoch", 1, epoch, &e) && e > prev;
        free(line);
        imp_clear_error();
        if (!ok) break;
        keep += n + 1;
        prev = e;
    }
    if (keep < len) st = imp_write_file_atomic(log_path, buf, keep);
    free(buf);
    return st;
}
