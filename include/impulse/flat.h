/* A flat, FFI-friendly layer over the CD-Lagrange strand for bindings
 * (python/impulse uses it through ctypes): only strings, numbers, opaque
 * handles and caller-owned double buffers; int status codes as everywhere. */
#ifndef IMPULSE_FLAT_H
#define IMPULSE_FLAT_H

#include "impulse/cdl.h"

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

#ifdef __cplusplus
}
#endif
#endif
