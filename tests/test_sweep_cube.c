/* The cube sweep strand (src/sweep/task_cube.c, report_cube.c, `impulse
 * reproduce cube`): its plan (ids, sizes, seeds, the mujoco tasks only when
 * asked), errors naming the option, a tiny reproduction on made-up tosses
 * with --test and --json (every model's rows, the ballistic rows equal to
 * the metrics computed here on the same split, rigid-identified and impulse
 * exact on free flights, the notice of mujoco without its peer), a killed sweep resumed with every task done once, and the
 * MuJoCo peer as a subprocess when it is built. */
#define _GNU_SOURCE
#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/rigid_traj.h"
#include "impulse/sweep.h"
#include "test.h"
#include "sweep_test.h"

#include <math.h>
#include <unistd.h>

static const char *cli = IMPULSE_CLI_PATH;

static void test_plan(void)
{
    imp_sweep_cube_opts o;
    imp_sweep_cube_opts_default(&o);
    o.data = "cube.npz";
    o.tosses = "2,4";
    o.seeds = 2;
    o.steps = 50;
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_cube(&p, &o));
    CHECK(p.n_tasks == 16);
    int e2e = 0, mujoco = 0, ident = 0, learned = 0;
    for (int i = 0; i < p.n_tasks; i++) {
        const imp_sweep_task *t = &p.tasks[i];
        const char *model = imp_sweep_task_get(t, "model");
        long n = 0, s = -1;
        CHECK_OK(imp_sweep_task_int(t, "tosses", 0, 1, 100, &n));
        CHECK_OK(imp_sweep_task_int(t, "seed", -1, 0, 100, &s));
        char id[96];
        snprintf(id, sizeof id, "cube.%s.n%ld.s%ld", model, n, s);
        CHECK_MSG(!strcmp(t->id, id), "%s against %s", t->id, id);
        CHECK(!strcmp(imp_sweep_task_get(t, "strand"), "cube") && !strcmp(imp_sweep_task_get(t, "data"), "cube.npz"));
        CHECK(imp_sweep_task_get(t, "test") == NULL);
        e2e += !strcmp(model, "end-to-end");
        mujoco += !strcmp(model, "mujoco");
        ident += !strcmp(model, "rigid-identified");
        learned += !strcmp(model, "impulse");
        if (!strcmp(model, "end-to-end")) CHECK(!strcmp(imp_sweep_task_get(t, "steps"), "50"));
        if (!strcmp(model, "rigid-identified")) CHECK(imp_sweep_task_get(t, "max_evals") == NULL);
    }
    CHECK(e2e == 4 && mujoco == 0 && ident == 4 && learned == 4);
    imp_sweep_plan_free(&p);
    o.mujoco = 1;
    o.test = "other.npz";
    o.max_evals = 7;
    CHECK_OK(imp_sweep_plan_cube(&p, &o));
    CHECK(p.n_tasks == 20 && !strcmp(imp_sweep_task_get(&p.tasks[0], "test"), "other.npz"));
    /* the fit budget goes to both fits */
    for (int i = 0; i < p.n_tasks; i++) {
        const char *model = imp_sweep_task_get(&p.tasks[i], "model");
        if (!strcmp(model, "mujoco") || !strcmp(model, "rigid-identified"))
            CHECK(!strcmp(imp_sweep_task_get(&p.tasks[i], "max_evals"), "7"));
    }
    imp_sweep_plan_free(&p);
    /* quick: three sizes, one seed */
    imp_sweep_cube_opts_default(&o);
    o.data = "cube.npz";
    o.quick = 1;
    CHECK_OK(imp_sweep_plan_cube(&p, &o));
    CHECK(p.n_tasks == 12);
    imp_sweep_plan_free(&p);
    /* bad options name themselves */
    o.tosses = "4,x";
    CHECK_FAILS(imp_sweep_plan_cube(&p, &o), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "tosses") != NULL);
    o.tosses = "0";
    CHECK_FAILS(imp_sweep_plan_cube(&p, &o), IMP_ERR_INVALID);
    o.tosses = NULL;
    o.data = "a file.npz";
    CHECK_FAILS(imp_sweep_plan_cube(&p, &o), IMP_ERR_INVALID);
    o.data = NULL;
    CHECK_FAILS(imp_sweep_plan_cube(&p, &o), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "data") != NULL);
}

