/* One CHNN training epoch on the 3-pendulum with the reference settings
 * (800 chunks, batch 200, RK4 3/8 rule 4 steps of dt = 0.03, L1 loss,
 * AdamW 3e-3), timed for each thread count asked for (wall time and process
 * CPU time, i.e. summed over threads), with the projection to the
 * reference's 2000 epochs. Writes the chunks it trained on to an .npz so
 * that bench/bench_chnn_torch.py times the same epoch in PyTorch.
 *
 * usage: bench_chnn [epochs] [out.npz] [threads, e.g. 1,2] [precisions, e.g. double,single]
 *        (defaults 3, bench_chnn_data.npz, 1,2, double,single)
 * "single": the hidden-to-hidden products in float (imp_ctrain_opts.single_products).
 * Also measures this machine's dgemm and sgemm peak at the epoch's main
 * shape (200 x 256 x 256, one thread) and prints the share of it that each
 * epoch reaches: the GEMM flops of the epoch (imp_nn_gemm_flops) per second
 * of its critical path (CPU time of the slowest thread, see imp_ctrain_result),
 * over the peak (also CPU time).
 * The trajectories come from a fixed random "teacher" CHNN started on the
 * constraint manifold: the timing does not depend on what is learned.
 * Also prints the cost of the thread hand-off: a pthread create + join, and
 * a pool call on a minimal batch with 1 and 2 threads. */
#define _POSIX_C_SOURCE 200809L
#include "impulse/chnn_models.h"
#include "impulse/io.h"
#include "impulse/chnn_systems.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

/* elapsed training time after the first and after the last epoch */
typedef struct { double first, last; } epoch_clock;
static void on_epoch(void *user, int epoch, double loss, double seconds)
{
    (void)loss;
    epoch_clock *c = user;
    if (epoch == 0) c->first = seconds; /* epochs count from 0 */
    c->last = seconds;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *empty_thread(void *arg) { return arg; }

static double thread_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* GFLOP/s of one-thread dgemm (single = 0) or sgemm at M x N x K = 200 x 256
 * x 256 per second of this thread's CPU time (the best of 5 blocks of 40
 * calls; CPU time, so that other programs on the machine count less). */
static double gemm_peak(int single)
{
    enum { M = 200, N = 256, K = 256, REPS = 40 };
    double *A = malloc(sizeof(double) * M * K), *Bm = malloc(sizeof(double) * K * N), *C = malloc(sizeof(double) * M * N);
    float *Af = malloc(sizeof(float) * M * K), *Bf = malloc(sizeof(float) * K * N), *Cf = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) A[i] = Af[i] = (float)((i % 7) * 0.1);
    for (int i = 0; i < K * N; i++) Bm[i] = Bf[i] = (float)((i % 5) * 0.1);
    double best = 0;
    for (int blk = 0; blk < 6; blk++) {
        double t0 = thread_cpu_now();
        for (int r = 0; r < REPS; r++)
            if (single)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, Af, K, Bf, N, 0.0f, Cf, N);
            else
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, A, K, Bm, N, 0.0, C, N);
        double rate = 2.0 * M * N * K * REPS / (thread_cpu_now() - t0) / 1e9;
        if (blk > 0 && rate > best) best = rate;
    }
    free(A), free(Bm), free(C), free(Af), free(Bf), free(Cf);
    return best;
}

static imp_csystem data_sys;

/* Per-minibatch overheads of the threading, in microseconds, on a 4-wide
 * CHNN (almost no work, so the time is the hand-off). */
static void handoff_costs(const imp_ctraj *data)
{
    imp_cmodel tiny, *m = &tiny;
    if (imp_cmodel_init(&tiny, IMP_CMODEL_CHNN, &data_sys, 4, 3)) return;
    const int n = 2000;
    double t0 = imp_time_now();
    for (int i = 0; i < n; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, empty_thread, NULL)) return;
        pthread_join(th, NULL);
    }
    double create_us = 1e6 * (imp_time_now() - t0) / n;
    /* 2 chunks, one per thread */
    double call_us[2] = {0, 0};
    double *params = malloc(m->n_params * sizeof(double)), *grad = calloc(m->n_params, sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, 3);
    imp_cmodel_init_params(m, params, &rng);
    size_t csz = (size_t)data->T * data->dim;
    for (int T = 1; T <= 2; T++) {
        imp_ctrain_pool *p = NULL;
        if (imp_ctrain_pool_new(&p, m, 2, data->T - 1, T)) break;
        double loss;
        imp_ctrain_pool_loss(p, params, data->z, 2, data->dt, grad, &loss);
        t0 = imp_time_now();
        for (int i = 0; i < n; i++) imp_ctrain_pool_loss(p, params, data->z + 0 * csz, 2, data->dt, grad, &loss);
        call_us[T - 1] = 1e6 * (imp_time_now() - t0) / n;
        imp_ctrain_pool_free(p);
    }
    printf("thread hand-off: pthread_create + join %.1f us; pool call on 2 chunks of a %d-wide CHNN: "
           "%.1f us (1 thread), %.1f us (2 threads); a batch-200 minibatch takes ~150000 us\n",
           create_us, m->hidden, call_us[0], call_us[1]);
    free(params);
    free(grad);
}

