/* A flat, FFI-friendly layer over the CD-Lagrange strand for bindings
 * (python/impulse uses it through ctypes): only strings, numbers, opaque
 * handles and caller-owned double buffers; int status codes as everywhere. */
#ifndef IMPULSE_FLAT_H
#define IMPULSE_FLAT_H

#include "impulse/cdl.h"
#include "impulse/chnn_models.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Simulate a contact system and write the trajectories to out_path.
 * Negative n_steps / dt select the system's defaults. */
int imp_flat_simulate(const char *system, int n_traj, int n_steps, double dt, double noise,
                      double restitution, unsigned long long seed, const char *out_path);
/* Train a model (cdl, vin, resnet, resnet-contact) with the reference-code
 * settings, overriding epochs (> 0), lr and l2 (>= 0 to override). */
int imp_flat_train(const char *model, const char *data_path, int epochs, double lr, double l2, int touch,
                   unsigned long long seed, const char *out_path);
/* Sizes of a loaded model: configuration size D (= bodies x dim) and bodies K. */
int imp_model_sizes(const imp_model *m, int *D, int *K);
/* Evaluate on a data file: writes rmse and rmse_code. */
int imp_flat_evaluate(const imp_model *m, const char *data_path, double *rmse, double *rmse_code);

/* sizeof of a public struct by its name ("imp_train_opts", ...), so that a
 * binding can check its mirror of the layout or allocate an opaque one;
 * 0 for an unknown name. */
size_t imp_abi_sizeof(const char *type_name);

/* Ground-truth trajectories of a constrained system, a benchmark by name
 * (imp_chnn_system) or a system file (system_file non-NULL; then `system`
 * is ignored), with the sequence of `impulse simulate SYSTEM` (one RNG seeded
 * with `seed` draws each initial state, with rollout_L > 0 as the reference's
 * test starts, then the observation noise). Call once with traj == NULL to
 * get the sizes: *n_points, *d, *n_gen, *T (states per trajectory) and *dt
 * (the defaults when steps < 0, dt <= 0). Then traj (n_traj x T x 2 n_points
 * d, rows (x, v)), energy (n_traj x T, may be NULL), q (n_traj x T x 2 n_gen,
 * generalised coordinates and rates with unwrapped angles, after the noise;
 * may be NULL; benchmarks only) and offsets (n_traj, may be NULL;
 * rollout_L > 0) are filled. rtol, atol <= 0 select 1e-10, 1e-12.
 * *name receives the system's name (64 bytes, may be NULL). */
int imp_flat_chnn_simulate(const char *system, const char *system_file, int n_traj, int steps, double dt,
                           unsigned long long seed, double spread, double noise, double rtol, double atol,
                           int rollout_L, double *traj, double *energy, double *q, int *offsets, int *n_points, int *d,
                           int *n_gen, int *T, double *dt_out, char *name);

/* The contact law of a contact-family model: *n_pairs contact pairs, whether
 * e is learned, whether it has friction, and e, mu per pair (IMP_MAX_CONTACTS
 * each; imp_model_get_contact_law). */
int imp_flat_model_contact_law(const imp_model *m, int *n_pairs, int *learned, int *friction, double *e,
                               double *mu);

/* Sizes of a constrained model: 1 if its state is Cartesian (x, v), its ODE
 * state size, and its parameter count. */
int imp_flat_cmodel_info(const imp_cmodel *m, int *cartesian, int *dim, size_t *n_params);
/* Contacts (issue #25): a system's declared contacts; a model's learned
 * contacts (0 without contact); its e and mu per contact and the system's
 * declared ones (any output may be NULL). */
int imp_flat_csystem_contacts(const imp_csystem *cs);
int imp_flat_cmodel_contacts(const imp_cmodel *m);
int imp_flat_cmodel_contact_values(const imp_cmodel *m, const double *params, double *e, double *mu,
                                   double *e_declared, double *mu_declared);
/* Contact c's names: name ("body-plane" or "bodyA-bodyB"), its body, its
 * plane ("" for a contact between two bodies) and the other body ("" for a
 * plane contact); each buffer n chars. */
int imp_flat_cmodel_contact_names(const imp_cmodel *m, int c, char *name, char *body, char *plane, char *other,
                                  size_t n);

#ifdef __cplusplus
}
#endif
#endif
