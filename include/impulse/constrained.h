/* impulse constrained systems in Cartesian coordinates (Finzi, Wang & Wilson
 * 2020, [F]): bodies embedded as points, holonomic constraints between them,
 * a potential, and everything the constrained dynamics need, built
 * automatically from the body/constraint graph.
 *
 * Embedding ([F] section 6): a point mass is one point; an extended body in
 * d dimensions with k <= d principal axes is k + 1 points, its centre of
 * mass x_0 followed by x_i = x_0 + R e_i (unit points along the principal
 * axes). Its kinetic energy is 1/2 Tr(V^T M_b V) with the constant
 * (k+1) x (k+1) mass matrix of [F] eq 9, written with I_i = m lambda_i
 * (lambda_i = E[c_i^2], the second moment along axis i per unit mass):
 *     M_b = [[m + sum_i I_i, -I^T], [-I, diag(I)]]   (applied as M_b (x) I_d),
 *     M_b^{-1} = 11^T / m + diag(0, 1/I).
 * Rigidity is itself a set of constraints: |x_i - x_0| = 1, |x_i - x_j| = sqrt 2.
 *
 * Layout: a configuration x is n_points x d, row-major (point p, coordinate
 * k at x[p*d + k]); N = n_points * d. A state is (x, v) or (x, p = M v),
 * each of length N, stored one after the other (the reference's (2, n, d)).
 *
 * Constraints compile to scalar rows (C = n_rows in total), of two kinds:
 *   distance: Phi = |x_i - x_j|^2 - l^2 (x_j a fixed anchor when j < 0);
 *             links, tethers and rigid internal distances ([F] appendix D).
 *   linear:   Phi = sum_t w_t x[idx_t] - value; one row per coordinate of a
 *             ball joint X_A c~_A - X_B c~_B = 0 (c~ = (1 - sum c, c)).
 *   dot:      Phi = (X_A u~_A) . (X_B p~_k) with u~ = (-sum u, u): a hinge
 *             keeps body A's axis u_A parallel to body B's axis u_B with two
 *             rows, p_1, p_2 an orthonormal complement of u_B in B's frame.
 *             (Δ [F] appendix D writes the hinge as X_A u~_A - X_B u~_B = 0,
 *             3 rows of which only 2 are independent once the bodies are
 *             rigid, which makes DPhi rank deficient.)
 * The description (imp_csys) is an immutable value (fixed capacity, safe to
 * copy); run-time scratch lives in an imp_csys_work.
 */
#ifndef IMPULSE_CONSTRAINED_H
#define IMPULSE_CONSTRAINED_H

#include <stddef.h>
#include "impulse/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_CSYS_MAX_BODIES 32
#define IMP_CSYS_MAX_POINTS 64
#define IMP_CSYS_MAX_ROWS 96
#define IMP_CSYS_MAX_CONS 64
#define IMP_CSYS_MAX_POTS 16
#define IMP_CSYS_MAX_TERMS 8
#define IMP_CSYS_MAX_GEN 32
#define IMP_CSYS_NAME_LEN 64
/* Capacity of the system-file text a description keeps (imp_csys.source). */
#define IMP_CSYS_SOURCE_LEN 16384

typedef struct imp_cbody {
    char name[32];
    double mass;          /* m > 0 */
    int n_axes;           /* 0: point mass; 1..d: extended body */
    double inertia[3];    /* I_i = m lambda_i > 0 for i < n_axes ([F] eq 9) */
    int first_point;      /* its centre-of-mass point; axis points follow */
    double x0[3];         /* nominal initial centre of mass (system files), default 0 */
    double v0[3];         /* nominal initial velocity, default 0 */
} imp_cbody;

typedef enum imp_crow_kind {
    IMP_CROW_DISTANCE = 0,
    IMP_CROW_LINEAR = 1,
    IMP_CROW_DOT = 2
} imp_crow_kind;

typedef struct imp_crow {
    imp_crow_kind kind;
    /* distance */
    int i, j;                         /* point indices; j < 0: fixed anchor */
    double anchor[3];
    double length;
    /* linear */
    int n_terms;
    int idx[IMP_CSYS_MAX_TERMS];      /* flattened coordinate indices into x */
    double w[IMP_CSYS_MAX_TERMS];
    double value;
    /* dot: Phi = a . b with a = sum_t wa_t x_{pa_t}, b = sum_t wb_t x_{pb_t}
     * (body directions; used for hinges) */
    int n_a, n_b;
    int pa[4], pb[4];
    double wa[4], wb[4];
    int con;                          /* the imp_ccon it belongs to */
} imp_crow;

