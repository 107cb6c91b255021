/* The input budget: how many bytes a reader may materialise from one file
 * (core.h, imp_input_limit). */
#include "impulse/core.h"

#include <errno.h>
#include <stdlib.h>

static size_t input_limit; /* 0: not yet set (default or environment) */

size_t imp_input_limit(void)
{
    if (input_limit) return input_limit;
    size_t lim = IMP_INPUT_LIMIT_DEFAULT;
    const char *e = getenv("IMPULSE_MAX_INPUT_BYTES");
    if (e && *e >= '0' && *e <= '9') {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(e, &end, 10);
        if (!errno && *end == '\0' && v > 0 && v <= SIZE_MAX) lim = (size_t)v;
    }
    return lim;
}

void imp_set_input_limit(size_t bytes) { input_limit = bytes; }
