/* libFuzzer harness for the JSON reader (imp_json_get_number/_string, used
 * on every file's meta, and the whole-text check with its fault position) and the checked number parser (src/core/num.h).
 * The input's first line is the key, the rest the JSON text.
 * Seeds: tests/fuzz/corpus/json. See scripts/fuzz.sh. */
#include "fuzz_util.h"
#include "core/num.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *json = strchr(text, '\n');
    const char *key = "dt";
    if (json) {
        *json++ = '\0';
        key = text;
    } else {
        json = text;
    }
    double x;
    char buf[64];
    int64_t i;
    if (imp_json_get_number(json, key, &x) == IMP_OK) {
        int k;
        uint64_t u;
        (void)imp_num_to_int(x, key, -1000, 1000, &k);
        (void)imp_num_to_uint64(x, key, &u);
    }
    (void)imp_json_get_string(json, key, buf, sizeof buf);
    (void)imp_json_get_string(json, "system", buf, 4);
    (void)imp_json_get_number(json, "seed", &x);
    (void)imp_json_get_token(json, key, buf, sizeof buf);
    (void)imp_json_check_object(json, "fuzz"); /* the whole text checked; its message names the fault */
    (void)imp_num_parse_double(text, "fuzz", &x);
    (void)imp_num_parse_int64(text, "fuzz", INT64_MIN, INT64_MAX, &i);
    free(text);
    return 0;
}
