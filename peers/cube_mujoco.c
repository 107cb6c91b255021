/* cube_mujoco: MuJoCo as the cube tosses' peer (issue 28, docs/cube.md).
 *
 * An MJCF cube (a free body, box geom) over a plane; full-toss rollouts from
 * each toss's first state; contact parameters fitted on the training
 * tosses with NLopt's BOBYQA (friction mu, solref timeconst and dampratio,
 * the ground's height); scored on the test tosses with impulse's metrics
 * (include/impulse/rigid_traj.h). Built only when MuJoCo (Debian's
 * libmujoco-dev) and NLopt (libnlopt-dev) are found.
 *
 *   cube_mujoco --data FILE [--draw 128] [--train N] [--seed 0] [--substeps 4]
 *               [--max-evals 200] [--nominal-only] [--test FILE] [--json]
 *   cube_mujoco --self-test
 */
#define _GNU_SOURCE
#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/rigid_traj.h"

#include <math.h>
#include <mujoco/mujoco.h>
#include <nlopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The contact parameters MuJoCo is given (the fitted ones). */
typedef struct params {
    double mu, timeconst, dampratio, ground;
    double solimp[3]; /* dmin, dmax, width (MuJoCo's default 0.9, 0.95, 0.001) */
} params;
#define N_PARAMS 7
#define PARAMS(mu, tc, dr, h) {mu, tc, dr, h, {0.9, 0.95, 0.001}}
static int fit_solimp; /* --fit-solimp: 7 parameters, else the first 4 */

typedef struct sim {
    mjModel *m;
    mjData *d;
    int floor, box;     /* geom ids */
    int substeps;
    double dt, ground; /* the ground's height: MuJoCo's plane stays at 0, the states are shifted */
    long warnings;      /* MuJoCo warnings seen during rollouts (unstable steps) */
} sim;

