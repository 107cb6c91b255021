/* libFuzzer harness for `impulse import` (imp_trajset_import over
 * src/io/source*.c) of CSV, .npy, .npz and HDF5 files, with the name lists
 * and column selections of --q/--qdot/--contact/--time (NAME[i], [i:j],
 * [i,j,...], A,B), --traj, --dt, --bodies, --dim, --steps and
 * --finite-differences, then what the command does next: the contact-label
 * handling and the trajectory file it writes, which must load again.
 *
 * Input: a first line of options, then the file's bytes. Options are words
 * KEY=VALUE: f=csv|npy|npz|h5|h5raw (default: from the magic bytes), q=,
 * qdot=, contact=, time=, traj= (an '@' in a name stands for the file's own
 * path: the names of a .npy import are paths), dt=, bodies=, dim=, steps=,
 * labels=auto|as-given|onset, and the word fd. Numbers are kept inside the
 * CLI's ranges. The input limit is 64 MiB, so that a declared size that
 * escapes it shows as libFuzzer's out-of-memory.
 *
 * HDF5 (f=h5): the bytes describe a file (fuzz_h5.h) that libhdf5 builds.
 * Raw HDF5 bytes (f=h5raw, or the HDF5 signature) are imported only when
 * FUZZ_RAW_HDF5=1: mutated HDF5 internals reach defects of libhdf5 itself
 * (Debian's 1.10.8 dereferences NULL on a root symbol table pointing at the
 * superblock, tests/fuzz/libhdf5/), which impulse cannot fix, and would make
 * CI fail at random. Seeds: tests/fuzz/corpus/import (HDF5 seeds from
 * tests/fuzz/gen_hdf5.c). See scripts/fuzz.sh. */
#include "impulse/contact_systems.h"
#include "fuzz_h5.h"
#include "fuzz_util.h"

#include <math.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    imp_set_input_limit((size_t)64 << 20);
    return 0;
}

/* `value` with each '@' replaced by path, into a static slot. */
static const char *subst(char *slot, size_t cap, const char *value, const char *path)
{
    size_t k = 0;
    for (const char *p = value; *p && k + 1 < cap; p++) {
        if (*p == '@') k += (size_t)snprintf(slot + k, cap - k, "%s", path);
        else slot[k++] = *p;
        if (k >= cap) k = cap - 1;
    }
    slot[k] = '\0';
    return slot;
}

static double clampd(const char *v, double lo, double hi)
{
    double x = strtod(v, NULL);
    return x >= lo && x <= hi ? x : 0.0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t optlen = nl ? (size_t)(nl - data) : 0;
    const uint8_t *file = nl ? nl + 1 : data;
    size_t flen = size - (size_t)(file - data);
    char opts[512];
    if (optlen >= sizeof opts) optlen = sizeof opts - 1;
    memcpy(opts, data, optlen);
    opts[optlen] = '\0';

    imp_import_opts o;
    imp_import_opts_default(&o);
    imp_label_mode lm = IMP_LABELS_AUTO;
    const char *fmt = NULL;
    char *words[16];
    int nw = 0;
    for (char *w = strtok(opts, " \t\r"); w && nw < 16; w = strtok(NULL, " \t\r")) words[nw++] = w;
    for (int i = 0; i < nw; i++)
        if (!strncmp(words[i], "f=", 2)) fmt = words[i] + 2;
    if (!fmt || (strcmp(fmt, "csv") && strcmp(fmt, "npy") && strcmp(fmt, "npz") && strcmp(fmt, "h5") &&
                 strcmp(fmt, "h5raw"))) {
        if (flen >= 2 && file[0] == 'P' && file[1] == 'K') fmt = "npz";
        else if (flen >= 6 && !memcmp(file, "\x93NUMPY", 6)) fmt = "npy";
        else if (flen >= 4 && !memcmp(file, "\x89HDF", 4)) fmt = "h5raw";
        else fmt = "csv";
    }
    int h5 = !strncmp(fmt, "h5", 2), raw = !strcmp(fmt, "h5raw");
    static int raw_ok = -1;
    if (raw_ok < 0) raw_ok = getenv("FUZZ_RAW_HDF5") && !strcmp(getenv("FUZZ_RAW_HDF5"), "1");
    if (raw && !raw_ok) return 0;
    unsigned char *img = NULL;
    if (h5 && !raw) {
        fuzz_bytes b = {file, flen};
        if (fuzz_h5_build(&b, &img, &flen)) return 0;
        file = img;
    }
    char ext[8];
    snprintf(ext, sizeof ext, ".%s", h5 ? "h5" : fmt);
    char path[160];
    snprintf(path, sizeof path, "%s", fuzz_scratch(ext));
    static char names[5][300];
    for (int i = 0; i < nw; i++) {
        char *eq = strchr(words[i], '=');
        const char *k = words[i], *v = eq ? eq + 1 : "";
        if (eq) *eq = '\0';
        if (!strcmp(k, "q")) o.q = subst(names[0], sizeof names[0], v, path);
        else if (!strcmp(k, "qdot")) o.qdot = subst(names[1], sizeof names[1], v, path);
        else if (!strcmp(k, "contact")) o.contact = subst(names[2], sizeof names[2], v, path);
        else if (!strcmp(k, "time")) o.time = subst(names[3], sizeof names[3], v, path);
        else if (!strcmp(k, "traj")) o.traj = subst(names[4], sizeof names[4], v, path);
        else if (!strcmp(k, "dt")) o.dt = clampd(v, 1e-12, 1e6);
        else if (!strcmp(k, "bodies")) o.bodies = (int)clampd(v, 1, IMP_MAX_BODIES);
        else if (!strcmp(k, "dim")) o.dim = (int)clampd(v, 1, IMP_MAX_DIM);
        else if (!strcmp(k, "steps")) o.steps = (int)clampd(v, 2, 1 << 28);
        else if (!strcmp(k, "fd")) o.finite_differences = 1;
        else if (!strcmp(k, "labels")) (void)imp_label_mode_from_name(v, &lm);
    }
    /* as the CLI: the positions of a .npy import are the file itself */
    if (!strcmp(fmt, "npy") && !o.q) o.q = path;
    if (fuzz_write(path, file, flen) == 0) fuzz_import_check(path, &o, lm);
    free(img);
    return 0;
}
