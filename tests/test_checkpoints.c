/* The checkpoint schemas (docs/data-format.md, "Checkpoints"): every meta
 * field and array checked, sizes before allocation, redundant copies
 * against each other, a checksum over description and parameters; old
 * (version 1) files still load. Each case below is a defect that once
 * loaded silently or with a wrong message. */
#define _POSIX_C_SOURCE 200809L
#include "impulse/impulse.h"
#include "test.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* Load BAD in a child limited to 512 MiB of address space: a loader that
 * allocates what the meta declares before checking it fails there with an
 * allocation error instead of the params message. Returns 1 if the child
 * saw `needle`. (AddressSanitizer reserves terabytes: not under ASan.) */
static int load_in_small_address_space(const char *needle)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {512u << 20, 512u << 20};
        setrlimit(RLIMIT_AS, &rl);
        imp_model *m = NULL;
        int st = imp_model_load(&m, "ckpt_bad.npz");
        _exit(st != 0 && strstr(imp_last_error(), needle) ? 0 : 1);
    }
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#define CDL_FILE "ckpt_cdl.npz"
#define CHNN_FILE "ckpt_chnn.npz"
#define BAD "ckpt_bad.npz"

/* Copy src to BAD with the meta text's first `from` replaced by `to`
 * (from == NULL: meta unchanged), array `drop` removed (may be NULL). */
static int rewrite(const char *src, const char *from, const char *to, const char *drop)
{
    imp_npz *z = NULL, *o = imp_npz_new();
    int st = imp_npz_load(&z, src);
    if (st) return st;
    for (size_t i = 0; i < imp_npz_count(z); i++) {
        const imp_npy_array *a = imp_npz_at(z, i);
        if (drop && !strcmp(a->name, drop)) continue;
        if (!strcmp(a->name, "meta")) continue;
        if ((st = imp_npz_add_array(o, a->name, a))) break;
    }
    const char *meta = imp_npz_meta(z);
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", meta);
    if (from) {
        char *p = strstr(buf, from);
        if (!p) st = IMP_ERR_NOT_FOUND;
        else {
            char tail[8192];
            snprintf(tail, sizeof tail, "%s", p + strlen(from));
            snprintf(p, sizeof buf - (size_t)(p - buf), "%s%s", to, tail);
        }
    }
    if (!st) st = imp_npz_set_meta(o, buf);
    if (!st) st = imp_npz_save(o, BAD);
    imp_npz_free(z);
    imp_npz_free(o);
    return st;
}

/* Change one value of array `name` (index i) by a relative 1e-6. */
static int poke(const char *src, const char *name, size_t i)
{
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, src);
    if (st) return st;
    const imp_npy_array *a = imp_npz_find(z, name);
    double *d = malloc(a->count * sizeof(double));
    memcpy(d, a->data, a->count * sizeof(double));
    d[i] = d[i] * (1 + 1e-6) + 1e-9;
    st = imp_npz_add_f64(z, name, a->ndim, a->shape, d);
    if (!st) st = imp_npz_save(z, BAD);
    free(d);
    imp_npz_free(z);
    return st;
}

static void expect_cdl_fails(const char *what, const char *needle)
{
    imp_model *m = NULL;
    imp_clear_error();
    int st = imp_model_load(&m, BAD);
    if (getenv("SHOW_MSG")) printf("%s: %s\n", what, imp_last_error());
    CHECK_MSG(st != 0 && strstr(imp_last_error(), needle), "%s: status %d, message '%s' (want '%s')", what, st,
              imp_last_error(), needle);
    imp_model_free(m);
}

static void expect_chnn_fails(const char *what, const char *needle)
{
    imp_cmodel m;
    double *p = NULL;
    imp_clear_error();
    int st = imp_cmodel_load(BAD, &m, &p);
    if (getenv("SHOW_MSG")) printf("%s: %s\n", what, imp_last_error());
    CHECK_MSG(st != 0 && strstr(imp_last_error(), needle), "%s: status %d, message '%s' (want '%s')", what, st,
              imp_last_error(), needle);
    free(p);
}

