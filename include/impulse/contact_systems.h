/* Contact systems of the CD-Lagrange strand (Hochlehnert et al. 2021):
 * the contact geometry shared by simulators and models, trajectory sets,
 * and the ground-truth simulators (pendulum, bouncing ball, Newton's cradle).
 *
 * Bodies are single nodes: K bodies with d coordinates each, state
 * Q = (q^1..q^K) in R^(K d), diagonal mass matrix M = diag(m_k I_d).
 * A contact candidate is a body-wall pair (gap = n . q_j - offset) or a
 * body-body pair (gap = n . (q_j - q_i) - offset); n is the unit normal
 * pointing from the wall (or body i) towards body j. Impacts follow Newton's
 * restitution law, post-impact normal velocity = -e x pre-impact normal velocity.
 *
 * Velocities in data files are the bodies' velocities at the sample times.
 * contact[n, k] = 1 when body k had an impact in (t_{n-1}, t_n] or rests in
 * contact at t_n (the idealised touch sensor).
 */
#ifndef IMPULSE_CONTACT_SYSTEMS_H
#define IMPULSE_CONTACT_SYSTEMS_H

#include <stddef.h>
#include "impulse/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_MAX_BODIES 16
#define IMP_MAX_DIM 3
#define IMP_MAX_CONTACTS 32
#define IMP_WALL (-1)

/* Pair kinds (npz contact_kinds). A plane pair has a fixed normal. A sphere
 * pair is two disks (body-body only, planar: each body's first two
 * coordinates are its centre, a third one its scaled angle k theta):
 * gap = |x_j - x_i| - r_i - r_j with the radii of the geometry, normal
 * n = (x_j - x_i) / |x_j - x_i|; its stored normal is zero and its offset 0,
 * and its stored tangent holds only the spin part: a nonzero tangent row
 * means the pair can slide, its components past the first two are the
 * spin coefficients (slip = t . (v_j - v_i) on the centres, t = (n_y, -n_x),
 * plus c (s_j + s_i) for the scaled angles s = k theta: c = r / k, sqrt 2
 * for uniform disks). imp_contact_geometry_at turns each sphere pair into
 * its plane linearisation at a state, which the normal and slip velocity
 * functions below need. */
enum { IMP_PAIR_PLANE = 0, IMP_PAIR_SPHERE = 1 };

typedef struct imp_contact_pair {
    int body_i;                 /* IMP_WALL for a fixed wall */
    int body_j;
    double normal[IMP_MAX_DIM]; /* unit normal from i (or the wall) towards j */
    double offset;              /* gap = n . (q_j - q_i) - offset */
    double tangent[IMP_MAX_DIM]; /* slip velocity t . (v_j - v_i) (not necessarily
                                    unit: generalised coordinates); zero: the pair
                                    cannot slide (no friction) */
    int kind;                   /* IMP_PAIR_PLANE (0) or IMP_PAIR_SPHERE */
} imp_contact_pair;

typedef struct imp_contact_geometry {
    int n_bodies, dim;
    double mass[IMP_MAX_BODIES];
    double restitution;         /* e in [0, 1]; NaN: unknown (data without it) */
    int n_pairs;
    imp_contact_pair pairs[IMP_MAX_CONTACTS];
    /* 1: the true e and mu of each pair are known (a simulator with
     * heterogeneous contacts; npz arrays contact_restitution and
     * contact_friction, docs/data-format.md); 0: only the global restitution */
    int has_pair_law;
    double pair_e[IMP_MAX_CONTACTS], pair_mu[IMP_MAX_CONTACTS];
    /* 1: radius holds each body's radius (npz radii; needed by sphere pairs) */
    int has_radii;
    double radius[IMP_MAX_BODIES];
    /* 1: made by imp_contact_geometry_at (sphere pairs linearised at a state) */
    int linearized;
} imp_contact_geometry;

/* Checks counts, masses > 0, finite unit normals, bodies in range, 0 <= e <= 1
 * (also per pair, with mu >= 0, when has_pair_law). */
int imp_contact_geometry_check(const imp_contact_geometry *g);
/* 1 if pair p has a nonzero tangent (it can slide: friction applies). */
int imp_contact_pair_has_tangent(const imp_contact_geometry *g, int p);
/* Contact-space compliance W = J M^-1 J^T of pair p, rows J = (t, n),
 * row-major [Wtt Wtn; Wnt Wnn], for wsum = w_i + w_j the sum of the two
 * bodies' inverse masses (w_i = 0 for a wall). */
