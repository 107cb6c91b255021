/* libFuzzer harness for the system-file parser (imp_csys_parse, format in
 * docs/chnn-systems.md) and the kinematics on what parsed.
 * Seeds: tests/fuzz/corpus/system (the systems/ files). See scripts/fuzz.sh. */
#include "fuzz_util.h"
#include "impulse/constrained.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    static imp_csys s;
    memset(&s, 0, sizeof s);
    if (imp_csys_parse(&s, text, "fuzz.txt") == IMP_OK && imp_csys_validate(&s) == IMP_OK) {
        size_t n = (size_t)imp_csys_ndof(&s);
        double *x = calloc(n + 1, sizeof(double)), *g = calloc(n + 1, sizeof(double));
        if (x && g) imp_csys_potential_grad(&s, x, g);
        free(x);
        free(g);
    }
    free(text);
    return 0;
}