/* n tosses of `len` samples of free flight from above the ground. */
static void make_file(const char *path, int n, int len, unsigned seed, imp_rigid_traj *t)
{
    imp_rigid_traj_default(t);
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    double *s = malloc((size_t)n * len * 13 * sizeof *s);
    int64_t *lengths = malloc((size_t)n * sizeof *lengths);
    for (int e = 0; e < n; e++) {
        double x0[13] = {1, 0, 0, 0, imp_rng_uniform_range(&rng, -0.2, 0.2), 0, imp_rng_uniform_range(&rng, 0.4, 0.6)};
        for (int i = 7; i < 10; i++) x0[i] = imp_rng_uniform_range(&rng, -3, 3);
        x0[10] = imp_rng_uniform_range(&rng, -0.5, 0.5);
        imp_rigid_ballistic(x0, (size_t)len, t->dt, &t->body, t->gravity, 4, s + (size_t)e * len * 13);
        lengths[e] = len;
    }
    CHECK_OK(imp_rigid_traj_set(t, s, (size_t)n * len, lengths, NULL, (size_t)n, 1e-9));
    CHECK_OK(imp_rigid_traj_save(t, path));
    free(s);
    free(lengths);
}

/* The JSON line of stdout for (model, tosses, test), or NULL. */
static const char *find_row(const char *out, const char *model, int tosses, const char *test, char *line, size_t cap)
{
    char key[256];
    snprintf(key, sizeof key, "{\"model\":\"%s\",\"tosses\":%d,\"seed\":0,\"test\":\"%s\"", model, tosses, test);
    const char *p = strstr(out, key);
    if (!p) return NULL;
    size_t n = strcspn(p, "\n");
    if (n >= cap) n = cap - 1;
    memcpy(line, p, n);
    line[n] = 0;
    return line;
}

/* The report's parts beyond the tables: the training time per model (the
 * sum of its tasks' seconds), the published numbers and the statement that
 * fig. 5's values were not found, the figure of test tosses (its caption
 * names the split drawn: the largest size, seed 0) and impulse's learned
 * points against the corners of the data's box. */
static void check_report_parts(const char *md, const imp_rigid_traj *data)
{
    if (!md) return;
    CHECK(strstr(md, "### Training time of the whole curve"));
    for (const char *const *m = (const char *const[]){"impulse", "end-to-end", "rigid-identified", "ballistic", NULL}; *m; m++) {
        char key[64];
        snprintf(key, sizeof key, "| %s | 2 | ", *m);
        CHECK_MSG(strstr(md, key) != NULL, "no time row '%s'", key);
    }
    /* the sum is the tasks' own seconds */
    double sum = 0;
    for (int n = 2; n <= 4; n += 2) {
        char path[256];
        snprintf(path, sizeof path, "cube_run/tasks/cube.end-to-end.n%d.s0/result.npz", n);
        imp_npz *z = NULL;
        double secs = NAN;
        CHECK_OK(imp_npz_load(&z, path));
        CHECK_OK(imp_json_get_number(z && imp_npz_meta(z) ? imp_npz_meta(z) : "{}", "seconds", &secs));
        sum += secs;
        imp_npz_free(z);
    }
    char key[96];
    snprintf(key, sizeof key, "| end-to-end | 2 | %.4g |", sum);
    CHECK_MSG(strstr(md, key) != NULL, "no '%s' in the time table", key);
    CHECK(strstr(md, "### Published numbers") && strstr(md, "No value of fig. 5 could be found") &&
          strstr(md, "| MuJoCo, mu, solref and ground fitted | 64 | 22.5 | 18.4 |"));
    CHECK(strstr(md, "### Test tosses, measured and predicted") && strstr(md, "(4 training tosses, seed 0;") &&
          strstr(md, "impulse, end-to-end, rigid-identified"));
    CHECK(strstr(md, "### impulse's learned contact geometry"));
    /* the corners are the data's box: +-half its sides */
    snprintf(key, sizeof key, "| 0 (-,-,-) | ");
    const char *row = strstr(md, key);
    CHECK_MSG(row != NULL, "no corner table");
    if (row) {
        double x, y, z, dx, dy, dz;
        CHECK(sscanf(row + strlen(key), "%lf, %lf, %lf | %lf, %lf, %lf", &x, &y, &z, &dx, &dy, &dz) == 6);
        CHECK_CLOSE(x - dx, -500 * data->body.size[0], 0, 0.02);
        CHECK_CLOSE(z - dz, -500 * data->body.size[2], 0, 0.02);
    }
}

