/* Sweep tasks of the cube tosses (issue 28, docs/cube.md): one model,
 * one number of training tosses N, one seed. The split: 2N tosses drawn at
 * random with the seed (all of them when the file has fewer), N for
 * training, the rest halved into validation and test (50/25/25 for 2N);
 * scored with full-toss rollouts from each test toss's first state
 * (src/eval/rigid_eval.c) and, with test=FILE, on all tosses of FILE.
 * Settings:
 *   model=impulse|end-to-end|rigid-identified|mujoco|ballistic data=FILE tosses=N seed=K
 *   test=FILE (optional)
 *   simulate=box-toss instead of data=: the tosses simulated by
 *     imp_box_toss_simulate (impulse simulate box-toss) with sim_seed=0
 *     sim_tosses=2N sim_e=0.3 sim_mu=0.25 sim_substeps=64 (not with mujoco,
 *     whose peer reads a file); the meta then holds e_true and mu_true
 *   end-to-end: steps=4000 hidden=128 layers=2 batch=256 lr=0.001
 *     eval_every=250 window=1 noise=1 (include/impulse/rigid_models.h)
 *   mujoco: max_evals=200 (the peer program cube_mujoco, run as a
 *     subprocess: env IMPULSE_CUBE_MUJOCO, else beside the running program)
 *   rigid-identified: max_evals=100 substeps=4 (imp_rigid_identify on the
 *     training tosses' full-toss loss, include/impulse/rigid_model.h)
 *   impulse: fit_evals=150 inertia=1 (the full-toss fit of e, mu, the
 *     ground and the inertia; select=1: also with the nominal inertia, the
 *     validation tosses choosing; default 0) steps=300 window=12 batch=16 lr=0.02
 *     eval_every=25 substeps=2 points=1 (learn the corners) rot_weight=1
 *     (the window loss's rotation weight) prior_ground_mm=2 prior_inertia=1.386
 *     (the full-toss fit's MAP priors: sd of the ground, mm, and of the log
 *     inertia scale; 0: none) prior_point_mm=0 (Adam's prior on the corners,
 *     sd in mm; 0: none)
 *     start=nominal|identified (the nominal cube with e 0.3, mu 0.3, or
 *     rigid-identified's fit, max_evals=100); warm-started impulse solves
 *     (imp_rigid_learn, include/impulse/rigid_model.h)
 * A task trains in seconds: a stopped one is rerun from its start.
 * result.npz: "metrics" (T x 3: position % width, rotation deg,
 * penetration % width; row 0 the split's test tosses, row 1 the test
 * file's), meta model, tosses, seed, test_tosses, the split's three
 * metrics, test_name and test_file_tosses (with test=), seconds and the
 * model's own facts. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"
#include "impulse/rigid_model.h"
#include "impulse/rigid_models.h"
#include "impulse/rigid_traj.h"

#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef struct cube_settings {
    const char *model, *data, *test;
    long tosses, seed, window, steps, hidden, layers, batch, eval_every, max_evals, substeps, points;
    long fit_evals, inertia, select; /* impulse: the full-toss fit's rollouts, learn_inertia, select_inertia */
    double lr, noise;
    double rot_weight, prior_ground_mm, prior_inertia, prior_point_mm; /* impulse: imp_rigid_learn_opts' rot_weight and priors */
    int start_identified; /* impulse: start=identified (else nominal) */
    int simulate;         /* simulate=box-toss: the data simulated */
    long sim_seed, sim_tosses, sim_substeps;
    double sim_e, sim_mu;
} cube_settings;

