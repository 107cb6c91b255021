/* Small dense LU with partial pivoting (src/core/dense.h). */
#include "core/dense.h"

#include <math.h>

/* LU with partial pivoting; fails if a pivot is below rel_tol * max|A|. */
int imp_lu_factor(int n, double *A, int *piv, double rel_tol)
{
    double amax = 0;
    for (int i = 0; i < n * n; i++) amax = fmax(amax, fabs(A[i]));
    if (amax == 0.0) return n > 0 ? -1 : 0;
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
        if (!(fabs(A[p * n + k]) > rel_tol * amax)) return -1;
        piv[k] = p;
        if (p != k)
            for (int j = 0; j < n; j++) {
                double t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
        for (int i = k + 1; i < n; i++) {
            double f = (A[i * n + k] /= A[k * n + k]);
            for (int j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
        }
    }
    return 0;
}

void imp_lu_solve(int n, const double *A, const int *piv, double *b)
{
    for (int k = 0; k < n; k++)
        if (piv[k] != k) {
            double t = b[k];
            b[k] = b[piv[k]];
            b[piv[k]] = t;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) b[i] -= A[i * n + j] * b[j];
    for (int i = n - 1; i >= 0; i--) {
        for (int j = i + 1; j < n; j++) b[i] -= A[i * n + j] * b[j];
        b[i] /= A[i * n + i];
    }
}

void imp_lu_solve_transpose(int n, const double *A, const int *piv, double *b)
{
    /* A = P^T L U, so A^T x = b is U^T L^T P x = b */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++) b[i] -= A[j * n + i] * b[j];
        b[i] /= A[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--)
        for (int j = i + 1; j < n; j++) b[i] -= A[j * n + i] * b[j];
    for (int k = n - 1; k >= 0; k--)
        if (piv[k] != k) {
            double t = b[k];
            b[k] = b[piv[k]];
            b[piv[k]] = t;
        }
}
