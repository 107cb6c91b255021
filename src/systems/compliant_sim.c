/* Compliant-contact simulators: the bouncing ball and Newton's cradle with a
 * linear spring-damper (Kelvin-Voigt) contact instead of an instantaneous
 * impact, the way MuJoCo- or Bullet-style soft contacts and real bodies
 * behave: contacts last a while, bodies penetrate, and a touch sensor stays
 * on over one or more samples. They stand in for data not made by impulse's
 * event-driven simulators (include/impulse/contact_systems.h).
 *
 * Per pair with penetration s = -gap > 0 and penetration rate -u (u the
 * normal velocity), the force along the normal is k s + c (-u), released
 * when s returns to zero. For a free pair this is a damped oscillator of
 * natural frequency w = sqrt(k / mu) and damping ratio zeta = c / (2 sqrt(k mu));
 * the contact lasts pi / (w sqrt(1 - zeta^2)) and the rebound velocity is
 * e = exp(-zeta pi / sqrt(1 - zeta^2)) times the approach velocity.
 * Motion is integrated with classical RK4 on 256 sub-steps per sample,
 * each contact's start and end located by bisection. */
#include "impulse/contact_systems.h"
#include "rk4_motion.h"
#include "systems_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SUBSTEPS 256
#define PI 3.14159265358979323846
#define NMAX (IMP_MAX_BODIES * IMP_MAX_DIM)

double imp_compliant_damping_ratio(double e)
{
    if (!(e > 0.0)) return 1.0; /* e = 0: critically damped (no rebound) */
    if (e >= 1.0) return 0.0;
    double l = log(e);
    return -l / sqrt(PI * PI + l * l);
}

typedef struct csim {
    imp_contact_geometry geom;
    int pendulum;       /* 1: coordinates are pendulum angles (cradle) */
    int box;            /* 1: the ball in a box (x, y) */
    double gravity, length, k, c[IMP_MAX_CONTACTS];
    double inertia[IMP_MAX_BODIES]; /* m (ball) or m l^2 (pendulum) */
} csim;

static void accel(const csim *s, const double *q, const double *v, double *a)
{
    const imp_contact_geometry *g = &s->geom;
    int d = g->dim, D = g->n_bodies * d;
    for (int i = 0; i < D; i++) {
        if (s->pendulum) a[i] = -(s->gravity / s->length) * sin(q[i]);
        else a[i] = i % d == d - 1 ? -s->gravity : 0.0;
    }
    for (int p = 0; p < g->n_pairs; p++) {
        double pen = -imp_contact_gap(g, p, q);
        if (pen <= 0.0) continue;
        double f = s->k * pen - s->c[p] * imp_contact_normal_velocity(g, p, v);
        const imp_contact_pair *cp = &g->pairs[p];
        for (int x = 0; x < d; x++) {
            a[cp->body_j * d + x] += f * cp->normal[x] / s->inertia[cp->body_j];
            if (cp->body_i != IMP_WALL) a[cp->body_i * d + x] -= f * cp->normal[x] / s->inertia[cp->body_i];
        }
    }
}

static void accel_qv(const void *ctx, const double *q, const double *v, double *a) { accel(ctx, q, v, a); }

static void rk4(const csim *s, double *q, double *v, double h, int D) { imp_rk4_motion(accel_qv, s, q, v, h, D); }

/* Bitmask of the pairs in contact (gap < 0) at q. */
static unsigned contact_mask(const csim *s, const double *q)
{
    unsigned m = 0;
    for (int p = 0; p < s->geom.n_pairs; p++)
        if (imp_contact_gap(&s->geom, p, q) < 0.0) m |= 1u << p;
    return m;
}

/* One sub-step of length h: the force's kink where a contact starts or ends
 * is located by bisection and stepped onto, so that RK4 only ever integrates
 * smooth pieces (fourth order instead of second across the kink). */
static void advance(const csim *s, double *q, double *v, double h, int D, int *touch)
{
    double remaining = h;
    for (int guard = 0; remaining > 0.0 && guard < 8; guard++) {
        double q1[NMAX], v1[NMAX];
        unsigned m0 = contact_mask(s, q);
        memcpy(q1, q, D * sizeof(double));
        memcpy(v1, v, D * sizeof(double));
        rk4(s, q1, v1, remaining, D);
        double step = remaining;
        if (contact_mask(s, q1) != m0) {
            double lo = 0.0, hi = remaining;
            for (int it = 0; it < 60; it++) {
                double mid = 0.5 * (lo + hi);
                memcpy(q1, q, D * sizeof(double));
                memcpy(v1, v, D * sizeof(double));
                rk4(s, q1, v1, mid, D);
                if (contact_mask(s, q1) != m0) hi = mid;
                else lo = mid;
            }
            step = hi;
            memcpy(q1, q, D * sizeof(double));
            memcpy(v1, v, D * sizeof(double));
            rk4(s, q1, v1, step, D);
        }
        memcpy(q, q1, D * sizeof(double));
        memcpy(v, v1, D * sizeof(double));
        remaining -= step;
        unsigned m = contact_mask(s, q);
        for (int p = 0; p < s->geom.n_pairs; p++)
            if (m & (1u << p)) {
                touch[s->geom.pairs[p].body_j] = 1;
                if (s->geom.pairs[p].body_i != IMP_WALL) touch[s->geom.pairs[p].body_i] = 1;
            }
    }
}