/* A user-level constraint (what an error message names). */
typedef struct imp_ccon {
    char label[80];       /* e.g. "link b1 b2", "rigid wheel" */
    int line;             /* line in the system file, 0 if built in C */
    int first_row, n_rows;
} imp_ccon;

typedef enum imp_cpot_kind {
    IMP_CPOT_GRAVITY = 0, /* V = g sum_b m_b x_b[axis] over centres of mass */
    IMP_CPOT_SPRING,      /* V = k/2 (|x_i - x_j| - rest)^2 (j < 0: anchor) */
    IMP_CPOT_MAGNET       /* dipole-dipole energy of the reference code, see below */
} imp_cpot_kind;

/* Magnet term (the reference MagnetPendulum code, Δ vs [F] eq 24-25):
 *   V = sum_i [-3 (m0 . r_i)(m_i . r_i) - |r_i|^2 (m0 . m_i)] / (4 pi |r_i|^5),
 *   r_i = R_i - x, m0 = q x / |x|^2, x the centre of mass of `body`. */
typedef struct imp_cpot {
    imp_cpot_kind kind;
    double g;             /* gravity */
    int axis;             /* gravity axis (default d - 1) */
    int i, j;             /* spring points; j < 0: anchor */
    double anchor[3];
    double k, rest;
    int body;             /* magnet: the body carrying the dipole */
    double q;
    int n_magnets;
    double magnet_pos[4][3];
    double magnet_moment[4][3];
} imp_cpot;

/* Which built-in benchmark a system is (selects the initial-state
 * distribution and the generalised coordinates). */
typedef enum imp_csys_kind {
    IMP_CSYS_CUSTOM = 0,      /* built in C or read from a system file */
    IMP_CSYS_PENDULUM_CHAIN,  /* [F] ChainPendulum(N) */
    IMP_CSYS_COUPLED,         /* CoupledPendulum(N) */
    IMP_CSYS_MAGNET,          /* MagnetPendulum */
    IMP_CSYS_GYROSCOPE,
    IMP_CSYS_ROTOR,
    IMP_CSYS_CHAIN_GROUND,    /* DiffCoSim's three-link chain above the ground (issue #25) */
    IMP_CSYS_GYRO_WALL,       /* DiffCoSim's gyroscope next to a wall */
    IMP_CSYS_COLLIDING_PENDULUMS /* a double pendulum and a pendulum whose bobs collide */
} imp_csys_kind;

/* Contacts (issue #25, docs/chnn-systems.md "Contacts"): fixed planes
 * n . x = offset (unit n towards the free side) and, per contact, a body's
 * sphere of radius r >= 0 about a body-fixed point (body-frame coordinates
 * along its axes, as a joint's `at`; the centre of mass by default) against
 * one plane, or against another body's sphere, with its restitution e in
 * [0, 1] and friction mu >= 0. Against a plane the gap is
 * phi(x) = n . (X c~) - offset - r, linear in x; between two bodies'
 * spheres phi(x) = |X_A c~_A - X_B c~_B| - r_A - r_B. */
#define IMP_CSYS_MAX_PLANES 8
#define IMP_CSYS_MAX_CONTACTS 16
typedef struct imp_cplane {
    char name[32];
    double normal[3]; /* unit */
    double offset;
} imp_cplane;
enum { IMP_CSHAPE_SPHERE = 0, IMP_CSHAPE_DISK = 1 };
typedef struct imp_ccontact {
    int body, plane;
    int shape;        /* IMP_CSHAPE_SPHERE, or IMP_CSHAPE_DISK: the rim of a disk
                         (a cone's base) of `radius` about `at`, normal to the
                         body-frame `axis` (extended 3-D bodies only) */
    double at[3];     /* body-frame coordinates of the sphere's (disk's) centre */
    double axis[3];   /* DISK: unit body-frame axis */
    double w[4];      /* the centre's weights over the body's points (c~ = (1 - sum c, c)) */
    double radius, e, mu;
    int line;         /* in the system file, 0 if built in C */
    /* Body-body contacts (plane = -1): `body`'s sphere (radius, at) against
     * the sphere of radius `radius2` > 0 about body-frame `at2` of body
     * `other`; gap |C_A - C_B| - radius - radius2, normal from B's centre to
     * A's. For a plane contact other = -1. */
    int other;
    double at2[3], w2[4], radius2;
} imp_ccontact;

