#define _POSIX_C_SOURCE 200809L
/* The rigid-body step (include/impulse/rigid_model.h): CPU time of a full
 * toss (110 samples at dt 1/148, 1, 2, 4 steps per sample, cold and warm
 * started impulse solves) on one core, with a trajectory file as the second
 * argument also of its measured tosses (1-4 steps per sample), and the
 * box-toss simulator's convergence in the step (position and rotation of
 * rollouts with 1..128 steps per sample against 512). docs/cube.md. */
#include "impulse/core.h"
#include "impulse/rigid_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int n_toss = argc > 1 ? atoi(argv[1]) : 50;
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    imp_rigid_model m;
    imp_rigid_model_box(&m, &o.body, o.e, o.mu, o.ground, o.gravity);
    size_t n = 110;
    double *out = malloc(n * 13 * sizeof(double)), *ref = malloc(n * 13 * sizeof(double));
    for (int warm = 0; warm <= 1; warm++)
        for (int sub = 1; sub <= 4; sub *= 2) {
            m.warm_start = warm;
            double t0 = cpu_now();
            for (int k = 0; k < n_toss; k++) {
                double x0[13];
                imp_box_toss_initial(&o, k, x0);
                if (imp_rigid_model_rollout(&m, o.dt, sub, x0, n, out)) {
                    fprintf(stderr, "bench_rigid: %s\n", imp_last_error());
                    return 1;
                }
            }
            printf("full toss, %zu samples, %d step(s) per sample%s: %.3f ms CPU per toss (%d tosses)\n", n, sub,
                   warm ? ", warm starts" : "", 1e3 * (cpu_now() - t0) / n_toss, n_toss);
        }
    m.warm_start = 0;
    if (argc > 2) {
        /* measured tosses (a rigid-body trajectory file, e.g. the ContactNets cube): each rolled
           out from its first state for as many samples as it has */
        imp_rigid_traj t;
        imp_rigid_traj_default(&t);
        if (imp_rigid_traj_load_any(&t, argv[2], NULL)) {
            fprintf(stderr, "bench_rigid: %s\n", imp_last_error());
            return 1;
        }
        int ne = t.n_episodes < n_toss ? t.n_episodes : n_toss;
        double *buf = NULL;
        size_t samples = 0;
        for (int k = 0; k < ne; k++) samples += (size_t)t.lengths[k];
        for (int warm = 0; warm <= 1; warm++)
            for (int sub = 1; sub <= 4; sub++) {
                imp_rigid_model mt;
                imp_rigid_model_box(&mt, &t.body, 0.15, 0.185, 0.0, t.gravity);
                mt.warm_start = warm;
                double t0 = cpu_now();
                for (int k = 0; k < ne; k++) {
                    size_t len = (size_t)t.lengths[k];
                    double *nb = realloc(buf, len * 13 * sizeof(double));
                    if (!nb) return 1;
                    buf = nb;
                    if (imp_rigid_model_rollout(&mt, t.dt, sub, t.states + 13 * imp_rigid_traj_offset(&t, k), len,
                                                buf)) {
                        fprintf(stderr, "bench_rigid: %s\n", imp_last_error());
                        return 1;
                    }
                }
                printf("measured tosses (%s, first %d, %.0f samples each on average), %d step(s) per sample%s: %.3f ms "
                       "CPU per toss\n", argv[2], ne, (double)samples / ne, sub, warm ? ", warm starts" : "",
                       1e3 * (cpu_now() - t0) / ne);
            }
        free(buf);
        imp_rigid_traj_free(&t);
    }
    {
        /* forward with traces and the reverse pass of a loss on the last state, one step per sample */
        imp_rigid_step_trace *tr = malloc(n * sizeof *tr);
        double t0 = cpu_now();
        for (int k = 0; k < n_toss; k++) {
            double x[13], bar[13] = {0}, sb[13];
            imp_box_toss_initial(&o, k, x);
            for (size_t j = 1; j < n; j++)
                if (imp_rigid_step_forward(&m, o.dt, x, x, &tr[j])) return 1;
            bar[6] = 1.0;
            imp_rigid_model_grad g = {0};
            for (size_t j = n - 1; j >= 1; j--) {
                for (int i = 0; i < 13; i++) sb[i] = 0.0;
                if (imp_rigid_step_backward(&m, &tr[j], bar, sb, &g)) {
                    fprintf(stderr, "bench_rigid: %s\n", imp_last_error());
                    return 1;
                }
                for (int i = 0; i < 13; i++) bar[i] = sb[i];
            }
        }
        printf("full toss forward + reverse pass, one step per sample: %.3f ms CPU per toss\n",
               1e3 * (cpu_now() - t0) / n_toss);
        free(tr);
    }
    int nconv = n_toss < 20 ? n_toss : 20;
    printf("convergence against 512 steps per sample (%d tosses, %zu samples): mean position error (%% width), "
           "mean rotation error (deg)\n", nconv, n);
    for (int sub = 1; sub <= (getenv("RIGID_CONV") ? 128 : 0); sub *= 2) {
        double pe = 0, re = 0;
        for (int k = 0; k < nconv; k++) {
            double x0[13];
            imp_box_toss_initial(&o, k, x0);
            if (imp_rigid_model_rollout(&m, o.dt, 512, x0, n, ref) || imp_rigid_model_rollout(&m, o.dt, sub, x0, n, out))
                return 1;
            imp_rigid_metrics mt;
            imp_rigid_metrics_episode(out, ref, n, &o.body, 0.0, &mt);
            pe += mt.position_error_pct / nconv, re += mt.rotation_error_deg / nconv;
        }
        printf("  %3d steps per sample: %.4f %% %.4f deg\n", sub, pe, re);
    }
    free(out), free(ref);
    return 0;
}
