/* libFuzzer harness for every checkpoint loader: CD-Lagrange strand
 * (imp_model_load: cdl, vin, resnet, resnet-contact), constrained strand
 * (imp_cmodel_load, imp_cmodel_peek_kind: chnn, clnn, hnn, delan, node) and
 * the Gaussian-process impact models (imp_gpi_load). Inputs are structured
 * (fuzz_util.h): a template checkpoint with its meta and one member
 * replaced, or a raw .npz. Seeds: tests/fuzz/corpus/checkpoint; templates:
 * tests/fuzz/templates. See scripts/fuzz.sh. */
#include "fuzz_util.h"
#include "impulse/cdl.h"
#include "impulse/chnn_models.h"
#include "impulse/gp.h"

static const char *const templates[] = {"ck_cdl.npz", "ck_vin.npz", "ck_resnet.npz", "ck_chnn.npz",
                                        "ck_clnn.npz", "ck_hnn.npz", "ck_delan.npz", "ck_node.npz", "gp.npz"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch(".npz");
    if (fuzz_build_npz(templates, (int)(sizeof templates / sizeof templates[0]), data, size, path)) return 0;
    imp_model *m = NULL;
    if (imp_model_load(&m, path) == IMP_OK) imp_model_free(m);
    imp_cmodel cm;
    double *params = NULL;
    if (imp_cmodel_load(path, &cm, &params) == IMP_OK) free(params);
    char kind[32];
    (void)imp_cmodel_peek_kind(path, kind, sizeof kind);
    imp_gpi_model gp;
    char *meta = NULL;
    size_t *train = NULL, n_train = 0;
    if (imp_gpi_load(&gp, path, &meta, &train, &n_train) == IMP_OK) {
        imp_gpi_model_free(&gp);
        free(meta);
        free(train);
    }
    return 0;
}
