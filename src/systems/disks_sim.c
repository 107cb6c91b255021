/* bouncing-disks:N: N uniform disks (radius r_k, mass m_k, moment of
 * inertia m_k r_k^2 / 2) in a 2-D box under gravity: the box's floor
 * (y = 0), left wall (x = 0), right wall (x = W) and ceiling (y = H), and
 * each other. Every contact (disk, wall) and (disk, disk) has its own
 * restitution e and Coulomb friction mu (heterogeneous, a fixed table: the
 * truth of every data set of that name); friction at a contact point on a
 * disk's rim turns the disk.
 *
 * Event-accurate: between events every disk's centre moves on a parabola
 * (or, resting on the floor, with constant friction deceleration), so a
 * wall gap is a quadratic in time (its first root) and a disk-disk gap is
 * found by a root search on the centres' distance. The gaps are the contact
 * module's: a wall's its plane gap (imp_contact_plane_gap), two disks'
 * imp_contact_gap of the trajectory geometry's sphere pair. At each event the
 * contacts that touch (gap <= DK_TOL) around a closing one are solved
 * together by the contact module (imp_contact_detect, _assemble_jacobian,
 * _impulse_forward: Newton restitution and Coulomb friction on planar rigid
 * bodies). A disk whose floor rebound is below g dt / 100 comes to rest on
 * the floor (the end of its Zeno sequence); resting, it slides with Coulomb
 * friction until its contact point sticks, then rolls.
 *
 * The data's coordinates are q_k = (x, y, k theta), k = r / sqrt 2, so that
 * the mass matrix is m_k I_3 (as bouncing-disk); the trajectory geometry has
 * a plane pair per (disk, wall) (radius folded into the offset, tangent
 * (n_y, -n_x, sqrt 2)) and a sphere pair per two disks (radii, spin
 * coefficient sqrt 2). */
#include "systems/points_sim.h"

#include "contact/contact_internal.h" /* imp_contact_plane_gap */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DK_W 2.0
#define DK_H 2.0
#define DK_WALLS 4 /* floor, left, right, ceiling */
#define DK_MAX 5   /* 4 N + N (N - 1) / 2 contacts <= IMP_MAX_CONTACTS */
#define DK_TOL 1e-10 /* touching: gap at or below this (m) */
#define DK_SUB 32    /* samples of a disk-disk gap per search interval */
#define DK_MAX_EVENTS 5000 /* events in one sample: more means a disk wedged at rest on others */
#define DK_WEDGED (-1000)    /* interval's status then (the trajectory is drawn again) */
#define DK_ROLL 1e-9  /* a resting disk rolls when its slip is at most this (m/s) */
#define DK_SQRT2 1.41421356237309504880

static const double wall_n[DK_WALLS][2] = {{0, 1}, {1, 0}, {-1, 0}, {0, -1}};
static const double wall_off[DK_WALLS] = {0.0, 0.0, -DK_W, -DK_H};

int imp_disks_system(const char *system) { return !strncmp(system, "bouncing-disks", 14); }

static int parse_count(const char *system, int *n) { return imp_box_sim_count(system, "bouncing-disks", DK_MAX, n); }

/* The contact model: disk k's wall candidates are 4 k + (floor, left,
 * right, ceiling), then one per two disks (i < j, in order); radii in
 * [0.1, 0.2], masses in [0.5, 2], e in [0.5, 0.95], mu in [0.05, 0.5],
 * drawn once from a fixed seed. e_all, mu_all (not NaN): every contact's
 * instead (tests). */
