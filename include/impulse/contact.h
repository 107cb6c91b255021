/* impulse contact module: bodies with shape, contacts with geometry,
 * several contacts at once (issue #24). One path for the simulators, the
 * CD-Lagrange step, the constrained networks and the impact strand.
 *
 * Three stages, split as MuJoCo's engine splits collision, constraint
 * assembly and solver, each usable and testable alone:
 *   1. detection (src/contact/collision.c): for each contact candidate at a
 *      state q its gap phi(q), contact frame (n, t) or (n, t1, t2), world
 *      contact points and the Jacobian rows J (generalized velocity ->
 *      contact-frame relative velocity), and the reverse pass of all that to
 *      q and the learned geometry (body-fixed points, radii, plane offsets);
 *   2. assembly (src/contact/assembly.c): the active set per contact (never
 *      per body), per-body touch labels attributed to contacts by geometry,
 *      the contact-space compliance A = J M^-1 J^T with M^-1 taken through a
 *      callback (a constrained mass matrix plugs in there);
 *   3. solver (src/contact/solve.c): the active contacts' impulses solved
 *      together, Newton restitution and Coulomb friction per contact, and the
 *      reverse pass by implicit differentiation on the identified branches.
 * The formulation, with the equation numbers the code cites, is in
 * docs/derivations/contact.md.
 *
 * The model (imp_contact_model) is plain, immutable data built once;
 * everything that changes with the state is passed in and out through
 * caller-provided arrays and work buffers: nothing here allocates and
 * nothing keeps state, so a batch runs as one call per sample (in parallel
 * with one work buffer per thread) in a training loop.
 *
 * Bodies and their coordinates (q: positions, v: generalized velocity):
 *   IMP_BODY_POINT    point mass, q = v = x (dim numbers);
 *   IMP_BODY_PLANAR   planar rigid body (dim 2), q = (x, y, theta),
 *                     v = (vx, vy, omega);
 *   IMP_BODY_SPATIAL  spatial rigid body (dim 3), q = (x, y, z, qw, qx, qy, qz)
 *                     with a unit quaternion (w x y z) rotating body to world,
 *                     v = (world linear velocity, body-frame angular velocity)
 *                     (the layout of the ContactNets cube data).
 * Why quaternions rather than CHNN's Cartesian frame points: a contact body
 * needs exactly its 6 degrees of freedom for the impulse solve (A = J M^-1 J^T
 * must be the compliance of the free body, so M is the 6 x 6 rigid-body mass
 * matrix, constant in body-frame angular velocity), the measured data come
 * as quaternions, and a quaternion has one constraint (|q| = 1, renormalised
 * after a step) against the frame points' six. CHNN's frame points stay the
 * representation of the constrained strand; a system with joints reaches this
 * module through its own J and constrained M^-1 (imp_contact_minv_fn). */
#ifndef IMPULSE_CONTACT_H
#define IMPULSE_CONTACT_H

#include "impulse/core.h"
#include "impulse/contact_systems.h" /* IMP_MAX_BODIES, IMP_MAX_CONTACTS, IMP_WALL */

