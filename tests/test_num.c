/* The checked number helper (src/core/num.c): strict parsing and range- and
 * integrality-checked conversions, with messages that say what was wrong. */
#include "core/num.h"
#include "impulse/core.h"
#include "test.h"

#include <float.h>
#include <stdint.h>

/* The call fails and its message contains `part`. */
#define CHECK_FAILS_SAYING(expr, part)                                                 \
    do {                                                                               \
        imp_clear_error();                                                             \
        int st__ = (expr);                                                             \
        CHECK_MSG(st__ == IMP_ERR_INVALID && strstr(imp_last_error(), (part)) != NULL, \
                  "%s -> %d '%s', want '%s'", #expr, st__, imp_last_error(), (part));   \
    } while (0)

static void test_parse_double(void)
{
    double x = -1;
    CHECK_OK(imp_num_parse_double("9.81", "gravity", &x));
    CHECK(x == 9.81);
    CHECK_OK(imp_num_parse_double("-2.5e-3", "gravity", &x));
    CHECK(x == -2.5e-3);
    /* below DBL_MIN: subnormal numbers, not "not finite" (strtod's ERANGE) */
    CHECK_OK(imp_num_parse_double("1e-308", "mass", &x));
    CHECK(x > 0 && x < DBL_MIN);
    CHECK_OK(imp_num_parse_double("1e-400", "mass", &x));
    CHECK(x == 0);
    x = 7;
    CHECK_FAILS_SAYING(imp_num_parse_double("1e999", "mass", &x), "mass: '1e999' is beyond the range of a double");
    CHECK(x == 7); /* untouched on failure */
    CHECK_FAILS_SAYING(imp_num_parse_double("-1e999", "mass", &x), "beyond the range");
    CHECK_FAILS_SAYING(imp_num_parse_double("nan", "mass", &x), "mass: 'nan' is not a finite number");
    CHECK_FAILS_SAYING(imp_num_parse_double("NaN", "mass", &x), "not a finite number");
    CHECK_FAILS_SAYING(imp_num_parse_double("-inf", "mass", &x), "not a finite number");
    CHECK_FAILS_SAYING(imp_num_parse_double("Infinity", "mass", &x), "not a finite number");
    CHECK_FAILS_SAYING(imp_num_parse_double("1.5x", "mass", &x), "mass: '1.5x' is not a number");
    CHECK_FAILS_SAYING(imp_num_parse_double(" 1.5", "mass", &x), "is not a number");
    CHECK_FAILS_SAYING(imp_num_parse_double("1.5 ", "mass", &x), "is not a number");
    CHECK_FAILS_SAYING(imp_num_parse_double("0x1p3", "mass", &x), "is not a number");
    CHECK_FAILS_SAYING(imp_num_parse_double("abc", "mass", &x), "is not a number");
    CHECK_FAILS_SAYING(imp_num_parse_double("", "mass", &x), "mass: missing number");
    CHECK_FAILS_SAYING(imp_num_parse_double(NULL, "mass", &x), "missing number");
    CHECK(x == 7);
}

static void test_parse_int(void)
{
    int64_t v = -1;
    int i = -1;
    CHECK_OK(imp_num_parse_int64("2000000000", "--steps", 1, INT64_C(1) << 40, &v));
    CHECK(v == 2000000000);
    CHECK_OK(imp_num_parse_int64("-12", "x", -100, 100, &v));
    CHECK(v == -12);
    CHECK_OK(imp_num_parse_int64("+3", "x", -100, 100, &v));
    CHECK(v == 3);
    CHECK_OK(imp_num_parse_int64("1e6", "x", 0, INT64_MAX, &v));
    CHECK(v == 1000000);
    CHECK_OK(imp_num_parse_int64("2000.0", "x", 0, INT64_MAX, &v));
    CHECK(v == 2000);
    CHECK_OK(imp_num_parse_int64("9223372036854775807", "x", INT64_MIN, INT64_MAX, &v));
    CHECK(v == INT64_MAX);
    CHECK_OK(imp_num_parse_int64("-9223372036854775808", "x", INT64_MIN, INT64_MAX, &v));
    CHECK(v == INT64_MIN);
    v = 5;
    CHECK_FAILS_SAYING(imp_num_parse_int64("9223372036854775808", "x", INT64_MIN, INT64_MAX, &v),
                       "x: 9223372036854775808 is out of range");
    CHECK_FAILS_SAYING(imp_num_parse_int64("2.5", "axis", 0, 2, &v), "axis: 2.5 is not an integer");
    CHECK_FAILS_SAYING(imp_num_parse_int64("1.7", "axis", 0, 2, &v), "not an integer");
    CHECK_FAILS_SAYING(imp_num_parse_int64("-2147483649", "axis", 0, 2, &v),
                       "axis: -2147483649 is out of range [0, 2]");
    CHECK_FAILS_SAYING(imp_num_parse_int64("1e300", "axis", 0, 2, &v), "axis: 1e300 is out of range [0, 2]");
    CHECK_FAILS_SAYING(imp_num_parse_int64("1e999", "axis", 0, 2, &v), "beyond the range");
    CHECK_FAILS_SAYING(imp_num_parse_int64("nan", "axis", 0, 2, &v), "not a finite number");
    CHECK_FAILS_SAYING(imp_num_parse_int64("12abc", "n", 0, 100, &v), "n: '12abc' is not an integer");
    CHECK_FAILS_SAYING(imp_num_parse_int64("0x10", "n", 0, 100, &v), "not an integer");
    CHECK_FAILS_SAYING(imp_num_parse_int64(" 5", "n", 0, 100, &v), "not an integer");
    CHECK_FAILS_SAYING(imp_num_parse_int64("", "n", 0, 100, &v), "n: missing integer");
    CHECK_FAILS_SAYING(imp_num_parse_int64("1e17", "n", 0, INT64_MAX, &v), "plain digits");
    CHECK(v == 5);
    CHECK_OK(imp_num_parse_int("7", "--seed", 0, 10, &i));
    CHECK(i == 7);
    CHECK_FAILS_SAYING(imp_num_parse_int("4294967303", "--seed", 0, 10, &i), "out of range"); /* 2^32 + 7 */
    CHECK(i == 7);
}

static void test_to_integer(void)
{
    int64_t v = 3;
    int i = 3;
    size_t z = 3;
    uint64_t u = 3;
    CHECK_OK(imp_num_to_int64(-5.0, "seed", -10, 10, &v));
    CHECK(v == -5);
    CHECK_OK(imp_num_to_int(2.0, "axis", 0, 2, &i));
    CHECK(i == 2);
    CHECK_FAILS_SAYING(imp_num_to_int(2.5, "axis", 0, 2, &i), "axis: 2.5 is not an integer");
    CHECK_FAILS_SAYING(imp_num_to_int(1.7, "axis", 0, 2, &i), "axis: 1.7 is not an integer");
    CHECK_FAILS_SAYING(imp_num_to_int(1e300, "axis", 0, 2, &i), "axis: 1e+300 is out of range [0, 2]");
    CHECK_FAILS_SAYING(imp_num_to_int(-2147483649.0, "axis", 0, 2, &i), "axis: -2147483649 is out of range");
    CHECK_FAILS_SAYING(imp_num_to_int(1e18, "hidden", 1, 4096, &i), "hidden: 1e+18 is out of range [1, 4096]");
    CHECK_FAILS_SAYING(imp_num_to_int(NAN, "depth", 1, 8, &i), "depth: nan is not a finite number");
    CHECK_FAILS_SAYING(imp_num_to_int(-INFINITY, "depth", 1, 8, &i), "-inf is not a finite number");
    CHECK(i == 2);
    /* the edges of int64: 2^63 is out, -2^63 in */
    CHECK_FAILS_SAYING(imp_num_to_int64(9223372036854775808.0, "x", INT64_MIN, INT64_MAX, &v), "out of range");
    CHECK_OK(imp_num_to_int64(-9223372036854775808.0, "x", INT64_MIN, INT64_MAX, &v));
    CHECK(v == INT64_MIN);
    CHECK_OK(imp_num_to_size(4096.0, "rows", 1, 1u << 20, &z));
    CHECK(z == 4096);
    CHECK_FAILS_SAYING(imp_num_to_size(-1.0, "rows", 0, SIZE_MAX, &z), "rows: -1 is out of range");
    CHECK_FAILS_SAYING(imp_num_to_size(0.0, "rows", 1, 10, &z), "rows: 0 is out of range [1, 10]");
    CHECK(z == 4096);
    CHECK_OK(imp_num_to_uint64(18446744073709549568.0, "seed", &u)); /* largest double below 2^64 */
    CHECK(u == UINT64_C(18446744073709549568));
    CHECK_FAILS_SAYING(imp_num_to_uint64(-5.0, "seed", &u), "seed: -5 is out of range");
    CHECK_FAILS_SAYING(imp_num_to_uint64(1e300, "seed", &u), "seed: 1e+300 is out of range");
    CHECK_FAILS_SAYING(imp_num_to_uint64(18446744073709551616.0, "seed", &u), "out of range");
    CHECK_FAILS_SAYING(imp_num_to_uint64(0.5, "seed", &u), "seed: 0.5 is not an integer");
}

static void test_format(void)
{
    char b[IMP_NUM_FMT_CAP];
    CHECK(strcmp(imp_num_format(0.1, b), "0.1") == 0);
    CHECK(strcmp(imp_num_format(1e300, b), "1e+300") == 0);
    CHECK(strcmp(imp_num_format(NAN, b), "nan") == 0);
    CHECK(strcmp(imp_num_format(-INFINITY, b), "-inf") == 0);
    double x = 0.1 + 0.2;
    CHECK(strtod(imp_num_format(x, b), NULL) == x);
}

int main(void)
{
    test_parse_double();
    test_parse_int();
    test_to_integer();
    test_format();
    TEST_MAIN_END();
}