static void build_model(int n, double e_all, double mu_all, imp_contact_model *m)
{
    imp_rng rng;
    imp_box_model_begin(m, n, DK_TOL, 2424, &rng);
    for (int k = 0; k < n; k++) {
        double r = imp_rng_uniform_range(&rng, 0.1, 0.2), mass = imp_rng_uniform_range(&rng, 0.5, 2.0);
        m->bodies[k].kind = IMP_BODY_PLANAR;
        m->bodies[k].mass = mass;
        m->bodies[k].inertia[0] = 0.5 * mass * r * r;
        for (int w = 0; w < DK_WALLS; w++) {
            imp_contact_candidate *c = &m->cand[m->n_candidates++];
            c->kind = IMP_CONTACT_PLANE;
            c->body_a = IMP_WALL;
            c->body_b = k;
            c->radius_b = r;
            c->normal[0] = wall_n[w][0], c->normal[1] = wall_n[w][1];
            c->offset = wall_off[w];
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            imp_contact_candidate *c = &m->cand[m->n_candidates++];
            c->kind = IMP_CONTACT_SPHERES;
            c->body_a = i, c->body_b = j;
            c->radius_a = m->cand[DK_WALLS * i].radius_b;
            c->radius_b = m->cand[DK_WALLS * j].radius_b;
        }
    for (int c = 0; c < m->n_candidates; c++) {
        m->cand[c].e = imp_rng_uniform_range(&rng, 0.5, 0.95);
        m->cand[c].mu = imp_rng_uniform_range(&rng, 0.05, 0.5);
        if (!isnan(e_all)) m->cand[c].e = e_all;
        if (!isnan(mu_all)) m->cand[c].mu = mu_all;
    }
}

int imp_disks_sim_defaults(const char *system, imp_sim_opts *o)
{
    return imp_box_sim_defaults(system, "bouncing-disks", DK_MAX, o);
}

typedef struct dks {
    imp_contact_model m;
    imp_contact_geometry geom;   /* the trajectory set's: its sphere pairs' gaps */
    int pair[DK_MAX][DK_MAX];    /* geometry pair of disks i < j */
    int n;
    double g, v_rest;
    double r[DK_MAX], k[DK_MAX]; /* radius, k = r / sqrt 2 */
    int rest[DK_MAX];            /* 1: resting on the floor */
    imp_contact_frame frames[IMP_MAX_CONTACTS];
    double J[IMP_CONTACT_MAX_ROWS * 3 * DK_MAX];
    double work[16384];
    int iwork[256];
} dks;

/* Acceleration of disk k in (x, y, k theta): free flight (0, -g, 0);
 * resting: Coulomb friction mu g against the slip u = vx + sqrt2 s' of its
 * contact point (generalized direction (1, 0, sqrt 2)), 0 once rolling. */
static void accel(const dks *s, int k, const double *v, double a[3])
{
    a[0] = 0.0, a[1] = -s->g, a[2] = 0.0;
    if (!s->rest[k]) return;
    a[1] = 0.0;
    double u = v[0] + DK_SQRT2 * v[2], f = s->m.cand[DK_WALLS * k].mu * s->g;
    double l = u > DK_ROLL ? -f : u < -DK_ROLL ? f : 0.0; /* |u| <= DK_ROLL: rolling */
    a[0] = l, a[2] = DK_SQRT2 * l;
}

/* Gap of disks i < j at positions q: the geometry's sphere pair. */
static double disk_gap(const dks *s, int i, int j, const double *q) { return imp_contact_gap(&s->geom, s->pair[i][j], q); }

/* Gap of disks i, j after time t of the motion (x, v, a). */
static double gap_after(const dks *s, int i, int j, const double *q, const double *v, const double a[][3], double t)
{
    double qt[3 * DK_MAX];
    for (int c = 0; c < 2; c++) {
        qt[3 * i + c] = q[3 * i + c] + v[3 * i + c] * t + 0.5 * a[i][c] * t * t;
        qt[3 * j + c] = q[3 * j + c] + v[3 * j + c] * t + 0.5 * a[j][c] * t * t;
    }
    return disk_gap(s, i, j, qt);
}

/* First time in (0, tmax] at which disks i, j meet while closing; tmax + 1
 * if none. Both in free flight: the centres' distance squared is a
 * quadratic in t (gravity cancels); otherwise a search on DK_SUB samples
 * and bisection. */
static double disks_hit(const dks *s, int i, int j, const double *q, const double *v, const double a[][3],
                        double tmax)
{
    double dx[2], dv[2], da[2];
    for (int c = 0; c < 2; c++) {
        dx[c] = q[3 * j + c] - q[3 * i + c];
        dv[c] = v[3 * j + c] - v[3 * i + c];
        da[c] = a[j][c] - a[i][c];
    }
    double R = s->r[i] + s->r[j], b = dx[0] * dv[0] + dx[1] * dv[1];
    if (disk_gap(s, i, j, q) <= DK_TOL && b < 0.0) return 0.0;
    /* the root by imp_contact_first_root; imp_contact_geometry_swept's contact
       time (the same |d + w s| = R) is clamped to a step, with no closing test */
    if (da[0] == 0.0 && da[1] == 0.0)
        return imp_sim_first_hit(dv[0] * dv[0] + dv[1] * dv[1], 2.0 * b, dx[0] * dx[0] + dx[1] * dx[1] - R * R, tmax,
                                 -INFINITY);
    /* separating from a touch (just after an impact): the gap may come back
       to zero within the first sample (a small rebound under a relative
       acceleration), so count the start as open */
    double t0 = 0.0, g0 = disk_gap(s, i, j, q);
    if (g0 <= DK_TOL && b >= 0.0) g0 = DK_TOL;
    for (int k = 1; k <= DK_SUB; k++) {
        double t1 = tmax * k / DK_SUB, g1 = gap_after(s, i, j, q, v, a, t1);
        if (g0 > 0.0 && g1 <= 0.0) {
            /* the first crossing: bisection keeps g(t0) > 0 >= g(t1) */
            for (int it = 0; it < 200 && t1 - t0 > 1e-15; it++) {
                double mid = 0.5 * (t0 + t1);
                if (gap_after(s, i, j, q, v, a, mid) > 0.0) t0 = mid;
                else t1 = mid;
            }
            return t1;
        }
        t0 = t1, g0 = g1;
    }
    return tmax + 1.0;
}

/* The contact module's state of the data state (x, y, k theta). */
static void to_module(const dks *s, const double *q, const double *v, double *mq, double *mv)
{
    for (int k = 0; k < s->n; k++) {
        mq[3 * k] = q[3 * k], mq[3 * k + 1] = q[3 * k + 1], mq[3 * k + 2] = q[3 * k + 2] / s->k[k];
        mv[3 * k] = v[3 * k], mv[3 * k + 1] = v[3 * k + 1], mv[3 * k + 2] = v[3 * k + 2] / s->k[k];
    }
}

/* Resolve the impacts at the current state: the closing touching contacts
 * and the other touching contacts of their disks, solved together, until
 * none closes. hit[k] = 1 for the disks of contacts that took an impulse.
 * Returns 0 (nothing closed), 1 (impulses acted) or -1 (failure). */
static int resolve(dks *s, double *q, double *v, int *hit)
{
    int any = 0;
    double mq[3 * DK_MAX], mv[3 * DK_MAX], vp[3 * DK_MAX];
    for (int round = 0; round < 16; round++) {
        to_module(s, q, v, mq, mv);
        int dst = imp_contact_detect(&s->m, mq, s->frames);
        if (dst) return imp_fail_context(dst, "bouncing-disks: impact"), -1;
        int closing[DK_MAX] = {0}, nc = 0;
        for (int c = 0; c < s->m.n_candidates; c++) {
            const imp_contact_candidate *cd = &s->m.cand[c];
            if (s->frames[c].phi <= DK_TOL && imp_contact_gap_rate(&s->m, mq, &s->frames[c], c, mv) < 0.0) {
                closing[cd->body_b] = 1, nc++;
                if (cd->body_a != IMP_WALL) closing[cd->body_a] = 1;
            }
        }
        if (!nc) break;
        int act[IMP_MAX_CONTACTS], na = 0;
        double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
        for (int c = 0; c < s->m.n_candidates; c++) {
            const imp_contact_candidate *cd = &s->m.cand[c];
            int mine = closing[cd->body_b] || (cd->body_a != IMP_WALL && closing[cd->body_a]);
            if (mine && s->frames[c].phi <= DK_TOL) e[na] = cd->e, mu[na] = cd->mu, act[na++] = c;
        }
        imp_contact_assemble_jacobian(&s->m, mq, s->frames, act, na, s->J);
        imp_contact_solve_opts so;
        imp_contact_solve_opts_default(&so);
        if (na == 1) so.regularization = 0.0; /* one contact: the law exactly */
        imp_contact_solution sol;
        int st = imp_contact_impulse_forward(vp, &sol, mv, s->J, na, 2, s->m.nv, imp_contact_minv_bodies, &s->m, e, mu,
                                             &so, s->work, s->iwork);
        if (st) return imp_fail_context(st, "bouncing-disks: impact"), -1;
        for (int k = 0; k < s->n; k++) {
            v[3 * k] = vp[3 * k], v[3 * k + 1] = vp[3 * k + 1], v[3 * k + 2] = vp[3 * k + 2] * s->k[k];
        }
        for (int i = 0; i < na; i++)
            if (sol.lambda[2 * i] > 0.0) {
                const imp_contact_candidate *cd = &s->m.cand[act[i]];
                hit[cd->body_b] = 1;
                if (cd->body_a != IMP_WALL) hit[cd->body_a] = 1;
            }
        any = 1;
    }
    return any;
}

/* One output interval of length dt, event by event. hit[k] = 1 when disk k
 * took an impulse or rests. */
static int interval(dks *s, double *q, double *v, double dt, int *hit)
{
    int n = s->n;
    double left = dt;
    for (int guard = 0; left > 0.0; guard++) {
        if (guard > DK_MAX_EVENTS) return DK_WEDGED;
        double tau = left, a[DK_MAX][3];
        int ev = 0, ev_k = -1; /* ev: 0 none, 1 contact, 2 a resting disk's slip stops */
        for (int k = 0; k < n; k++) {
            accel(s, k, v + 3 * k, a[k]);
            if (s->rest[k] && a[k][0] != 0.0) {
                double ts = fabs(v[3 * k] + DK_SQRT2 * v[3 * k + 2]) / (3.0 * fabs(a[k][0]));
                if (ts <= tau) tau = ts, ev = 2, ev_k = k;
            }
        }
        /* the wall gaps as the contact model's (imp_contact_detect's plane
           branch, (n.x - o) - r, without detecting every candidate): the
           trajectory geometry folds the radius into a plane's offset,
           n.x - (o + r), which rounds otherwise */
        double mq[3 * DK_MAX], mv[3 * DK_MAX];
        to_module(s, q, v, mq, mv);
        int dst = imp_contact_state_check(&s->m, mq);
        if (dst) return imp_fail_context(dst, "bouncing-disks: event");
        for (int k = 0; k < n; k++)
            for (int w = 0; w < DK_WALLS; w++) {
                if (s->rest[k] && w == 0) continue;
                int p = DK_WALLS * k + w;
                const imp_contact_candidate *cd = &s->m.cand[p];
                double phi = imp_contact_plane_gap(cd->normal, mq + 3 * k, s->m.dim, cd->offset) - cd->radius_b;
                double b = imp_contact_normal_velocity(&s->geom, p, v);
                double aa = 0.5 * imp_contact_normal_velocity(&s->geom, p, &a[0][0]);
                double t = imp_sim_first_hit(aa, b, phi, tau, DK_TOL);
                if (t <= tau) tau = t, ev = 1;
            }
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                double t = disks_hit(s, i, j, q, v, (const double(*)[3])a, tau);
                if (t <= tau) tau = t, ev = 1;
            }
        for (int k = 0; k < n; k++) {
            for (int c = 0; c < 3; c++) {
                q[3 * k + c] += v[3 * k + c] * tau + 0.5 * a[k][c] * tau * tau;
                v[3 * k + c] += a[k][c] * tau;
            }
            if (s->rest[k]) q[3 * k + 1] = s->r[k], v[3 * k + 1] = 0.0;
        }
        left -= tau;
        if (!ev) break;
        if (ev == 2) {
            /* the contact point sticks: rolling from here */
            v[3 * ev_k + 2] = -v[3 * ev_k] / DK_SQRT2;
            continue;
        }
        if (resolve(s, q, v, hit) < 0) return IMP_ERR_NUMERIC;
        for (int k = 0; k < n; k++) {
            double *x = q + 3 * k, *u = v + 3 * k;
            int floor = imp_contact_gap(&s->geom, DK_WALLS * k, q) <= DK_TOL;
            /* the end of a Zeno sequence on the floor: rest */
            if (!s->rest[k] && floor && u[1] >= 0.0 && u[1] < s->v_rest) s->rest[k] = 1, u[1] = 0.0, x[1] = s->r[k];
            else if (s->rest[k] && u[1] > 0.0) s->rest[k] = 0;
        }
    }
    for (int k = 0; k < n; k++) hit[k] |= s->rest[k];
    return IMP_OK;
}