void imp_contact_pair_compliance(const imp_contact_geometry *g, int p, double wsum, double W[4]);
/* 1 if some pair is a sphere pair. */
int imp_contact_geometry_has_spheres(const imp_contact_geometry *g);

/* ---- Detection on a trajectory geometry: the contact module's detection
 * stage for single-node bodies (src/contact/collision.c; sec 1b of
 * docs/derivations/contact.md). The simulators of this header and the
 * CD-Lagrange step take their gaps, normals and contact times from here. */
/* out = g with every sphere pair replaced by its linearisation at
 * positions q: normal n(q) (zero spin components), offset r_i + r_j (so
 * that the linear gap equals the true one at q), tangent (n_y, -n_x, spin
 * part), out->linearized = 1. Coincident centres take the normal (0, 1). */
void imp_contact_geometry_at(const imp_contact_geometry *g, const double *q, imp_contact_geometry *out);
/* Component a of body i's row in pair p's slip velocity
 * (slip = sum_a t[a] v_j[a] + row_i[a] v_i[a]): -t[a], but +t[a] for the
 * spin coordinates of a sphere pair (a contact point on each disk's rim). */
double imp_contact_tangent_i(const imp_contact_geometry *g, int p, int a);
/* gap of pair p at positions q (K d); a sphere pair of a geometry not
 * linearised: the true gap |x_j - x_i| - r_i - r_j. */
double imp_contact_gap(const imp_contact_geometry *g, int p, const double *q);
/* q_bar (K d) += gap_bar d gap / dq of pair p at q: the pair's normal on
 * body j and minus it on body i (a sphere pair not linearised: its normal at
 * q). The same row maps velocities to imp_contact_normal_velocity. */
void imp_contact_gap_backward(const imp_contact_geometry *g, int p, const double *q, double gap_bar, double *q_bar);
/* g with every sphere pair linearised at its contact within a time h of
 * moving from positions q with the constant velocities w (K d): at the
 * first s* in [0, h] with |x_j - x_i + s* (w_j - w_i)| = r_i + r_j (0 when
 * the pair overlaps at q, h when it does not meet), the plane of
 * imp_contact_geometry_at with the normal n = c / |c| of the centres'
 * difference c then. Its linear gap is zero at the contact, so at q + h w
 * it is (h - s*) times the closing velocity along n: negative exactly when
 * the pair meets within h. Returns g itself (buf untouched) when g has no
 * sphere pair, else buf. */
const imp_contact_geometry *imp_contact_geometry_swept(const imp_contact_geometry *g, const double *q,
                                                       const double *w, double h, imp_contact_geometry *buf);
/* The first s in (0, tmax] where c + b s + a s^2 (a gap along a motion with
 * constant acceleration) reaches 0 while closing (b + 2 a s < 0), with a
 * linear gap (a = 0) its root -c / b when b < 0; tmax + 1 when there is none
 * within tmax. The event finding of imp_contact_time_of_impact and of the
 * point and disk simulators. */
double imp_contact_first_root(double a, double b, double c, double tmax);
/* Time of impact of pair p (a linear gap: a plane pair, or a sphere pair of
 * a linearised geometry) moving from q with velocity v and constant
 * acceleration a0 (K d each): the first root tau in [0, h] of its gap
 * along q + s v + s^2/2 a0, a quadratic in s; 0 when the gap at q is <= 0,
 * h when the surface is not reached within h. dtau = d tau / d(c, b, a) of
 * the gap c, normal velocity b and half the normal acceleration a (0 at
 * those clamps). The CD-Lagrange step's event timing (sec 12). */
double imp_contact_time_of_impact(const imp_contact_geometry *g, int p, const double *q, const double *v,
                                  const double *a0, double h, double dtau[3]);
/* Reverse of the normal angle phi (n = (cos phi, sin phi)) of sphere pair p
 * of gs = imp_contact_geometry_swept(g, q, w, h, .): phi moves by
 * G . (dd + s* dw), G = g - (g . w) / (c . w) c with g = c_perp / |c|^2,
 * when s* is a root inside (0, h), G = g when it is 0 or h. Adds phi_bar
 * times that to q_bar and w_bar (K d). */