static long warnings_seen;
static void on_warning(const char *msg)
{
    (void)msg;
    warnings_seen++;
}
static void on_error(const char *msg)
{
    fprintf(stderr, "cube_mujoco: error: MuJoCo: %s\n", msg);
    exit(1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The MJCF model of the body of t over the plane z = 0 (a ground at
 * another height is the same physics with the states shifted: MuJoCo does
 * not move a world geom whose geom_pos changes after compiling). */
static int sim_open(sim *s, const imp_rigid_traj *t, int substeps, int integrator)
{
    memset(s, 0, sizeof *s);
    char xml[4096];
    const imp_rigid_body *b = &t->body;
    snprintf(xml, sizeof xml,
             "<mujoco model=\"cube\">\n"
             "  <option timestep=\"%.17g\" gravity=\"0 0 %.17g\"/>\n"
             "  <worldbody>\n"
             "    <geom name=\"floor\" type=\"plane\" size=\"0 0 1\" pos=\"0 0 0\"/>\n"
             "    <body name=\"cube\" pos=\"0 0 1\">\n"
             "      <freejoint/>\n"
             "      <inertial pos=\"0 0 0\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>\n"
             "      <geom name=\"box\" type=\"box\" size=\"%.17g %.17g %.17g\" mass=\"0\"/>\n"
             "    </body>\n"
             "  </worldbody>\n"
             "</mujoco>\n",
             t->dt / substeps, -t->gravity, b->mass, b->inertia[0], b->inertia[1], b->inertia[2], 0.5 * b->size[0],
             0.5 * b->size[1], 0.5 * b->size[2]);
    mjVFS vfs;
    mj_defaultVFS(&vfs);
    int len = (int)strlen(xml);
    if (mj_makeEmptyFileVFS(&vfs, "cube.xml", len)) return imp_fail(IMP_ERR_INVALID, "MuJoCo: no VFS file");
    memcpy(vfs.filedata[mj_findFileVFS(&vfs, "cube.xml")], xml, (size_t)len);
    char err[1024] = "";
    s->m = mj_loadXML("cube.xml", &vfs, err, sizeof err);
    mj_deleteVFS(&vfs);
    if (!s->m) return imp_fail(IMP_ERR_INVALID, "MuJoCo: the cube model does not load: %s", err);
    s->d = mj_makeData(s->m);
    s->floor = mj_name2id(s->m, mjOBJ_GEOM, "floor");
    s->box = mj_name2id(s->m, mjOBJ_GEOM, "box");
    s->m->opt.integrator = integrator;
    s->substeps = substeps;
    s->dt = t->dt;
    return IMP_OK;
}

static void sim_close(sim *s)
{
    if (s->d) mj_deleteData(s->d);
    if (s->m) mj_deleteModel(s->m);
}

/* The friction of a contact is the larger of the two geoms', solref their
 * mean (equal solmix): both geoms get the same values. */
static void sim_set(sim *s, const params *p)
{
    for (int g = 0; g < 2; g++) {
        int id = g ? s->box : s->floor;
        s->m->geom_friction[3 * id] = p->mu;
        s->m->geom_solref[mjNREF * id] = p->timeconst;
        s->m->geom_solref[mjNREF * id + 1] = p->dampratio;
        for (int k = 0; k < 3; k++) s->m->geom_solimp[mjNIMP * id + k] = p->solimp[k];
    }
    s->ground = p->ground;
}

/* imp_rigid_rollout_fn: n rows from x0. MuJoCo's free joint: qpos =
 * position, quaternion w x y z; qvel = world linear velocity, body-frame
 * angular velocity (the data's layout). */
static int sim_rollout(const double x0[13], size_t n, void *ctx, double *out)
{
    sim *s = ctx;
    mjModel *m = s->m;
    mjData *d = s->d;
    mj_resetData(m, d);
    memcpy(d->qpos, x0 + 4, 3 * sizeof(double));
    d->qpos[2] -= s->ground;
    memcpy(d->qpos + 3, x0, 4 * sizeof(double));
    memcpy(d->qvel, x0 + 10, 3 * sizeof(double));
    memcpy(d->qvel + 3, x0 + 7, 3 * sizeof(double));
    mju_normalize4(d->qpos + 3);
    long before = warnings_seen;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            for (int k = 0; k < s->substeps; k++) mj_step(m, d);
        double *y = out + i * IMP_RIGID_STATE;
        memcpy(y, d->qpos + 3, 4 * sizeof(double));
        mju_normalize4(y);
        memcpy(y + 4, d->qpos, 3 * sizeof(double));
        y[6] += s->ground;
        memcpy(y + 7, d->qvel + 3, 3 * sizeof(double));
        memcpy(y + 10, d->qvel, 3 * sizeof(double));
    }
    s->warnings += warnings_seen - before;
    return imp_check_finite(out, n * IMP_RIGID_STATE, "MuJoCo rollout");
}

static int sim_eval(sim *s, const imp_rigid_traj *t, const int *eps, int n, const params *p, imp_rigid_metrics *m)
{
    sim_set(s, p);
    return imp_rigid_eval_rollouts(t, eps, n, sim_rollout, s, p->ground, m);
}

/* ---- the fit ---- */
typedef struct fit_ctx {
    sim *s;
    const imp_rigid_traj *t;
    const int *eps;
    int n, evals, position_only;
    double best;
} fit_ctx;

static int fit_position_only;                    /* --fit-loss position */
static nlopt_algorithm fit_algorithm = NLOPT_LN_BOBYQA; /* --optimizer */

static double objective(unsigned n, const double *x, double *grad, void *data)
{
    (void)grad; /* derivative-free */
    fit_ctx *c = data;
    params p = PARAMS(x[0], x[1], x[2], x[3]);
    if (n > 4)
        for (int k = 0; k < 3; k++) p.solimp[k] = x[4 + k];
    if (p.solimp[1] < p.solimp[0]) return 1e6; /* dmax >= dmin */
    imp_rigid_metrics m;
    c->evals++;
    if (sim_eval(c->s, c->t, c->eps, c->n, &p, &m)) return 1e6;
    /* position (% of width) and rotation (deg) weigh alike, or position only */
    double f = m.position_error_pct + (c->position_only ? 0 : m.rotation_error_deg);
    if (f < c->best) c->best = f;
    return f;
}

static int fit(sim *s, const imp_rigid_traj *t, const int *eps, int n, int max_evals, params *p, int *evals)
{
    unsigned np = fit_solimp ? 7 : 4;
    nlopt_opt o = nlopt_create(fit_algorithm, np);
    if (!o) return imp_fail(IMP_ERR_NOMEM, "NLopt: no optimiser");
    double ts = s->m->opt.timestep;
    double lb[N_PARAMS] = {0.01, 2 * ts, 0.1, -0.01, 0.5, 0.5, 1e-4},
           ub[N_PARAMS] = {1.5, 0.1, 3.0, 0.01, 0.9999, 0.9999, 0.02};
    double step[N_PARAMS] = {0.05, 0.005, 0.2, 0.001, 0.02, 0.01, 0.001};
    double x[N_PARAMS] = {p->mu, p->timeconst, p->dampratio, p->ground, p->solimp[0], p->solimp[1], p->solimp[2]};
    for (unsigned i = 0; i < np; i++) x[i] = fmin(fmax(x[i], lb[i]), ub[i]);
    fit_ctx c = {s, t, eps, n, 0, fit_position_only, INFINITY};
    nlopt_set_lower_bounds(o, lb);
    nlopt_set_upper_bounds(o, ub);
    nlopt_set_initial_step(o, step);
    nlopt_set_min_objective(o, objective, &c);
    nlopt_set_maxeval(o, max_evals);
    nlopt_set_xtol_rel(o, 1e-4);
    double f;
    nlopt_result r = nlopt_optimize(o, x, &f);
    nlopt_destroy(o);
    *evals = c.evals;
    if (r < 0) return imp_fail(IMP_ERR_NUMERIC, "NLopt %s failed (code %d)", nlopt_algorithm_name(fit_algorithm), (int)r);
    p->mu = x[0];
    p->timeconst = x[1];
    p->dampratio = x[2];
    p->ground = x[3];
    for (unsigned k = 4; k < np; k++) p->solimp[k - 4] = x[k];
    return IMP_OK;
}

/* ---- output ---- */
static void json_kv3(imp_json *j, const char *key, const double v[3])
{
    imp_json_key(j, key);
    imp_json_begin_array(j);
    for (int i = 0; i < 3; i++) imp_json_number(j, v[i]);
    imp_json_end_array(j);
}

static void report(int json, const char *model, const char *variant, int n_train, int seed, const char *test,
                   int n_test, const imp_rigid_metrics *m, const params *p, double seconds, int evals)
{
    if (json) {
        imp_json j;
        imp_json_init(&j);
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "model", model);
        imp_json_kv_string(&j, "variant", variant);
        imp_json_kv_int(&j, "tosses", n_train);
        imp_json_kv_int(&j, "seed", seed);
        imp_json_kv_string(&j, "test", test);
        imp_json_kv_int(&j, "test_tosses", n_test);
        imp_json_kv_number(&j, "position_error_pct", m->position_error_pct);
        imp_json_kv_number(&j, "rotation_error_deg", m->rotation_error_deg);
        imp_json_kv_number(&j, "penetration_pct", m->penetration_pct);
        if (p) {
            imp_json_kv_number(&j, "mu", p->mu);
            imp_json_kv_number(&j, "timeconst", p->timeconst);
            imp_json_kv_number(&j, "dampratio", p->dampratio);
            imp_json_kv_number(&j, "ground_height", p->ground);
            json_kv3(&j, "solimp", p->solimp);
        }
        if (evals) imp_json_kv_int(&j, "fit_evaluations", evals);
        imp_json_kv_number(&j, "seconds", seconds);
        imp_json_end_object(&j);
        printf("%s\n", imp_json_text(&j));
        imp_json_free(&j);
        return;
    }
    printf("%-9s %-8s train %3d seed %d test %s %3d: position %7.2f %% of width, rotation %6.2f deg, penetration %6.3f %%",
           model, variant, n_train, seed, test, n_test, m->position_error_pct, m->rotation_error_deg, m->penetration_pct);
    if (p)
        printf("  (mu %.4g, solref %.4g %.4g, solimp %.4g %.4g %.4g, ground %.4g m)", p->mu, p->timeconst, p->dampratio,
               p->solimp[0], p->solimp[1], p->solimp[2], p->ground);
    if (evals) printf(" [%d rollouts of the training set, %.1f s]", evals, seconds);
    printf("\n");
}