/* Initial state of a trajectory: disks placed without overlap (rejection),
 * centre x in [r + 0.05, W - r - 0.05], y in [0.5, H - r - 0.05], velocity
 * U(-3, 3) per axis, spin U(-10, 10) rad/s. */
static int initial_state(const dks *s, imp_rng *rng, double *q, double *v)
{
    for (int k = 0; k < s->n; k++) {
        int tries = 0, ok = 0;
        while (!ok && tries++ < 10000) {
            q[3 * k] = imp_rng_uniform_range(rng, s->r[k] + 0.05, DK_W - s->r[k] - 0.05);
            q[3 * k + 1] = imp_rng_uniform_range(rng, 0.5, DK_H - s->r[k] - 0.05);
            ok = 1;
            for (int i = 0; i < k; i++) ok &= disk_gap(s, i, k, q) > 0.05;
        }
        if (!ok) return imp_fail(IMP_ERR_NUMERIC, "bouncing-disks: no room to place disk %d", k);
        q[3 * k + 2] = 0.0;
        v[3 * k] = imp_rng_uniform_range(rng, -3.0, 3.0);
        v[3 * k + 1] = imp_rng_uniform_range(rng, -3.0, 3.0);
        v[3 * k + 2] = imp_rng_uniform_range(rng, -10.0, 10.0) * s->k[k];
    }
    return IMP_OK;
}

