/* impulse ground truth for the constrained-network benchmarks of Finzi,
 * Wang & Wilson 2020 ([F]): the eight systems with the reference parameters
 * and initial-state distributions, simulated in double precision with
 * DOPRI5 on the constrained Hamiltonian flow ([F] eq 6), the
 * generalised-coordinate (angle) view used by the HNN/DeLaN/NODE baselines,
 * and chunking into training windows.
 *
 * A Cartesian state is xv = (x[N], v[N]), N = n_points * d (the
 * reference's (2, n, d) layout). A generalised state is qv = (q[k], qdot[k]),
 * k = s->n_gen.
 */
#ifndef IMPULSE_CHNN_SYSTEMS_H
#define IMPULSE_CHNN_SYSTEMS_H

#include <stdint.h>
#include "impulse/constrained.h"
#include "impulse/integrate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Build a benchmark by name:
 *   "pendulum-chain:N"   N = 1..8 (the paper's 1-, 2-, 3-, 5-pendulum), 2D
 *   "coupled-pendulums:N" N = 2..8 (the paper's 3-coupled), 3D
 *   "magnet-pendulum", "gyroscope", "rotor" (3D)
 * with s->dt and s->n_steps (99 steps = 100 states, as the reference).
 * Unknown names fail with IMP_ERR_NOT_FOUND. */
int imp_chnn_system(imp_csys *s, const char *name);
/* One-line list of the names above, for --help. */
const char *imp_chnn_system_names(void);

/* Draw one initial state from the reference distribution of a benchmark
 * ([chnn] section 1), projected onto the constraints as the reference does
 * (imp_csys_project_state: Euclidean Newton on (x, v); only the
 * pendulum-chain draws are off the manifold, the others are exact). For a
 * custom system (file) the nominal state (body positions/velocities,
 * extended bodies with their axes along the coordinate axes) is perturbed
 * by `spread` N(0, 1) in positions and velocities, then projected in the
 * mass metric (imp_csys_project). Redraws up to 20 times if a draw cannot
 * be projected. */
int imp_chnn_sample_state(const imp_csys *s, imp_rng *rng, double spread, double *xv,
                          imp_csys_work *w);

typedef struct imp_chnn_sim_opts {
    double rtol, atol;   /* 0, 0: 1e-10, 1e-12 */
} imp_chnn_sim_opts;

/* Start of a test rollout as in the reference ([chnn] section 1): draw an
 * initial state, cut its reference-length trajectory (s->n_steps + 1 states,
 * step s->dt) into windows of L + 1 states and return the first state of a
 * random window (found by integrating up to it). *offset (may be NULL)
 * receives that state's index in the reference trajectory. */
int imp_chnn_sample_rollout_start(const imp_csys *s, imp_rng *rng, double spread, int L,
                                  const imp_chnn_sim_opts *o, double *xv, int *offset,
                                  imp_csys_work *w);

/* Integrate the constrained Hamiltonian flow ([F] eq 6) on (x, p = M v)
 * from xv0 with DOPRI5 and write the states (x, v) at t = k dt,
 * k = 0..n_steps: traj ((n_steps + 1) x 2N). stats may be NULL. */
int imp_chnn_simulate(const imp_csys *s, const double *xv0, double dt, int n_steps,
                      const imp_chnn_sim_opts *o, double *traj, imp_dopri5_stats *stats);

/* n_traj trajectories from seeded initial states: traj (n_traj x
 * (n_steps + 1) x 2N). Deterministic for a given seed. */
int imp_chnn_generate(const imp_csys *s, int n_traj, int n_steps, double dt, uint64_t seed,
                      double spread, const imp_chnn_sim_opts *o, double *traj);

/* Cut each trajectory (T states of `dim` numbers) into floor(T / (L + 1))
 * non-overlapping windows of L + 1 states and keep one at random per
 * trajectory ([chnn] section 1: 20 chunks of 5 states, one kept):
 * chunks (n_traj x (L + 1) x dim), start (n_traj, may be NULL) the index of
 * each window's first state. */
int imp_chnn_chunks(const double *traj, int n_traj, int T, int dim, int L, imp_rng *rng,
                    double *chunks, int *start);

/* Cartesian <-> generalised coordinates (s->n_gen > 0 only):
 *   pendulum-chain: absolute link angles from -y, x_i - x_{i-1} = l_i (sin q, -cos q);
 *   coupled/magnet: (phi, theta) per bob in the reference's frame rotated
 *     90 degrees about y: x - a = l (-cos theta, sin theta sin phi, sin theta cos phi);
 *   gyroscope: ZXZ Euler angles (R = Rz(phi) Rx(theta) Rz(psi)) and their rates;
 *   rotor: centre of mass, then ZXZ Euler angles;
 *   custom systems (files) with n_gen = N: the Cartesian coordinates
 *     themselves, no angles (what imp_csystem_from_csys gives the baselines).
 * Angles come out in (-pi, pi] (theta in [0, pi]); use imp_chnn_unwrap on a
 * trajectory. */
int imp_chnn_to_generalized(const imp_csys *s, const double *xv, double *qv);
int imp_chnn_from_generalized(const imp_csys *s, const double *qv, double *xv);
/* Unwrap the angle coordinates of a trajectory qv (T x 2 n_gen) in place
 * (jumps larger than pi become continuous, as numpy.unwrap). */
void imp_chnn_unwrap(const imp_csys *s, double *qv_traj, int T);

#ifdef __cplusplus
}
#endif
#endif