static int load_data(imp_rigid_traj *t, const char *path)
{
    int nominal = 0;
    int st = imp_rigid_traj_load_any(t, path, &nominal);
    if (!st && nominal)
        fprintf(stderr, "cube_mujoco: notice: %s has no rigid-body meta: the nominal ContactNets cube, dt 1/148 s\n",
                path);
    return st;
}

/* The name a test file's rows carry: its base name. */
static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Score the three models (ballistic, nominal, fitted when f is not NULL) on
 * all tosses of the --test file u. */
static int report_test_file(sim *s, const imp_rigid_traj *u, const char *name, int json, int nt, int seed,
                            const params *nominal, const params *f, double fit_seconds, int evals)
{
    imp_rigid_metrics m;
    double t0 = now();
    int st = imp_rigid_eval_ballistic(u, NULL, 0, &m);
    if (!st) report(json, "ballistic", "-", nt, seed, name, u->n_episodes, &m, NULL, now() - t0, 0);
    t0 = now();
    if (!st) st = sim_eval(s, u, NULL, 0, nominal, &m);
    if (!st) report(json, "mujoco", "nominal", nt, seed, name, u->n_episodes, &m, nominal, now() - t0, 0);
    if (!st && f) st = sim_eval(s, u, NULL, 0, f, &m);
    if (!st && f) report(json, "mujoco", "fitted", nt, seed, name, u->n_episodes, &m, f, fit_seconds, evals);
    return st;
}

