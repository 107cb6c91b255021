/* impulse rigid-body trajectories: one free rigid body (a tossed cube) as
 * ragged episodes of 13-column states, their checks, and the full-toss
 * evaluation metrics of the cube-toss literature (docs/data-format.md,
 * "Rigid-body trajectory files"; docs/cube.md).
 *
 * State layout (one row per sample, 13 columns):
 *   0-3   orientation quaternion w x y z, unit norm, body to world
 *   4-6   position of the centre of mass, world frame, m (z up, gravity -z)
 *   7-9   angular velocity in the BODY frame, rad/s
 *   10-12 linear velocity of the centre, world frame, m/s
 * Episode k is rows sum(lengths[:k]) .. sum(lengths[:k+1]) - 1.
 */
#ifndef IMPULSE_RIGID_TRAJ_H
#define IMPULSE_RIGID_TRAJ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_RIGID_STATE 13
/* Default tolerance on | |q| - 1 | when a file is read. */
#define IMP_RIGID_QUAT_TOL 1e-6
#define IMP_RIGID_MAX_EPISODES (1 << 24)

/* The body: a box of side lengths size[0..2] (a cube: three equal sides). */
typedef struct imp_rigid_body {
    double size[3];    /* m, > 0 */
    double mass;       /* kg, > 0 */
    double inertia[3]; /* principal moments about the body axes, kg m^2, > 0 */
} imp_rigid_body;

typedef struct imp_rigid_traj {
    size_t n_rows;         /* total samples */
    int n_episodes;
    double *states;        /* n_rows x 13, row-major */
    int64_t *lengths;      /* n_episodes, each >= 1, summing to n_rows */
    int64_t *ids;          /* n_episodes episode numbers (e.g. the original toss), or NULL */
    double dt;             /* s, > 0 */
    imp_rigid_body body;
    double ground_height;  /* the ground is the plane z = ground_height (normal +z) */
    double gravity;        /* m/s^2 along -z, >= 0 */
    char source[256];      /* where the data came from (free text, may be "") */
} imp_rigid_traj;

/* A trajectory set with the nominal ContactNets cube (0.1048 m, 0.37 kg,
 * 0.00081 kg m^2), dt 1/148 s, ground 0, gravity 9.81 and no data. */
void imp_rigid_traj_default(imp_rigid_traj *t);
void imp_rigid_traj_free(imp_rigid_traj *t);
/* Row offset of episode k (k = n_episodes gives n_rows). */
size_t imp_rigid_traj_offset(const imp_rigid_traj *t, int k);

/* Check everything: body, dt, ground, lengths (>= 1, summing to n_rows),
 * finite states, | |q| - 1 | <= quat_tol on every row. The message names the
 * field, and for states the episode and row. */
int imp_rigid_traj_check(const imp_rigid_traj *t, double quat_tol);

/* Take copies of states (n_rows x 13) and lengths (n_episodes) (ids may be
 * NULL) into t, whose meta fields (dt, body, ...) the caller has set; then
 * imp_rigid_traj_check. The sizes are checked against imp_input_limit()
 * before anything is allocated. On failure t holds no data. */
int imp_rigid_traj_set(imp_rigid_traj *t, const double *states, size_t n_rows, const int64_t *lengths,
                       const int64_t *ids, size_t n_episodes, double quat_tol);

/* Read the arrays `states_name` (N, 13) and `lengths_name` (E,) (and, if
 * ids_name is not NULL and present, (E,) episode numbers) from an .npz,
 * keeping the meta fields t already has. No meta is read: this is how
 * `impulse import` reads the ContactNets file. */
int imp_rigid_traj_read_arrays(imp_rigid_traj *t, const char *path, const char *states_name,
                               const char *lengths_name, const char *ids_name, double quat_tol);

/* impulse's rigid-body trajectory file: arrays states, lengths (and ids),
 * meta {"kind": "rigid-trajectories", "dt", "shape": "box", "size",
 * "mass", "inertia", "ground_height", "gravity", "source", ...}. Saved
 * atomically; loading checks everything (quat_tol IMP_RIGID_QUAT_TOL). */
int imp_rigid_traj_save(const imp_rigid_traj *t, const char *path);
int imp_rigid_traj_load(imp_rigid_traj *t, const char *path);
/* impulse's rigid-body file, or else a file with only the arrays states
 * (N, 13), lengths and toss (the ContactNets file itself), taken with the
 * nominal cube (imp_rigid_traj_default); *nominal (may be NULL) says which.
 * The message of a failure is the rigid-body file's. */
int imp_rigid_traj_load_any(imp_rigid_traj *t, const char *path, int *nominal);

/* ---- Quaternions (w x y z) used by the checks and the metrics ---- */
/* Geodesic angle between two orientations, radians in [0, pi]
 * (q and -q are the same orientation). Inputs need not be normalised. */
double imp_rigid_quat_angle(const double a[4], const double b[4]);