/* The trajectory set's geometry of the model. */
static void geometry(dks *s, imp_contact_geometry *g)
{
    memset(g, 0, sizeof *g);
    g->n_bodies = s->n, g->dim = 3, g->restitution = NAN, g->n_pairs = s->m.n_candidates, g->has_pair_law = 1;
    g->has_radii = 1;
    for (int k = 0; k < s->n; k++) g->mass[k] = s->m.bodies[k].mass, g->radius[k] = s->r[k];
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_candidate *c = &s->m.cand[p];
        imp_contact_pair *gp = &g->pairs[p];
        if (c->kind == IMP_CONTACT_SPHERES) s->pair[c->body_a][c->body_b] = p;
        if (c->kind == IMP_CONTACT_PLANE)
            *gp = (imp_contact_pair){.body_i = IMP_WALL, .body_j = c->body_b, .normal = {c->normal[0], c->normal[1], 0.0},
                                     .offset = c->offset + c->radius_b,
                                     .tangent = {c->normal[1], -c->normal[0], DK_SQRT2}};
        else
            *gp = (imp_contact_pair){.body_i = c->body_a, .body_j = c->body_b, .kind = IMP_PAIR_SPHERE,
                                     .tangent = {0.0, 0.0, DK_SQRT2}};
        g->pair_e[p] = c->e, g->pair_mu[p] = c->mu;
    }
}