/* The rollouts a task keeps for the figure: the split's first three test
 * tosses, measured as in the data; rigid-identified follows these free
 * flights, so its prediction is the measurement. */
static void check_rollouts(const imp_rigid_traj *data)
{
    int idx[3 * 8], nt, nv, ne;
    CHECK_OK(imp_rigid_split(data->n_episodes, 8, 0, 0.5, 0.25, idx, &nt, idx + 8, &nv, idx + 16, &ne));
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, "cube_run/tasks/cube.rigid-identified.n4.s0/result.npz"));
    const imp_npy_array *p = z ? imp_npz_find(z, "rollout_pred") : NULL, *m = z ? imp_npz_find(z, "rollout_meas") : NULL;
    const imp_npy_array *e = z ? imp_npz_find(z, "rollout_episodes") : NULL;
    CHECK(p && m && e && p->ndim == 3 && p->shape[0] == 2 && p->shape[1] == 25 && p->shape[2] == 7 && e->shape[0] == 2);
    if (p && m && e && p->shape[0] == 2 && p->shape[1] == 25) {
        const int64_t *ep = e->data;
        const double *pp = p->data, *mm = m->data;
        double worst = 0;
        for (int k = 0; k < 2; k++) {
            CHECK(ep[k] == idx[16 + k]);
            const double *s = data->states + imp_rigid_traj_offset(data, idx[16 + k]) * 13;
            for (int i = 0; i < 25; i++)
                for (int c = 0; c < 7; c++) {
                    CHECK(mm[(k * 25 + i) * 7 + c] == s[i * 13 + c]);
                    worst = fmax(worst, fabs(pp[(k * 25 + i) * 7 + c] - s[i * 13 + c]));
                }
        }
        CHECK_MSG(worst < 1e-6, "rigid-identified off the free flight by %g", worst);
    }
    /* impulse keeps its points and the box's corners */
    imp_npz_free(z);
    z = NULL;
    CHECK_OK(imp_npz_load(&z, "cube_run/tasks/cube.impulse.n4.s0/result.npz"));
    const imp_npy_array *pts = z ? imp_npz_find(z, "points") : NULL, *cor = z ? imp_npz_find(z, "corners") : NULL;
    CHECK(pts && cor && pts->shape[0] == 8 && cor->shape[0] == 8 && cor->shape[1] == 3);
    if (cor) CHECK_CLOSE(((const double *)cor->data)[23], 0.5 * data->body.size[2], 1e-15, 0);
    imp_npz_free(z);
}

/* With python the report draws the figures (the tests run without it). */
static void check_figures(void)
{
    char *saved = getenv("IMPULSE_PYTHON") ? strdup(getenv("IMPULSE_PYTHON")) : NULL;
    unsetenv("IMPULSE_PYTHON");
    int st = imp_sweep_report("cube_run", NULL);
    CHECK_MSG(st == IMP_OK, "%s", imp_last_error());
    char *md = slurp("cube_run/report.md");
    if (md && strstr(md, "not drawn")) {
        printf("check_figures: no matplotlib: figures not checked\n");
    } else {
        CHECK(md && strstr(md, "(cube_tosses.png)") && strstr(md, "(cube_geometry.png)"));
        CHECK(access("cube_run/cube_tosses.png", F_OK) == 0 && access("cube_run/cube_geometry.png", F_OK) == 0);
    }
    free(md);
    if (saved) setenv("IMPULSE_PYTHON", saved, 1);
    free(saved);
}

