/* xoshiro256** (Blackman & Vigna 2018), seeded by splitmix64: fast,
 * statistically solid and bit-reproducible everywhere. */
#include "impulse/core.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void imp_rng_seed(imp_rng *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&x);
    rng->has_spare = 0;
    rng->spare = 0.0;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t imp_rng_next(imp_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double imp_rng_uniform(imp_rng *rng)
{
    return (double)(imp_rng_next(rng) >> 11) * 0x1.0p-53;
}

double imp_rng_uniform_range(imp_rng *rng, double lo, double hi)
{
    return lo + (hi - lo) * imp_rng_uniform(rng);
}

double imp_rng_normal(imp_rng *rng)
{
    if (rng->has_spare) {
        rng->has_spare = 0;
        return rng->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * imp_rng_uniform(rng) - 1.0;
        v = 2.0 * imp_rng_uniform(rng) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    rng->spare = v * f;
    rng->has_spare = 1;
    return u * f;
}

size_t imp_rng_below(imp_rng *rng, size_t n)
{
    if (n <= 1) return 0;
    /* Lemire's nearly-divisionless method would be faster; rejection keeps it exact. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
    uint64_t r;
    do r = imp_rng_next(rng);
    while (r >= limit);
    return (size_t)(r % n);
}

void imp_rng_shuffle(imp_rng *rng, size_t *idx, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = imp_rng_below(rng, i);
        size_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}
