/* Benchmark data for the constrained-network experiments: training and
 * test sets drawn as the reference does ([chnn] section 1), and the
 * perturbed-ground-truth noise floor of [F] figures 5 and 7. */
#include "impulse/chnn_models.h"
#include "impulse/chnn_systems.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ground truth a bit tighter than the reference's float32 dopri5 (rtol
 * 1e-7): the data should not limit the comparison. */
static const imp_chnn_sim_opts sim_opts = {1e-10, 1e-12};

int imp_cexp_train_data(const imp_csystem *sys, int n_traj, int T, uint64_t seed, imp_ctraj *out)
{
    if (!sys || !out || n_traj < 1 || T < 2)
        return imp_fail(IMP_ERR_INVALID, "train data: need n_traj >= 1 and T >= 2");
    int dim = 2 * sys->n_points * sys->d;
    memset(out, 0, sizeof *out);
    out->z = malloc((size_t)n_traj * T * dim * sizeof(double));
    if (!out->z) return imp_fail(IMP_ERR_NOMEM, "train data: out of memory");
    out->n_traj = n_traj;
    out->T = T;
    out->dim = dim;
    out->dt = sys->dt;
    int st = imp_chnn_generate(&sys->full, n_traj, T - 1, sys->dt, seed, 0.0, &sim_opts, out->z);
    if (st) imp_ctraj_free(out);
    return st;
}

int imp_cexp_test_data(const imp_csystem *sys, int n_traj, int T, uint64_t seed, imp_ctraj *out)
{
    if (!sys || !out || n_traj < 1 || T < 2)
        return imp_fail(IMP_ERR_INVALID, "test data: need n_traj >= 1 and T >= 2");
    const int L = 5, n_win = 20; /* chunk starts 0, 5, ..., 95 */
    int Tlong = (n_win - 1) * L + T;
    imp_ctraj big;
    int st = imp_cexp_train_data(sys, n_traj, Tlong, seed, &big);
    if (st) return st;
    int dim = big.dim;
    memset(out, 0, sizeof *out);
    out->z = malloc((size_t)n_traj * T * dim * sizeof(double));
    if (!out->z) {
        imp_ctraj_free(&big);
        return imp_fail(IMP_ERR_NOMEM, "test data: out of memory");
    }
    out->n_traj = n_traj;
    out->T = T;
    out->dim = dim;
    out->dt = sys->dt;
    imp_rng rng;
    imp_rng_seed(&rng, seed ^ 0x7e57ULL);
    for (int i = 0; i < n_traj; i++) {
        int s0 = L * (int)imp_rng_below(&rng, (size_t)n_win);
        memcpy(out->z + (size_t)i * T * dim, big.z + ((size_t)i * Tlong + s0) * dim, (size_t)T * dim * sizeof(double));
    }
    imp_ctraj_free(&big);
    return IMP_OK;
}

int imp_cexp_perturbed_floor(const imp_csystem *sys, const imp_ctraj *test, uint64_t seed,
                             double *mean_geo)
{
    int dim = test->dim, T = test->T, N = dim / 2;
    double *xv = malloc((size_t)dim * sizeof(double));
    double *traj = malloc((size_t)T * dim * sizeof(double));
    double *err = malloc((size_t)T * sizeof(double));
    imp_csys_work *w = imp_csys_work_new(&sys->full);
    if (!xv || !traj || !err || !w) {
        free(xv); free(traj); free(err); imp_csys_work_free(w);
        return imp_fail(IMP_ERR_NOMEM, "perturbed floor: out of memory");
    }
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    double sum = 0;
    int st = IMP_OK;
    for (int i = 0; i < test->n_traj && !st; i++) {
        const double *z = test->z + (size_t)i * T * dim;
        for (int k = 0; k < dim; k++) xv[k] = z[k] + 1e-4 * imp_rng_normal(&rng);
        /* the reference projects z0 + 1e-4 N(0, 1) with its Newton steps on
         * (x, v) in the Euclidean metric; the mass-metric projection
         * (positions, then velocities) leaves a perturbation up to 10x larger
         * on the gyroscope (floor 9.2e-5 instead of 2.6e-5) */
        st = imp_csys_project_state(&sys->full, xv, xv + N, NULL, w);
        if (!st) st = imp_chnn_simulate(&sys->full, xv, test->dt, T - 1, &sim_opts, traj, NULL);
        if (st) break;
        for (int k = 0; k < T; k++) err[k] = imp_ceval_rel_err(traj + (size_t)k * dim, z + (size_t)k * dim, dim);
        sum += imp_ceval_geo_mean(err, T);
    }
    if (!st) *mean_geo = sum / test->n_traj;
    free(xv); free(traj); free(err);
    imp_csys_work_free(w);
    return st;
}