/* The largest `steps` a system file may ask for (a reference horizon). */
#define IMP_CSYS_MAX_STEPS 10000000

typedef struct imp_csys {
    char name[IMP_CSYS_NAME_LEN];
    imp_csys_kind kind;
    int d;                            /* 2 or 3 */
    int n_bodies, n_points, n_rows, n_cons, n_pots;
    imp_cbody bodies[IMP_CSYS_MAX_BODIES];
    int point_body[IMP_CSYS_MAX_POINTS];
    imp_crow rows[IMP_CSYS_MAX_ROWS];
    imp_ccon cons[IMP_CSYS_MAX_CONS];
    imp_cpot pots[IMP_CSYS_MAX_POTS];
    /* reference settings: time step and horizon (T = n_steps * dt) */
    double dt;
    int n_steps;        /* 1..IMP_CSYS_MAX_STEPS */
    /* generalised coordinates for the baselines (0 if none) */
    int n_gen;
    int gen_is_angle[IMP_CSYS_MAX_GEN];
    /* contacts (none in the systems of [F]) */
    int n_planes, n_contacts;
    imp_cplane planes[IMP_CSYS_MAX_PLANES];
    imp_ccontact contacts[IMP_CSYS_MAX_CONTACTS];
    /* The text of the system file it was read from ("" for systems built
     * in C): datasets and checkpoints store it (meta "system_text") so that
     * they can be used without the file. */
    char source[IMP_CSYS_SOURCE_LEN];
} imp_csys;

/* ---- building a system ---- */
int imp_csys_init(imp_csys *s, const char *name, int d);
/* Add a body; an extended body (n_axes > 0, inertia[0..n_axes-1] > 0) also
 * gets its rigid internal distances. *index (may be NULL) receives its index. */
int imp_csys_add_body(imp_csys *s, const char *name, double mass, int n_axes,
                      const double *inertia, int *index);
/* Body index by name, or -1. */
int imp_csys_body_index(const imp_csys *s, const char *name);
/* |x_a - x_b| = length between centres of mass. */
int imp_csys_add_link(imp_csys *s, int body_a, int body_b, double length, int line);
/* |x_a - anchor| = length (anchor NULL: the origin). */
int imp_csys_add_tether(imp_csys *s, int body, const double *anchor, double length, int line);
/* Ball joint: body point at_a (body-frame coordinates along its axes, NULL =
 * centre of mass) coincides with body_b's point at_b, or with the fixed
 * point `anchor` (NULL: origin) when body_b < 0. */
int imp_csys_add_joint(imp_csys *s, int body_a, const double *at_a, int body_b,
                       const double *at_b, const double *anchor, int line);
/* Hinge: body-frame direction axis_a of body_a stays parallel to axis_b of
 * body_b (both bodies extended with d = 3 axes; two dot rows). */
int imp_csys_add_hinge(imp_csys *s, int body_a, const double *axis_a, int body_b,
                       const double *axis_b, int line);
/* A fixed plane normal . x = offset (normal made unit; zero fails). */
int imp_csys_add_plane(imp_csys *s, const char *name, const double *normal, double offset, int *index);
/* Plane index by name, or -1. */
int imp_csys_plane_index(const imp_csys *s, const char *name);
/* A contact of body's sphere (centre at body-frame `at`, NULL: centre of
 * mass; radius >= 0) against plane, with e in [0, 1] and mu >= 0. */
int imp_csys_add_contact(imp_csys *s, int body, const double *at, double radius, int plane, double e,
                         double mu, int line);
/* A contact between two bodies' spheres (issue #25): body's sphere of
 * `radius` > 0 about `at` (NULL: centre of mass) against the sphere of
 * `radius_other` > 0 about `at_other` of body `other` (other != body), with
 * e in [0, 1] and mu >= 0. */
