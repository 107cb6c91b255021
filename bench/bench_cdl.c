/* Speed of the CD-Lagrange strand (not part of the test suite):
 *  1. one training epoch of the bouncing-ball experiment (one trajectory of
 *     500 steps, horizon 10, batch 32, reference-code architecture), timed
 *     here (contact network and potential sweeps in single precision, as
 *     training does by default, and all in double; then the default on 2
 *     threads) and, if /usr/bin/python3 has torch, in
 *     bench/cdl_epoch_torch.py (same model, float64 and float32, one
 *     thread, and float64 on 2 threads), printed as ratios;
 *  2. the latency of one rollout step of a trained CDL network, by each of
 *     imp_model_rollout_single's kernel choices.
 * The kernels' instruction set is the best the CPU has; IMPULSE_ISA=avx2 (or
 * base) measures a lower one, BLAS kernels included (core.h).
 * impulse: the median of 5 blocks of [epochs] epochs after a warm-up epoch;
 * PyTorch: the mean of 7 epochs after its first (bench/cdl_epoch_torch.py).
 * Ratios in wall time and in process CPU time (summed over threads; on a
 * loaded machine the wall times measure the load, the CPU times less so).
 * Run: ./build/bench_cdl [epochs] [--no-torch]   (from the source root) */
#define _POSIX_C_SOURCE 200809L
#include "impulse/cdl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    /* SkylakeX kernels and no idle OpenBLAS pool: its workers spin on the
     * other core for a while after start-up, about 2 ms of CPU per epoch
     * during the first timed block when this bench did not set it */
    imp_blas_env_fixup(argv);
    imp_blas_init();
    int epochs = argc > 1 ? atoi(argv[1]) : 20;
    if (epochs < 1) epochs = 1;
    imp_sim_opts o;
    imp_trajset ts;
    imp_sim_defaults("bouncing-ball", &o);
    o.noise = 0.2;
    if (imp_simulate("bouncing-ball", &o, &ts) || imp_trajset_save(&ts, "bench_cdl_ball.npz")) {
        fprintf(stderr, "bench_cdl: %s\n", imp_last_error());
        return 1;
    }
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    imp_model *m;
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    to.epochs = 1;
    if (imp_model_create(&m, &cfg, &ts.geom, ts.dt, 0)) return 1;
    imp_model_train(m, &ts, &to, NULL); /* warm-up */
    to.epochs = epochs;
    /* BLOCKS blocks of `epochs` epochs each; the median block is reported
     * (single runs on these shared machines move by 5-10 %) */
    enum { BLOCKS = 5 };
    double ours = 0.0, ours2 = 0.0, ours_cpu = 0.0, ours2_cpu = 0.0, t0;
    printf("kernels: %s, BLAS core %s\n", imp_nn_isa(), imp_blas_corename());
    /* default precision, all double, default precision on 2 threads */
    for (int run = 0; run < 3; run++) {
        const int single = run != 1;
        to.single_contact = single;
        to.single_potential = single;
        to.threads = run == 2 ? 2 : 1;
        double wall[BLOCKS], cpu[BLOCKS];
        for (int k = 0; k < BLOCKS; k++) {
            double c0 = cpu_now();
            t0 = imp_time_now();
            if (imp_model_train(m, &ts, &to, NULL)) {
                fprintf(stderr, "bench_cdl: %s\n", imp_last_error());
                return 1;
            }
            wall[k] = (imp_time_now() - t0) / epochs, cpu[k] = (cpu_now() - c0) / epochs;
        }
        qsort(wall, BLOCKS, sizeof wall[0], cmp_double);
        qsort(cpu, BLOCKS, sizeof cpu[0], cmp_double);
        if (run == 0) ours = wall[BLOCKS / 2], ours_cpu = cpu[BLOCKS / 2];
        if (run == 2) ours2 = wall[BLOCKS / 2], ours2_cpu = cpu[BLOCKS / 2];
        printf("impulse: one CDL training epoch (ball, 500 steps, H=10, B=32), %s, %d thread%s: %.2f ms wall "
               "(median of %d x %d epochs; range %.2f-%.2f), %.2f ms CPU\n",
               single ? "default (contact net and potential sweeps in single)" : "all double", to.threads,
               to.threads > 1 ? "s" : "", 1e3 * wall[BLOCKS / 2], BLOCKS, epochs, 1e3 * wall[0],
               1e3 * wall[BLOCKS - 1], 1e3 * cpu[BLOCKS / 2]);
    }
    to.threads = 1;

    /* rollout step latency: the default (imp_model_rollout: double, one-row
     * kernels on weights fixed per rollout), the batch passes training uses
     * (IMP_ROLLOUT_BLAS), the contact network in single, then the potential's
     * force too; REPS rollouts of each, interleaved, the median and the best */
    double x0[2] = {10.0, 0.0};
    int T = 20000;
    double *states = malloc(sizeof(double) * 2 * T), *c = malloc(sizeof(double) * T);
    enum { MODES = 4, REPS = 5 };
    static const char *const parts[MODES] = {"double (default)", "double, batch passes (IMP_ROLLOUT_BLAS)",
                                             "contact net in single", "contact net and potential in single"};
    static const int flags[MODES] = {0, IMP_ROLLOUT_BLAS, IMP_ROLLOUT_SINGLE_CONTACT,
                                     IMP_ROLLOUT_SINGLE_CONTACT | IMP_ROLLOUT_SINGLE_POTENTIAL};
    double rwall[MODES][REPS], rcpu[MODES][REPS];
    for (int r = 0; r < REPS; r++)
        for (int k = 0; k < MODES; k++) {
            double c0 = cpu_now();
            t0 = imp_time_now();
            if (imp_model_rollout_single(m, x0, T, NULL, flags[k], states, c)) {
                fprintf(stderr, "bench_cdl: %s\n", imp_last_error());
                return 1;
            }
            rwall[k][r] = 1e6 * (imp_time_now() - t0) / (T - 1), rcpu[k][r] = 1e6 * (cpu_now() - c0) / (T - 1);
        }
    for (int k = 0; k < MODES; k++) {
        qsort(rwall[k], REPS, sizeof(double), cmp_double);
        qsort(rcpu[k], REPS, sizeof(double), cmp_double);
        printf("impulse: one CDL rollout step (potential 1-500-1 + contact net 2-100-100-1, %s): "
               "%.2f us CPU (median of %d rollouts of %d steps; best %.2f), %.2f us wall\n",
               parts[k], rcpu[k][REPS / 2], REPS, T, rcpu[k][0], rwall[k][REPS / 2]);
    }
    free(states), free(c);

    int want_torch = !(argc > 2 && strcmp(argv[2], "--no-torch") == 0);
    static const char *const dtypes[3] = {"float64", "float32", "float64"};
    for (int k = 0; k < 3 && want_torch; k++) {
        const int threads = k == 2 ? 2 : 1;
        char cmd[256];
        snprintf(cmd, sizeof cmd,
                 "OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/cdl_epoch_torch.py bench_cdl_ball.npz 8 %s %d 2>/dev/null",
                 threads, dtypes[k], threads);
        FILE *p = popen(cmd, "r");
        double torch_s = 0, torch_cpu = 0;
        if (p && fscanf(p, "%lf %lf", &torch_s, &torch_cpu) == 2 && torch_s > 0)
            printf("pytorch %s, %d thread%s: one epoch %.1f ms wall, %.1f ms CPU  ->  impulse (default training, "
                   "%d thread%s) is %.1fx faster (wall), %.1fx (CPU time)\n", dtypes[k], threads,
                   threads > 1 ? "s" : "", 1e3 * torch_s, 1e3 * torch_cpu, threads, threads > 1 ? "s" : "",
                   torch_s / (threads > 1 ? ours2 : ours), torch_cpu / (threads > 1 ? ours2_cpu : ours_cpu));
        else
            printf("pytorch: not measured (needs /usr/bin/python3 with torch: apt-get install python3-torch)\n");
        if (p) pclose(p);
    }
    imp_model_free(m);
    imp_trajset_free(&ts);
    return 0;
}
