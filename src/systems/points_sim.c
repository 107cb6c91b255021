/* bouncing-points:N: N point masses (mass 1) in a 2-D box under gravity,
 * the box's floor (y = 0), left wall (x = 0), right wall (x = W) and
 * ceiling (y = H), each (point, wall) contact with its own restitution e and
 * Coulomb friction mu (heterogeneous, a fixed table: the truth of every data
 * set of that name). Event-accurate: the free flight is a parabola, so each
 * contact's gap is a quadratic in time and the next impact is its first
 * root; gaps, normal velocities and Jacobian rows are the trajectory
 * geometry's (imp_contact_gap, _normal_velocity, _row_backward); the
 * impacts are resolved by the contact module
 * (imp_contact_impulse_forward: Newton restitution and Coulomb friction,
 * several contacts of a point in a corner together). A point whose floor
 * rebound is below g dt / 100 comes to rest on the floor (the end of its
 * Zeno sequence) and slides with Coulomb friction mu g until it stops. */
#include "systems/points_sim.h"

#include "impulse/contact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTS_W 2.0
#define PTS_H 2.0
#define PTS_WALLS 4 /* floor, left, right, ceiling */
#define PTS_MAX (IMP_MAX_CONTACTS / PTS_WALLS)
#define PTS_TOL 1e-12 /* touching: gap at or below this (m) */

static const double wall_n[PTS_WALLS][2] = {{0, 1}, {1, 0}, {-1, 0}, {0, -1}};
static const double wall_off[PTS_WALLS] = {0.0, 0.0, -PTS_W, -PTS_H};

int imp_points_system(const char *system) { return !strncmp(system, "bouncing-points", 15); }

int imp_box_sim_count(const char *system, const char *base, int max, int *n)
{
    size_t len = strlen(base);
    *n = 5;
    if (!strcmp(system, base)) return IMP_OK;
    char *end = NULL;
    long v = system[len] == ':' ? strtol(system + len + 1, &end, 10) : 0;
    if (system[len] != ':' || end == system + len + 1 || *end || v < 1 || v > max)
        return imp_fail(IMP_ERR_NOT_FOUND, "system: '%s': %s:N takes N in [1, %d]", system, base, max);
    *n = (int)v;
    return IMP_OK;
}

static int parse_count(const char *system, int *n) { return imp_box_sim_count(system, "bouncing-points", PTS_MAX, n); }

/* The contact model: point k's candidates are 4 k + (floor, left, right,
 * ceiling); e in [0.5, 0.95] and mu in [0.05, 0.5] drawn once from a fixed
 * seed. */
void imp_box_model_begin(imp_contact_model *m, int n, double gap_tol, unsigned long long seed, imp_rng *rng)
{
    memset(m, 0, sizeof *m);
    m->dim = 2;
    m->n_bodies = n;
    m->gap_tol = gap_tol;
    imp_rng_seed(rng, seed);
}

static void build_model(int n, imp_contact_model *m)
{
    imp_rng rng;
    imp_box_model_begin(m, n, PTS_TOL, 24, &rng);
    for (int k = 0; k < n; k++) {
        m->bodies[k].kind = IMP_BODY_POINT;
        m->bodies[k].mass = 1.0;
        for (int w = 0; w < PTS_WALLS; w++) {
            imp_contact_candidate *c = &m->cand[m->n_candidates++];
            c->kind = IMP_CONTACT_PLANE;
            c->body_a = IMP_WALL;
            c->body_b = k;
            c->normal[0] = wall_n[w][0], c->normal[1] = wall_n[w][1];
            c->offset = wall_off[w];
            c->e = imp_rng_uniform_range(&rng, 0.5, 0.95);
            c->mu = imp_rng_uniform_range(&rng, 0.05, 0.5);
        }
    }
}

int imp_box_sim_defaults(const char *system, const char *base, int max, imp_sim_opts *o)
{
    int n;
    int st = imp_box_sim_count(system, base, max, &n);
    if (st) return st;
    memset(o, 0, sizeof *o);
    o->n_traj = 1;
    o->n_steps = 300;
    o->dt = 0.01;
    o->gravity = 9.81;
    o->length = 1.0;
    o->restitution = 1.0; /* not used: e per contact */
    o->randomize = 1;
    return IMP_OK;
}

int imp_points_sim_defaults(const char *system, imp_sim_opts *o)
{
    return imp_box_sim_defaults(system, "bouncing-points", PTS_MAX, o);
}

int imp_box_sim_begin(imp_trajset *out, const char *system, const imp_sim_opts *o, const imp_contact_geometry *g)
{
    int st = imp_trajset_alloc(out, o->n_traj, o->n_steps, g);
    if (st) return st;
    snprintf(out->system, sizeof out->system, "%s", system);
    snprintf(out->labels, sizeof out->labels, "impact");
    out->dt = o->dt, out->gravity = o->gravity, out->length = NAN, out->seed = o->seed;
    return IMP_OK;
}

