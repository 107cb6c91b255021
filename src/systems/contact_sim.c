/* Ground-truth simulators of the CD-Lagrange experiments: ideal pendulum,
 * bouncing ball, Newton's cradle, and a spinning disk bouncing on a floor
 * with friction (sliding impacts, AP Newton). Smooth motion is integrated with classical
 * RK4 on a fine sub-grid (error ~1e-13 per sample for the defaults); impacts
 * are events located by bisection to machine precision and resolved with
 * Newton's restitution law and momentum conservation ([A] eq 41); a wall
 * contact whose rebound cannot lift the body within one sub-step is treated
 * as resting (the end of the Zeno sequence of a ball with e < 1). */
#include "impulse/contact_systems.h"
#include "rk4_motion.h"
#include "systems/points_sim.h"
#include "systems_internal.h"
#include "impulse/impact_models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUBSTEPS 64

typedef enum { SYS_PENDULUM, SYS_BALL, SYS_CRADLE, SYS_DISK, SYS_BOX } sys_kind;

/* The bouncing disk: a uniform disk of radius DISK_R, mass 1, coordinates
 * q = (x, y, k theta) with k = R / sqrt(2) its radius of gyration, so that
 * the mass matrix is the identity (T = (vx^2 + vy^2 + (k omega)^2) / 2);
 * theta counter-clockwise. Floor contact: gap y - R, normal (0, 1, 0), slip
 * velocity of the lowest point vx + R omega = t . qdot with t = (1, 0, R/k). */
#define DISK_R 0.25

/* The ball in a box (ball-box, compliant-ball-box): q = (x, y) of the
 * ball's centre (its radius folded into the wall offsets), floor y >= 0,
 * side walls x >= -IMP_BALL_BOX_HALF_WIDTH and x <= +IMP_BALL_BOX_HALF_WIDTH. */
void imp_ball_box_geometry(imp_contact_geometry *g)
{
    g->dim = 2;
    g->n_bodies = 1;
    g->mass[0] = 1.0;
    g->n_pairs = 3;
    g->pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {0.0, 1.0}, .offset = 0.0};
    g->pairs[1] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {1.0, 0.0},
                                     .offset = -IMP_BALL_BOX_HALF_WIDTH};
    g->pairs[2] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {-1.0, 0.0},
                                     .offset = -IMP_BALL_BOX_HALF_WIDTH};
}

/* First trajectory: (0, q0) with velocity (v0, 0); later ones (random):
 * x U(-W/2, W/2), height U(q0/2, q0), vx U(-3, 3), vy U(-1, 1). */
void imp_ball_box_initial_state(const imp_sim_opts *o, int random, imp_rng *rng, double *q, double *v)
{
    q[0] = random ? imp_rng_uniform_range(rng, -0.5 * IMP_BALL_BOX_HALF_WIDTH, 0.5 * IMP_BALL_BOX_HALF_WIDTH) : 0.0;
    q[1] = random ? imp_rng_uniform_range(rng, 0.5 * o->q0, o->q0) : o->q0;
    if (q[1] < 0.0) q[1] = 0.0;
    v[0] = random ? imp_rng_uniform_range(rng, -3.0, 3.0) : o->v0;
    v[1] = random ? imp_rng_uniform_range(rng, -1.0, 1.0) : 0.0;
}

typedef struct sim {
    sys_kind kind;
    imp_contact_geometry geom;
    double gravity, length, friction;
    int resting[IMP_MAX_CONTACTS]; /* wall pairs in persistent contact */
} sim;


/* Generalised acceleration: pendulum angles qdd = -(g/l) sin q; ball
 * height qdd = -g; disk (x, y, k theta) (0, -g, 0). Resting wall contacts
 * cancel the normal component; a resting disk that slips feels Coulomb
 * friction mu N against its slip (a rolling one none). */
