/* libFuzzer harness for the .npz and .npy parsers and the getters on what
 * parsed (and the JSON key reader on the meta). Seeds: tests/fuzz/corpus/npz.
 * See scripts/fuzz.sh. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    imp_npz *z = NULL;
    if (imp_npz_parse(&z, data, size, "fuzz") == IMP_OK) {
        /* exercise the getters on whatever parsed */
        for (size_t i = 0; i < imp_npz_count(z); i++) {
            const imp_npy_array *a = imp_npz_at(z, i);
            const double *d;
            int64_t *iv = NULL;
            char *s = NULL;
            (void)imp_npz_get_f64(z, a->name, a->ndim, NULL, &d, NULL);
            (void)imp_npz_get_i64_copy(z, a->name, a->ndim, NULL, &iv, NULL);
            (void)imp_npz_get_string(z, a->name, &s);
            free(iv);
            free(s);
        }
        double x;
        char buf[64];
        if (imp_npz_meta(z)) {
            (void)imp_json_get_number(imp_npz_meta(z), "seed", &x);
            (void)imp_json_get_string(imp_npz_meta(z), "name", buf, sizeof buf);
        }
    }
    imp_npz_free(z);
    imp_npy_array a;
    if (imp_npy_parse(&a, data, size, "fuzz") == IMP_OK) imp_npy_array_clear(&a);
    return 0;
}