/* ---- What a data set holds (impulse import prints it) ---- */
typedef struct imp_rigid_stats {
    int n_episodes;
    size_t n_rows, min_length, max_length;
    double max_quat_norm_error;   /* max | |q| - 1 | */
    size_t n_diffs;               /* consecutive pairs inside episodes compared below */
    /* |v_k - (p_k - p_{k-1})/dt|, m/s: median, 95th percentile, max */
    double lin_median, lin_p95, lin_max;
    /* |w_k - log(q_{k-1}^-1 q_k)/dt| with w in the body frame, rad/s */
    double ang_median, ang_p95, ang_max;
    /* the same reading w as a world-frame vector (log(q_k q_{k-1}^-1)/dt): median */
    double ang_world_median;
    size_t repeated_rows;         /* rows equal to the previous row in all 13 columns */
    size_t repeated_angvel;       /* rows whose angular velocity equals the previous row's */
    int first_angvel_repeated;    /* episodes whose first two angular-velocity rows are equal */
    double max_step_angle;        /* largest rotation between consecutive samples, rad */
    double max_speed;             /* m/s */
} imp_rigid_stats;
int imp_rigid_traj_stats(const imp_rigid_traj *t, imp_rigid_stats *s);

/* ---- Full-toss evaluation metrics (docs/cube.md) ----
 * pred and meas are n rows of 13-column states (sample 0 included); the
 * body's box size gives the width (size[0]) and the corners. */
typedef struct imp_rigid_metrics {
    double position_error_pct;   /* mean over samples of |p^ - p| / width, % */
    double rotation_error_deg;   /* mean over samples of the geodesic angle between q^ and q, deg */
    double penetration_pct;      /* mean over samples of max(0, ground - lowest corner of pred) / width, % */
} imp_rigid_metrics;
int imp_rigid_metrics_episode(const double *pred, const double *meas, size_t n, const imp_rigid_body *body,
                              double ground_height, imp_rigid_metrics *out);
/* Height of the box's lowest corner over the plane z = ground_height (negative: below it). */
double imp_rigid_lowest_corner(const double state[13], const imp_rigid_body *body, double ground_height);

/* Roll a model out over episodes and average the metrics over them (each
 * episode weighs the same; within an episode every sample does, the first
 * included). rollout(x0, n, ctx, out) writes n rows from the first state of
 * the episode; episodes NULL means all of them. Penetration is judged
 * against the plane z = ground_height (the model's own ground). */
typedef int (*imp_rigid_rollout_fn)(const double x0[13], size_t n, void *ctx, double *out);
int imp_rigid_eval_rollouts(const imp_rigid_traj *t, const int *episodes, int n_episodes, imp_rigid_rollout_fn rollout,
                            void *ctx, double ground_height, imp_rigid_metrics *mean);
/* Predicted beside measured poses, for figures (impulse reproduce cube's
 * report): episodes[0..k) of t rolled out in full from their first states
 * and added to z as "rollout_episodes" (k, the indices into t),
 * "rollout_ids" (k, t->ids or the indices), "rollout_pred" and
 * "rollout_meas" (k, L, 7: quaternion w x y z and position per sample, L
 * the longest of the k; NaN after an episode's end) and "rollout_dt" (1,
 * t->dt). A rollout that fails
 * or leaves the finite numbers stays NaN from there (a diverged model is
 * drawn as far as it went). */
struct imp_npz;
#define IMP_RIGID_POSE 7
int imp_rigid_rollouts_to_npz(struct imp_npz *z, const imp_rigid_traj *t, const int *episodes, int k,
                              imp_rigid_rollout_fn rollout, void *ctx);
/* The measured poses' own penetration of the plane z = ground_height: mean
 * over all samples and the deepest, as % of the width. */
int imp_rigid_traj_penetration(const imp_rigid_traj *t, double ground_height, double *mean_pct, double *max_pct);

/* ---- Ballistic flight (no contact): the sanity floor ----
 * n rows from state x0: the centre falls under gravity; the rotation is
 * torque-free (Euler's equations in the body frame with the body's
 * principal inertia, RK4 with `substeps` steps per sample; a body with equal
 * moments keeps its body-frame angular velocity exactly). */
int imp_rigid_ballistic(const double x0[13], size_t n, double dt, const imp_rigid_body *body, double gravity,
                        int substeps, double *out);
/* The same over episodes of t (its dt, body, gravity; 4 substeps),
 * evaluated as imp_rigid_eval_rollouts against t's ground. */
int imp_rigid_eval_ballistic(const imp_rigid_traj *t, const int *episodes, int n_episodes, imp_rigid_metrics *mean);

/* ---- Splits as in the literature ----
 * Draw n_draw of n_episodes episodes at random (seed), shuffle them and cut
 * them into train/validation/test at the given fractions (e.g. 0.5, 0.25;
 * test gets the rest). Index arrays are caller-provided of n_draw entries
 * each; counts are returned. */
int imp_rigid_split(int n_episodes, int n_draw, uint64_t seed, double train_frac, double valid_frac, int *train,
                    int *n_train, int *valid, int *n_valid, int *test, int *n_test);

#ifdef __cplusplus
}
#endif
#endif