static void accel(const sim *s, const double *q, const double *v, double *a)
{
    int D = s->geom.n_bodies * s->geom.dim;
    for (int i = 0; i < D; i++)
        a[i] = s->kind == SYS_BALL || s->kind == SYS_BOX ? (i % s->geom.dim == s->geom.dim - 1 ? -s->gravity : 0.0)
               : s->kind == SYS_DISK ? (i % s->geom.dim == 1 ? -s->gravity : 0.0)
                                     : -(s->gravity / s->length) * sin(q[i]);
    for (int p = 0; p < s->geom.n_pairs; p++) {
        if (!s->resting[p]) continue;
        const imp_contact_pair *c = &s->geom.pairs[p];
        double an = 0.0;
        for (int k = 0; k < s->geom.dim; k++) an += c->normal[k] * a[c->body_j * s->geom.dim + k];
        if (an < 0.0)
            for (int k = 0; k < s->geom.dim; k++) a[c->body_j * s->geom.dim + k] -= an * c->normal[k];
        if (an < 0.0 && v && imp_contact_pair_has_tangent(&s->geom, p)) {
            double ut = imp_contact_slip_velocity(&s->geom, p, v);
            double sg = ut > 1e-12 ? 1.0 : ut < -1e-12 ? -1.0 : 0.0;
            /* normal force N = -m an, friction -sg mu N along t: a += M^-1 t F */
            for (int k = 0; k < s->geom.dim; k++)
                a[c->body_j * s->geom.dim + k] += -sg * s->friction * -an * c->tangent[k];
        }
    }
}

/* One classical RK4 step of (q, v) with step h. */
static void accel_qv(const void *ctx, const double *q, const double *v, double *a) { accel(ctx, q, v, a); }

static void rk4(const sim *s, double *q, double *v, double h)
{
    imp_rk4_motion(accel_qv, s, q, v, h, s->geom.n_bodies * s->geom.dim);
}

/* First pair that is penetrating while approaching, or -1. */
static int violated_pair(const sim *s, const double *q, const double *v)
{
    for (int p = 0; p < s->geom.n_pairs; p++) {
        if (s->resting[p]) continue;
        if (imp_contact_gap(&s->geom, p, q) < 0.0 && imp_contact_normal_velocity(&s->geom, p, v) < 0.0)
            return p;
    }
    return -1;
}

/* Newton restitution with momentum conservation for pair p ([A] eq 41):
 * post-impact normal velocity -e u^-, impulse along n, shared by reduced mass. */
static void resolve_impact(sim *s, int p, const double *q, double *v, double h_sub)
{
    const imp_contact_pair *c = &s->geom.pairs[p];
    int d = s->geom.dim;
    double u = imp_contact_normal_velocity(&s->geom, p, v);
    double mj = s->geom.mass[c->body_j];
    double mi = c->body_i == IMP_WALL ? INFINITY : s->geom.mass[c->body_i];
    double mu = c->body_i == IMP_WALL ? mj : mi * mj / (mi + mj);
    double P = -mu * (1.0 + s->geom.restitution) * u;
    double Pc[2] = {0.0, P}; /* (tangential, normal) */
    if (imp_contact_pair_has_tangent(&s->geom, p)) {
        /* Coulomb friction: the AP Newton law ([ISRR] sec 2.1) on
         * W = J M^-1 J^T with J = (t, n), u = (ut, un) */
        double W[4], uc[2] = {imp_contact_slip_velocity(&s->geom, p, v), u};
        imp_contact_pair_compliance(&s->geom, p, 1.0 / mj + (c->body_i == IMP_WALL ? 0.0 : 1.0 / mi), W);
        if (imp_ap_newton_forward(Pc, NULL, W, uc, s->friction, (1.0 + s->geom.restitution) * u)) {
            imp_clear_error(); /* no sliding solution (cannot happen for the disk): frictionless */
            Pc[0] = 0.0, Pc[1] = P;
        }
    }
    for (int k = 0; k < d; k++) {
        double dir = Pc[0] * c->tangent[k] + Pc[1] * c->normal[k];
        v[c->body_j * d + k] += dir / mj;
        if (c->body_i != IMP_WALL) v[c->body_i * d + k] -= dir / mi;
    }
    if (c->body_i == IMP_WALL) {
        /* The rebound can no longer lift the body off within one sub-step:
         * the Zeno sequence has converged, the body rests on the wall. */
        double a[IMP_MAX_BODIES * IMP_MAX_DIM];
        accel(s, q, NULL, a);
        double an = imp_contact_normal_velocity(&s->geom, p, a); /* the normal acceleration */
        double un = -s->geom.restitution * u;
        if (an < 0.0 && un <= -an * h_sub) {
            s->resting[p] = 1;
            for (int k = 0; k < d; k++) v[c->body_j * d + k] -= un * c->normal[k];
        }
    }
}

/* Advance (q, v) by h, handling every impact inside the interval. Impacted
 * bodies are flagged in hit[]. */
