/* box-toss (#24 item 5): random tosses of a rigid box onto the ground,
 * integrated with the rigid-body step of src/models/rigid_step.c in fine
 * sub-steps (include/impulse/rigid_model.h, docs/cube.md). */
#include "impulse/core.h"
#include "impulse/rigid_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_box_toss_defaults(imp_box_toss_opts *o)
{
    memset(o, 0, sizeof *o);
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    o->n_tosses = 1;
    o->n_samples = 148;
    o->dt = t.dt;
    o->substeps = 64;
    o->e = 0.3, o->mu = 0.25;
    o->ground = 0.0, o->gravity = 9.81;
    o->body = t.body;
}

void imp_box_toss_initial(const imp_box_toss_opts *o, int k, double s[13])
{
    imp_rng rng;
    imp_rng_seed(&rng, o->seed * 1000003ULL + (uint64_t)k);
    double n2 = 0.0;
    for (int i = 0; i < 4; i++) s[i] = imp_rng_normal(&rng), n2 += s[i] * s[i];
    for (int i = 0; i < 4; i++) s[i] /= sqrt(n2);
    s[4] = imp_rng_uniform_range(&rng, -0.1, 0.1);
    s[5] = imp_rng_uniform_range(&rng, -0.1, 0.1);
    s[6] = o->ground + imp_rng_uniform_range(&rng, 0.15, 0.35);
    for (int i = 0; i < 3; i++) s[7 + i] = imp_rng_uniform_range(&rng, -10, 10);
    s[10] = 0.6 * imp_rng_normal(&rng);
    s[11] = 0.6 * imp_rng_normal(&rng);
    s[12] = imp_rng_uniform_range(&rng, -1, 1);
}

int imp_box_toss_simulate(const imp_box_toss_opts *o, imp_rigid_traj *t)
{
    if (o->n_tosses < 1) return imp_fail(IMP_ERR_INVALID, "box-toss: n_tosses %d is not >= 1", o->n_tosses);
    if (o->n_samples < 2) return imp_fail(IMP_ERR_INVALID, "box-toss: n_samples %d is not >= 2", o->n_samples);
    if (o->substeps < 1) return imp_fail(IMP_ERR_INVALID, "box-toss: substeps %d is not >= 1", o->substeps);
    if (!(o->dt > 0) || !isfinite(o->dt)) return imp_fail(IMP_ERR_INVALID, "box-toss: dt %g is not > 0", o->dt);
    imp_rigid_model m;
    imp_rigid_model_box(&m, &o->body, o->e, o->mu, o->ground, o->gravity);
    int st = imp_rigid_model_check(&m);
    if (st) return st;
    size_t n = (size_t)o->n_tosses * o->n_samples;
    double *states = malloc(n * 13 * sizeof(double));
    int64_t *lengths = malloc((size_t)o->n_tosses * sizeof(int64_t));
    if (!states || !lengths) {
        free(states), free(lengths);
        return imp_fail(IMP_ERR_NOMEM, "box-toss: out of memory for %zu samples", n);
    }
    for (int k = 0; k < o->n_tosses && !st; k++) {
        double x0[13];
        imp_box_toss_initial(o, k, x0);
        lengths[k] = o->n_samples;
        st = imp_rigid_model_rollout(&m, o->dt, o->substeps, x0, (size_t)o->n_samples,
                                     states + (size_t)k * o->n_samples * 13);
        if (st) imp_fail_context(st, "box-toss: toss %d", k);
    }
    if (!st) {
        t->dt = o->dt;
        t->body = o->body;
        t->ground_height = o->ground;
        t->gravity = o->gravity;
        snprintf(t->source, sizeof t->source, "impulse simulate box-toss (e %g, mu %g, %d substeps, seed %llu)", o->e,
                 o->mu, o->substeps, (unsigned long long)o->seed);
        st = imp_rigid_traj_set(t, states, n, lengths, NULL, (size_t)o->n_tosses, IMP_RIGID_QUAT_TOL);
    }
    free(states), free(lengths);
    return st;
}
