/* Shared helpers of the libFuzzer harnesses (tests/fuzz/fuzz_*.c): a
 * per-process scratch file for loaders that take a path, and the
 * structured .npz inputs of the checkpoint and trajectory harnesses. */
#ifndef IMPULSE_FUZZ_UTIL_H
#define IMPULSE_FUZZ_UTIL_H

#include "impulse/contact_systems.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A scratch file in /dev/shm (memory) when it exists, else /tmp. */
static inline const char *fuzz_scratch(const char *ext)
{
    static char path[128];
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/impulse-fuzz-%ld%s", dir, (long)getpid(), ext);
    return path;
}

/* What `impulse import` does with a file: imp_trajset_import, the contact
 * labels, and the trajectory file it writes, which must load again (an
 * import that train cannot read back aborts). The file at `path` is removed. */
static inline void fuzz_import_check(const char *path, const imp_import_opts *o, imp_label_mode lm)
{
    imp_trajset ts;
    imp_import_notes notes;
    int st = imp_trajset_import(path, o, &ts, &notes);
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "fuzz: import: %s\n", st ? imp_last_error() : "ok");
    if (st == IMP_OK) {
        imp_label_report rep;
        if (imp_contact_labels_apply(&ts, lm, &rep) == IMP_OK) {
            char out[160];
            snprintf(out, sizeof out, "%s", fuzz_scratch("-out.npz"));
            if (imp_trajset_save(&ts, out) == IMP_OK) {
                imp_trajset back;
                if (imp_trajset_load(&back, out) != IMP_OK) {
                    fprintf(stderr, "fuzz: an imported set does not load again: %s\n", imp_last_error());
                    abort();
                }
                imp_trajset_free(&back);
            }
            remove(out);
        }
        imp_trajset_free(&ts);
    }
    remove(path);
}

static inline int fuzz_write(const char *path, const void *data, size_t size)
{
    remove(path);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    fclose(f);
    return w == size ? 0 : -1;
}

/* Structured .npz input, so that mutations reach the loaders' validation
 * instead of dying at a CRC: byte 0 picks a template file, byte 1 one of its
 * members; the text up to the first NUL (if any) replaces the meta JSON
 * (empty keeps it); the rest, if it parses as a .npy image, replaces the
 * member. Inputs starting with "PK" are taken as a raw .npz instead.
 * Writes the archive to `path`; returns 0 if a file was written. */
static inline int fuzz_build_npz(const char *const *templates, int n_templates, const uint8_t *data, size_t size,
                          const char *path)
{
    if (size >= 2 && data[0] == 'P' && data[1] == 'K') return fuzz_write(path, data, size);
    static imp_npz *tpl[32];
    static int loaded;
    if (!loaded) {
        loaded = 1;
        for (int i = 0; i < n_templates && i < 32; i++) {
            char full[1024];
            snprintf(full, sizeof full, "%s/tests/fuzz/templates/%s", IMPULSE_SOURCE_DIR, templates[i]);
            if (imp_npz_load(&tpl[i], full)) {
                fprintf(stderr, "fuzz: cannot load template %s: %s\n", full, imp_last_error());
                abort();
            }
        }
    }
    if (size < 2) return fuzz_write(path, "", 0);
    const imp_npz *t = tpl[data[0] % n_templates];
    imp_npz *z = imp_npz_new();
    if (!z) return -1;
    size_t nm = imp_npz_count(t), pick = data[1] % (nm ? nm : 1);
    const uint8_t *rest = data + 2, *end = data + size;
    const uint8_t *nul = memchr(rest, 0, (size_t)(end - rest));
    char *meta = NULL;
    if (nul && nul > rest) {
        meta = malloc((size_t)(nul - rest) + 1);
        if (meta) {
            memcpy(meta, rest, (size_t)(nul - rest));
            meta[nul - rest] = '\0';
        }
    }
    imp_npy_array repl;
    int have_repl = nul && imp_npy_parse(&repl, nul + 1, (size_t)(end - nul - 1), "fuzz") == IMP_OK;
    for (size_t i = 0; i < nm; i++) {
        const imp_npy_array *a = imp_npz_at(t, i);
        if (!strcmp(a->name, "meta") && meta) (void)imp_npz_add_string(z, "meta", meta);
        else (void)imp_npz_add_array(z, a->name, i == pick && have_repl ? &repl : a);
    }
    if (have_repl) imp_npy_array_clear(&repl);
    free(meta);
    unsigned char *img = NULL;
    size_t len = 0;
    int st = imp_npz_serialise(z, &img, &len);
    imp_npz_free(z);
    if (st) return -1;
    st = fuzz_write(path, img, len);
    free(img);
    return st;
}

#endif