/* --rollouts FILE: the model's rollouts of the split's first test tosses
 * (imp_rigid_rollouts_to_npz), for impulse reproduce cube's figure. */
static int save_rollouts(sim *s, const imp_rigid_traj *t, const int *te, int ne, const params *p, const char *path)
{
    imp_npz *z = imp_npz_new();
    if (!z) return imp_fail(IMP_ERR_NOMEM, "--rollouts %s", path);
    sim_set(s, p);
    int st = imp_rigid_rollouts_to_npz(z, t, te, ne < 3 ? ne : 3, sim_rollout, s);
    if (!st) st = imp_npz_save(z, path);
    imp_npz_free(z);
    return st ? imp_fail_context(st, "--rollouts %s", path) : IMP_OK;
}

static int run(const char *path, int n_draw, int n_train, int seed, int substeps, int max_evals, int nominal_only,
               int json, double mu0, const char *test_path, const char *rollouts_path)
{
    imp_rigid_traj t, u;
    int st = load_data(&t, path), has_test = 0;
    if (st) return st;
    if (test_path) {
        if ((st = load_data(&u, test_path))) {
            imp_rigid_traj_free(&t);
            return imp_fail_context(st, "--test %s", test_path);
        }
        has_test = 1;
    }
    if (n_draw > t.n_episodes) n_draw = t.n_episodes; /* all of them: N training tosses, the rest halved */
    if (n_train <= 0) n_train = (n_draw + 1) / 2;
    if (n_train >= n_draw) st = imp_fail(IMP_ERR_INVALID, "--train %d: not below the %d tosses drawn", n_train, n_draw);
    int *idx = st ? NULL : malloc(3 * (size_t)n_draw * sizeof *idx);
    if (!st && !idx) st = imp_fail(IMP_ERR_NOMEM, "splits");
    int *tr = idx, *va = idx + n_draw, *te = idx + 2 * n_draw, nt = 0, nv, ne = 0;
    if (!st)
        st = imp_rigid_split(t.n_episodes, n_draw, (uint64_t)seed, (double)n_train / n_draw,
                             (double)((n_draw - n_train) / 2) / n_draw, tr, &nt, va, &nv, te, &ne);
    sim s = {0};
    if (!st) st = sim_open(&s, &t, substeps, mjINT_EULER);
    imp_rigid_metrics m;
    double t0 = now();
    if (!st) st = imp_rigid_eval_ballistic(&t, te, ne, &m);
    if (!st) report(json, "ballistic", "-", nt, seed, "split", ne, &m, NULL, now() - t0, 0);
    params nominal = PARAMS(mu0, 0.02, 1.0, 0.0); /* MuJoCo's default solref, the nominal plane */
    t0 = now();
    if (!st) st = sim_eval(&s, &t, te, ne, &nominal, &m);
    if (!st) report(json, "mujoco", "nominal", nt, seed, "split", ne, &m, &nominal, now() - t0, 0);
    if (!st && nominal_only && has_test)
        st = report_test_file(&s, &u, base_name(test_path), json, nt, seed, &nominal, NULL, 0, 0);
    if (!st && nominal_only && rollouts_path) st = save_rollouts(&s, &t, te, ne, &nominal, rollouts_path);
    if (!st && !nominal_only) {
        params p = nominal;
        int evals = 0;
        t0 = now();
        st = fit(&s, &t, tr, nt, max_evals, &p, &evals);
        double secs = now() - t0;
        if (!st) st = sim_eval(&s, &t, te, ne, &p, &m);
        if (!st) report(json, "mujoco", "fitted", nt, seed, "split", ne, &m, &p, secs, evals);
        if (!st && has_test)
            st = report_test_file(&s, &u, base_name(test_path), json, nt, seed, &nominal, &p, secs, evals);
        if (!st && rollouts_path) st = save_rollouts(&s, &t, te, ne, &p, rollouts_path);
        imp_rigid_metrics mt;
        if (!st && !json && !sim_eval(&s, &t, tr, nt, &p, &mt))
            printf("  (fitted on its training tosses: position %.2f %%, rotation %.2f deg)\n", mt.position_error_pct,
                   mt.rotation_error_deg);
    }
    if (!st && s.warnings) fprintf(stderr, "cube_mujoco: notice: MuJoCo warned %ld times (unstable steps)\n", s.warnings);
    sim_close(&s);
    free(idx);
    imp_rigid_traj_free(&t);
    if (has_test) imp_rigid_traj_free(&u);
    return st;
}