int imp_csys_add_body_contact(imp_csys *s, int body, const double *at, double radius, int other,
                              const double *at_other, double radius_other, double e, double mu, int line);
/* The same for the rim of a disk of `radius` about `at` normal to the
 * body-frame `axis` (a 3-D body with 3 axes). */
int imp_csys_add_disk_contact(imp_csys *s, int body, const double *at, const double *axis, double radius,
                              int plane, double e, double mu, int line);
int imp_csys_add_gravity(imp_csys *s, double g, int axis);
/* Spring between centres of mass (body_b < 0: to anchor). */
int imp_csys_add_spring(imp_csys *s, int body_a, int body_b, const double *anchor, double k,
                        double rest);
/* Add a fixed magnet (position, moment) acting on the dipole q x/|x|^2 of `body`;
 * consecutive calls for the same body and q share one term (at most 4 magnets). */
int imp_csys_add_magnet(imp_csys *s, int body, double q, const double *pos,
                        const double *moment);
/* Final consistency checks: at least one body, no more constraint rows than
 * coordinates, finite parameters. */
int imp_csys_validate(const imp_csys *s);

/* ---- system files (format in docs/chnn-systems.md) ----
 * Errors name the file and line, e.g. "pend.txt:7: link: unknown body 'b3'".
 * The text is kept in s->source (at most IMP_CSYS_SOURCE_LEN - 1
 * characters, longer files fail), and the constraint set is checked
 * (imp_csys_check_constraints). */
int imp_csys_parse(imp_csys *s, const char *text, const char *filename);
int imp_csys_load(imp_csys *s, const char *path);

static inline int imp_csys_ndof(const imp_csys *s) { return s->n_points * s->d; }

/* ---- kinematics (one state; no allocation; outputs overwritten) ---- */
void imp_csys_phi(const imp_csys *s, const double *x, double *phi);                /* [C] */
void imp_csys_phidot(const imp_csys *s, const double *x, const double *v, double *phidot);
/* DPhi(x) = dPhi/dx = dPhidot/dv, C x N row-major. */
void imp_csys_jacobian(const imp_csys *s, const double *x, double *J);
/* dPhidot/dx, C x N; depends only on v (it equals d/dt DPhi). */
void imp_csys_jacobian_dot(const imp_csys *s, const double *v, double *Jdot);
/* Reverse mode of the two Jacobians (both are affine in their argument with
 * the same structure): xbar += d<Jbar, DPhi(x)>/dx; the same call with Jdotbar
 * gives vbar += d<Jdotbar, dPhidot/dx (v)>/dv. */
void imp_csys_jacobian_vjp(const imp_csys *s, const double *Jbar, double *xbar);
/* Constraint violation ||(Phi, Phidot)||_2. */
double imp_csys_violation(const imp_csys *s, const double *x, const double *v);

/* ---- masses and energy ---- */
void imp_csys_mass_mul(const imp_csys *s, const double *v, double *p);      /* p = M v */
void imp_csys_mass_inv_mul(const imp_csys *s, const double *p, double *v);  /* v = M^-1 p */
void imp_csys_mass_matrix(const imp_csys *s, double *M);                     /* N x N */
double imp_csys_potential(const imp_csys *s, const double *x);
void imp_csys_potential_grad(const imp_csys *s, const double *x, double *grad); /* [N] */
/* H = 1/2 v^T M v + V(x). */
double imp_csys_energy(const imp_csys *s, const double *x, const double *v);

/* ---- dynamics ---- */
typedef struct imp_csys_work imp_csys_work;
imp_csys_work *imp_csys_work_new(const imp_csys *s);
void imp_csys_work_free(imp_csys_work *w);

/* Constrained Hamiltonian flow ([F] eq 6) on z = (x, p): zdot = P(z) J grad H,
 * P = I - J G (G^T J G)^-1 G^T, G = grad_z (Phi, Phidot). Fails with
 * IMP_ERR_NUMERIC if G^T J G is singular (redundant constraints). */
int imp_csys_hamilton_rhs(const imp_csys *s, const double *z, double *zdot, imp_csys_work *w);
/* Same dynamics in Lagrange-multiplier form on (x, v):
 * M a = -grad V - DPhi^T lambda, with DPhi a + (dPhidot/dx) v = 0 ([F] eq 7).
 * lambda (C, may be NULL) receives the multipliers. */