#ifdef __cplusplus
extern "C" {
#endif

enum { IMP_BODY_POINT = 0, IMP_BODY_PLANAR = 1, IMP_BODY_SPATIAL = 2 };
/* Contact candidates: a body's sphere (radius >= 0 about a body-fixed point:
 * a point mass, a disk or ball, a box's corner with radius 0) against a fixed
 * plane, or two bodies' spheres against each other. */
enum { IMP_CONTACT_PLANE = 0, IMP_CONTACT_SPHERES = 1 };

#define IMP_CONTACT_MAX_NQ (7 * IMP_MAX_BODIES)
#define IMP_CONTACT_MAX_NV (6 * IMP_MAX_BODIES)
#define IMP_CONTACT_MAX_ROWS (3 * IMP_MAX_CONTACTS)
/* |q|^2 of a spatial body's quaternion must be within this of 1. */
#define IMP_CONTACT_QUAT_TOL 1e-6

typedef struct imp_contact_body {
    int kind;          /* IMP_BODY_* */
    double mass;       /* > 0 */
    double inertia[9]; /* PLANAR: inertia[0], the moment about the centre of mass (> 0);
                          SPATIAL: body-frame inertia tensor, row-major, symmetric positive
                          definite; POINT: unused */
} imp_contact_body;

typedef struct imp_contact_candidate {
    int kind;             /* IMP_CONTACT_PLANE or IMP_CONTACT_SPHERES */
    int body_a, body_b;   /* PLANE: body_a = IMP_WALL (the plane), body_b the body */
    double point_a[3];    /* SPHERES: centre of a's sphere in a's body frame */
    double point_b[3];    /* centre of b's sphere (or the corner) in b's body frame; for a
                             point mass an offset from its position (normally 0) */
    double radius_a, radius_b; /* >= 0 (radius_a only for SPHERES) */
    double normal[3];     /* PLANE: unit normal (world) towards the free side */
    double offset;        /* PLANE: the plane is n . x = offset */
    double e, mu;         /* restitution in [0, 1] and friction >= 0 of this contact */
} imp_contact_candidate;

typedef struct imp_contact_model {
    int dim; /* 2 or 3 */
    int n_bodies;
    imp_contact_body bodies[IMP_MAX_BODIES];
    int n_candidates;
    imp_contact_candidate cand[IMP_MAX_CONTACTS];
    double gap_tol; /* a contact is active when phi <= gap_tol (and closing) */
    /* set by imp_contact_model_init: sizes and each body's first coordinate */
    int nq, nv;
    int q_offset[IMP_MAX_BODIES], v_offset[IMP_MAX_BODIES];
} imp_contact_model;

/* Check the model (counts, kinds against dim, masses and inertias, body ids,
 * unit plane normals, radii, e in [0, 1], mu >= 0) and set nq, nv and the
 * offsets. Every failure names the field ("cand[3].body_b: 7 is not a body
 * (model has 2)"). */
int imp_contact_model_init(imp_contact_model *m);
/* Check a state: finite, unit quaternions (IMP_CONTACT_QUAT_TOL), naming
 * "q[body 2]: quaternion norm^2 1.2 is not 1". */
int imp_contact_state_check(const imp_contact_model *m, const double *q);
/* q(h) from q moving with constant generalized velocity v for a time h
 * (x += h v; theta += h omega; quaternion q <- q (x) exp(h omega / 2)). */
void imp_contact_advance(const imp_contact_model *m, const double *q, const double *v, double h, double *q_out);
/* Kinetic energy 1/2 v^T M v. */
double imp_contact_kinetic_energy(const imp_contact_model *m, const double *v);

/* ---- 1. Detection (src/contact/collision.c) ----
 * Two views of the same stage: bodies with shape (imp_contact_model, below)
 * and the trajectory geometry of single-node bodies (imp_contact_geometry:
 * imp_contact_gap, imp_contact_gap_backward, imp_contact_geometry_at,
 * imp_contact_geometry_swept and the velocities along a pair's normal and
 * tangent, declared in impulse/contact_systems.h), which the point
 * simulators and the CD-Lagrange step use. A plane's gap is one expression
 * in both. */
typedef struct imp_contact_frame {
    double phi;        /* gap, > 0 apart, < 0 penetrating */
    double n[3];       /* unit normal from a (or the plane) towards b */
    double t[2][3];    /* tangents: t[0] = (n_y, -n_x) in 2-D; t[0], t[1] with (t1, t2, n)
                          right-handed in 3-D */
    double pa[3], pb[3]; /* world contact points on a (the plane: pb projected) and on b */
} imp_contact_frame;

/* Frames of every candidate at q (frames: n_candidates). Fails on a bad
 * state or a degenerate normal (coincident sphere centres), naming the
 * candidate. */
int imp_contact_detect(const imp_contact_model *m, const double *q, imp_contact_frame *frames);
/* Jacobian rows of candidate c at q: rows = dim (normal first, then the
 * tangents), each nv long (J: dim x nv, row-major, overwritten): row k maps
 * v to the k-th frame component of the relative velocity of the material
 * points at the contact points (b's minus a's). */
void imp_contact_jacobian(const imp_contact_model *m, const double *q, const imp_contact_frame *f, int c,
                          double *J);
/* Gradients of learned geometry (accumulated with +=). */
typedef struct imp_contact_geom_grad {
    double point_a[3], point_b[3];
    double radius_a, radius_b;
    double offset; /* the plane's */
} imp_contact_geom_grad;
/* Reverse of detect + jacobian for candidate c: given phi_bar and J_bar
 * (dim x nv, may be NULL), adds to q_bar (nq; for a quaternion the gradient
 * of the formula R(q) as written, not projected on |q| = 1) and to
 * g (may be NULL). The plane normals are fixed (no gradient). */
void imp_contact_jacobian_backward(double *q_bar, imp_contact_geom_grad *g, double phi_bar, const double *J_bar,
                                   const imp_contact_model *m, const double *q, const imp_contact_frame *f, int c);

/* ---- 2. Assembly (src/contact/assembly.c) ---- */
/* Apply M^-1 to ncol vectors of length nv stored one after another
 * (out[k nv + i] = sum_j Minv_ij in[k nv + j]); returns IMP_OK or a status.
 * M^-1 must be symmetric. */
typedef int (*imp_contact_minv_fn)(double *out, const double *in, int nv, int ncol, void *user_data);
/* The model's free bodies (user_data: the const imp_contact_model *). */
int imp_contact_minv_bodies(double *out, const double *in, int nv, int ncol, void *user_data);
/* A dense symmetric nv x nv table (user_data: const double *, row-major). */
int imp_contact_minv_dense(double *out, const double *in, int nv, int ncol, void *user_data);
/* Gradients of the body masses and inertias from a dense M^-1 gradient
 * (nv x nv, as imp_contact_impulse_backward gives it), accumulated. */
void imp_contact_minv_bodies_backward(double *mass_bar, double *inertia_bar /* n_bodies x 9 */,
                                      const double *Minv_bar, const imp_contact_model *m);

/* Rate of the gap d phi/dt = J_n v of candidate c at q with velocity v (< 0: closing). */
double imp_contact_gap_rate(const imp_contact_model *m, const double *q, const imp_contact_frame *f,
                                   int c, const double *v);
/* Label of a contact: IMP_CONTACT_LABEL_NONE (decide by geometry),
 * 0 (the data say no contact), 1 (the data say contact). */
#define IMP_CONTACT_LABEL_NONE (-1)
/* The active set, per contact: c is active when labels[c] == 1, or, where
 * labels is NULL or labels[c] is NONE, when phi <= gap_tol and it closes
 * (J_n v < 0). Writes the active candidates' ids in increasing order to
 * active (n_candidates) and returns their number. */
int imp_contact_active_set(const imp_contact_model *m, const double *q, const imp_contact_frame *frames,
                           const double *v, const signed char *labels, int *active);
/* The per-body choice of contacts, shared by imp_contact_attribute_labels
 * and the CD-Lagrange step's pair activity: n candidates between bodies
 * body_a[c] and body_b[c] (IMP_WALL: none), each with a level (0: out of
 * reach; higher: more certainly hit) and a gap phi. For each body k
 * (bodies[k] != 0, or every body with bodies NULL) with candidates:
 *   IMP_CONTACT_CHOOSE_ONLY and k has one candidate: that one;
 *   else its candidates at the highest level, if that is above 0;
 *   else, with IMP_CONTACT_CHOOSE_NEAREST, its nearest (smallest phi).
 * chosen[c] = 1 where either body chose c, 0 elsewhere; nearest (n_bodies,
 * may be NULL) gets each body's nearest candidate (-1: none). Returns how
 * many are chosen. */
enum { IMP_CONTACT_CHOOSE_NEAREST = 1, IMP_CONTACT_CHOOSE_ONLY = 2 };
int imp_contact_choose(int n_bodies, int n, const int *body_a, const int *body_b, const unsigned char *level,
                       const double *phi, const unsigned char *bodies, int flags, unsigned char *chosen, int *nearest);
/* Per-body touch labels (touch[k] != 0: body k touches something) to
 * per-contact labels: each touching body's penetrating candidates
 * (phi <= gap_tol), or, when it has none, its nearest one (smallest phi);
 * a candidate of two bodies is labelled 1 when chosen by either; every other
 * candidate 0. Fails naming the body when a touching body has no candidate,
 * or when its nearest candidate is farther than max_gap (labels
 * inconsistent with the geometry; INFINITY: no such check). */
int imp_contact_attribute_labels(const imp_contact_model *m, const imp_contact_frame *frames,
                                 const unsigned char *touch, double max_gap, signed char *labels);
/* Stack the active contacts' Jacobian rows: J (n_active dim x nv). */
void imp_contact_assemble_jacobian(const imp_contact_model *m, const double *q, const imp_contact_frame *frames,
                                   const int *active, int n_active, double *J);
/* Contact-space compliance A = J M^-1 J^T (rows x rows) of the stacked rows
 * J (rows x nv), and BT = J M^-1 (rows x nv: row k is M^-1 J_k^T), eq 6. */
int imp_contact_compliance(double *A, double *BT, const double *J, int rows, int nv, imp_contact_minv_fn minv,
                           void *minv_data);
/* Reverse of imp_contact_compliance: from A_bar and BT_bar (may be NULL)
 * adds to J_bar (rows x nv) and Minv_bar (nv x nv, may be NULL); tmp:
 * 2 rows nv doubles. */
int imp_contact_compliance_backward(double *J_bar, double *Minv_bar, const double *A_bar, const double *BT_bar,
                                    const double *J, const double *BT, int rows, int nv, imp_contact_minv_fn minv,
                                    void *minv_data, double *tmp);

/* ---- 3. Solver (src/contact/solve.c) ---- */
enum { IMP_CONTACT_SEPARATE = 0, IMP_CONTACT_STICK = 1, IMP_CONTACT_SLIDE = 2 };

typedef struct imp_contact_solve_opts {
    double tol;            /* relative tolerance of the verified solution (default 1e-10) */
    int max_sweeps;        /* projected Gauss-Seidel sweeps of the warm start (default 200) */
    int max_pivots;        /* branch-set corrections (default 4 n + 10) */
    double regularization; /* eps = regularization tr(A) / rows is added to A's diagonal,
                              which makes the impulses unique where contacts are redundant
                              (a box flat on four corners, a ball in a corner) and leaves
                              the contact law off by eps lambda (relative ~1e-9 of the
                              velocities; default 1e-9). 0: the law exactly, for contacts
                              whose rows are independent (A non-singular) */
    const double *lambda0; /* rows impulses to start the warm start's sweeps from (e.g. the
                              previous time step's); NULL (default): zero. The solution is
                              verified to tol either way */
} imp_contact_solve_opts;
void imp_contact_solve_opts_default(imp_contact_solve_opts *o);

/* The solution of one solve and what the reverse pass needs. */
typedef struct imp_contact_solution {
    int n, dim;                          /* contacts, rows per contact */
    double lambda[IMP_CONTACT_MAX_ROWS]; /* impulses per contact (normal, tangent(s)) */
    double u_plus[IMP_CONTACT_MAX_ROWS]; /* post-impact contact velocities (with the regularization) */
    double eps;                          /* the regularization used: regularization tr(A) / rows */
    double regularization;               /* the relative regularization it came from */
    int branch[IMP_MAX_CONTACTS];        /* IMP_CONTACT_SEPARATE / STICK / SLIDE */
    double slide[IMP_MAX_CONTACTS][2];   /* a sliding contact's direction u_t / |u_t| */
    int sweeps, pivots;                  /* work done */
    double residual;                     /* of the verified branch system */
    int fallback;                        /* 1: nothing converged, the projected Gauss-Seidel solution
                                            is kept (its residual below 1e3 tol); the reverse pass then
                                            differentiates the branches identified from it */
    int law;                             /* IMP_CONTACT_LAW_* of the normal rows */
} imp_contact_solution;

/* Doubles and ints of work for n contacts in dim (rows = n dim). */
size_t imp_contact_solve_work_doubles(int n, int dim);
size_t imp_contact_solve_work_ints(int n, int dim);

/* Solve for the impulses lambda (rows = n dim) of n contacts with
 * compliance A (rows x rows, symmetric positive semi-definite), pre-impact
 * contact velocities u_minus (rows), restitution e and friction mu (n):
 *   u+ = u- + (A + eps I) lambda,
 *   0 <= lambda_n  _|_  u+_n - e max(-u-_n, 0) >= 0           (Newton),
 *   |lambda_t| <= mu lambda_n, lambda_t = -mu lambda_n u+_t/|u+_t| if u+_t != 0  (Coulomb).
 * (docs/derivations/contact.md eqs 7-10). Fails on bad input naming it
 * (negative e or mu, non-finite numbers) and with IMP_ERR_NUMERIC when no
 * solution could be verified. */
int imp_contact_solve_forward(imp_contact_solution *sol, const double *A, const double *u_minus, const double *e,
                              const double *mu, int n, int dim, const imp_contact_solve_opts *o, double *work,
                              int *iwork);
/* Reverse pass by implicit differentiation on the branches of sol
 * (eqs 12-15): given lambda_bar, adds to A_bar (rows x rows), u_minus_bar
 * (rows), e_bar and mu_bar (n); any output may be NULL. */
int imp_contact_solve_backward(double *A_bar, double *u_minus_bar, double *e_bar, double *mu_bar,
                               const double *lambda_bar, const imp_contact_solution *sol, const double *A,
                               const double *u_minus, const double *e, const double *mu, double *work,
                               int *iwork);

/* Impact laws of the normal rows (docs/derivations/contact.md sec 11), with
 * ur_n a restitution reference velocity (u_ref; NULL: u-):
 *   IMP_CONTACT_LAW_NEWTON    0 <= lambda_n _|_ u+_n - e max(-ur_n, 0) >= 0 (eq 8; the
 *                             law of imp_contact_solve_forward);
 *   IMP_CONTACT_LAW_PAPER     u+_n = -e ur_n, lambda_n of either sign: the CD-Lagrange
 *                             paper's law ([A] eq 49; u- the velocity after the step's
 *                             force, ur the half-step one, so the impulse also cancels the
 *                             force over the step);
 *   IMP_CONTACT_LAW_HALFSTEP  u+_n = max(u-_n - (1 + e) ur_n, 0): Newton's law on ur with
 *                             the step's force kept, or rest (CD-Lagrange's Newton law).
 * Under the two equality laws a contact's tangent rows follow Coulomb's law
 * (stick or slide, eq 9) where lambda_n > 0 and carry no impulse where
 * lambda_n <= 0 (branch IMP_CONTACT_SEPARATE). dim may be 1 here and in
 * imp_contact_solve_forward: normal rows only (frictionless contacts). */
enum { IMP_CONTACT_LAW_NEWTON = 0, IMP_CONTACT_LAW_PAPER = 1, IMP_CONTACT_LAW_HALFSTEP = 2 };
int imp_contact_solve_law_forward(imp_contact_solution *sol, const double *A, const double *u_minus,
                                  const double *u_ref, const double *e, const double *mu, int n, int dim, int law,
                                  const imp_contact_solve_opts *o, double *work, int *iwork);
/* Reverse of imp_contact_solve_law_forward: as imp_contact_solve_backward,
 * and u_ref_bar (rows; with u_ref NULL the reference's share goes to
 * u_minus_bar). */
int imp_contact_solve_law_backward(double *A_bar, double *u_minus_bar, double *u_ref_bar, double *e_bar,
                                   double *mu_bar, const double *lambda_bar, const imp_contact_solution *sol,
                                   const double *A, const double *u_minus, const double *u_ref, const double *e,
                                   const double *mu, double *work, int *iwork);

/* The impulse step on generalized velocities: with J (rows x nv) the active
 * contacts' Jacobian rows and M^-1 through minv,
 *   u- = J v-,  A = J M^-1 J^T,  lambda = solve(A, u-, e, mu),
 *   v+ = v- + M^-1 J^T lambda                              (eqs 5, 6, 11).
 * work: imp_contact_impulse_work_doubles(n, dim, nv) doubles and
 * imp_contact_solve_work_ints(n, dim) ints. */
size_t imp_contact_impulse_work_doubles(int n, int dim, int nv);
int imp_contact_impulse_forward(double *v_plus, imp_contact_solution *sol, const double *v_minus, const double *J,
                                int n, int dim, int nv, imp_contact_minv_fn minv, void *minv_data,
                                const double *e, const double *mu, const imp_contact_solve_opts *o, double *work,
                                int *iwork);
/* Reverse of imp_contact_impulse_forward: given v_plus_bar (and lambda_bar,
 * may be NULL), adds to v_minus_bar (nv), J_bar (rows x nv), Minv_bar
 * (nv x nv dense), e_bar, mu_bar (n); any output may be NULL. */
int imp_contact_impulse_backward(double *v_minus_bar, double *J_bar, double *Minv_bar, double *e_bar,
                                 double *mu_bar, const double *v_plus_bar, const double *lambda_bar,
                                 const imp_contact_solution *sol, const double *v_minus, const double *J, int nv,
                                 imp_contact_minv_fn minv, void *minv_data, const double *e, const double *mu,
                                 double *work, int *iwork);

#ifdef __cplusplus
}
#endif
#endif