void imp_contact_swept_normal_backward(const imp_contact_geometry *gs, int p, const double *q, const double *w,
                                       double h, double phi_bar, double *q_bar, double *w_bar);
/* min_gap[p] (n_pairs): the lowest imp_contact_gap of pair p over n states
 * whose positions start every `stride` doubles of states (a NaN gap gives
 * NaN: never hidden). The rollouts' "lowest gap" of eval and the sweeps. */
void imp_contact_min_gaps(const imp_contact_geometry *g, const double *states, size_t n, size_t stride,
                          double *min_gap);
/* normal velocity n . (v_j - v_i) of pair p. */
double imp_contact_normal_velocity(const imp_contact_geometry *g, int p, const double *v);
/* normal velocity of pair p in state (q, v): a sphere pair's normal at q. */
double imp_contact_normal_velocity_at(const imp_contact_geometry *g, int p, const double *q, const double *v);
/* slip velocity t . (v_j - v_i) of pair p (0 for a pair without tangent):
 * imp_contact_row_velocity's row 1. */
double imp_contact_slip_velocity(const imp_contact_geometry *g, int p, const double *v);
/* The Jacobian rows of pair p (r = 0: normal, 1: tangent), the pair's
 * relative velocity along them: J_r v = row . v_j - row_i . v_i with the
 * row's direction (normal or tangent) on body j and, on body i (none for a
 * wall), imp_contact_row_i: the same direction, but for the spin
 * coordinates of a sphere pair's tangent its opposite (the contact point on
 * each rim turns each disk the same way). For a linear pair row 0 is the
 * gap's row; a sphere pair's normal row is row_j . v_j - row_i . v_i as
 * written (its rounding may differ from imp_contact_normal_velocity's). */
double imp_contact_row_i(const imp_contact_geometry *g, int p, int r, int a);
double imp_contact_row_velocity(const imp_contact_geometry *g, int p, int r, const double *v);
/* v_bar (K d, may be NULL) += s J_r^T: the reverse of imp_contact_row_velocity. */
void imp_contact_row_backward(const imp_contact_geometry *g, int p, int r, double s, double *v_bar);

/* Geometry as .npz arrays masses (K), contact_pairs (P x 2, -1 = wall),
 * contact_normals (P x d), contact_offsets (P), and contact_tangents (P x d,
 * only when some pair has one), contact_kinds (P, only when some pair is a
 * sphere pair) and radii (K, only when known); dim and restitution
 * (optional: NaN when absent) are read from the meta JSON. */
struct imp_npz;
int imp_contact_geometry_to_npz(const imp_contact_geometry *g, struct imp_npz *z);
int imp_contact_geometry_from_npz(const struct imp_npz *z, const char *meta, imp_contact_geometry *g);

/* A set of trajectories, all with the same length and step. Arrays are
 * n_traj x n_steps x (K d) for q, qdot, q_clean, qdot_clean and
 * n_traj x n_steps x K for contact. The *_clean arrays hold the noise-free
 * ground truth (equal to q, qdot when noise = 0). */
typedef struct imp_trajset {
    int n_traj, n_steps;
    double dt;
    imp_contact_geometry geom;
    double *q, *qdot, *q_clean, *qdot_clean, *contact;
    char system[64];
    double noise;
    unsigned long long seed;
    /* system parameters for energy evaluation (see imp_system_energy);
     * NaN when a file does not give them */
    double gravity, length;
    /* 1 when the data carry contact labels; 0: the file had none (contact
     * is all zero, only training without touch feedback can use it) */
    int has_contact;
    /* What the labels mean (meta "labels"): "impact" (one label per impact,
     * as impulse's event-driven simulators write them or after --contact-labels
     * onset), "touch" (a touch sensor: 1 while the bodies touch), "as-given"
     * (labels a user chose to keep as they are), "" unknown. */
    char labels[16];
    double friction;   /* the simulator's Coulomb coefficient (meta "friction"); NaN if none */
    /* n_traj x n_steps: 1 at a sample inside a multi-sample impact (the
     * bodies still touch: a compliant contact or a touch sensor spanning
     * several samples), set by the onset label handling
     * (imp_contact_labels_apply); training uses such a sample neither as a
     * target nor as the start of a window, so that an impact spanning
     * several samples is one event (docs/your-data.md). All 0: every sample
     * is used. npz array "contact_interior" (optional). */
    double *interior;
    /* imp_trajset_load / _from_npz: arrays of the file stored as float32 and
     * converted to float64 (0: none), for the caller to say */
    int widened_f32;
} imp_trajset;

