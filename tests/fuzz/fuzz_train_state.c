/* libFuzzer harness for the training-state reader behind `train --resume`
 * (imp_train_state_load, src/train/train_state.c). Inputs are structured
 * (fuzz_util.h) over two real state files (tests/fuzz/templates/state_*.npz,
 * from runs stopped by Ctrl-C: `impulse train vin --data
 * tests/fuzz/templates/ball.npz --epochs 40 --hidden 4 --layers 1
 * --checkpoint-every 1 -o vin.npz`, family cdl, and `impulse train chnn
 * --data pc.npz --epochs 40 --hidden 8 --chunks 6 --batch 3
 * --checkpoint-every 1 -o chs.npz` on `impulse simulate pendulum-chain:2
 * --trajectories 3 --seed 2 -o pc.npz`, family cmodel): the run that
 * resumes expects the template's family, fingerprint, epochs and sizes, so
 * that mutations reach the checks behind the fingerprint. A state that
 * loads is saved and must load again to the same values. Seeds:
 * tests/fuzz/corpus/train_state. See scripts/fuzz.sh. */
#include "fuzz_util.h"
#include "train/train_internal.h"

static const char *const templates[] = {"state_vin.npz", "state_chnn.npz"};
#define N_TPL (int)(sizeof templates / sizeof templates[0])

/* What the resuming run expects: the template's own family, fingerprint,
 * epochs and sizes. */
typedef struct expect {
    char family[32];
    char *fingerprint;
    int epochs;
    size_t n, n_order;
} expect;
static expect ex[N_TPL];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    for (int i = 0; i < N_TPL; i++) {
        char full[1024];
        snprintf(full, sizeof full, "%s/tests/fuzz/templates/%s", IMPULSE_SOURCE_DIR, templates[i]);
        imp_npz *z = NULL;
        double epochs = 0;
        const imp_npy_array *p, *o;
        if (imp_npz_load(&z, full) || imp_json_get_string(imp_npz_meta(z), "family", ex[i].family, sizeof ex[i].family) ||
            imp_json_get_number(imp_npz_meta(z), "epochs", &epochs) ||
            imp_npz_get_string(z, "fingerprint", &ex[i].fingerprint) || !(p = imp_npz_find(z, "params")) ||
            !(o = imp_npz_find(z, "order"))) {
            fprintf(stderr, "fuzz: cannot read template %s: %s\n", full, imp_last_error());
            abort();
        }
        ex[i].epochs = (int)epochs, ex[i].n = p->count, ex[i].n_order = o->count;
        imp_npz_free(z);
    }
    return 0;
}

typedef struct run {
    imp_track t;
    imp_train_state s;
    imp_adam opt;
    imp_rng rng;
} run;

static int run_load(run *r, const expect *e, const char *path)
{
    memset(r, 0, sizeof *r);
    imp_train_hooks h;
    imp_train_hooks_default(&h);
    h.resume_path = path;
    double *zero = calloc(e->n ? e->n : 1, sizeof(double));
    r->opt.n = e->n;
    r->opt.m = calloc(e->n ? e->n : 1, sizeof(double));
    r->opt.v = calloc(e->n ? e->n : 1, sizeof(double));
    r->s = (imp_train_state){.family = e->family, .fingerprint = e->fingerprint, .opt = &r->opt, .rng = &r->rng,
                             .order = calloc(e->n_order ? e->n_order : 1, sizeof(size_t)), .n_order = e->n_order,
                             .params = zero};
    if (!zero || !r->opt.m || !r->opt.v || !r->s.order || imp_track_init(&r->t, &h, e->epochs, zero, e->n)) return -1;
    return imp_train_state_load(&r->t, &r->s);
}

static void run_free(run *r)
{
    imp_track_free(&r->t);
    free(r->opt.m), free(r->opt.v), free(r->s.order), free(r->s.params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const expect *e = &ex[size >= 2 && !(data[0] == 'P' && data[1] == 'K') ? data[0] % N_TPL : 0];
    char path[160], again[160];
    snprintf(path, sizeof path, "%s", fuzz_scratch(".state.npz"));
    snprintf(again, sizeof again, "%s", fuzz_scratch("-again.state.npz"));
    if (fuzz_build_npz(templates, N_TPL, data, size, path)) return 0;
    run a, b;
    int st = run_load(&a, e, path);
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "fuzz: load: %s\n", st ? imp_last_error() : "ok");
    if (st == IMP_OK) {
        /* what loaded is written as the run would write it, and reads back the same */
        a.t.h.state_path = again;
        if (imp_train_state_save(&a.t, &a.s) != IMP_OK || run_load(&b, e, again) != IMP_OK) {
            fprintf(stderr, "fuzz: a loaded state does not save and load again: %s\n", imp_last_error());
            abort();
        }
        if (b.t.epoch != a.t.epoch || b.t.best_epoch != a.t.best_epoch || b.opt.t != a.opt.t ||
            memcmp(b.s.params, a.s.params, e->n * sizeof(double)) || memcmp(b.t.best, a.t.best, e->n * sizeof(double)) ||
            memcmp(b.s.order, a.s.order, e->n_order * sizeof(size_t)) || memcmp(b.rng.s, a.rng.s, sizeof a.rng.s))
            abort();
        run_free(&b);
    }
    run_free(&a);
    remove(path);
    remove(again);
    return 0;
}
