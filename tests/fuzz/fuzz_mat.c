/* libFuzzer harness for the .mat import path: the MAT v5 structure check
 * and the three loaders that hand a file to libmatio (impact set, raw
 * bounce_array, one matrix). Seeds: tests/fuzz/corpus/mat (scipy-written,
 * plain and compressed). See scripts/fuzz.sh. */
#include "fuzz_util.h"
#include "impulse/impact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)imp_mat5_check(data, size, "fuzz");
    const char *path = fuzz_scratch(".mat");
    if (fuzz_write(path, data, size)) return 0;
    imp_impact_set s;
    if (imp_impact_load_mat(&s, path) == IMP_OK) imp_impact_set_free(&s);
    if (imp_impact_load_raw_mat(&s, path) == IMP_OK) imp_impact_set_free(&s);
    double *m = NULL;
    size_t r, c;
    if (imp_impact_load_mat_matrix(path, "p", 0, 0, &m, &r, &c) == IMP_OK) free(m);
    return 0;
}