int imp_trajset_alloc(imp_trajset *ts, int n_traj, int n_steps, const imp_contact_geometry *g);
void imp_trajset_free(imp_trajset *ts);
/* Add N(0, sigma^2) to q and qdot (not to the clean copies or contacts). */
void imp_trajset_add_noise(imp_trajset *ts, double sigma, imp_rng *rng);
/* .npz with arrays q, qdot, q_clean, qdot_clean, contact, contact_interior
 * (n_traj x n_steps, only when some sample is marked), masses,
 * contact_pairs (P x 2, -1 = wall), contact_normals (P x d), contact_offsets (P),
 * and meta JSON (system, dt, restitution, gravity, length, noise, seed, version). */
int imp_trajset_save(const imp_trajset *ts, const char *path);
/* Validates every array's shape, values (finite, contact in {0,1}) and the
 * geometry; float32 arrays are widened, integer or bool contact labels and
 * float contact_pairs with integral values accepted. Optional: q_clean,
 * qdot_clean, contact (has_contact = 0), meta gravity/length (NaN), system.
 * Every missing key is reported with what it is and how to supply it
 * (docs/data-format.md). */
int imp_trajset_load(imp_trajset *ts, const char *path);
/* The same from an archive already in memory; `what` names it in messages. */
int imp_trajset_from_npz(imp_trajset *ts, struct imp_npz *z, const char *what);

/* ---- Contact labels against the motion (src/systems/contact_labels.c) ----
 * A run of consecutive labels of a body is one contact interval. It holds
 * an impact when the normal velocity u of the body's nearest pair turns
 * from approaching to separating (u(t-1) < 0 <= u(t), observed velocities)
 * at one of its samples or at the sample after it. Labels before the
 * reversal (still approaching) or after it
 * with u(t-1) > v_rest (already separating) are extra labels of the same
 * impact; labels where |u| stays below v_rest at t-1 and t after the impact
 * (or in a run without one) are resting contact; a run with neither an
 * impact nor rest has labels with no velocity change. v_rest = 3 sigma + 2 |a|
 * with sigma a robust (median absolute deviation) estimate of the noise of
 * the normal velocity's sample-to-sample change outside contact and a its
 * median (g dt for a falling ball).
 * The onset handling keeps one label per impact, at the interval's first
 * sample (the step in which the bodies met: the step a CD-Lagrange impulse
 * stands for), plus resting contact, and marks the impact's later samples
 * but the last (the bodies still touch there: a contact spanning several
 * samples) as interior (imp_trajset.interior), so that training treats the
 * impact as one event from the sample before it to the first sample after
 * it (docs/your-data.md).
 * The geometry handling (for data without labels, or to set given ones
 * aside) labels body k at sample t where one of its pairs p met an impact
 * in the step into t: approaching at t-1 (u(t-1) < 0), within reach of
 * contact in one step (gap(q(t-1)) + dt u(t-1) <= tol) and its normal
 * velocity rising by more than v_rest (u(t) - u(t-1) > v_rest; the next
 * sample is labelled too while u keeps rising so, a contact spanning two
 * samples), and where it rests on p (gap(q(t)) <= tol, |u| <= v_rest at t-1
 * and t, and u(t+1) - u(t-1) > a, halfway between rest (0) and free flight
 * over two samples (2a), a the median change of u per sample, which must
 * press the body into p beyond the noise: gravity on a floor, while a side
 * wall has no rest); tol = 3 x the data's noise (0 when
 * unknown), v_rest as above from all samples. Impacts slower than v_rest
 * count as rest. */
typedef enum imp_label_mode {
    IMP_LABELS_AUTO = 0, /* as-given when meta "labels" is "impact", "onset" or "as-given", onset otherwise */
    IMP_LABELS_AS_GIVEN, /* every label gates an impulse */
    IMP_LABELS_ONSET,    /* one label per impact at its first sample, interior marked, plus resting contact */
    IMP_LABELS_GEOMETRY  /* labels derived from the motion and the geometry (any given ones are
                            replaced; data without labels get them), then handled as onset */
} imp_label_mode;

