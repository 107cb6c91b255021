/* Contacts of constrained systems in Cartesian coordinates (issue #25): the
 * gap and Jacobian rows of a system's declared contacts (imp_csys.contacts),
 * the constrained inverse mass as the contact module's M^-1 callback, so
 * that contact impulses keep the joints (DPhi v+ = 0), and the
 * event-accurate ground truth (docs/derivations/contact.md section
 * "Contacts with joint constraints", eqs 16-19). */
#ifndef IMPULSE_CONSTRAINED_CONTACT_H
#define IMPULSE_CONSTRAINED_CONTACT_H

#include "impulse/constrained.h"
#include "impulse/contact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frame of contact c at x: gap phi (> 0 apart), world contact point pc
 * (the material point of the body that touches the plane), normal first
 * then tangents (2-D t = (n_y, -n_x); 3-D (t1, t2, n) right-handed), and
 * the Jacobian rows J (d x N, overwritten): row k maps v to the velocity of
 * the material point at pc along direction k (eq 16). J may be NULL. */
double imp_csys_contact_frame(const imp_csys *s, const double *x, int c, double *pc, double dirs[3][3],
                              double *J);

/* M^-1 callback of the contact module (imp_contact_minv_fn) applying the
 * constrained inverse mass P(x) of imp_csys_constrained_minv (eq 17). */
typedef struct imp_csys_minv_ctx {
    const imp_csys *s;
    const double *x;  /* the configuration (N) */
    imp_csys_work *w; /* made for s */
} imp_csys_minv_ctx;
int imp_csys_contact_minv(double *out, const double *in, int nv, int ncol, void *user_data);

/* The impulse at x on velocity v (N, in place) of the contacts in active
 * (n of them): rows J (n d x N), u- = J v, lambda from the contact solve
 * with A = J P J^T, v+ = v + P J^T lambda (eqs 5, 6, 11, 17); sol (may be
 * NULL) receives the solution. */
int imp_csys_contact_impulse(const imp_csys *s, const double *x, double *v, const int *active, int n,
                             imp_contact_solution *sol, imp_csys_work *w);

/* Contacts to act on at (x, v): gap <= tol and closing (J_n v < -vtol);
 * writes their ids to active and returns their number. */
int imp_csys_contact_active(const imp_csys *s, const double *x, const double *v, double tol, double vtol,
                            int *active);

#ifdef __cplusplus
}
#endif
#endif
