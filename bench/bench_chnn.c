/* One CHNN training epoch on the 3-pendulum with the reference settings
 * (800 chunks, batch 200, RK4 3/8 rule 4 steps of dt = 0.03, L1 loss,
 * AdamW 3e-3), timed. Writes the chunks it trained on to an .npz so that
 * bench/bench_chnn_torch.py times the same epoch in PyTorch.
 *
 * usage: bench_chnn [epochs] [out.npz]
 * The trajectories come from a fixed random "teacher" CHNN started on the
 * constraint manifold: the timing does not depend on what is learned. */
#include "impulse/chnn_models.h"
#include "impulse/io.h"
#include "impulse/chnn_systems.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    imp_blas_init();
    int epochs = argc > 1 ? atoi(argv[1]) : 3;
    const char *out = argc > 2 ? argv[2] : "bench_chnn_data.npz";
    imp_csystem cs;
    imp_cmodel teacher, m;
    if (imp_csystem_from_name(&cs, "pendulum-chain:3") || imp_cmodel_init(&teacher, IMP_CMODEL_CHNN, &cs, 32, 3) ||
        imp_cmodel_init(&m, IMP_CMODEL_CHNN, &cs, 256, 3)) {
        fprintf(stderr, "bench_chnn: %s\n", imp_last_error());
        return 1;
    }
    const int n_traj = 800, T = 5, dim = teacher.dim;
    const double dt = 0.03;
    imp_rng rng;
    imp_rng_seed(&rng, 1);
    double *tp = malloc(teacher.n_params * sizeof(double));
    imp_cmodel_init_params(&teacher, tp, &rng);
    double *y0 = malloc((size_t)n_traj * dim * sizeof(double));
    imp_csys_work *cw = imp_csys_work_new(&cs.full);
    for (int i = 0; i < n_traj; i++) imp_chnn_sample_state(&cs.full, &rng, 0.0, y0 + (size_t)i * dim, cw);
    imp_csys_work_free(cw);
    double *traj = malloc((size_t)T * n_traj * dim * sizeof(double));
    imp_cmodel_work *tw = imp_cmodel_work_new(&teacher, n_traj);
    imp_cmodel_binding tb = {&teacher, tp, tw};
    imp_ode ode;
    imp_cmodel_ode(&ode, &tb);
    if (imp_integrate_fixed(&imp_stepper_rk4, &ode, 0.0, dt, T - 1, y0, n_traj, traj)) {
        fprintf(stderr, "bench_chnn: %s\n", imp_last_error());
        return 1;
    }
    imp_ctraj data = {n_traj, T, dim, dt, malloc((size_t)n_traj * T * dim * sizeof(double))};
    for (int i = 0; i < n_traj; i++)
        for (int k = 0; k < T; k++)
            memcpy(data.z + ((size_t)i * T + k) * dim, traj + ((size_t)k * n_traj + i) * dim, dim * sizeof(double));
    /* (n, T, 2, n_points, d) as the reference's z */
    size_t shape[5] = {(size_t)n_traj, (size_t)T, 2, 3, 2};
    imp_npz *z = imp_npz_new();
    imp_npz_add_f64(z, "z", 5, shape, data.z);
    imp_npz_set_meta(z, "{\"system\": \"pendulum-chain:3\", \"dt\": 0.03}");
    if (imp_npz_save(z, out)) fprintf(stderr, "bench_chnn: %s\n", imp_last_error());
    imp_npz_free(z);

    double *params = malloc(m.n_params * sizeof(double));
    imp_cmodel_init_params(&m, params, &rng);
    imp_ctrain_opts o;
    imp_ctrain_opts_default(&o);
    o.epochs = epochs;
    imp_ctrain_result res;
    clock_t c0 = clock();
    int rc = imp_ctrain(&m, params, &data, &o, &res);
    double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    if (rc) {
        fprintf(stderr, "bench_chnn: %s\n", imp_last_error());
        return 1;
    }
    printf("impulse CHNN 3-pendulum: %d epochs, %.4f s/epoch wall, %.4f s/epoch cpu (800 chunks, batch 200, RK4 x4, %zu params, final loss %.4g)\n",
           res.epochs, res.seconds / res.epochs, cpu / res.epochs, m.n_params, res.final_loss);
    imp_cmodel_work_free(tw);
    free(tp); free(y0); free(traj); free(data.z); free(params);
    return 0;
}