int main(int argc, char **argv)
{
    imp_blas_env_fixup(argv); /* SkylakeX kernels, no idle OpenBLAS pool (include/impulse/core.h) */
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
    imp_ctraj data = {n_traj, T, dim, dt, malloc((size_t)n_traj * T * dim * sizeof(double)), 0};
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

    /* every thread count starts from the same parameters */
    double *params0 = malloc(m.n_params * sizeof(double)), *params = malloc(m.n_params * sizeof(double));
    imp_cmodel_init_params(&m, params0, &rng);
    const double peak[2] = {gemm_peak(0), gemm_peak(1)};
    printf("this machine, one thread, 200 x 256 x 256: dgemm %.1f GFLOP/s, sgemm %.1f GFLOP/s (BLAS core %s, "
           "kernels %s)\n", peak[0], peak[1], imp_blas_corename(), imp_nn_isa());
    char list[256], precs[64];
    snprintf(list, sizeof list, "%s", argc > 3 ? argv[3] : "1,2");
    snprintf(precs, sizeof precs, "%s", argc > 4 ? argv[4] : "double,single");
    int n_thr = 0, thr[16];
    for (char *tok = strtok(list, ","); tok && n_thr < 16; tok = strtok(NULL, ",")) thr[n_thr++] = atoi(tok);
    int n_prec = 0, prec[2];
    for (char *tok = strtok(precs, ","); tok && n_prec < 2; tok = strtok(NULL, ","))
        prec[n_prec++] = !strcmp(tok, "single");
    for (int pi = 0; pi < n_prec; pi++)
    for (int ti = 0; ti < n_thr; ti++) {
        memcpy(params, params0, m.n_params * sizeof(double));
        imp_ctrain_opts o;
        imp_ctrain_opts_default(&o);
        o.epochs = epochs;
        o.threads = thr[ti];
        o.single_products = prec[pi];
        const char *pname = prec[pi] ? "single products" : "double";
        epoch_clock clk = {0, 0};
        o.progress = on_epoch;
        o.progress_user = &clk;
        imp_ctrain_result res;
        double c0 = cpu_now(), f0 = imp_nn_gemm_flops();
        int rc = imp_ctrain(&m, params, &data, &o, &res);
        double cpu = cpu_now() - c0, flops = (imp_nn_gemm_flops() - f0) / (res.epochs > 0 ? res.epochs : 1);
        if (rc) {
            fprintf(stderr, "bench_chnn: %s\n", imp_last_error());
            return 1;
        }
        printf("impulse CHNN 3-pendulum, %d thread%s, %s: %d epochs, %.4f s/epoch wall, %.4f s/epoch cpu, "
               "%.4f s/epoch critical path (800 chunks, batch 200, RK4 x4, %zu params, final loss %.6g); "
               "2000 epochs: %.1f min wall, %.1f min critical path\n",
               o.threads, o.threads == 1 ? "" : "s", pname, res.epochs, res.seconds / res.epochs, cpu / res.epochs,
               res.critical_seconds / res.epochs, m.n_params, res.final_loss, 2000 * res.seconds / res.epochs / 60,
               2000 * res.critical_seconds / res.epochs / 60);
        /* the first epoch also faults in the work buffers (a tenth of a
         * 3-epoch run); the peer likewise reports the epochs after its first */
        double steady = res.epochs > 1 ? (clk.last - clk.first) / (res.epochs - 1) : res.seconds / res.epochs;
        if (res.epochs > 1)
            printf("impulse CHNN 3-pendulum, %d thread%s, %s: first epoch %.4f s, then %.4f s/epoch wall (mean of "
                   "the other %d, as bench_chnn_torch.py reports)\n",
                   o.threads, o.threads == 1 ? "" : "s", pname, clk.first, steady, res.epochs - 1);
        const double crit = res.critical_seconds / res.epochs;
        printf("impulse CHNN 3-pendulum, %d thread%s, %s: %.2f GFLOP of general products per epoch, %.1f GFLOP/s "
               "per critical-path second = %.0f %% of %d x this machine's %s peak\n",
               o.threads, o.threads == 1 ? "" : "s", pname, flops / 1e9, flops / crit / 1e9,
               100.0 * flops / crit / 1e9 / (peak[prec[pi]] * o.threads), o.threads, prec[pi] ? "sgemm" : "dgemm");
        fflush(stdout);
    }
    data_sys = cs;
    handoff_costs(&data);
    imp_cmodel_work_free(tw);
    free(tp); free(y0); free(traj); free(data.z); free(params); free(params0);
    return 0;
}
