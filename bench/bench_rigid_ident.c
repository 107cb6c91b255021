/* rigid-identified (#28): e, mu and the ground of the rigid-body step fitted
 * on training tosses of a rigid-body trajectory file (random 50/25/25 split of
 * --draw tosses, seed), then scored on the test tosses with the full-toss
 * metrics; one JSON line. docs/cube.md.
 *   build/bench_rigid_ident FILE [--draw N] [--seed K] [--substeps S] [--max-evals E] [--window W] [--bobyqa] */
#define _POSIX_C_SOURCE 200809L
#include "impulse/core.h"
#include "impulse/rigid_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_rigid_ident FILE [--draw N] [--seed K] [--substeps S] [--max-evals E] [--window W] [--bobyqa]\n");
        return 2;
    }
    int draw = 128, substeps = 4, max_evals = 100, window = 0, bobyqa = 0;
    unsigned long long seed = 0;
    for (int i = 2; i < argc; i += 2) {
        if (!strcmp(argv[i], "--bobyqa")) {
            bobyqa = 1, i--;
            continue;
        }
        if (i + 1 == argc) {
            fprintf(stderr, "bench_rigid_ident: %s needs a value\n", argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "--draw")) draw = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--substeps")) substeps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-evals")) max_evals = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--window")) window = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "bench_rigid_ident: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    if (imp_rigid_traj_load(&t, argv[1])) {
        fprintf(stderr, "bench_rigid_ident: %s\n", imp_last_error());
        return 1;
    }
    if (draw > t.n_episodes) draw = t.n_episodes;
    int *tr = malloc(3 * (size_t)draw * sizeof(int)), *va = tr + draw, *te = va + draw, ntr, nva, nte;
    if (imp_rigid_split(t.n_episodes, draw, seed, 0.5, 0.25, tr, &ntr, va, &nva, te, &nte)) return 1;
    imp_rigid_ident_opts o;
    imp_rigid_ident_defaults(&o, &t);
    o.substeps = substeps, o.max_evals = max_evals, o.window = window;
    if (bobyqa) o.algorithm = IMP_RIGID_IDENT_BOBYQA;
    imp_rigid_model m;
    imp_rigid_ident_result r;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (imp_rigid_identify(&t, tr, ntr, &o, &m, &r)) {
        fprintf(stderr, "bench_rigid_ident: %s\n", imp_last_error());
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    imp_rigid_model_ctx rc = {&m, t.dt, substeps};
    imp_rigid_metrics mt;
    if (imp_rigid_eval_rollouts(&t, te, nte, imp_rigid_model_rollout_fn, &rc, m.ground, &mt)) {
        fprintf(stderr, "bench_rigid_ident: %s\n", imp_last_error());
        return 1;
    }
    printf("{\"model\": \"rigid-identified\", \"tosses\": %d, \"drawn\": %d, \"seed\": %llu, \"test\": \"split\", \"test_tosses\": %d, "
           "\"substeps\": %d, \"window\": %d, \"e\": %.4f, \"mu\": %.4f, \"ground_mm\": %.3f, \"evals\": %d, \"fit_seconds\": %.1f, "
           "\"train_position_error_pct\": %.2f, \"train_rotation_error_deg\": %.2f, "
           "\"position_error_pct\": %.2f, \"rotation_error_deg\": %.2f, \"penetration_pct\": %.3f}\n",
           ntr, draw, seed, nte, substeps, window, m.e, m.mu, 1e3 * m.ground, r.evals,
           (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec), r.train.position_error_pct,
           r.train.rotation_error_deg, mt.position_error_pct, mt.rotation_error_deg, mt.penetration_pct);
    free(tr);
    imp_rigid_traj_free(&t);
    return 0;
}