void imp_box_sim_store(imp_trajset *out, int tr, int t, const double *q, const double *v, const int *hit)
{
    int K = out->geom.n_bodies, D = K * out->geom.dim;
    size_t off = (size_t)tr * out->n_steps + t;
    memcpy(out->q_clean + off * D, q, D * sizeof(double));
    memcpy(out->qdot_clean + off * D, v, D * sizeof(double));
    for (int k = 0; k < K; k++) out->contact[off * K + k] = hit[k];
}

int imp_box_sim_end(imp_trajset *out, int st, const imp_sim_opts *o, imp_rng *rng)
{
    if (st) {
        imp_trajset_free(out);
        return st;
    }
    size_t nq = (size_t)out->n_traj * out->n_steps * out->geom.n_bodies * out->geom.dim;
    memcpy(out->q, out->q_clean, nq * sizeof(double));
    memcpy(out->qdot, out->qdot_clean, nq * sizeof(double));
    if (o->noise > 0.0) imp_trajset_add_noise(out, o->noise, rng);
    return IMP_OK;
}

typedef struct pts {
    imp_contact_model m;
    imp_contact_geometry geom; /* the trajectory set's: gaps, normal velocities and rows of the pairs */
    double g, v_rest;
    int rest[PTS_MAX]; /* 1: resting on the floor */
    double work[4096];
    int iwork[64];
} pts;

/* Acceleration of point k: free flight (0, -g); resting: Coulomb friction
 * against its horizontal velocity (0 once stopped). */
static void accel(const pts *s, int k, const double *v, double a[2])
{
    a[0] = 0.0, a[1] = -s->g;
    if (!s->rest[k]) return;
    a[1] = 0.0;
    double mu = s->m.cand[PTS_WALLS * k].mu;
    a[0] = v[0] > 0.0 ? -mu * s->g : v[0] < 0.0 ? mu * s->g : 0.0;
}

double imp_sim_first_hit(double a, double b, double c, double tmax, double tol)
{
    if (c <= tol && b < 0.0) return 0.0;
    return imp_contact_first_root(a, b, c, tmax);
}

/* Resolve point k's impacts: its closing contacts with gap <= tol, solved
 * together, until none closes. Returns 1 if any impulse acted. Pair
 * PTS_WALLS k + w of the geometry is candidate w of point k. */
static int resolve(pts *s, int k, double *q, double *v)
{
    const imp_contact_geometry *g = &s->geom;
    int any = 0;
    double *u = v + 2 * k;
    for (int round = 0; round < 8; round++) {
        int act[PTS_WALLS], na = 0;
        for (int p = PTS_WALLS * k; p < PTS_WALLS * (k + 1); p++)
            if (imp_contact_gap(g, p, q) <= PTS_TOL && imp_contact_normal_velocity(g, p, v) < 0.0) act[na++] = p;
        if (!na) break;
        /* one point: the pair's Jacobian rows n, t on its 2 velocity coordinates */
        double J[PTS_WALLS * 2 * 2], e[PTS_WALLS], mu[PTS_WALLS], up[2];
        for (int i = 0; i < na; i++) {
            for (int r = 0; r < 2; r++) {
                double row[2 * PTS_MAX] = {0};
                imp_contact_row_backward(g, act[i], r, 1.0, row);
                J[4 * i + 2 * r] = row[2 * k], J[4 * i + 2 * r + 1] = row[2 * k + 1];
            }
            e[i] = g->pair_e[act[i]], mu[i] = g->pair_mu[act[i]];
        }
        double minv = 1.0 / s->m.bodies[k].mass, Minv[4] = {minv, 0, 0, minv};
        /* one contact's rows are independent: the law exactly (no regularization); a
           corner's are not */
        imp_contact_solve_opts so;
        imp_contact_solve_opts_default(&so);
        if (na == 1) so.regularization = 0.0;
        imp_contact_solution sol;
        int st = imp_contact_impulse_forward(up, &sol, u, J, na, 2, 2, imp_contact_minv_dense, Minv, e, mu, &so,
                                             s->work, s->iwork);
        if (st) return imp_fail_context(st, "bouncing-points: point %d", k), -1;
        u[0] = up[0], u[1] = up[1];
        any = 1;
    }
    return any;
}

/* One output interval of length dt, event by event. hit[k] = 1 when point
 * k had an impact or rests. */