static void make_cdl(void)
{
    imp_sim_opts o;
    imp_trajset ts;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.n_steps = 60;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.hidden = 8;
    cfg.contact_hidden = 6;
    imp_model *m = NULL;
    CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 1));
    snprintf(m->system, sizeof m->system, "bouncing-ball");
    m->gravity = 9.81;
    m->length = 1;
    CHECK_OK(imp_model_save(m, CDL_FILE, NULL));
    imp_model_free(m);
    imp_trajset_free(&ts);
}

static void test_cdl(void)
{
    make_cdl();
    imp_model *m = NULL;
    CHECK_OK(imp_model_load(&m, CDL_FILE));
    imp_model_free(m);
    /* the per-layer copies the loader used to ignore */
    CHECK_OK(poke(CDL_FILE, "net.W0", 3));
    expect_cdl_fails("net.W0 changed", "net.W0[3]");
    CHECK_OK(poke(CDL_FILE, "contact.b1", 0));
    expect_cdl_fails("contact.b1 changed", "contact.b1[0]");
    CHECK_OK(rewrite(CDL_FILE, NULL, NULL, "contact.W2"));
    expect_cdl_fails("contact.W2 missing", "contact.W2");
    /* params changed: the checksum */
    CHECK_OK(poke(CDL_FILE, "params", 0));
    expect_cdl_fails("params changed", "checksum");
    /* meta fields that were not checked */
    CHECK_OK(rewrite(CDL_FILE, "\"kind\":\"model\"", "\"kind\":\"trajectories\"", NULL));
    expect_cdl_fails("kind", "kind 'trajectories'");
    CHECK_OK(rewrite(CDL_FILE, "\"system\":\"bouncing-ball\"", "\"system\":7", NULL));
    expect_cdl_fails("system a number", "system");
    CHECK_OK(rewrite(CDL_FILE, "\"gravity\":9.81", "\"gravity\":1e300", NULL));
    expect_cdl_fails("gravity 1e300", "gravity: 1e300");
    CHECK_OK(rewrite(CDL_FILE, "\"length\":1", "\"length\":\"one\"", NULL));
    expect_cdl_fails("length a string", "length");
    CHECK_OK(rewrite(CDL_FILE, "\"dt\":0.02", "\"dt\":1e18", NULL));
    expect_cdl_fails("dt 1e18", "dt: 1e18");
    CHECK_OK(rewrite(CDL_FILE, "\"touch\":1", "\"touch\":2", NULL));
    expect_cdl_fails("touch 2", "touch: 2");
    CHECK_OK(rewrite(CDL_FILE, "\"hidden\":8", "\"hidden\":8.5", NULL));
    expect_cdl_fails("hidden 8.5", "hidden: 8.5");
    /* a NaN literal and a number where a name belongs: named as such */
    CHECK_OK(rewrite(CDL_FILE, "\"dt\":0.02", "\"dt\":NaN", NULL));
    expect_cdl_fails("NaN literal", "dt: 'NaN' is not a finite number");
    CHECK_OK(rewrite(CDL_FILE, "\"activation\":\"softplus\"", "\"activation\":3", NULL));
    expect_cdl_fails("activation a number", "activation: JSON value is not a string");
    CHECK_OK(rewrite(CDL_FILE, "\"activation\":\"softplus\"", "\"activation\":\"swish\"", NULL));
    expect_cdl_fails("activation unknown", "swish");
    /* a declared width far beyond the file: refused before allocating */
    CHECK_OK(rewrite(CDL_FILE, "\"contact_hidden\":6", "\"contact_hidden\":100000", NULL));
    double t0 = imp_time_now();
    expect_cdl_fails("contact_hidden 100000", "params:");
    CHECK_MSG(imp_time_now() - t0 < 0.5, "took %.2f s", imp_time_now() - t0);
    if (!UNDER_ASAN) CHECK(load_in_small_address_space("params: 91 values"));
    CHECK_OK(rewrite(CDL_FILE, "\"contact_hidden\":6", "\"contact_hidden\":20000", NULL));
    if (!UNDER_ASAN) CHECK(load_in_small_address_space("params: 91 values"));
    CHECK_OK(rewrite(CDL_FILE, "\"contact_hidden\":6", "\"contact_hidden\":100001", NULL));
    expect_cdl_fails("contact_hidden 100001", "contact_hidden: 100001 is out of range");
    /* model kind against the layout: a resnet's parameters are laid out otherwise */
    CHECK_OK(rewrite(CDL_FILE, "\"model\":\"cdl\"", "\"model\":\"vin\"", NULL));
    expect_cdl_fails("cdl relabelled vin", "params:");
    /* a newer format is refused with the versions this build reads */
    CHECK_OK(rewrite(CDL_FILE, "\"format_version\":2", "\"format_version\":3", NULL));
    expect_cdl_fails("format_version 3", "format_version 3 is newer than this build reads (1..2)");
    /* a version-1 file (no format_version, no checksum) still loads */
    CHECK_OK(rewrite(CDL_FILE, "\"format_version\":2,", "", NULL));
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, BAD));
    char meta[8192];
    snprintf(meta, sizeof meta, "%s", imp_npz_meta(z));
    char *c = strstr(meta, "\"checksum\"");
    if (c) memmove(c, c + 30, strlen(c + 30) + 1); /* "checksum":"<16 hex>", */
    CHECK_OK(imp_npz_set_meta(z, meta));
    CHECK_OK(imp_npz_save(z, BAD));
    imp_npz_free(z);
    CHECK_OK(imp_model_load(&m, BAD));
    imp_model_free(m);
}