static int setup(const char *system, const imp_sim_opts *o, csim *s)
{
    memset(s, 0, sizeof *s);
    imp_contact_geometry *g = &s->geom;
    g->dim = 1;
    g->restitution = o->restitution;
    s->gravity = o->gravity;
    s->length = o->length;
    s->k = o->stiffness > 0.0 ? o->stiffness : IMP_COMPLIANT_STIFFNESS;
    if (!strcmp(system, "compliant-ball")) {
        g->n_bodies = 1;
        g->mass[0] = 1.0;
        g->n_pairs = 1;
        g->pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {1.0}, .offset = 0.0};
        s->inertia[0] = 1.0;
    } else if (!strcmp(system, "compliant-ball-box")) {
        s->box = 1;
        imp_ball_box_geometry(g);
        s->inertia[0] = 1.0;
    } else if (!strcmp(system, "compliant-cradle")) {
        s->pendulum = 1;
        g->n_bodies = 2;
        g->mass[0] = g->mass[1] = 1.0;
        g->n_pairs = 1;
        g->pairs[0] = (imp_contact_pair){.body_i = 1, .body_j = 0, .normal = {1.0}, .offset = 0.0};
        s->inertia[0] = s->inertia[1] = o->length * o->length;
    } else {
        return imp_fail(IMP_ERR_NOT_FOUND, "system: unknown '%s' (compliant-ball, compliant-cradle, compliant-ball-box)", system);
    }
    double zeta = imp_compliant_damping_ratio(o->restitution);
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *cp = &g->pairs[p];
        double Ij = s->inertia[cp->body_j];
        double mu = cp->body_i == IMP_WALL ? Ij : Ij * s->inertia[cp->body_i] / (Ij + s->inertia[cp->body_i]);
        s->c[p] = 2.0 * zeta * sqrt(s->k * mu);
    }
    return imp_contact_geometry_check(g);
}

int imp_simulate_compliant(const char *system, const imp_sim_opts *o, imp_trajset *out)
{
    csim s;
    int st = imp_sim_opts_check(o);
    if (!st) st = setup(system, o, &s);
    if (!st) st = imp_trajset_alloc(out, o->n_traj, o->n_steps, &s.geom);
    if (st) return st;
    snprintf(out->system, sizeof out->system, "%s", system);
    snprintf(out->labels, sizeof out->labels, "touch");
    out->dt = o->dt;
    out->gravity = o->gravity;
    out->length = o->length;
    out->seed = o->seed;
    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    const imp_contact_geometry *g = &s.geom;
    int K = g->n_bodies, D = K * g->dim;
    double h = o->dt / SUBSTEPS;
    for (int n = 0; n < o->n_traj; n++) {
        double q[NMAX] = {0}, v[NMAX] = {0};
        int random = n > 0 && o->randomize;
        if (s.box) {
            imp_ball_box_initial_state(o, random, &rng, q, v);
        } else if (s.pendulum) {
            q[0] = q[1] = o->q0;
            v[0] = random ? imp_rng_uniform_range(&rng, 1.0, 3.0) : o->v0;
        } else {
            q[0] = random ? imp_rng_uniform_range(&rng, 0.5 * o->q0, o->q0) : o->q0;
            v[0] = random ? imp_rng_uniform_range(&rng, -1.0, 1.0) : o->v0;
        }
        for (int t = 0; t < o->n_steps; t++) {
            int touch[IMP_MAX_BODIES] = {0};
            for (int sub = 0; t > 0 && sub < SUBSTEPS; sub++) advance(&s, q, v, h, D, touch);
            size_t off = (size_t)n * o->n_steps + t;
            memcpy(out->q_clean + off * D, q, D * sizeof(double));
            memcpy(out->qdot_clean + off * D, v, D * sizeof(double));
            for (int k = 0; k < K; k++) out->contact[off * K + k] = touch[k];
        }
    }
    size_t nq = (size_t)o->n_traj * o->n_steps * D;
    memcpy(out->q, out->q_clean, nq * sizeof(double));
    memcpy(out->qdot, out->qdot_clean, nq * sizeof(double));
    if (o->noise > 0.0) imp_trajset_add_noise(out, o->noise, &rng);
    return IMP_OK;
}
