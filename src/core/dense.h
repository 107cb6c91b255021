/* Small dense LU with partial pivoting, shared by the constrained dynamics
 * and the contact solver (internal; not installed). Row-major n x n. */
#ifndef IMPULSE_CORE_DENSE_H
#define IMPULSE_CORE_DENSE_H

/* Factor A in place (L unit lower, U upper, row swaps in piv); returns 0,
 * or -1 if a pivot is below rel_tol * max|A| (singular to that tolerance). */
int imp_lu_factor(int n, double *A, int *piv, double rel_tol);
/* Solve A x = b in place with the factors of imp_lu_factor. */
void imp_lu_solve(int n, const double *A, const int *piv, double *b);
/* Solve A^T x = b in place with the same factors. */
void imp_lu_solve_transpose(int n, const double *A, const int *piv, double *b);

#endif