static void test_chnn(void)
{
    imp_csystem cs;
    imp_cmodel m;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:2"));
    CHECK_OK(imp_cmodel_init(&m, IMP_CMODEL_CHNN, &cs, 8, 3));
    double *p = malloc(m.n_params * sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, 2);
    imp_cmodel_init_params(&m, p, &rng);
    CHECK_OK(imp_cmodel_save(CHNN_FILE, &m, p, NULL, NULL));
    free(p);
    imp_cmodel m2;
    double *p2 = NULL;
    CHECK_OK(imp_cmodel_load(CHNN_FILE, &m2, &p2));
    free(p2);
    CHECK_OK(rewrite(CHNN_FILE, "\"hidden\":8", "\"hidden\":1e18", NULL));
    expect_chnn_fails("hidden 1e18", "hidden: 1e18 is out of range [1, 4096]");
    CHECK_OK(rewrite(CHNN_FILE, "\"depth\":3", "\"depth\":2.5", NULL));
    expect_chnn_fails("depth 2.5", "depth: 2.5");
    CHECK_OK(rewrite(CHNN_FILE, "\"n_params\":", "\"n_params\":1", NULL));
    expect_chnn_fails("n_params", "n_params");
    CHECK_OK(rewrite(CHNN_FILE, "\"format\":\"impulse-cmodel\"", "\"format\":\"other\"", NULL));
    expect_chnn_fails("format", "format 'other'");
    CHECK_OK(rewrite(CHNN_FILE, "\"model\":\"chnn\"", "\"model\":\"clnn\"", NULL));
    expect_chnn_fails("chnn relabelled clnn", "checksum");
    CHECK_OK(poke(CHNN_FILE, "params", 1));
    expect_chnn_fails("params changed", "checksum");
    CHECK_OK(rewrite(CHNN_FILE, "\"system\":\"pendulum-chain:2\"", "\"system\":\"pendulum-chain:3\"", NULL));
    expect_chnn_fails("system relabelled", "n_params");
}

int main(void)
{
    imp_blas_init();
    test_cdl();
    test_chnn();
    unlink(CDL_FILE);
    unlink(CHNN_FILE);
    unlink(BAD);
    TEST_MAIN_END();
}
