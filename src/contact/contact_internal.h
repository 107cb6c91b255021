/* Internal helpers of the contact module (src/contact/). */
#ifndef IMPULSE_CONTACT_INTERNAL_H
#define IMPULSE_CONTACT_INTERNAL_H

#include "impulse/contact.h"

/* Rotation body -> world of body k at q as a 3 x 3 row-major matrix
 * (identity for a point mass; the planar rotation in the x-y block). */
void imp_contact_rotation(const imp_contact_model *m, const double *q, int k, double R[9]);
/* Quaternion (w x y z) -> rotation, by the formula as written (also for a
 * non-unit q), and the reverse of it: q_bar += dR/dq : R_bar. */
void imp_quat_to_rot(const double *qq, double R[9]);
/* Hamilton product out = a (x) b (w x y z; out may alias a or b). */
void imp_quat_mul(const double a[4], const double b[4], double out[4]);
void imp_quat_to_rot_backward(double *qq_bar, const double R_bar[9], const double *qq);

/* Detection's two gap functions (collision.c), shared with the constrained
 * systems' contacts (src/systems/constraints_contact.c):
 * a plane's gap n . p - offset at the point p (dim numbers), summed as
 * -offset + n_0 p_0 + n_1 p_1 + ...; */
double imp_contact_plane_gap(const double *n, const double *p, int dim, double offset);
/* two spheres' centres sa, sb (3-vectors, z = 0 in 2-D): returns their
 * distance L = |sb - sa| and sets n = (sb - sa) / L, the normal from a to
 * b (n = sb - sa when L is 0: the caller refuses it). */
double imp_contact_sphere_normal(const double sa[3], const double sb[3], double n[3]);

static inline double imp_dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline void imp_cross3(const double *a, const double *b, double *out)
{
    double c0 = a[1] * b[2] - a[2] * b[1], c1 = a[2] * b[0] - a[0] * b[2], c2 = a[0] * b[1] - a[1] * b[0];
    out[0] = c0, out[1] = c1, out[2] = c2;
}

#endif