static void test_reproduce(void)
{
    imp_rigid_traj data, test;
    make_file("cube_tiny.npz", 12, 25, 5, &data);
    make_file("cube_tiny_test.npz", 3, 25, 6, &test);
    run("rm -rf cube_run");
    char cmd[1024], out[16384];
    snprintf(cmd, sizeof cmd,
             "IMPULSE_CUBE_MUJOCO= %s reproduce cube --data cube_tiny.npz --test cube_tiny_test.npz --tosses 2,4 "
             "--seeds 1 --steps 40 --json --out cube_run 2>/dev/null",
             cli);
    FILE *f = popen(cmd, "r");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    out[n] = 0;
    CHECK(f && pclose(f) == 0);
    char line[1024];
    static const int sizes[2] = {2, 4};
    for (int k = 0; k < 2; k++) {
        /* the ballistic rows are the metrics of the same split computed here */
        int idx[3 * 8], nt, nv, ne, draw = 2 * sizes[k];
        CHECK_OK(imp_rigid_split(data.n_episodes, draw, 0, 0.5, (double)((draw - sizes[k]) / 2) / draw, idx, &nt,
                                 idx + draw, &nv, idx + 2 * draw, &ne));
        imp_rigid_metrics m, mf;
        CHECK_OK(imp_rigid_eval_ballistic(&data, idx + 2 * draw, ne, &m));
        CHECK_OK(imp_rigid_eval_ballistic(&test, NULL, 0, &mf));
        const char *tests[2] = {"split", "cube_tiny_test.npz"};
        for (int s = 0; s < 2; s++) {
            double v = NAN, tt = 0;
            CHECK_MSG(find_row(out, "ballistic", sizes[k], tests[s], line, sizeof line), "no ballistic row %d %s in\n%s",
                      sizes[k], tests[s], out);
            CHECK_OK(imp_json_get_number(find_row(out, "ballistic", sizes[k], tests[s], line, sizeof line) ? line : "{}",
                                         "position_error_pct", &v));
            CHECK_CLOSE(v, s ? mf.position_error_pct : m.position_error_pct, 1e-12, 0);
            if (imp_json_get_number(line, "test_tosses", &tt)) imp_clear_error();
            CHECK(tt == (s ? 3 : ne));
            const char *r = find_row(out, "end-to-end", sizes[k], tests[s], line, sizeof line);
            CHECK_MSG(r != NULL, "no end-to-end row %d %s", sizes[k], tests[s]);
            double pos = NAN, rot = NAN, pen = NAN;
            CHECK_OK(imp_json_get_number(r ? r : "{}", "position_error_pct", &pos));
            CHECK_OK(imp_json_get_number(r ? r : "{}", "rotation_error_deg", &rot));
            CHECK_OK(imp_json_get_number(r ? r : "{}", "penetration_pct", &pen));
            CHECK(pos >= 0 && rot >= 0 && pen >= 0);
            /* rigid-identified and impulse: the tosses are free flights, which their step follows exactly */
            static const char *const rigid[2] = {"rigid-identified", "impulse"};
            for (int q = 0; q < 2; q++) {
                r = find_row(out, rigid[q], sizes[k], tests[s], line, sizeof line);
                CHECK_MSG(r != NULL, "no %s row %d %s", rigid[q], sizes[k], tests[s]);
                pos = rot = pen = NAN;
                CHECK_OK(imp_json_get_number(r ? r : "{}", "position_error_pct", &pos));
                CHECK_OK(imp_json_get_number(r ? r : "{}", "rotation_error_deg", &rot));
                CHECK_OK(imp_json_get_number(r ? r : "{}", "penetration_pct", &pen));
                CHECK_MSG(pos < 1e-3 && rot < 1e-3 && pen == 0, "%s %g %% %g deg %g %%", rigid[q], pos, rot, pen);
            }
        }
    }
    /* the models not available say so; no mujoco rows without the peer */
    CHECK(strstr(out, "{\"model\":\"impulse\",\"available\":false") == NULL);
    CHECK(strstr(out, "{\"model\":\"rigid-identified\",\"available\":false") == NULL);
    CHECK(strstr(out, "{\"model\":\"mujoco\",\"available\":false") != NULL);
    CHECK(strstr(out, "{\"model\":\"mujoco\",\"tosses\"") == NULL);
    char *md = slurp("cube_run/report.md");
    CHECK(md && strstr(md, "## Cube tosses") && strstr(md, "| end-to-end | 4 | 1 |") &&
          strstr(md, "| rigid-identified | 4 | 1 |") && strstr(md, "| impulse | 4 | 1 |") &&
          strstr(md, "all tosses of cube_tiny_test.npz"));
    check_report_parts(md, &data);
    free(md);
    check_rollouts(&data);
    check_figures();
    /* again: nothing reruns */
    snprintf(cmd, sizeof cmd,
             "IMPULSE_CUBE_MUJOCO= %s reproduce cube --data cube_tiny.npz --test cube_tiny_test.npz --tosses 2,4 "
             "--seeds 1 --steps 40 --json --out cube_run >/dev/null 2>&1",
             cli);
    CHECK(run(cmd) == 0);
    check_once("cube_run", "rerun");
    /* results without rollouts (ballistic alone) say why there is no figure */
    imp_sweep_plan bp;
    CHECK_OK(imp_sweep_plan_parse(&bp, "task id=b strand=cube model=ballistic data=cube_tiny.npz tosses=2 seed=0\n", "x"));
    run("rm -rf cube_ball");
    CHECK_OK(imp_sweep_prepare(&bp, "cube_ball"));
    imp_sweep_run_opts ro;
    imp_sweep_run_opts_default(&ro);
    int ran = 0;
    CHECK_OK(imp_sweep_run_task(&bp, 0, "cube_ball", &ro, &ran));
    imp_sweep_plan_free(&bp);
    char *bmd = NULL;
    CHECK_OK(imp_sweep_report("cube_ball", &bmd));
    CHECK(ran == 1 && bmd && strstr(bmd, "No figure of test tosses") && !strstr(bmd, "learned contact geometry"));
    free(bmd);
    /* a file that is not there stops the command, naming the option */
    snprintf(cmd, sizeof cmd, "%s reproduce cube --data cube_tiny.npz --test nonexistent.npz --out cube_none", cli);
    CHECK(test_run_command(cmd, out, sizeof out) == 1 && strstr(out, "--test nonexistent.npz"));
    CHECK(access("cube_none", F_OK) != 0);
    imp_rigid_traj_free(&data);
    imp_rigid_traj_free(&test);
}