static void advance(sim *s, double *q, double *v, double h, double h_sub, int *hit)
{
    int D = s->geom.n_bodies * s->geom.dim;
    double remaining = h;
    int guard = 0;
    while (remaining > 0.0 && guard++ < 10000) {
        double q1[IMP_MAX_BODIES * IMP_MAX_DIM], v1[IMP_MAX_BODIES * IMP_MAX_DIM];
        memcpy(q1, q, D * sizeof(double));
        memcpy(v1, v, D * sizeof(double));
        rk4(s, q1, v1, remaining);
        int p = violated_pair(s, q1, v1);
        if (p < 0) {
            memcpy(q, q1, D * sizeof(double));
            memcpy(v, v1, D * sizeof(double));
            return;
        }
        /* bisection on the time of first contact within [0, remaining] */
        double lo = 0.0, hi = remaining;
        for (int it = 0; it < 80 && hi - lo > 1e-15 * (1.0 + remaining); it++) {
            double mid = 0.5 * (lo + hi);
            memcpy(q1, q, D * sizeof(double));
            memcpy(v1, v, D * sizeof(double));
            rk4(s, q1, v1, mid);
            if (violated_pair(s, q1, v1) >= 0 || imp_contact_gap(&s->geom, p, q1) < 0.0) hi = mid;
            else lo = mid;
        }
        rk4(s, q, v, hi);
        remaining -= hi;
        for (int pp = 0; pp < s->geom.n_pairs; pp++) {
            if (s->resting[pp] || imp_contact_gap(&s->geom, pp, q) > 1e-9) continue;
            if (imp_contact_normal_velocity(&s->geom, pp, v) >= 0.0) continue;
            resolve_impact(s, pp, q, v, h_sub);
            hit[s->geom.pairs[pp].body_j] = 1;
            if (s->geom.pairs[pp].body_i != IMP_WALL) hit[s->geom.pairs[pp].body_i] = 1;
        }
        /* place resting bodies exactly on their wall */
        for (int pp = 0; pp < s->geom.n_pairs; pp++) {
            if (!s->resting[pp]) continue;
            double gap = imp_contact_gap(&s->geom, pp, q);
            const imp_contact_pair *c = &s->geom.pairs[pp];
            for (int k = 0; k < s->geom.dim; k++) q[c->body_j * s->geom.dim + k] -= gap * c->normal[k];
        }
    }
}

/* A resting body whose slip changed sign over a step stops slipping (rolls):
 * the tangential impulse that zeroes the slip is within the friction cone. */
static void stick_resting(const sim *s, double *v, const double *ut_before)
{
    for (int p = 0; p < s->geom.n_pairs; p++) {
        const imp_contact_pair *c = &s->geom.pairs[p];
        if (!s->resting[p] || !imp_contact_pair_has_tangent(&s->geom, p) || c->body_i != IMP_WALL) continue;
        double ut = imp_contact_slip_velocity(&s->geom, p, v), tt = 0.0;
        if (ut * ut_before[p] > 0.0) continue;
        for (int k = 0; k < s->geom.dim; k++) tt += c->tangent[k] * c->tangent[k];
        for (int k = 0; k < s->geom.dim; k++) v[c->body_j * s->geom.dim + k] -= ut * c->tangent[k] / tt;
    }
}

static int setup(const char *system, const imp_sim_opts *o, sim *s)
{
    memset(s, 0, sizeof *s);
    imp_contact_geometry *g = &s->geom;
    g->dim = 1;
    g->restitution = o->restitution;
    s->gravity = o->gravity;
    s->length = o->length;
    s->friction = o->friction;
    if (!strcmp(system, "pendulum")) {
        s->kind = SYS_PENDULUM;
        g->n_bodies = 1;
        g->mass[0] = 1.0;
        g->restitution = 1.0;
    } else if (!strcmp(system, "bouncing-ball")) {
        /* height q above the floor at 0, floor normal +1 ([A] eq 56: L = 1) */
        s->kind = SYS_BALL;
        g->n_bodies = 1;
        g->mass[0] = 1.0;
        g->n_pairs = 1;
        g->pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {1.0}, .offset = 0.0};
    } else if (!strcmp(system, "newtons-cradle")) {
        /* two pendulum angles sharing a pivot; gap = q1 - q2 >= 0, i.e. body 0
         * (ball 1) hangs to the right of body 1 (ball 2): L = (1, -1) ([A] eq 59) */
        s->kind = SYS_CRADLE;
        g->n_bodies = 2;
        g->mass[0] = g->mass[1] = 1.0;
        g->n_pairs = 1;
        g->pairs[0] = (imp_contact_pair){.body_i = 1, .body_j = 0, .normal = {1.0}, .offset = 0.0};
    } else if (!strcmp(system, "ball-box")) {
        s->kind = SYS_BOX;
        imp_ball_box_geometry(g);
    } else if (!strcmp(system, "bouncing-disk")) {
        s->kind = SYS_DISK;
        g->dim = 3;
        g->n_bodies = 1;
        g->mass[0] = 1.0;
        g->n_pairs = 1;
        g->pairs[0] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = 0, .normal = {0.0, 1.0, 0.0},
                                         .offset = DISK_R, .tangent = {1.0, 0.0, sqrt(2.0)}};
    } else {
        return imp_fail(IMP_ERR_NOT_FOUND,
                        IMP_CONTACT_SYSTEM_NAMES, system);
    }
    return imp_contact_geometry_check(g);
}

