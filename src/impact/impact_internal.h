/* Internal helpers shared by the impact-law files (not installed). */
#ifndef IMPULSE_IMPACT_INTERNAL_H
#define IMPULSE_IMPACT_INTERNAL_H

#include "impulse/impact_analysis.h"

/* Restitution criterion that ends a Routh integration. */
typedef enum routh_stop {
    ROUTH_POISSON = 0,   /* Pn_final = (1 + eps) Pn at maximum compression */
    ROUTH_ENERGETIC = 1  /* restitution work = -eps^2 compression work (Stronge) */
} routh_stop;

/* Exact piecewise-linear integration of u(p) = u0 + W P(p) in the normal
 * impulse p with Coulomb friction (slide, stick, reversal), reference 2.5.
 * Returns IMP_OK or IMP_ERR_NUMERIC (no finite end). */
int impact_routh(const double W[4], const double u0[2], double mu, double eps, routh_stop stop,
                 double P[2], double u_end[2]);

/* Authors' Mirtich: dPt = -mu ut dPn with the energetic stop, solved from
 * the exact exponential solution of the linear ODE. */
int impact_mirtich_proportional(const double W[4], const double u0[2], double mu, double eps,
                                double P[2]);

/* The contact checks of imp_impact_predict: W finite, symmetric positive
 * definite (IMP_ERR_NUMERIC), u finite (IMP_ERR_NUMERIC), un < 0
 * (IMP_ERR_INVALID). */
int impact_check_contact(const double W[4], const double u[2]);

/* The checks of imp_ident_options (mu_cap, grid, tol): IMP_ERR_INVALID
 * naming the field. */
int impact_ident_check_options(const imp_ident_options *o);

#endif