int imp_csys_lagrange_accel(const imp_csys *s, const double *x, const double *v, double *a,
                            double *lambda, imp_csys_work *w);

/* ---- projection onto the constraint manifold ----
 * Positions: Gauss-Newton steps dx = -M^-1 DPhi^T (DPhi M^-1 DPhi^T)^-1 Phi
 * (the smallest correction in the mass metric) until max|Phi| <= tol; then
 * velocities: v -= M^-1 DPhi^T (DPhi M^-1 DPhi^T)^-1 DPhi v (exact).
 * Fails with IMP_ERR_NUMERIC naming the constraint if DPhi is rank deficient
 * (redundant or contradictory constraints) or if Newton does not converge
 * (the constraints cannot be met). v may be NULL. */
typedef struct imp_csys_project_opts {
    double tol;       /* 0: 1e-12 */
    int max_iter;     /* 0: 100 */
} imp_csys_project_opts;
int imp_csys_project(const imp_csys *s, double *x, double *v, const imp_csys_project_opts *o,
                     imp_csys_work *w);
/* The reference's projection of a whole state ([chnn] section 1,
 * biases/systems/rigid_body.py project_onto_constraints): Newton steps
 * dz = -J^T (J J^T)^-1 Psi on z = (x, v), Psi = (Phi, Phidot),
 * J = dPsi/dz = [[DPhi, 0], [dPhidot/dx, DPhi]]: the smallest correction in
 * the Euclidean metric of (x, v), positions and velocities together (the
 * velocity rows move x as well). Each component of a step is clamped to
 * +-RMS(z)/2 (RMS over this state's 2N components; the reference takes it
 * over its whole batch). Iterates until RMS(Psi) <= tol (0: 1e-12) and at
 * most max_iter steps (0: 500, the reference's limit); fails with
 * IMP_ERR_NUMERIC if J J^T is singular or the iteration does not converge.
 * Unlike imp_csys_project (mass metric, positions first), this is what the
 * reference applies to its perturbed test starts and to the raw
 * pendulum-chain draws; the two differ to first order in the correction,
 * e.g. by 4x in the perturbed-start error on the gyroscope. */
int imp_csys_project_state(const imp_csys *s, double *x, double *v, const imp_csys_project_opts *o,
                           imp_csys_work *w);
/* The constrained inverse mass at x applied to ncol vectors of length N
 * stored one after another: out_k = P in_k with
 *   P = M^-1 - M^-1 DPhi^T (DPhi M^-1 DPhi^T)^-1 DPhi M^-1
 * (docs/derivations/contact.md eq 17): the velocity change of an impulse
 * that keeps DPhi v = 0. Symmetric; DPhi P = 0. out must not alias in. */
int imp_csys_constrained_minv(const imp_csys *s, const double *x, const double *in, int ncol, double *out,
                              imp_csys_work *w);
/* Check that DPhi(x) has full row rank; on failure names the first
 * constraint whose rows depend on the earlier ones. */
int imp_csys_check_rank(const imp_csys *s, const double *x, imp_csys_work *w);

/* The nominal state of a description: body centres at their `position`,
 * velocities `velocity`, extended bodies' axis points at centre + unit
 * coordinate axes (frames aligned with the coordinate axes). xv: 2N. */
void imp_csys_nominal_state(const imp_csys *s, double *xv);
/* Check the constraint set as a whole, one constraint at a time in the
 * order given: starting near the nominal state, the first k constraints
 * must be satisfiable together and their rows independent at a generic
 * point of their manifold. Fails (IMP_ERR_INVALID) naming the first
 * constraint and its line that is
 *   - redundant: its rows depend on the earlier ones wherever they hold
 *     (e.g. the same link twice, a tether implied by others);
 *   - degenerate: its gradient vanishes (e.g. a tether to the point where
 *     the body is anchored by a joint);
 *   - unsatisfiable: no configuration meets it together with the earlier
 *     ones (e.g. two tethers 1 apart and a link of length 3).
 * imp_csys_parse runs it on every system file. */
int imp_csys_check_constraints(const imp_csys *s);

#ifdef __cplusplus
}
#endif
#endif
