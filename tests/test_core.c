/* Core: RNG reproducibility and moments, error messages, finite checks. */
#include "impulse/core.h"
#include "test.h"

static void test_rng(void)
{
    imp_rng a, b;
    imp_rng_seed(&a, 42);
    imp_rng_seed(&b, 42);
    int same = 1;
    for (int i = 0; i < 1000; i++) same &= imp_rng_next(&a) == imp_rng_next(&b);
    CHECK(same);
    imp_rng_seed(&b, 43);
    CHECK(imp_rng_next(&a) != imp_rng_next(&b));

    /* moments of uniform and normal over 2e5 draws: 5-sigma bounds */
    const int n = 200000;
    double su = 0, sn = 0, sn2 = 0;
    imp_rng_seed(&a, 7);
    for (int i = 0; i < n; i++) {
        double u = imp_rng_uniform(&a);
        CHECK(u >= 0.0 && u < 1.0);
        su += u;
        double z = imp_rng_normal(&a);
        sn += z;
        sn2 += z * z;
    }
    CHECK_CLOSE(su / n, 0.5, 0, 5 * sqrt(1.0 / 12 / n));
    CHECK_CLOSE(sn / n, 0.0, 0, 5 * sqrt(1.0 / n));
    CHECK_CLOSE(sn2 / n, 1.0, 0, 5 * sqrt(2.0 / n));

    /* shuffle is a permutation */
    size_t idx[100];
    for (size_t i = 0; i < 100; i++) idx[i] = i;
    imp_rng_shuffle(&a, idx, 100);
    int seen[100] = {0}, moved = 0;
    for (size_t i = 0; i < 100; i++) {
        seen[idx[i]]++;
        moved += idx[i] != i;
    }
    int perm = 1;
    for (int i = 0; i < 100; i++) perm &= seen[i] == 1;
    CHECK(perm);
    CHECK(moved > 50);
}

static void test_errors(void)
{
    imp_clear_error();
    CHECK(imp_last_error()[0] == '\0');
    int st = imp_fail(IMP_ERR_SHAPE, "x: want %d columns, got %d", 3, 4);
    CHECK(st == IMP_ERR_SHAPE);
    CHECK(strcmp(imp_last_error(), "x: want 3 columns, got 4") == 0);
    imp_fail_context(st, "loading %s", "data.npz");
    CHECK(strcmp(imp_last_error(), "loading data.npz: x: want 3 columns, got 4") == 0);
    double v[3] = {1.0, NAN, 2.0};
    CHECK_FAILS(imp_check_finite(v, 3, "velocities"), IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "velocities") != NULL);
    CHECK_OK(imp_check_finite(v, 1, "velocities"));
    CHECK(strcmp(imp_status_string(IMP_ERR_FORMAT), "malformed file") == 0);
}

int main(void)
{
    test_rng();
    test_errors();
    TEST_MAIN_END();
}