int imp_simulate_disks_law(const char *system, const imp_sim_opts *o, double e_all, double mu_all, imp_trajset *out)
{
    int n;
    int st = parse_count(system, &n);
    if (!st) st = imp_sim_opts_check(o);
    if (st) return st;
    dks *s = calloc(1, sizeof *s);
    if (!s) return imp_fail(IMP_ERR_NOMEM, "bouncing-disks: no memory");
    s->n = n;
    build_model(n, e_all, mu_all, &s->m);
    if ((st = imp_contact_model_init(&s->m))) {
        free(s);
        return st;
    }
    for (int k = 0; k < n; k++) s->r[k] = s->m.cand[DK_WALLS * k].radius_b, s->k[k] = s->r[k] / DK_SQRT2;
    s->g = o->gravity;
    s->v_rest = o->gravity * o->dt / 100.0;
    geometry(s, &s->geom);
    if ((st = imp_box_sim_begin(out, system, o, &s->geom))) {
        free(s);
        return st;
    }
    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    for (int tr = 0, draws = 0; tr < o->n_traj && !st; tr++) {
        double q[3 * DK_MAX], v[3 * DK_MAX];
        memset(s->rest, 0, sizeof s->rest);
        st = initial_state(s, &rng, q, v);
        for (int t = 0; t < o->n_steps && !st; t++) {
            int hit[DK_MAX] = {0};
            if (t > 0) st = interval(s, q, v, o->dt, hit);
            imp_box_sim_store(out, tr, t, q, v, hit);
        }
        /* a disk came to rest on others, which impulses alone cannot hold
           (events pile up): this trajectory is drawn again */
        if (st == DK_WEDGED && ++draws <= 1000) st = IMP_OK, tr--;
        else if (st == DK_WEDGED)
            st = imp_fail(IMP_ERR_NUMERIC, "bouncing-disks: 1000 trajectories had a disk wedged at rest on others");
        else if (st)
            imp_fail_context(st, "bouncing-disks: trajectory %d", tr);
    }
    free(s);
    return imp_box_sim_end(out, st, o, &rng);
}

int imp_simulate_disks(const char *system, const imp_sim_opts *o, imp_trajset *out)
{
    return imp_simulate_disks_law(system, o, NAN, NAN, out);
}