int imp_sim_defaults(const char *system, imp_sim_opts *o)
{
    if (imp_points_system(system)) return imp_points_sim_defaults(system, o);
    if (imp_disks_system(system)) return imp_disks_sim_defaults(system, o);
    if (!strcmp(system, "compliant-ball") || !strcmp(system, "compliant-cradle") ||
        !strcmp(system, "compliant-ball-box")) {
        int st = imp_sim_defaults(!strcmp(system, "compliant-ball-box") ? "ball-box"
                                  : system[10] == 'b'                   ? "bouncing-ball"
                                                                        : "newtons-cradle",
                                  o);
        o->stiffness = IMP_COMPLIANT_STIFFNESS;
        return st;
    }
    memset(o, 0, sizeof *o);
    o->n_traj = 1;
    o->gravity = 9.81;
    o->length = 1.0;
    o->restitution = 1.0;
    o->seed = 0;
    if (!strcmp(system, "pendulum")) {
        o->n_steps = 200, o->dt = 0.02, o->q0 = 1.0, o->v0 = 0.0;
    } else if (!strcmp(system, "bouncing-ball")) {
        o->n_steps = 500, o->dt = 0.02, o->q0 = 10.0, o->v0 = 0.0;
    } else if (!strcmp(system, "newtons-cradle")) {
        o->n_steps = 540, o->dt = 0.01, o->q0 = 0.0, o->v0 = 2.0;
    } else if (!strcmp(system, "bouncing-disk")) {
        o->n_steps = 300, o->dt = 0.01, o->q0 = 1.5, o->v0 = 1.0;
        o->restitution = 0.8, o->friction = 0.2, o->spin = -30.0;
    } else if (!strcmp(system, "ball-box")) {
        o->n_steps = 400, o->dt = 0.02, o->q0 = 3.0, o->v0 = 1.5, o->restitution = 0.8;
    } else {
        return imp_fail(IMP_ERR_NOT_FOUND,
                        IMP_CONTACT_SYSTEM_NAMES, system);
    }
    o->randomize = 1;
    return IMP_OK;
}

int imp_sim_opts_check(const imp_sim_opts *o)
{
    if (o->n_traj < 1) return imp_fail(IMP_ERR_INVALID, "trajectories: %d, need at least 1", o->n_traj);
    if (o->n_steps < 2) return imp_fail(IMP_ERR_INVALID, "steps: %d, need at least 2", o->n_steps);
    if (!(o->dt > 0.0) || !isfinite(o->dt)) return imp_fail(IMP_ERR_INVALID, "dt: %g must be positive", o->dt);
    if (!(o->noise >= 0.0) || !isfinite(o->noise))
        return imp_fail(IMP_ERR_INVALID, "noise: %g must be >= 0", o->noise);
    if (!(o->restitution >= 0.0 && o->restitution <= 1.0))
        return imp_fail(IMP_ERR_INVALID, "restitution: %g is outside [0, 1]", o->restitution);
    if (!(o->gravity > 0.0) || !isfinite(o->gravity))
        return imp_fail(IMP_ERR_INVALID, "gravity: %g must be positive", o->gravity);
    if (!(o->length > 0.0) || !isfinite(o->length))
        return imp_fail(IMP_ERR_INVALID, "length: %g must be positive", o->length);
    if (!isfinite(o->q0) || !isfinite(o->v0)) return imp_fail(IMP_ERR_INVALID, "q0/v0: not finite");
    if (!(o->stiffness >= 0.0) || !isfinite(o->stiffness))
        return imp_fail(IMP_ERR_INVALID, "stiffness: %g must be >= 0 (0: the default)", o->stiffness);
    if (!(o->friction >= 0.0 && o->friction <= 10.0))
        return imp_fail(IMP_ERR_INVALID, "friction: %g is outside [0, 10]", o->friction);
    if (!isfinite(o->spin)) return imp_fail(IMP_ERR_INVALID, "spin: not finite");
    return IMP_OK;
}