typedef struct imp_label_report {
    int labels;          /* labelled (body, sample) pairs */
    int intervals;       /* runs of consecutive labels */
    int impacts;         /* intervals with a velocity reversal */
    int multi;           /* impacts carrying more than one label */
    int extra;           /* labels of those impacts besides the one at the reversal */
    int separating;      /* of those, labels where the bodies already separate */
    int resting;         /* resting-contact labels */
    int no_change;       /* labels in intervals with no reversal and no rest */
    int no_pair;         /* labels of bodies without a contact pair */
    int kept;            /* labels after handling */
    int interior;        /* samples inside impacts (marked by onset) */
    double v_rest;       /* the threshold used (largest over bodies) */
    imp_label_mode mode; /* the mode applied (never AUTO) */
} imp_label_report;

/* "auto", "as-given", "onset". */
int imp_label_mode_from_name(const char *name, imp_label_mode *mode);
const char *imp_label_mode_name(imp_label_mode mode);
/* Check ts's labels against its motion and, unless the (resolved) mode is
 * as-given, replace them by the handled ones (ts->labels becomes "impact").
 * The report may be NULL. Data without labels are left alone (all counts 0). */
int imp_contact_labels_apply(imp_trajset *ts, imp_label_mode mode, imp_label_report *report);

/* ---- Import of trajectories from numpy, CSV and HDF5 files
 * (src/systems/trajset_import.c; formats in docs/data-format.md) ---- */
typedef struct imp_import_opts {
    /* array / column / dataset names (NULL: q or qpos, qdot or qvel, contact,
     * t or time); a name may list several (x,y) and select columns (qpos[2]) */
    const char *q, *qdot, *contact, *time, *traj;
    double dt;              /* 0: from the time array (then also checked against it) */
    int bodies;             /* 0: 1 */
    int dim;                /* 0: columns / bodies */
    int steps;              /* 0: all samples (trajectories of equal length); N: the first N of each */
    int finite_differences; /* 1: velocities by central differences of q (not read) */
    int n_masses;           /* 0: mass 1 per body */
    double masses[IMP_MAX_BODIES];
    int n_pairs;
    imp_contact_pair pairs[IMP_MAX_CONTACTS];
    int normal_components[IMP_MAX_CONTACTS]; /* as given (checked against dim); 0: not checked */
    double restitution, gravity, length; /* NaN: not given */
    char system[64];
} imp_import_opts;

/* What the import had to assume or compute, for the caller to say. */
typedef struct imp_import_notes {
    int n_traj;
    char format[8];         /* "npz", "npy", "csv", "hdf5" */
    int fd_velocities;      /* velocities computed by finite differences */
    int default_masses;     /* masses set to 1 */
    int dt_from_time;       /* dt taken from the time array */
    int default_restitution;/* restitution 1 written (the geometry needs one) */
    int truncated;          /* trajectories cut to opts.steps */
} imp_import_notes;

void imp_import_opts_default(imp_import_opts *o);
int imp_trajset_import(const char *path, const imp_import_opts *o, imp_trajset *out, imp_import_notes *notes);

/* True mechanical energy of a state (q, v) for the known systems
 * (pendulum, bouncing-ball, newtons-cradle, ball-box, bouncing-disk (x, y, k theta);
 * compliant-ball, compliant-ball-box and compliant-cradle as their rigid counterparts, without
 * the contact spring's energy). Any other system name (data from elsewhere)
 * is taken as point masses in Cartesian coordinates under gravity along
 * minus the last coordinate, as bouncing-ball: T = sum m v^2 / 2,
 * U = sum m g q_last. IMP_ERR_INVALID when the gravity (or the pendulum
 * length) is unknown (NaN), IMP_ERR_UNSUPPORTED for bouncing-disk data
 * without 3 coordinates. */
int imp_system_energy_known(const char *system, int dim); /* 1: a system above by name, 0: point masses */
int imp_system_energy(const char *system, const imp_contact_geometry *g, double gravity,
                      double length, const double *q, const double *v, double *energy);