/* ---- self-test (the ctest smoke test) ---- */
static int failures;
#define EXPECT(cond, ...)                                                  \
    do {                                                                   \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "cube_mujoco self-test: %s: ", #cond);         \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
        }                                                                  \
    } while (0)

static int self_test(void)
{
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    enum { N = 50 };
    double x0[13] = {0}, a[N * 13], b[N * 13];
    double ax[3] = {0.3, -0.5, 0.8}, an = sqrt(0.98);
    x0[0] = cos(0.35);
    for (int i = 0; i < 3; i++) x0[1 + i] = sin(0.35) * ax[i] / an;
    x0[4] = 0.1;
    x0[5] = -0.2;
    x0[6] = 1.5; /* 50 samples of flight stay well above the ground */
    double w[3] = {4, -7, 2}, v[3] = {0.6, -0.3, 1.1};
    memcpy(x0 + 7, w, sizeof w);
    memcpy(x0 + 10, v, sizeof v);
    /* 1. free flight: MuJoCo (RK4) against impulse's ballistic flight, so
     *    the frames of the state agree (body-frame angular velocity) */
    sim s;
    int st = sim_open(&s, &t, 4, mjINT_RK4);
    if (st) return st;
    params p = PARAMS(0.15, 0.02, 1.0, 0.0);
    sim_set(&s, &p);
    if ((st = sim_rollout(x0, N, &s, a)) || (st = imp_rigid_ballistic(x0, N, t.dt, &t.body, t.gravity, 4, b)))
        return st;
    imp_rigid_metrics m;
    if ((st = imp_rigid_metrics_episode(a, b, N, &t.body, 0, &m))) return st;
    EXPECT(m.position_error_pct < 1e-6 && m.rotation_error_deg < 1e-6, "free flight differs: %g %% %g deg",
           m.position_error_pct, m.rotation_error_deg);
    /* the same with the angular velocity read in the world frame would not agree */
    sim_close(&s);

    /* 2. a cube let go just above a raised ground comes to rest on it */
    if ((st = sim_open(&s, &t, 4, mjINT_EULER))) return st;
    p.ground = 0.003;
    sim_set(&s, &p);
    double r0[13] = {1, 0, 0, 0, 0, 0, 0.003 + 0.0524 + 0.002, 0, 0, 0, 0, 0, 0};
    if ((st = sim_rollout(r0, N, &s, a))) return st;
    const double *last = a + (N - 1) * 13;
    EXPECT(fabs(last[6] - (0.003 + 0.0524)) < 0.001, "resting height %g, expected %g", last[6], 0.003 + 0.0524);
    EXPECT(fabs(imp_rigid_lowest_corner(last, &t.body, 0.003)) < 0.001, "lowest corner %g",
           imp_rigid_lowest_corner(last, &t.body, 0.003));

    /* 3. the fit: tosses made by MuJoCo itself with mu 0.4 and the ground at
     *    2 mm; fitting from the nominal parameters lowers the error */
    enum { E = 2 };
    double states[E * N * 13];
    int64_t lengths[E] = {N, N};
    params truth = PARAMS(0.4, 0.02, 1.0, 0.002);
    sim_set(&s, &truth);
    for (int e = 0; e < E; e++) {
        double y0[13];
        memcpy(y0, x0, sizeof y0);
        y0[6] = 0.25 + 0.05 * e;
        y0[10] = 1.0 - e;
        if ((st = sim_rollout(y0, N, &s, states + e * N * 13))) return st;
    }
    imp_rigid_traj d;
    imp_rigid_traj_default(&d);
    if ((st = imp_rigid_traj_set(&d, states, E * N, lengths, NULL, E, 1e-9))) return st;
    int eps[E] = {0, 1}, evals = 0;
    params q = PARAMS(0.15, 0.02, 1.0, 0.0);
    imp_rigid_metrics before, after;
    if ((st = sim_eval(&s, &d, eps, E, &q, &before))) return st;
    if ((st = fit(&s, &d, eps, E, 40, &q, &evals))) return st;
    if ((st = sim_eval(&s, &d, eps, E, &q, &after))) return st;
    EXPECT(after.position_error_pct + after.rotation_error_deg < 0.5 * (before.position_error_pct + before.rotation_error_deg),
           "the fit did not halve the error: %g %% %g deg -> %g %% %g deg", before.position_error_pct,
           before.rotation_error_deg, after.position_error_pct, after.rotation_error_deg);
    EXPECT(evals > 0 && evals <= 40, "%d evaluations", evals);
    imp_rigid_traj_free(&d);
    sim_close(&s);
    printf("cube_mujoco self-test (MuJoCo %s): %s\n", mj_versionString(), failures ? "FAILED" : "passed");
    return failures ? IMP_ERR_NUMERIC : IMP_OK;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cube_mujoco --data FILE [options]   |   cube_mujoco --self-test\n"
            "  MuJoCo on the cube tosses: full-toss rollouts from each test toss's first state, nominal\n"
            "  and with friction, solref and the ground height fitted on the training tosses (docs/cube.md).\n"
            "  --data FILE       impulse import's rigid-body file, or the ContactNets file itself\n"
            "  --draw N          tosses drawn (default 128; at most all), split 50/25/25 train/validation/test\n"
            "  --train N         training tosses of the draw (default half; the rest is halved into\n"
            "                    validation and test): impulse reproduce cube draws 2N, or all tosses\n"
            "  --test FILE       also score the models on all tosses of FILE (rows with test = its name)\n"
            "  --seed S          split seed (default 0)\n"
            "  --substeps K      MuJoCo steps per sample (default 4)\n"
            "  --mu M            nominal friction (default 0.15)\n"
            "  --max-evals N     training-set rollouts the fit may use (default 200)\n"
            "  --optimizer A     NLopt's derivative-free bobyqa (default), sbplx or neldermead\n"
            "  --fit-loss L      sum (default): mean position error (%% of width) + rotation error (deg)\n"
            "                    on the training tosses; position: the position error alone\n"
            "  --fit-solimp      fit solimp (dmin, dmax, width) too (default: MuJoCo's 0.9 0.95 0.001)\n"
            "  --nominal-only    skip the fit\n"
            "  --rollouts FILE   write the (fitted, else nominal) model's rollouts of the split's first\n"
            "                    three test tosses beside the measured poses (.npz, for figures)\n"
            "  --json            one JSON object per model on stdout\n");
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end || v < lo || v > hi) {
        fprintf(stderr, "cube_mujoco: error: %s: '%s' is not an integer in [%d, %d]\n", opt, s, lo, hi);
        return 1;
    }
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    mju_user_warning = on_warning;
    mju_user_error = on_error;
    const char *data = NULL;
    const char *test_path = NULL, *rollouts_path = NULL;
    int n_draw = 128, n_train = 0, seed = 0, substeps = 4, max_evals = 200, nominal_only = 0, json = 0;
    double mu0 = 0.15;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--self-test")) {
            int st = self_test();
            if (st && !failures) fprintf(stderr, "cube_mujoco: error: %s\n", imp_last_error());
            return st ? 1 : 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--nominal-only")) nominal_only = 1;
        else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--fit-solimp")) fit_solimp = 1;
        else if (!v) bad = 1;
        else if (!strcmp(a, "--data")) data = argv[++i];
        else if (!strcmp(a, "--test")) test_path = argv[++i];
        else if (!strcmp(a, "--rollouts")) rollouts_path = argv[++i];
        else if (!strcmp(a, "--train")) bad = parse_int(a, argv[++i], 1, 1 << 24, &n_train);
        else if (!strcmp(a, "--optimizer")) {
            const char *l = argv[++i];
            if (!strcmp(l, "bobyqa")) fit_algorithm = NLOPT_LN_BOBYQA;
            else if (!strcmp(l, "sbplx")) fit_algorithm = NLOPT_LN_SBPLX;
            else if (!strcmp(l, "neldermead")) fit_algorithm = NLOPT_LN_NELDERMEAD;
            else bad = 1;
        } else if (!strcmp(a, "--fit-loss")) {
            const char *l = argv[++i];
            fit_position_only = !strcmp(l, "position");
            bad = !fit_position_only && strcmp(l, "sum");
        }
        else if (!strcmp(a, "--draw")) bad = parse_int(a, argv[++i], 2, 1 << 24, &n_draw);
        else if (!strcmp(a, "--seed")) bad = parse_int(a, argv[++i], 0, 1 << 30, &seed);
        else if (!strcmp(a, "--substeps")) bad = parse_int(a, argv[++i], 1, 1000, &substeps);
        else if (!strcmp(a, "--max-evals")) bad = parse_int(a, argv[++i], 1, 1000000, &max_evals);
        else if (!strcmp(a, "--mu")) {
            char *end;
            mu0 = strtod(argv[++i], &end);
            bad = *end || !(mu0 >= 0) || !isfinite(mu0);
        } else bad = 1;
        if (bad) {
            fprintf(stderr, "cube_mujoco: error: bad or incomplete option '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (!data) {
        usage(stderr);
        return 2;
    }
    if (run(data, n_draw, n_train, seed, substeps, max_evals, nominal_only, json, mu0, test_path, rollouts_path)) {
        fprintf(stderr, "cube_mujoco: error: %s\n", imp_last_error());
        return 1;
    }
    return 0;
}
