/* Structure-aware libFuzzer harness for `impulse import` of HDF5: the input
 * describes a file (fuzz_h5.h: root-level or grouped layout, dtypes, shapes
 * up to 2^62, contiguous/chunked/compact/deflated storage, fill values,
 * values, and the import options), which is built in memory by libhdf5's
 * core driver, written to a scratch .h5 and imported as in fuzz_import.c.
 * The input limit is 64 MiB. Seeds: tests/fuzz/corpus/hdf5 (written by
 * tests/fuzz/gen_hdf5.c). See scripts/fuzz.sh. */
#include "fuzz_h5.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    imp_set_input_limit((size_t)64 << 20);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_bytes b = {data, size};
    unsigned char *img = NULL;
    size_t len = 0;
    if (fuzz_h5_build(&b, &img, &len)) return 0;
    imp_import_opts o;
    imp_import_opts_default(&o);
    uint8_t opt = fuzz_u8(&b);
    o.finite_differences = opt & 1;
    if (opt & 2) o.dt = (fuzz_u8(&b) + 1) / 64.0;
    o.q = FUZZ_H5_Q[(opt >> 2) & 7];
    o.bodies = (opt >> 5) & 3;
    const char *path = fuzz_scratch(".h5");
    if (fuzz_write(path, img, len) == 0) fuzz_import_check(path, &o, IMP_LABELS_AUTO);
    free(img);
    return 0;
}