/* ---- Ground-truth simulators (double precision, event-driven) ---- */
typedef struct imp_sim_opts {
    int n_traj;          /* >= 1 */
    int n_steps;         /* samples per trajectory, >= 2 */
    double dt;           /* sample period > 0 */
    double noise;        /* Gaussian std on q and qdot, >= 0 */
    double restitution;  /* bouncing ball / cradle, in [0, 1] */
    double gravity;      /* m/s^2 > 0 */
    double length;       /* pendulum length > 0 */
    double q0, v0;       /* initial state of the first trajectory (see below) */
    double friction;     /* bouncing-disk: Coulomb coefficient (AP Newton impacts), >= 0 */
    double spin;         /* bouncing-disk: initial spin (rad/s) of the first trajectory */
    int randomize;       /* 1: trajectories after the first draw random initial states */
    unsigned long long seed;
    double stiffness;    /* compliant systems: contact spring, force per unit penetration (N/m
                            for the ball, N m/rad for the cradle); 0: the default 2.5e4 */
} imp_sim_opts;

/* Compliant-contact stand-ins for data from other simulators and labs
 * (src/systems/compliant_sim.c): compliant-ball and compliant-cradle are the
 * bouncing ball and Newton's cradle with a linear spring-damper contact
 * (force k pen + c pen_dot while the bodies overlap, released when the
 * penetration returns to zero), so that a contact lasts several sub-steps,
 * bodies penetrate and a touch sensor stays on over one or more samples
 * (meta labels "touch": contact[n, k] = 1 when body k touched anything in
 * (t_{n-1}, t_n]). The damping is chosen from the target restitution e by
 * the analytic spring-damper relation e = exp(-zeta pi / sqrt(1 - zeta^2)),
 * zeta = c / (2 sqrt(k mu)), mu the pair's reduced mass (inertia), so the
 * apparent restitution is e (up to gravity acting during the contact). */
#define IMP_COMPLIANT_STIFFNESS 2.5e4
/* ball-box and compliant-ball-box: a ball (unit mass) in a 2-D box, q = (x, y)
 * its centre with the radius folded into the walls: floor y >= 0 (pair 0,
 * normal (0, 1)), left wall x >= -W (pair 1, normal (1, 0)), right wall
 * x <= W (pair 2, normal (-1, 0)), W = IMP_BALL_BOX_HALF_WIDTH. ball-box has
 * rigid event-driven impacts (Newton's law, e), compliant-ball-box the
 * spring-damper contact above (apparent restitution e, touch labels). The
 * first trajectory starts at (0, q0) with velocity (v0, 0); later ones at
 * x U(-W/2, W/2), height U(q0/2, q0), velocity (U(-3, 3), U(-1, 1)), so that
 * the ball hits the walls too. Defaults: q0 = 3 m, v0 = 1.5 m/s, e = 0.8,
 * dt 0.02, 400 steps. */
#define IMP_BALL_BOX_HALF_WIDTH 1.5
/* The damping ratio zeta for a restitution e in (0, 1] (0 for e = 1). */
double imp_compliant_damping_ratio(double restitution);
int imp_simulate_compliant(const char *system, const imp_sim_opts *opts, imp_trajset *out);

/* Defaults of the paper's experiments for a system name (ball-box and
 * compliant-ball-box: see IMP_BALL_BOX_HALF_WIDTH):
 * pendulum (q0 = 1 rad, dt 0.02, 200 steps), bouncing-ball (q0 = 10 m,
 * dt 0.02, 500 steps, e = 1), newtons-cradle (Q0 = (0,0), Qdot0 = (2,0),
 * dt 0.01, 540 steps, e = 1); compliant-ball and compliant-cradle as their
 * rigid counterparts. Ours: bouncing-disk, a uniform disk (radius
 * 0.25 m, mass 1) dropped spinning onto a floor with Coulomb friction,
 * impacts by AP Newton (sliding impacts): q = (x, y, k theta), k = R/sqrt(2)
 * (so M = I), contact tangent (1, 0, sqrt 2); first trajectory from height
 * q0 = 1.5 m with vx = v0 = 1 m/s and spin -30 rad/s, later ones from
 * height U(q0/2, q0), vx U(-2, 2), spin U(-40, 40); dt 0.01, 300 steps,
 * e = 0.8, mu = 0.2. Unknown names fail with IMP_ERR_NOT_FOUND. */
int imp_sim_defaults(const char *system, imp_sim_opts *opts);
int imp_simulate(const char *system, const imp_sim_opts *opts, imp_trajset *out);
/* The checks imp_simulate applies to opts (counts, dt, noise, e, gravity, ...). */
int imp_sim_opts_check(const imp_sim_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
