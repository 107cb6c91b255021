/* impulse synthetic drop experiments: a planar ellipse dropped onto a plane
 * with finite-time compliant contact, filmed at a camera rate with pose
 * noise, and processed the way Fazeli et al. processed their Vicon data
 * ([CODE2] data_process_ellipse.m; /work/shared/reference/planar-impact.md
 * §4): impact detection by an acceleration threshold, least-squares line /
 * parabola fits before and after, contact at the lowest point.
 *
 * Contact model (forces at the lowest material point, world offset r from
 * the centre of mass, penetration delta, normal speed ddelta = -(vy + w r_x),
 * slip speed vt = vx - w r_y):
 *   normal     Fn = max(0, k_n delta^1.5 (1 + c_n ddelta))   (Hunt & Crossley 1975)
 *   tangential Ft = -(k_t z + c_t vt) clipped to |Ft| <= mu Fn, z' = vt,
 *              with |k_t z| <= mu Fn restored after every step (elastic-
 *              plastic tangential compliance: regularised Coulomb friction).
 *   patch      torque -rho_patch Fn tanh(w / 0.5 rad/s): a finite contact
 *              patch resisting rotation, the torque a point contact cannot
 *              explain (default 0).
 * Stored energy E = T + m g y + k_n delta^2.5 / 2.5 + k_t z^2 / 2 never
 * increases for c_n, c_t >= 0 (up to integration error).
 *
 * Sign conventions: theta and omega counter-clockwise positive; the written
 * Jacobian rows are n = (0, 1, r_x), d = (1, 0, -r_y), consistent with the
 * states (the "corrected" convention of include/impulse/impact.h).
 */
#ifndef IMPULSE_DROP_H
#define IMPULSE_DROP_H

#include <stddef.h>
#include <stdint.h>

#include "impulse/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imp_drop_params {
    /* body: ellipse with semi-axes a (body x) and b (body y) */
    double a, b, mass, kg, g;
    /* contact */
    double k_n;   /* Hunt-Crossley stiffness, N / m^1.5 */
    double c_n;   /* Hunt-Crossley damping, s / m */
    double mu;    /* Coulomb friction coefficient */
    double k_t;   /* tangential stiffness, N / m */
    double c_t;   /* tangential damping, N s / m */
    double rho_patch; /* contact-patch rolling-resistance arm, m (0: point contact) */
    /* integration */
    double dt;        /* RK4 step near and in contact, s */
    double dt_free;   /* RK4 step in free flight far from the plane, s */
    /* sensing */
    double frame_rate;  /* camera, Hz */
    double noise_pos;   /* pose noise sd, m */
    double noise_theta; /* pose noise sd, rad */
    /* pre-impact state distribution (at first contact) */
    double vx_mean, vx_sd, vy_mean, vy_sd, omega_mean, omega_sd;
    /* processing */
    double accel_threshold; /* |(x'', y'', kg theta'')| threshold, m/s^2 */
    int pre_first, pre_last;   /* fit frames [i - pre_first, i - pre_last] */
    int post_first, post_count; /* fit frames [i + post_first, i + post_first + post_count) */
} imp_drop_params;

/* The data set's object (a = 35 mm, b = 25 mm, m = 36.4 g, k_g = 0.0192 m),
 * its pre-impact state statistics, Vicon-like noise and contact parameters
 * chosen to give a Newton-like restitution near 0.5-0.6. */
void imp_drop_params_default(imp_drop_params *p);
/* Reject impossible parameters (names the field). */
int imp_drop_params_check(const imp_drop_params *p);

#define IMP_DROP_STATE_DIM 7 /* x, y, theta, vx, vy, omega, z (tangential spring) */

/* Lowest point of the ellipse at angle theta: returns h = sqrt(a^2 sin^2 +
 * b^2 cos^2) (the centre's height above the plane at touch) and writes its
 * world offset r (r[1] = -h). */
double imp_drop_lowest_point(const imp_drop_params *p, double theta, double r[2]);
/* Stored mechanical energy of a state (see above). */
double imp_drop_energy(const imp_drop_params *p, const double s[IMP_DROP_STATE_DIM]);
/* Contact forces at a state: (Ft, Fn) (zeros if not touching). */
void imp_drop_contact_force(const imp_drop_params *p, const double s[IMP_DROP_STATE_DIM],
                            double F[2]);

/* Integrate from s0 at time t0 to the increasing times t_out (n_out,
 * t_out[0] >= t0), writing states s_out (n_out x 7) and, if energy_out !=
 * NULL, the largest energy increase over any step in *energy_out (0 for a
 * dissipative run). If contact_out != NULL, contact_out[k] = 1 if the body
 * touched the plane at some step between t_out[k-1] (or t0) and t_out[k]. */
int imp_drop_simulate(const imp_drop_params *p, const double s0[IMP_DROP_STATE_DIM], double t0,
                      const double *t_out, size_t n_out, double *s_out, double *energy_out,
                      unsigned char *contact_out);

/* One processed drop. */
typedef struct imp_drop_sample {
    double pre[6], post[6];   /* processed states at t_ref (x, y, theta, vx, vy, omega) */
    double n[3], d[3];        /* contact Jacobian rows from the fitted pre-impact pose */
    double true_pre[6], true_post[6]; /* exact free-flight states at t_ref */
    double t_ref;             /* estimated impact time (fitted lowest point reaches y = 0) */
    double t_contact;         /* true start of contact */
    double duration;          /* true contact duration, s */
    int impact_frame;         /* detected frame index */
    double energy_gain;       /* largest energy increase over one step (diagnostic) */
} imp_drop_sample;

/* Simulate and process one drop with random initial conditions from rng.
 * Drops rejected as the authors did (second contact in the fit windows,
 * contact too long, detection failure) are redrawn, up to 100 times;
 * *n_rejected (may be NULL) counts the redraws. */
int imp_drop_run(const imp_drop_params *p, imp_rng *rng, imp_drop_sample *out, size_t *n_rejected);
/* `count` drops from `seed`; out has count entries. */
int imp_drop_generate(const imp_drop_params *p, uint64_t seed, size_t count, imp_drop_sample *out,
                      size_t *n_rejected);

/* ---- drop sets as impact sets and files (src/impact/drop_set.c) ---- */
struct imp_impact_set;

/* An impact set (include/impulse/impact.h) from processed drops: pre/post
 * from the fits, n/d rows, object constants from p, convention "corrected"
 * (d consistent with theta/omega), validated. Free with imp_impact_set_free. */
int imp_drop_to_impact_set(const imp_drop_sample *s, size_t count, const imp_drop_params *p,
                           struct imp_impact_set *set);
/* Write drops as .npz in the layout of the real data (data_ellipse.mat):
 * "states_i", "states_f" (count x 6), "n", "d" (count x 3), plus the truth
 * "states_i_true", "states_f_true" (count x 6), "t_ref", "t_contact",
 * "duration" (count), and "meta" JSON (kind "drop_set", convention
 * "corrected", seed, every parameter). Atomic write. */
int imp_drop_save_npz(const imp_drop_sample *s, size_t count, const imp_drop_params *p,
                      uint64_t seed, const char *path);
/* Load an impact set from an .npz holding states_i, states_f, n, d (a drop
 * file or the real data converted); the meta "convention" (default
 * "stored") and object constants "mass", "kg", "g" are honoured. */
int imp_drop_load_impact_set(struct imp_impact_set *set, const char *path);

#ifdef __cplusplus
}
#endif
#endif
