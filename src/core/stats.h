/* Small order statistics shared inside the library (not installed). */
#ifndef IMPULSE_CORE_STATS_H
#define IMPULSE_CORE_STATS_H

#include <stddef.h>

/* The median of x[0..n-1] (n >= 1; the mean of the two middle values for
 * even n). Sorts x in place. */
double imp_median_sort(double *x, size_t n);

#endif