/* impulse's MAP and loss keys reach imp_rigid_learn and its meta: the
 * defaults (ground sd 2 mm, log inertia sd log 4, no corner prior, rotation
 * weight 1), the keys given, the kept model's validation errors adding up to
 * its score; a negative prior names its key. */
static void impulse_meta(const char *line, const char *dir, double want[4])
{
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p, line, "x"));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run(cmd);
    CHECK_OK(imp_sweep_prepare(&p, dir));
    imp_sweep_run_opts ro;
    imp_sweep_run_opts_default(&ro);
    int ran = 0;
    CHECK_OK(imp_sweep_run_task(&p, 0, dir, &ro, &ran));
    imp_sweep_plan_free(&p);
    char path[256];
    snprintf(path, sizeof path, "%s/tasks/m/result.npz", dir);
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, path));
    const char *meta = z && imp_npz_meta(z) ? imp_npz_meta(z) : "{}";
    static const char *const keys[4] = {"prior_ground_mm", "prior_inertia", "prior_point_mm", "rot_weight"};
    for (int k = 0; k < 4; k++) {
        double v = NAN;
        CHECK_OK(imp_json_get_number(meta, keys[k], &v));
        CHECK_MSG(fabs(v - want[k]) <= 1e-12 * fabs(want[k]), "%s: %s %g, expected %g", line, keys[k], v, want[k]);
    }
    double vp = NAN, vr = NAN, vs = NAN;
    CHECK_OK(imp_json_get_number(meta, "valid_position_pct", &vp));
    CHECK_OK(imp_json_get_number(meta, "valid_rotation_deg", &vr));
    CHECK_OK(imp_json_get_number(meta, "valid_score", &vs));
    CHECK_MSG(ran == 1 && fabs(vp + vr - vs) <= 1e-12 * (vs + 1e-300) && vp >= 0 && vr >= 0,
              "validation %g %% + %g deg against score %g", vp, vr, vs);
    imp_npz_free(z);
}

static void test_impulse_keys(void)
{
    double def[4] = {2.0, log(4.0), 0.0, 1.0}, given[4] = {0.5, 0.25, 1.5, 2.0};
    impulse_meta("task id=m strand=cube model=impulse data=cube_tiny.npz tosses=4 seed=0 steps=4 eval_every=2 "
                 "fit_evals=10\n",
                 "cube_keys", def);
    impulse_meta("task id=m strand=cube model=impulse data=cube_tiny.npz tosses=4 seed=0 steps=4 eval_every=2 "
                 "fit_evals=10 prior_ground_mm=0.5 prior_inertia=0.25 prior_point_mm=1.5 rot_weight=2\n",
                 "cube_keys", given);
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p, "task id=m strand=cube model=impulse data=cube_tiny.npz tosses=4 seed=0 "
                                      "prior_inertia=-1\n",
                                  "x"));
    run("rm -rf cube_keys");
    CHECK_OK(imp_sweep_prepare(&p, "cube_keys"));
    imp_sweep_run_opts ro;
    imp_sweep_run_opts_default(&ro);
    int ran = 0;
    int st = imp_sweep_run_task(&p, 0, "cube_keys", &ro, &ran);
    char *log = slurp("cube_keys/log.jsonl");
    CHECK_MSG(st != IMP_OK || (log && strstr(log, "prior_inertia")), "a negative prior ran: status %d, log %s", st,
              log ? log : "(none)");
    if (st) CHECK(strstr(imp_last_error(), "prior_inertia") != NULL);
    imp_clear_error();
    free(log);
    imp_sweep_plan_free(&p);
    run("rm -rf cube_keys");
}