static int interval(pts *s, int n, double *q, double *v, double dt, int *hit)
{
    double left = dt;
    for (int guard = 0; left > 0.0; guard++) {
        if (guard > 100000) return imp_fail(IMP_ERR_NUMERIC, "bouncing-points: too many events in one sample");
        double tau = left;
        int ev_k = -1, ev_stop = 0;
        double a[2 * PTS_MAX];
        for (int k = 0; k < n; k++) {
            accel(s, k, v + 2 * k, a + 2 * k);
            if (s->rest[k] && a[2 * k] != 0.0) {
                double ts = fabs(v[2 * k] / a[2 * k]);
                if (ts <= tau) tau = ts, ev_k = k, ev_stop = 1;
            }
            for (int w = 0; w < PTS_WALLS; w++) {
                if (s->rest[k] && w == 0) continue;
                int p = PTS_WALLS * k + w;
                double c = imp_contact_gap(&s->geom, p, q), b = imp_contact_normal_velocity(&s->geom, p, v);
                double t = imp_sim_first_hit(0.5 * imp_contact_normal_velocity(&s->geom, p, a), b, c, tau, PTS_TOL);
                if (t <= tau) tau = t, ev_k = k, ev_stop = 0;
            }
        }
        for (int k = 0; k < n; k++) {
            for (int i = 0; i < 2; i++) {
                q[2 * k + i] += v[2 * k + i] * tau + 0.5 * a[2 * k + i] * tau * tau;
                v[2 * k + i] += a[2 * k + i] * tau;
            }
            if (s->rest[k]) q[2 * k + 1] = 0.0, v[2 * k + 1] = 0.0;
        }
        left -= tau;
        if (ev_k < 0) break;
        if (ev_stop) {
            v[2 * ev_k] = 0.0;
            continue;
        }
        int r = resolve(s, ev_k, q, v);
        if (r < 0) return IMP_ERR_NUMERIC;
        hit[ev_k] |= r;
        /* the end of a Zeno sequence on the floor: rest */
        double *x = q + 2 * ev_k, *u = v + 2 * ev_k;
        if (imp_contact_gap(&s->geom, PTS_WALLS * ev_k, q) <= PTS_TOL && u[1] >= 0.0 && u[1] < s->v_rest)
            s->rest[ev_k] = 1, u[1] = 0.0, x[1] = 0.0;
        else if (u[1] > 0.0) s->rest[ev_k] = 0;
    }
    for (int k = 0; k < n; k++) hit[k] |= s->rest[k];
    return IMP_OK;
}

int imp_simulate_points(const char *system, const imp_sim_opts *o, imp_trajset *out)
{
    int n;
    int st = parse_count(system, &n);
    if (!st) st = imp_sim_opts_check(o);
    if (st) return st;
    pts *s = calloc(1, sizeof *s);
    if (!s) return imp_fail(IMP_ERR_NOMEM, "bouncing-points: no memory");
    build_model(n, &s->m);
    if ((st = imp_contact_model_init(&s->m))) {
        free(s);
        return st;
    }
    s->g = o->gravity;
    s->v_rest = o->gravity * o->dt / 100.0;
    /* the trajectory set's geometry: one pair per (point, wall), tangent
       t = (n_y, -n_x), e and mu per pair */
    imp_contact_geometry *g = &s->geom;
    g->n_bodies = n, g->dim = 2, g->restitution = NAN, g->n_pairs = s->m.n_candidates, g->has_pair_law = 1;
    for (int k = 0; k < n; k++) g->mass[k] = s->m.bodies[k].mass;
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_candidate *c = &s->m.cand[p];
        g->pairs[p] = (imp_contact_pair){.body_i = IMP_WALL, .body_j = c->body_b, .normal = {c->normal[0], c->normal[1]},
                                         .offset = c->offset, .tangent = {c->normal[1], -c->normal[0]}};
        g->pair_e[p] = c->e, g->pair_mu[p] = c->mu;
    }
    if ((st = imp_box_sim_begin(out, system, o, g))) {
        free(s);
        return st;
    }
    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    for (int tr = 0; tr < o->n_traj && !st; tr++) {
        double q[2 * PTS_MAX], v[2 * PTS_MAX];
        memset(s->rest, 0, sizeof s->rest);
        for (int k = 0; k < n; k++) {
            q[2 * k] = imp_rng_uniform_range(&rng, 0.2, PTS_W - 0.2);
            q[2 * k + 1] = imp_rng_uniform_range(&rng, 0.5, PTS_H - 0.2);
            v[2 * k] = imp_rng_uniform_range(&rng, -3.0, 3.0);
            v[2 * k + 1] = imp_rng_uniform_range(&rng, -3.0, 3.0);
        }
        for (int t = 0; t < o->n_steps && !st; t++) {
            int hit[PTS_MAX] = {0};
            if (t > 0) st = interval(s, n, q, v, o->dt, hit);
            imp_box_sim_store(out, tr, t, q, v, hit);
        }
    }
    free(s);
    return imp_box_sim_end(out, st, o, &rng);
}