static void initial_state(const sim *s, const imp_sim_opts *o, int traj, imp_rng *rng, double *q, double *v)
{
    int random = traj > 0 && o->randomize;
    switch (s->kind) {
    case SYS_PENDULUM:
        q[0] = random ? imp_rng_uniform_range(rng, -1.5, 1.5) : o->q0;
        v[0] = random ? imp_rng_uniform_range(rng, -1.0, 1.0) : o->v0;
        break;
    case SYS_BALL:
        q[0] = random ? imp_rng_uniform_range(rng, 0.5 * o->q0, o->q0) : o->q0;
        v[0] = random ? imp_rng_uniform_range(rng, -1.0, 1.0) : o->v0;
        if (q[0] < 0.0) q[0] = 0.0;
        break;
    case SYS_CRADLE:
        q[0] = q[1] = o->q0;
        v[0] = random ? imp_rng_uniform_range(rng, 1.0, 3.0) : o->v0;
        v[1] = 0.0;
        break;
    case SYS_BOX:
        imp_ball_box_initial_state(o, random, rng, q, v);
        break;
    case SYS_DISK: /* height, horizontal velocity, spin (rad/s) */
        q[0] = 0.0;
        q[1] = random ? imp_rng_uniform_range(rng, 0.5 * o->q0, o->q0) : o->q0;
        if (q[1] < DISK_R) q[1] = DISK_R;
        q[2] = 0.0;
        v[0] = random ? imp_rng_uniform_range(rng, -2.0, 2.0) : o->v0;
        v[1] = 0.0;
        v[2] = (random ? imp_rng_uniform_range(rng, -40.0, 40.0) : o->spin) * DISK_R / sqrt(2.0);
        break;
    }
}

int imp_simulate(const char *system, const imp_sim_opts *o, imp_trajset *out)
{
    if (!strncmp(system, "compliant-", 10)) return imp_simulate_compliant(system, o, out);
    if (imp_points_system(system)) return imp_simulate_points(system, o, out);
    if (imp_disks_system(system)) return imp_simulate_disks(system, o, out);
    sim s;
    int st = setup(system, o, &s);
    if (!st) st = imp_sim_opts_check(o);
    if (!st) st = imp_trajset_alloc(out, o->n_traj, o->n_steps, &s.geom);
    if (st) return st;
    snprintf(out->system, sizeof out->system, "%s", system);
    snprintf(out->labels, sizeof out->labels, "impact");
    out->dt = o->dt;
    out->gravity = o->gravity;
    out->length = o->length;
    out->seed = o->seed;
    out->friction = s.kind == SYS_DISK ? o->friction : NAN;
    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    int K = s.geom.n_bodies, D = K * s.geom.dim;
    double h_sub = o->dt / SUBSTEPS;
    for (int n = 0; n < o->n_traj; n++) {
        double q[IMP_MAX_BODIES * IMP_MAX_DIM], v[IMP_MAX_BODIES * IMP_MAX_DIM];
        memset(s.resting, 0, sizeof s.resting);
        initial_state(&s, o, n, &rng, q, v);
        for (int t = 0; t < o->n_steps; t++) {
            int hit[IMP_MAX_BODIES] = {0};
            if (t > 0)
                for (int sub = 0; sub < SUBSTEPS; sub++) {
                    double ut[IMP_MAX_CONTACTS];
                    for (int p = 0; p < s.geom.n_pairs; p++) ut[p] = imp_contact_slip_velocity(&s.geom, p, v);
                    advance(&s, q, v, h_sub, h_sub, hit);
                    stick_resting(&s, v, ut);
                }
            for (int p = 0; p < s.geom.n_pairs; p++)
                if (s.resting[p]) hit[s.geom.pairs[p].body_j] = 1;
            size_t off = ((size_t)n * o->n_steps + t) * D;
            memcpy(out->q_clean + off, q, D * sizeof(double));
            memcpy(out->qdot_clean + off, v, D * sizeof(double));
            for (int k = 0; k < K; k++) out->contact[((size_t)n * o->n_steps + t) * K + k] = hit[k];
        }
    }
    size_t nq = (size_t)o->n_traj * o->n_steps * D;
    memcpy(out->q, out->q_clean, nq * sizeof(double));
    memcpy(out->qdot, out->qdot_clean, nq * sizeof(double));
    if (o->noise > 0.0) imp_trajset_add_noise(out, o->noise, &rng);
    return IMP_OK;
}