static int cube_settings_read(const imp_sweep_task *t, cube_settings *s)
{
    memset(s, 0, sizeof *s);
    s->model = imp_sweep_task_get(t, "model");
    if (!s->model) return imp_fail(IMP_ERR_INVALID, "task '%s': needs model=", t->id);
    if (strcmp(s->model, "end-to-end") && strcmp(s->model, "mujoco") && strcmp(s->model, "ballistic") &&
        strcmp(s->model, "rigid-identified") && strcmp(s->model, "impulse"))
        return imp_fail(IMP_ERR_INVALID,
                        "task '%s': model=%s is not impulse, end-to-end, rigid-identified, mujoco or ballistic", t->id,
                        s->model);
    const int ident = !strcmp(s->model, "rigid-identified"), learn = !strcmp(s->model, "impulse");
    s->data = imp_sweep_task_get(t, "data");
    const char *sim = imp_sweep_task_get(t, "simulate");
    if (sim && strcmp(sim, "box-toss"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': simulate=%s is not box-toss", t->id, sim);
    if (sim && s->data) return imp_fail(IMP_ERR_INVALID, "task '%s': data= and simulate= both given", t->id);
    if (sim && !strcmp(s->model, "mujoco"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': simulate=box-toss: model=mujoco reads its data from a file", t->id);
    s->simulate = sim != NULL;
    if (!s->data && !sim) return imp_fail(IMP_ERR_INVALID, "task '%s': needs data= or simulate=box-toss", t->id);
    if (sim) s->data = "box-toss";
    static const char *const sim_keys[] = {"sim_seed", "sim_tosses", "sim_substeps", "sim_e", "sim_mu"};
    for (size_t k = 0; k < sizeof sim_keys / sizeof sim_keys[0] && !sim; k++)
        if (imp_sweep_task_get(t, sim_keys[k]))
            return imp_fail(IMP_ERR_INVALID, "task '%s': %s= applies to simulate=box-toss only", t->id, sim_keys[k]);
    s->test = imp_sweep_task_get(t, "test");
    imp_rigid_e2e_opts d;
    imp_rigid_e2e_opts_default(&d);
    imp_rigid_learn_opts lo;
    imp_rigid_learn_defaults(&lo);
    if (learn) {
        /* the learned cube's defaults for the keys it shares with the network */
        d.steps = lo.steps, d.window = lo.window, d.batch = lo.batch, d.eval_every = lo.eval_every, d.lr = lo.lr;
    }
    int st = imp_sweep_task_int(t, "tosses", 0, 1, 1 << 23, &s->tosses);
    if (!st && !imp_sweep_task_get(t, "tosses")) st = imp_fail(IMP_ERR_INVALID, "task '%s': needs tosses=", t->id);
    if (!st) st = imp_sweep_task_int(t, "seed", 0, 0, 1 << 30, &s->seed);
    if (!st) st = imp_sweep_task_int(t, "steps", d.steps, 1, 10000000, &s->steps);
    if (!st) st = imp_sweep_task_int(t, "window", d.window, 1, 1000, &s->window);
    if (!st) st = imp_sweep_task_int(t, "hidden", d.hidden, 1, 4096, &s->hidden);
    if (!st) st = imp_sweep_task_int(t, "layers", d.layers, 1, IMP_MLP_MAX_LAYERS - 1, &s->layers);
    if (!st) st = imp_sweep_task_int(t, "batch", d.batch, 1, 1 << 20, &s->batch);
    if (!st) st = imp_sweep_task_int(t, "eval_every", d.eval_every, 1, 10000000, &s->eval_every);
    if (!st) st = imp_sweep_task_double(t, "lr", d.lr, 1e-12, 10, &s->lr);
    if (!st) st = imp_sweep_task_double(t, "noise", d.noise, 0, 1e6, &s->noise);
    if (!st) st = imp_sweep_task_int(t, "max_evals", ident ? 100 : 200, ident ? 4 : 1, 1000000, &s->max_evals);
    if (!st) st = imp_sweep_task_int(t, "substeps", learn ? lo.substeps : 4, 1, 4096, &s->substeps);
    if (!st) st = imp_sweep_task_int(t, "points", lo.learn_points, 0, 1, &s->points);
    if (!st) st = imp_sweep_task_int(t, "fit_evals", lo.fit_evals, 0, 1000000, &s->fit_evals);
    if (!st) st = imp_sweep_task_int(t, "inertia", lo.learn_inertia, 0, 3, &s->inertia);
    if (!st) st = imp_sweep_task_int(t, "select", lo.select_inertia, 0, 1, &s->select);
    if (!st) st = imp_sweep_task_double(t, "rot_weight", lo.rot_weight, 0, 1e6, &s->rot_weight);
    if (!st) st = imp_sweep_task_double(t, "prior_ground_mm", 1e3 * lo.prior_ground_sd, 0, 1e3, &s->prior_ground_mm);
    if (!st) st = imp_sweep_task_double(t, "prior_inertia", lo.prior_inertia_sd, 0, 1e3, &s->prior_inertia);
    if (!st) st = imp_sweep_task_double(t, "prior_point_mm", 1e3 * lo.prior_point_sd, 0, 1e3, &s->prior_point_mm);
    if (!st && s->inertia == 2) st = imp_fail(IMP_ERR_INVALID, "task '%s': inertia=2 is not 0, 1 or 3", t->id);
    imp_box_toss_opts bo;
    imp_box_toss_defaults(&bo);
    if (!st) st = imp_sweep_task_int(t, "sim_seed", 0, 0, 2147483647L, &s->sim_seed);
    if (!st) st = imp_sweep_task_int(t, "sim_tosses", 2 * s->tosses, 2, 1000000, &s->sim_tosses);
    if (!st) st = imp_sweep_task_int(t, "sim_substeps", bo.substeps, 1, 100000, &s->sim_substeps);
    if (!st) st = imp_sweep_task_double(t, "sim_e", bo.e, 0, 1, &s->sim_e);
    if (!st) st = imp_sweep_task_double(t, "sim_mu", bo.mu, 0, 10, &s->sim_mu);
    const char *start = imp_sweep_task_get(t, "start");
    if (!st && start && strcmp(start, "nominal") && strcmp(start, "identified"))
        st = imp_fail(IMP_ERR_INVALID, "task '%s': start=%s is not nominal or identified", t->id, start);
    s->start_identified = start && !strcmp(start, "identified");
    if (!st && learn && s->window < 2) st = imp_fail(IMP_ERR_INVALID, "task '%s': window=%ld is not >= 2", t->id, s->window);
    return st;
}

int imp_sweep_cube_peer(char *path, size_t cap)
{
    if (!path || cap < 2) return 0;
    const char *env = getenv("IMPULSE_CUBE_MUJOCO");
    if (env) {
        snprintf(path, cap, "%s", env);
        return env[0] && access(path, X_OK) == 0;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = 0;
    int w = snprintf(path, cap, "%s/cube_mujoco", exe);
    return w > 0 && (size_t)w < cap && access(path, X_OK) == 0;
}

/* The split of the task's settings: train/valid/test index arrays of
 * n_draw entries each in idx (3 n_draw). */
static int cube_split(const imp_rigid_traj *t, const cube_settings *s, int **idx, int *n_draw, int *nt, int *nv,
                      int *ne)
{
    int draw = 2 * (int)s->tosses;
    if (draw > t->n_episodes) draw = t->n_episodes;
    if (s->tosses >= draw)
        return imp_fail(IMP_ERR_INVALID, "tosses=%ld: the data have %d tosses, too few to hold out test tosses",
                        s->tosses, t->n_episodes);
    *idx = malloc(3 * (size_t)draw * sizeof **idx);
    if (!*idx) return imp_fail(IMP_ERR_NOMEM, "split of %d tosses", draw);
    *n_draw = draw;
    int st = imp_rigid_split(t->n_episodes, draw, (uint64_t)s->seed, (double)s->tosses / draw,
                             (double)((draw - (int)s->tosses) / 2) / draw, *idx, nt, *idx + draw, nv, *idx + 2 * draw,
                             ne);
    if (!st && *ne < 1) st = imp_fail(IMP_ERR_INVALID, "tosses=%ld: no test tosses left of %d drawn", s->tosses, draw);
    if (st) free(*idx), *idx = NULL;
    return st;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* ---- MuJoCo through its peer program ---- */

/* Run the peer with its stdout and stderr in files of the task folder. */
static int run_peer(const char *peer, const cube_settings *s, const char *task_dir, const char *rollouts, char **out)
{
    char draw[32], train[32], seed[32], evals[32], out_path[4096], err_path[4096];
    snprintf(draw, sizeof draw, "%ld", 2 * s->tosses);
    snprintf(train, sizeof train, "%ld", s->tosses);
    snprintf(seed, sizeof seed, "%ld", s->seed);
    snprintf(evals, sizeof evals, "%ld", s->max_evals);
    snprintf(out_path, sizeof out_path, "%s/peer.jsonl", task_dir);
    snprintf(err_path, sizeof err_path, "%s/peer.log", task_dir);
    char *argv[18] = {(char *)peer, "--data", (char *)s->data, "--draw", draw, "--train", train, "--seed", seed,
                      "--max-evals", evals, "--json", "--rollouts", (char *)rollouts, NULL};
    if (s->test) argv[14] = "--test", argv[15] = (char *)s->test, argv[16] = NULL;
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa)) return imp_fail(IMP_ERR_NOMEM, "mujoco: cannot start %s", peer);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, peer, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) return imp_fail(IMP_ERR_IO, "mujoco: cannot run %s: %s", peer, strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        unsigned char *e = NULL;
        size_t n = 0;
        char last[300] = "";
        if (!imp_read_file(err_path, &e, &n) && n) {
            char *p = (char *)e;
            while (n && p[n - 1] == '\n') p[--n] = 0;
            char *nl = strrchr(p, '\n');
            snprintf(last, sizeof last, "%s", nl ? nl + 1 : p);
        }
        free(e);
        imp_clear_error();
        return imp_fail(IMP_ERR_IO, "mujoco: %s failed (%s): %s", peer,
                        WIFEXITED(status) ? "exit status" : "signal", last[0] ? last : "see peer.log");
    }
    size_t n = 0;
    return imp_read_file(out_path, (unsigned char **)out, &n);
}

/* The fitted model's row for test set `test` from the peer's JSON lines. */
static int peer_row(const char *text, const char *test, double m[3], char *facts, size_t cap)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[2048];
        if (len < sizeof buf) {
            memcpy(buf, line, len);
            buf[len] = 0;
            char model[32] = "", variant[32] = "", tname[512] = "";
            if (!imp_json_get_string(buf, "model", model, sizeof model) &&
                !imp_json_get_string(buf, "variant", variant, sizeof variant) &&
                !imp_json_get_string(buf, "test", tname, sizeof tname) && !strcmp(model, "mujoco") &&
                !strcmp(variant, "fitted") && !strcmp(tname, test)) {
                int st = imp_json_get_number(buf, "position_error_pct", &m[0]);
                if (!st) st = imp_json_get_number(buf, "rotation_error_deg", &m[1]);
                if (!st) st = imp_json_get_number(buf, "penetration_pct", &m[2]);
                if (facts) snprintf(facts, cap, "%s", buf);
                return st;
            }
            imp_clear_error();
        }
        line = nl ? nl + 1 : NULL;
    }
    return imp_fail(IMP_ERR_FORMAT, "mujoco: the peer printed no fitted row for test '%s'", test);
}

/* ---- the task ---- */

/* One full toss predicted, timed: the mean over `reps` rollouts of the
 * split's first test toss, ms (the tasks' rollout_ms). */
static double rollout_ms(const imp_rigid_traj *t, int ep, int reps, imp_rigid_rollout_fn fn, void *ctx)
{
    size_t len = (size_t)t->lengths[ep];
    double *buf = malloc(len * 13 * sizeof *buf);
    if (!buf) return NAN;
    double tt = imp_time_now();
    for (int r = 0; r < reps; r++)
        if (fn(t->states + imp_rigid_traj_offset(t, ep) * 13, len, ctx, buf)) imp_clear_error();
    free(buf);
    return reps > 0 ? 1e3 * (imp_time_now() - tt) / reps : NAN;
}

/* The split's first test tosses rolled out for the report's figure of
 * measured against predicted (imp_rigid_rollouts_to_npz). */
#define CUBE_FIGURE_TOSSES 3
static int save_rollouts(imp_npz *result, const imp_rigid_traj *t, const int *test, int ne, imp_rigid_rollout_fn fn,
                         void *ctx)
{
    return imp_rigid_rollouts_to_npz(result, t, test, ne < CUBE_FIGURE_TOSSES ? ne : CUBE_FIGURE_TOSSES, fn, ctx);
}

/* The learned cube's contact points and the box's corners, body frame, m
 * ("points", "corners": n x 3), for the report's geometry figure. */
static int save_points(imp_npz *result, const imp_rigid_model *rm, const imp_rigid_body *body)
{
    double corners[8][3];
    for (int k = 0; k < 8; k++)
        for (int a = 0; a < 3; a++) corners[k][a] = (k >> a & 1 ? 0.5 : -0.5) * body->size[a];
    size_t sp[2] = {(size_t)rm->n_points, 3}, sc[2] = {8, 3};
    int st = rm->n_points > 0 ? imp_npz_add_f64(result, "points", 2, sp, &rm->points[0][0]) : IMP_OK;
    return st ? st : imp_npz_add_f64(result, "corners", 2, sc, &corners[0][0]);
}

/* The peer's rollouts file (its --rollouts) into the task's result. */
static int copy_peer_rollouts(imp_npz *result, const char *path)
{
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    static const char *const names[5] = {"rollout_episodes", "rollout_ids", "rollout_pred", "rollout_meas",
                                         "rollout_dt"};
    for (int k = 0; k < 5 && !st; k++) {
        const imp_npy_array *a = imp_npz_find(z, names[k]);
        if (!a || a->dtype != (k < 2 ? IMP_I64 : IMP_F64))
            st = imp_fail(IMP_ERR_FORMAT, "mujoco: %s: no %s", path, names[k]);
        else st = k < 2 ? imp_npz_add_i64(result, names[k], a->ndim, a->shape, a->data)
                        : imp_npz_add_f64(result, names[k], a->ndim, a->shape, a->data);
    }
    imp_npz_free(z);
    return st;
}

/* CPU time of the calling thread (one core, whatever else runs), ms per toss
   over the episodes ep[0..n), each rolled out in full from its first state */
static double rollout_cpu_ms(const imp_rigid_traj *t, const int *ep, int n, imp_rigid_rollout_fn fn, void *ctx)
{
    size_t len = 0;
    for (int k = 0; k < n; k++) len = (size_t)t->lengths[ep[k]] > len ? (size_t)t->lengths[ep[k]] : len;
    double *buf = malloc(len * 13 * sizeof *buf);
    if (!buf || n < 1) {
        free(buf);
        return NAN;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    for (int k = 0; k < n; k++)
        if (fn(t->states + imp_rigid_traj_offset(t, ep[k]) * 13, (size_t)t->lengths[ep[k]], ctx, buf))
            imp_clear_error();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    free(buf);
    return 1e3 * ((double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec)) / n;
}

int sweep_exec_cube(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result)
{
    (void)o;
    cube_settings s;
    int st = cube_settings_read(t, &s);
    if (st) return st;
    imp_rigid_traj data, test;
    memset(&test, 0, sizeof test);
    if (s.simulate) {
        imp_box_toss_opts bo;
        imp_box_toss_defaults(&bo);
        bo.n_tosses = (int)s.sim_tosses, bo.substeps = (int)s.sim_substeps, bo.e = s.sim_e, bo.mu = s.sim_mu;
        bo.seed = (uint64_t)s.sim_seed;
        imp_rigid_traj_default(&data);
        if ((st = imp_box_toss_simulate(&bo, &data))) {
            imp_rigid_traj_free(&data);
            return imp_fail_context(st, "task '%s': simulate=box-toss", t->id);
        }
    } else if ((st = imp_rigid_traj_load_any(&data, s.data, NULL))) {
        return imp_fail_context(st, "task '%s': data", t->id);
    }
    int has_test = 0;
    if (s.test) {
        if ((st = imp_rigid_traj_load_any(&test, s.test, NULL))) {
            imp_rigid_traj_free(&data);
            return imp_fail_context(st, "task '%s': test", t->id);
        }
        has_test = 1;
    }
    int *idx = NULL, n_draw = 0, nt = 0, nv = 0, ne = 0;
    st = cube_split(&data, &s, &idx, &n_draw, &nt, &nv, &ne);
    double metrics[2][3] = {{NAN, NAN, NAN}, {NAN, NAN, NAN}};
    const int T = has_test ? 2 : 1;
    const double t0 = imp_time_now();
    imp_json j;
    sweep_meta_begin(&j, t);
    imp_json_kv_string(&j, "model", s.model);
    imp_json_kv_int(&j, "tosses", s.tosses);
    imp_json_kv_int(&j, "seed", s.seed);
    if (s.simulate) {
        imp_json_kv_number(&j, "e_true", s.sim_e);
        imp_json_kv_number(&j, "mu_true", s.sim_mu);
    }
    imp_rigid_metrics m[2];
    if (!st && !strcmp(s.model, "ballistic")) {
        st = imp_rigid_eval_ballistic(&data, idx + 2 * n_draw, ne, &m[0]);
        if (!st && has_test) st = imp_rigid_eval_ballistic(&test, NULL, 0, &m[1]);
    } else if (!st && !strcmp(s.model, "end-to-end")) {
        imp_rigid_e2e_opts eo;
        imp_rigid_e2e_opts_default(&eo);
        eo.steps = (int)s.steps, eo.hidden = (int)s.hidden, eo.layers = (int)s.layers, eo.batch = (int)s.batch;
        eo.eval_every = (int)s.eval_every, eo.lr = s.lr, eo.noise = s.noise, eo.window = (int)s.window, eo.seed = (unsigned long long)s.seed;
        imp_rigid_e2e net;
        imp_rigid_e2e_report rep;
        st = imp_rigid_e2e_train(&net, &data, idx, nt, idx + n_draw, nv, &eo, &rep);
        for (int k = 0; k < T && !st; k++) {
            /* a rollout that leaves the finite numbers is a result: infinitely wrong */
            if (imp_rigid_eval_rollouts(k ? &test : &data, k ? NULL : idx + 2 * n_draw, k ? 0 : ne,
                                        imp_rigid_e2e_rollout, &net, (k ? &test : &data)->ground_height, &m[k])) {
                imp_clear_error();
                m[k].position_error_pct = m[k].rotation_error_deg = m[k].penetration_pct = INFINITY;
            }
        }
        if (!st) st = save_rollouts(result, &data, idx + 2 * n_draw, ne, imp_rigid_e2e_rollout, &net);
        if (!st) {
            imp_json_kv_number(&j, "rollout_ms", rollout_ms(&data, idx[2 * n_draw], ne, imp_rigid_e2e_rollout, &net));
            imp_json_kv_int(&j, "steps", s.steps);
            imp_json_kv_int(&j, "best_step", rep.best_step);
            imp_json_kv_number(&j, "valid_score", rep.valid_score);
            imp_json_kv_number(&j, "train_loss", rep.train_loss);
            imp_json_kv_int(&j, "hidden", s.hidden);
            imp_json_kv_number(&j, "noise", s.noise);
            imp_json_kv_int(&j, "window", s.window);
            imp_json_kv_int(&j, "layers", s.layers);
            imp_json_kv_int(&j, "parameters", (long long)net.net.n_params);
            imp_rigid_e2e_free(&net);
        }
    } else if (!st && (!strcmp(s.model, "rigid-identified") || !strcmp(s.model, "impulse"))) {
        const int learn = !strcmp(s.model, "impulse");
        imp_rigid_ident_opts io;
        imp_rigid_ident_defaults(&io, &data);
        io.substeps = (int)s.substeps, io.max_evals = (int)s.max_evals;
        imp_rigid_model rm;
        imp_rigid_ident_result ir = {0};
        if (!learn || s.start_identified) st = imp_rigid_identify(&data, idx, nt, &io, &rm, &ir);
        else imp_rigid_model_box(&rm, &data.body, io.e0, io.mu0, io.ground0, data.gravity);
        if (!st && learn) {
            imp_rigid_learn_opts lo;
            imp_rigid_learn_defaults(&lo);
            lo.substeps = (int)s.substeps, lo.window = (int)s.window, lo.batch = (int)s.batch;
            lo.steps = (int)s.steps, lo.lr = s.lr, lo.eval_every = (int)s.eval_every, lo.learn_points = (int)s.points;
            lo.seed = (unsigned long long)s.seed;
            lo.fit_evals = (int)s.fit_evals, lo.learn_inertia = (int)s.inertia;
            lo.select_inertia = (int)s.select;
            lo.rot_weight = s.rot_weight, lo.prior_ground_sd = 1e-3 * s.prior_ground_mm;
            lo.prior_inertia_sd = s.prior_inertia, lo.prior_point_sd = 1e-3 * s.prior_point_mm;
            rm.warm_start = 1; /* the same solutions, about half the solver's work */
            imp_rigid_learn_report lr;
            st = imp_rigid_learn(&data, idx, nt, idx + n_draw, nv, &lo, &rm, &lr);
            if (!st) {
                imp_json_kv_string(&j, "start", s.start_identified ? "identified" : "nominal");
                imp_json_kv_int(&j, "steps", s.steps);
                imp_json_kv_int(&j, "window", s.window);
                imp_json_kv_int(&j, "batch", s.batch);
                imp_json_kv_number(&j, "lr", s.lr);
                imp_json_kv_int(&j, "learn_points", s.points);
                imp_json_kv_int(&j, "best_step", lr.best_step);
                imp_json_kv_number(&j, "valid_score", lr.valid_score);
                imp_json_kv_number(&j, "valid_position_pct", lr.valid_position_pct);
                imp_json_kv_number(&j, "valid_rotation_deg", lr.valid_rotation_deg);
                /* the options imp_rigid_learn ran with */
                imp_json_kv_number(&j, "rot_weight", lo.rot_weight);
                imp_json_kv_number(&j, "prior_ground_mm", 1e3 * lo.prior_ground_sd);
                imp_json_kv_number(&j, "prior_inertia", lo.prior_inertia_sd);
                imp_json_kv_number(&j, "prior_point_mm", 1e3 * lo.prior_point_sd);
                imp_json_kv_number(&j, "window_loss", lr.train_loss);
                imp_json_kv_int(&j, "skipped_windows", lr.skipped_windows);
                imp_json_kv_number(&j, "train_seconds", lr.seconds);
                imp_json_kv_int(&j, "fit_evals", lr.fit_evals);
                imp_json_kv_number(&j, "fit_loss", lr.fit_loss);
                imp_json_kv_int(&j, "learn_inertia", s.inertia);
                imp_json_kv_int(&j, "select_inertia", s.select);
                imp_json_kv_number(&j, "fit_valid_nominal", lr.fit_valid_nominal);
                imp_json_kv_number(&j, "fit_valid_inertia", lr.fit_valid_inertia);
                imp_json_kv_int(&j, "inertia_kept", lr.inertia_kept);
                imp_json_key(&j, "inertia_scale"); /* the learned principal moments over the body's */
                char ib[128];
                snprintf(ib, sizeof ib, "[%.4f,%.4f,%.4f]", rm.inertia[0] / data.body.inertia[0],
                         rm.inertia[1] / data.body.inertia[1], rm.inertia[2] / data.body.inertia[2]);
                imp_json_raw(&j, ib);
                imp_json_kv_number(&j, "dv0_z", rm.dv0[2]);
                /* the learned corners, body frame, mm */
                imp_json_key(&j, "points_mm");
                char buf[1024];
                size_t w = 0;
                for (int k = 0; k < rm.n_points && w < sizeof buf; k++)
                    w += (size_t)snprintf(buf + w, sizeof buf - w, "%s[%.4f,%.4f,%.4f]", k ? "," : "[",
                                          1e3 * rm.points[k][0], 1e3 * rm.points[k][1], 1e3 * rm.points[k][2]);
                if (w < sizeof buf) snprintf(buf + w, sizeof buf - w, "]");
                imp_json_raw(&j, buf);
            }
        }
        imp_rigid_model_ctx rc = {&rm, data.dt, io.substeps};
        for (int k = 0; k < T && !st; k++)
            st = imp_rigid_eval_rollouts(k ? &test : &data, k ? NULL : idx + 2 * n_draw, k ? 0 : ne,
                                         imp_rigid_model_rollout_fn, &rc, rm.ground, &m[k]);
        if (!st) st = save_rollouts(result, &data, idx + 2 * n_draw, ne, imp_rigid_model_rollout_fn, &rc);
        if (!st && learn) st = save_points(result, &rm, &data.body);
        if (!st) {
            imp_json_kv_number(&j, "rollout_ms", rollout_ms(&data, idx[2 * n_draw], ne, imp_rigid_model_rollout_fn, &rc));
            if (learn)
                imp_json_kv_number(&j, "rollout_cpu_ms",
                                   rollout_cpu_ms(&data, idx + 2 * n_draw, ne, imp_rigid_model_rollout_fn, &rc));
            imp_json_kv_number(&j, "e", rm.e);
            imp_json_kv_number(&j, "mu", rm.mu);
            imp_json_kv_number(&j, "ground", rm.ground);
            imp_json_kv_int(&j, "substeps", s.substeps);
            if (!learn || s.start_identified) {
                imp_json_kv_int(&j, "max_evals", s.max_evals);
                imp_json_kv_int(&j, "evals", ir.evals);
                imp_json_kv_number(&j, "train_loss", ir.loss);
            }
        }
    } else if (!st) {
        char peer[4096], facts[2048] = "";
        char *text = NULL;
        if (!imp_sweep_cube_peer(peer, sizeof peer))
            st = imp_fail(IMP_ERR_UNSUPPORTED,
                          "mujoco: the peer program cube_mujoco is not built (libmujoco-dev, libnlopt-dev) or not "
                          "found (IMPULSE_CUBE_MUJOCO)");
        char rollouts[4200];
        snprintf(rollouts, sizeof rollouts, "%s/peer_rollouts.npz", task_dir);
        if (!st) st = run_peer(peer, &s, task_dir, rollouts, &text);
        if (!st) st = copy_peer_rollouts(result, rollouts);
        double v[3];
        if (!st && !(st = peer_row(text, "split", v, facts, sizeof facts))) {
            m[0] = (imp_rigid_metrics){v[0], v[1], v[2]};
            imp_json_key(&j, "fit");
            imp_json_raw(&j, facts);
        }
        if (!st && has_test && !(st = peer_row(text, base_name(s.test), v, NULL, 0)))
            m[1] = (imp_rigid_metrics){v[0], v[1], v[2]};
        free(text);
    }
    if (!st) {
        for (int k = 0; k < T; k++) {
            metrics[k][0] = m[k].position_error_pct;
            metrics[k][1] = m[k].rotation_error_deg;
            metrics[k][2] = m[k].penetration_pct;
        }
        imp_json_kv_int(&j, "test_tosses", ne);
        imp_json_kv_int(&j, "train_tosses", nt);
        imp_json_kv_int(&j, "valid_tosses", nv);
        imp_json_kv_number(&j, "position_error_pct", metrics[0][0]);
        imp_json_kv_number(&j, "rotation_error_deg", metrics[0][1]);
        imp_json_kv_number(&j, "penetration_pct", metrics[0][2]);
        if (has_test) {
            imp_json_kv_string(&j, "test_name", base_name(s.test));
            imp_json_kv_int(&j, "test_file_tosses", test.n_episodes);
        }
        imp_json_kv_number(&j, "seconds", imp_time_now() - t0);
        st = sweep_meta_set(result, &j);
        size_t shape[2] = {(size_t)T, 3};
        if (!st) st = imp_npz_add_f64(result, "metrics", 2, shape, &metrics[0][0]);
    } else {
        imp_json_free(&j);
        imp_fail_context(st, "task '%s'", t->id);
    }
    free(idx);
    imp_rigid_traj_free(&data);
    if (has_test) imp_rigid_traj_free(&test);
    return st;
}

/* ---- the plan ---- */

void imp_sweep_cube_opts_default(imp_sweep_cube_opts *o) { memset(o, 0, sizeof *o); }

int imp_sweep_plan_cube(imp_sweep_plan *plan, const imp_sweep_cube_opts *o)
{
    if (!plan || !o) return imp_fail(IMP_ERR_INVALID, "cube plan: NULL");
    memset(plan, 0, sizeof *plan);
    if (!o->data) return imp_fail(IMP_ERR_INVALID, "cube plan: data: no file");
    if (strpbrk(o->data, " \t\n") || (o->test && strpbrk(o->test, " \t\n")))
        return imp_fail(IMP_ERR_INVALID, "cube plan: data/test: file names with spaces cannot go into a plan");
    int seeds = o->seeds > 0 ? o->seeds : o->quick ? 1 : 5;
    if (seeds > 1000) return imp_fail(IMP_ERR_INVALID, "cube plan: seeds %d out of [1, 1000]", seeds);
    if (o->steps < 0 || o->max_evals < 0) return imp_fail(IMP_ERR_INVALID, "cube plan: steps or max_evals < 0");
    const char *list = o->tosses ? o->tosses : o->quick ? "8,16,64" : "4,8,16,32,64,128,256";
    long sizes[64];
    int n_sizes = 0;
    for (const char *p = list; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > (1 << 23) || (*end && *end != ','))
            return imp_fail(IMP_ERR_INVALID, "cube plan: tosses: '%s' is not a comma list of positive integers", list);
        if (n_sizes == 64) return imp_fail(IMP_ERR_INVALID, "cube plan: tosses: more than 64 sizes");
        sizes[n_sizes++] = v;
        p = *end ? end + 1 : end;
    }
    if (!n_sizes) return imp_fail(IMP_ERR_INVALID, "cube plan: tosses: empty list");
    char steps[48] = "", evals[48] = "", test[4200] = "", words[9000];
    if (o->steps > 0) snprintf(steps, sizeof steps, " steps=%d", o->steps);
    if (o->max_evals > 0) snprintf(evals, sizeof evals, " max_evals=%d", o->max_evals);
    if (o->test) snprintf(test, sizeof test, " test=%s", o->test);
    static const char *models[] = {"end-to-end", "mujoco", "ballistic", "rigid-identified", "impulse"};
    int st = IMP_OK;
    for (int k = 0; k < n_sizes && !st; k++)
        for (int s = 0; s < seeds && !st; s++)
            for (int mi = 0; mi < 5 && !st; mi++) {
                if (mi == 1 && !o->mujoco) continue;
                /* estimates: the network's steps; MuJoCo's and rigid-identified's rollouts of the
                   training set; the learned cube's windows and validation rollouts */
                double cost = mi == 0 ? 2e-3 * (o->steps > 0 ? o->steps : 4000) + 0.05 * sizes[k]
                              : mi == 1 ? 0.25 * sizes[k] + 2
                              : mi == 3 ? 5e-3 * (o->max_evals > 0 ? o->max_evals : 100) * sizes[k] + 0.1
                              : mi == 4 ? 5 + 0.1 * sizes[k] : 0.1;
                snprintf(words, sizeof words, "id=cube.%s.n%ld.s%d strand=cube model=%s data=%s%s tosses=%ld seed=%d%s cost=%.3g",
                         models[mi], sizes[k], s, models[mi], o->data, test, sizes[k], s,
                         mi == 0 ? steps : mi == 1 || mi == 3 ? evals : "", cost);
                st = imp_sweep_plan_add(plan, words);
                cube_settings cs;
                if (!st && (st = cube_settings_read(&plan->tasks[plan->n_tasks - 1], &cs))) imp_fail_context(st, "cube plan");
            }
    if (st) imp_sweep_plan_free(plan);
    return st;
}