/* A sweep killed after its first finished task resumes: every task done once. */
static void test_killed(void)
{
    run("rm -rf cube_kill");
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "IMPULSE_CUBE_MUJOCO= exec %s reproduce cube --data cube_tiny.npz --tosses 2,3,4,5 --seeds 1 "
             "--steps 500 --out cube_kill >/dev/null 2>&1",
             cli);
    CHECK_MSG(run_and_kill(cmd, "cube_kill") == 1, "the sweep ended before it was killed");
    int done = count_lines("cube_kill/log.jsonl");
    CHECK(done >= 1 && done < 16);
    snprintf(cmd, sizeof cmd,
             "IMPULSE_CUBE_MUJOCO= %s reproduce cube --data cube_tiny.npz --tosses 2,3,4,5 --seeds 1 --steps 500 "
             "--out cube_kill >/dev/null 2>&1",
             cli);
    CHECK(run(cmd) == 0);
    check_once("cube_kill", "killed and resumed");
}

/* MuJoCo through its peer program, when it is built. */
static void test_peer(void)
{
    char peer[4096];
    unsetenv("IMPULSE_CUBE_MUJOCO");
    snprintf(peer, sizeof peer, "%s", cli);
    char *slash = strrchr(peer, '/');
    if (slash) snprintf(slash + 1, sizeof peer - (size_t)(slash + 1 - peer), "cube_mujoco");
    if (access(peer, X_OK)) {
        printf("test_peer: cube_mujoco not built: skipped\n");
        return;
    }
    setenv("IMPULSE_CUBE_MUJOCO", peer, 1);
    char found[4096];
    CHECK(imp_sweep_cube_peer(found, sizeof found) == 1 && !strcmp(found, peer));
    const char *text = "task id=m strand=cube model=mujoco data=cube_tiny.npz test=cube_tiny_test.npz tosses=3 "
                       "seed=1 max_evals=4\n";
    imp_sweep_plan p;
    CHECK_OK(imp_sweep_plan_parse(&p, text, "x"));
    run("rm -rf cube_peer");
    CHECK_OK(imp_sweep_prepare(&p, "cube_peer"));
    imp_sweep_run_opts o;
    imp_sweep_run_opts_default(&o);
    int ran = 0;
    CHECK_OK(imp_sweep_run_task(&p, 0, "cube_peer", &o, &ran));
    CHECK(ran == 1);
    char *rows = NULL;
    CHECK_OK(imp_sweep_cube_rows("cube_peer", &rows));
    double v = NAN;
    CHECK(rows && strstr(rows, "\"model\":\"mujoco\",\"tosses\":3,\"seed\":1,\"test\":\"split\""));
    CHECK(rows && strstr(rows, "\"test\":\"cube_tiny_test.npz\""));
    CHECK_OK(imp_json_get_number(rows ? rows : "{}", "position_error_pct", &v));
    CHECK(v >= 0 && isfinite(v));
    free(rows);
    /* the peer's rollouts of the split's first test tosses are in the result */
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, "cube_peer/tasks/m/result.npz"));
    const imp_npy_array *a = z ? imp_npz_find(z, "rollout_pred") : NULL;
    CHECK(a && a->ndim == 3 && a->shape[0] >= 1 && a->shape[2] == 7 && isfinite(((const double *)a->data)[4]));
    imp_npz_free(z);
    imp_sweep_plan_free(&p);
    /* a peer that is not there: the task fails naming it */
    setenv("IMPULSE_CUBE_MUJOCO", "/nonexistent/cube_mujoco", 1);
    CHECK(imp_sweep_cube_peer(found, sizeof found) == 0);
    unsetenv("IMPULSE_CUBE_MUJOCO");
}

int main(void)
{
    setenv("IMPULSE_PYTHON", "/nonexistent/python3", 1);
    test_plan();
    test_reproduce();
    test_impulse_keys();
    test_killed();
    test_peer();
    TEST_MAIN_END();
}
