/* Systems described in text files through the whole constrained strand:
 * constraint-set diagnostics when the file is read (naming the constraint
 * and its line), the file's text kept in the description, datasets and
 * checkpoints that carry it, the baselines' Cartesian coordinates, every
 * window of a long trajectory, the warm-up default, and the CLI end to end
 * (simulate, train, eval, rollout) with its error paths. */
#define _POSIX_C_SOURCE 200809L
#include "impulse/chnn_models.h"
#include "impulse/chnn_systems.h"
#include "impulse/io.h"
#include "test.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *DOUBLE_PENDULUM =
    "# a double pendulum\n"
    "name dp-test\n"
    "dim 2\n"
    "body upper mass 1 position 1 0\n"
    "body lower mass 1 position 2 0 velocity 0 -1\n"
    "tether upper length 1\n"
    "link upper lower length 1\n"
    "gravity 9.81 axis y\n"
    "dt 0.03\n"
    "steps 29\n";

static void test_constraint_diagnostics(void)
{
    imp_csys *s = malloc(sizeof *s);
    struct { const char *text, *needle[3]; } bad[] = {
        /* the same link twice: redundant */
        {"dim 2\nbody a mass 1 position 1 0\nbody b mass 1 position 2 0\ntether a length 1\n"
         "link a b length 1\nlink b a length 1\n",
         {"t.txt", "'link b a' (line 6)", "redundant"}},
        /* two tethers 1 apart and a link of 5: cannot be met */
        {"dim 2\nbody a mass 1\nbody b mass 1\ntether a length 1\ntether b length 1 anchor 1 0\n"
         "link a b length 5\n",
         {"t.txt", "'link a b' (line 6)", "cannot be met"}},
        /* a link exactly as long as the tethers allow: met only where the
         * rows are dependent */
        {"dim 2\nbody a mass 1\nbody b mass 1\ntether a length 1\ntether b length 1 anchor 1 0\n"
         "link a b length 3\n",
         {"t.txt", "'link a b' (line 6)", "depend"}},
        /* a joint to a fixed point twice (3D) */
        {"dim 3\nbody t mass 1 inertia 0.1 0.1 0.1\njoint t anchor 0 0 0\njoint t anchor 0 0 0\n",
         {"t.txt", "(line 4)", "redundant"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_FAILS(imp_csys_parse(s, bad[i].text, "t.txt"), IMP_ERR_FORMAT);
        for (int k = 0; k < 3; k++)
            CHECK_MSG(strstr(imp_last_error(), bad[i].needle[k]) != NULL, "case %zu: '%s' lacks '%s'", i,
                      imp_last_error(), bad[i].needle[k]);
    }
    /* a good file keeps its text; the example files pass the check */
    CHECK_OK(imp_csys_parse(s, DOUBLE_PENDULUM, "dp.txt"));
    CHECK(strcmp(s->source, DOUBLE_PENDULUM) == 0);
    CHECK_OK(imp_csys_check_constraints(s));
    const char *files[] = {"double-pendulum", "hinged-arm", "spinning-top", "spring-chain"};
    for (int i = 0; i < 4; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/systems/%s.txt", IMPULSE_SOURCE_DIR, files[i]);
        CHECK_OK(imp_csys_load(s, path));
        /* the file's start is on its constraints (simulate would warn otherwise) */
        double xv[2 * IMP_CSYS_MAX_POINTS * 3];
        imp_csys_nominal_state(s, xv);
        CHECK_MSG(imp_csys_violation(s, xv, xv + imp_csys_ndof(s)) < 1e-9, "%s", files[i]);
    }
    /* a file longer than a description can keep */
    size_t n = IMP_CSYS_SOURCE_LEN + 100;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i += 2) memcpy(big + i, "#\n", 2);
    memcpy(big, "dim 2\nbody a mass 1\n", 20);
    big[n] = '\0';
    CHECK_FAILS(imp_csys_parse(s, big, "big.txt"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "at most") != NULL);
    free(big);
    free(s);
}

static void test_meta_and_coordinates(void)
{
    imp_csystem *cs = malloc(sizeof *cs);
    /* a built-in name */
    CHECK_OK(imp_csystem_from_meta(cs, "{\"system\":\"gyroscope\"}", "g.npz"));
    CHECK(cs->n_gen == 3 && !strcmp(cs->name, "gyroscope"));
    /* an unknown name without the file's text */
    CHECK_FAILS(imp_csystem_from_meta(cs, "{\"system\":\"double-pendulum\"}", "d.npz"), IMP_ERR_NOT_FOUND);
    CHECK(strstr(imp_last_error(), "d.npz") && strstr(imp_last_error(), "double-pendulum") &&
          strstr(imp_last_error(), "not built in"));
    CHECK_FAILS(imp_csystem_from_meta(cs, "{\"model\":\"x\"}", "d.npz"), IMP_ERR_FORMAT);
    /* the file's text: a system the baselines see in Cartesian coordinates */
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "system", "dp-test");
    imp_json_kv_string(&j, "system_text", DOUBLE_PENDULUM);
    imp_json_end_object(&j);
    CHECK_OK(imp_csystem_from_meta(cs, imp_json_text(&j), "d.npz"));
    CHECK(!strcmp(cs->name, "dp-test") && cs->n_gen == 4 && !cs->gen_is_angle[0] && cs->n_rows == 2);
    CHECK(!strcmp(cs->full.source, DOUBLE_PENDULUM));
    double xv[8] = {0.6, -0.8, 1.1, -1.6, 0.3, 0.2, -0.1, 0.5}, qv[8], back[8];
    CHECK_OK(imp_csystem_to_generalised(cs, xv, qv));
    CHECK_OK(imp_csystem_from_generalised(cs, qv, back));
    double diff = 0;
    for (int i = 0; i < 8; i++) diff = fmax(diff, fabs(back[i] - xv[i]) + fabs(qv[i] - xv[i]));
    CHECK(diff == 0.0);
    /* a broken text in meta names where it came from */
    imp_json_free(&j);
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "system", "x");
    imp_json_kv_string(&j, "system_text", "dim 2\nbody a mass 1\nlink a b length 1\n");
    imp_json_end_object(&j);
    CHECK_FAILS(imp_csystem_from_meta(cs, imp_json_text(&j), "d.npz"), IMP_ERR_FORMAT);
    CHECK(strstr(imp_last_error(), "d.npz") && strstr(imp_last_error(), "system_text") &&
          strstr(imp_last_error(), ":3:"));
    imp_json_free(&j);
    /* every model builds on it; HNN's state is (x, v) */
    imp_cmodel m;
    for (int k = 0; k < 5; k++) {
        CHECK_OK(imp_cmodel_init(&m, (imp_cmodel_kind)k, cs, 8, 2));
        CHECK(m.dim == 8);
    }
    free(cs);
}

static void test_windows_and_warmup(void)
{
    /* one trajectory of 23 states, dim 2: all windows of 5 states are the
     * 4 non-overlapping ones, in order */
    imp_ctraj d = {1, 23, 2, 0.1, NULL, 0};
    d.z = malloc(23 * 2 * sizeof(double));
    for (int i = 0; i < 46; i++) d.z[i] = i;
    double *c = NULL;
    int n = 0;
    CHECK_OK(imp_ctrain_all_windows(&d, 800, 4, &c, &n));
    CHECK(n == 4);
    for (int w = 0; w < n && c; w++) CHECK(c[(size_t)w * 10] == w * 10.0 && c[(size_t)w * 10 + 9] == w * 10.0 + 9);
    free(c);
    CHECK_OK(imp_ctrain_all_windows(&d, 3, 4, &c, &n));
    CHECK(n == 3);
    free(c);
    CHECK_FAILS(imp_ctrain_all_windows(&d, 3, 30, &c, &n), IMP_ERR_SHAPE);
    free(d.z);
    /* the warm-up default: the baselines warm up, CHNN/CLNN keep the reference's schedule */
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:2"));
    imp_ctrain_opts o;
    imp_ctrain_opts_default(&o);
    imp_cmodel m;
    int expect[5] = {0, 0, 20, 20, 20};
    for (int k = 0; k < 5; k++) {
        CHECK_OK(imp_cmodel_init(&m, (imp_cmodel_kind)k, &cs, 8, 2));
        CHECK(imp_ctrain_warmup_steps(&m, &o) == expect[k]);
    }
    o.warmup_steps = 7;
    CHECK(imp_ctrain_warmup_steps(&m, &o) == 7);
    /* the gradient-norm bound: the baselines clip at 1, CHNN/CLNN do not clip */
    const double clip[5] = {0, 0, 1, 1, 1};
    for (int k = 0; k < 5; k++) {
        CHECK_OK(imp_cmodel_init(&m, (imp_cmodel_kind)k, &cs, 8, 2));
        CHECK(imp_ctrain_grad_clip(&m, &o) == clip[k]);
    }
    o.grad_clip = 0.5;
    CHECK(imp_ctrain_grad_clip(&m, &o) == 0.5);
    o.grad_clip = 0;
    CHECK(imp_ctrain_grad_clip(&m, &o) == 0);
}

/* ---- the CLI ---- */

static int run(const char *args, char *err, size_t cap)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "IMPULSE_PROGRESS=0 %s %s 2>sysfile_stderr_%d.txt >/dev/null", IMPULSE_CLI_PATH,
             args, (int)getpid());
    int status = system(cmd);
    char path[64];
    snprintf(path, sizeof path, "sysfile_stderr_%d.txt", (int)getpid());
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(err, 1, cap - 1, f) : 0;
    err[n] = '\0';
    if (f) fclose(f);
    remove(path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect_error(const char *args, const char *needle)
{
    char err[4096];
    int rc = run(args, err, sizeof err);
    int lines = 0;
    for (const char *p = err; *p; p++) lines += *p == '\n';
    CHECK_MSG(rc != 0 && lines == 1 && strstr(err, needle) && strstr(err, "error"),
              "impulse %s -> exit %d, stderr '%s' (want one line with '%s')", args, rc, err, needle);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_cli(void)
{
    char err[4096], args[2048], sys[64], sys2[64], data[64], data2[64], one[64], model[64], hmodel[64], pred[64],
        off[64], noname[64];
    int pid = (int)getpid();
    snprintf(sys, sizeof sys, "sf_dp_%d.txt", pid);
    snprintf(sys2, sizeof sys2, "sf_dp2_%d.txt", pid);
    snprintf(off, sizeof off, "sf_off_%d.txt", pid);
    snprintf(data, sizeof data, "sf_data_%d.npz", pid);
    snprintf(data2, sizeof data2, "sf_data2_%d.npz", pid);
    snprintf(one, sizeof one, "sf_one_%d.npz", pid);
    snprintf(model, sizeof model, "sf_chnn_%d.npz", pid);
    snprintf(hmodel, sizeof hmodel, "sf_hnn_%d.npz", pid);
    snprintf(pred, sizeof pred, "sf_pred_%d.npz", pid);
    snprintf(noname, sizeof noname, "sf_noname_%d.npz", pid);
    write_text(sys, DOUBLE_PENDULUM);
    /* another system with the same name: a different link length */
    char other[1024];
    snprintf(other, sizeof other, "%s", DOUBLE_PENDULUM);
    char *l = strstr(other, "link upper lower length 1");
    if (l) l[24] = '2';
    write_text(sys2, other);

    /* simulate: random starts only when asked */
    snprintf(args, sizeof args, "simulate --system-file %s --trajectories 12 --spread 0.2 --chunk 4 -o %s", sys, data);
    CHECK(run(args, err, sizeof err) == 0);
    snprintf(args, sizeof args, "simulate --system-file %s -o %s", sys, one);
    CHECK(run(args, err, sizeof err) == 0 && err[0] != '\0' && !strstr(err, "warning"));
    imp_ctraj t;
    imp_csystem *cs = malloc(sizeof *cs);
    CHECK_OK(imp_ctraj_load(one, &t, cs));
    CHECK(t.n_traj == 1 && t.T == 30 && !strcmp(cs->full.source, DOUBLE_PENDULUM));
    /* the file's own state, not a perturbed one */
    double x0[4] = {1, 0, 2, 0}, v0[4] = {0, 0, 0, -1}, dev = 0;
    for (int i = 0; i < 4 && t.z; i++) dev = fmax(dev, fabs(t.z[i] - x0[i]) + fabs(t.z[4 + i] - v0[i]));
    CHECK_MSG(dev < 1e-12, "first state off the file's by %g", dev);
    imp_ctraj_free(&t);
    snprintf(args, sizeof args, "simulate --system-file %s --spread 0.2 --trajectories 4 -o %s", sys2, data2);
    CHECK(run(args, err, sizeof err) == 0);
    /* a start off the constraints: moved, with a warning */
    write_text(off, "dim 2\nbody a mass 1 position 1.5 0\ntether a length 1\n");
    snprintf(args, sizeof args, "simulate --system-file %s --quiet -o %s", off, pred);
    CHECK(run(args, err, sizeof err) == 0 && strstr(err, "warning") && strstr(err, "off the constraints") &&
          strstr(err, "0.5"));
    snprintf(args, sizeof args, "simulate --system-file %s --trajectories 3 -o %s", sys, pred);
    expect_error(args, "--spread");
    snprintf(args, sizeof args, "simulate rotor --spread 0.1 -o %s", pred);
    expect_error(args, "--spread");

    /* train, eval, rollout on the file's dataset */
    snprintf(args, sizeof args, "train chnn --data %s --epochs 2 --batch 6 --hidden 16 -o %s", data, model);
    CHECK(run(args, err, sizeof err) == 0);
    snprintf(args, sizeof args, "train hnn --data %s --epochs 2 --batch 6 --hidden 16 --windows all -o %s", data, hmodel);
    CHECK(run(args, err, sizeof err) == 0);
    for (int k = 0; k < 2; k++) {
        const char *mp = k ? hmodel : model;
        snprintf(args, sizeof args, "eval --model %s --data %s --json", mp, data);
        CHECK(run(args, err, sizeof err) == 0);
        snprintf(args, sizeof args, "rollout --model %s --data %s --trajectory 2 --steps 7 -o %s", mp, data, pred);
        CHECK(run(args, err, sizeof err) == 0);
        imp_npz *z = NULL;
        CHECK_OK(imp_npz_load(&z, pred));
        const double *zz = NULL;
        size_t shape[4], expect[4] = {8, 2, 2, 2};
        CHECK_OK(z ? imp_npz_get_f64(z, "z", 4, expect, &zz, shape) : IMP_ERR_IO);
        /* the checkpoint alone carries the system: its meta has the text */
        CHECK(z && imp_npz_meta(z) && strstr(imp_npz_meta(z), "system_text"));
        imp_npz_free(z);
    }
    snprintf(args, sizeof args, "rollout --model %s --state 1,0,2,0,0,0,0,-1 --steps 5 -o %s", model, pred);
    CHECK(run(args, err, sizeof err) == 0);
    /* the checkpoint works without the system file */
    remove(sys);
    snprintf(args, sizeof args, "eval --model %s --data %s", model, data);
    CHECK(run(args, err, sizeof err) == 0);

    /* error paths */
    snprintf(args, sizeof args, "eval --model %s --data %s", model, data2);
    expect_error(args, "another system file");
    /* issue 27 item 14: the system named once, and what differs */
    expect_error(args, "line 7 'link upper lower length 2' here, line 7 'link upper lower length 1' in the model's");
    CHECK(run(args, err, sizeof err) != 0);
    const char *first = strstr(err, "'dp-test'");
    CHECK_MSG(first && !strstr(first + 1, "'dp-test'"), "the system named more than once: %s", err);
    snprintf(args, sizeof args, "rollout --model %s --data %s -o %s", model, data2, pred);
    expect_error(args, "another system file");
    snprintf(args, sizeof args, "rollout --model %s --state 1,0,2 -o %s", model, pred);
    expect_error(args, "--state");
    snprintf(args, sizeof args, "rollout --model %s --data %s --trajectory 99 -o %s", model, data, pred);
    expect_error(args, "--trajectory");
    snprintf(args, sizeof args, "train chnn --data %s --windows some -o %s", data, pred);
    expect_error(args, "--windows");
    /* a dataset whose system is neither built in nor described */
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, data));
    if (z) {
        CHECK_OK(imp_npz_set_meta(z, "{\"system\":\"dp-test\"}"));
        CHECK_OK(imp_npz_save(z, noname));
        imp_npz_free(z);
    }
    snprintf(args, sizeof args, "train chnn --data %s -o %s", noname, pred);
    expect_error(args, "not built in");
    snprintf(args, sizeof args, "eval --model %s --data %s", model, noname);
    expect_error(args, "not built in");
    free(cs);
    remove(sys2), remove(off), remove(data), remove(data2), remove(one), remove(model), remove(hmodel);
    remove(pred), remove(noname);
}

/* Write a dataset of the trajectories `t` with the given meta pieces
 * (NULL: left out) and a time array stepping t_step (0: none). */
static void write_set(const char *path, const imp_ctraj *t, const imp_csystem *cs, const char *system,
                      const char *text, double meta_dt, double t_step)
{
    imp_npz *z = imp_npz_new();
    size_t sh[5] = {(size_t)t->n_traj, (size_t)t->T, 2, (size_t)cs->n_points, (size_t)cs->d}, st[1] = {(size_t)t->T};
    CHECK_OK(imp_npz_add_f64(z, "z", 5, sh, t->z));
    if (t_step != 0) { /* t_step < 0: steps of -t_step, the last one half again as long (uneven) */
        double *tt = malloc((size_t)t->T * sizeof(double)), h = fabs(t_step);
        for (int k = 0; k < t->T; k++) tt[k] = k * h + (t_step < 0 && k == t->T - 1 ? 0.5 * h : 0.0);
        CHECK_OK(imp_npz_add_f64(z, "t", 1, st, tt));
        free(tt);
    }
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    if (system) imp_json_kv_string(&j, "system", system);
    if (text) imp_json_kv_string(&j, "system_text", text);
    if (meta_dt > 0) imp_json_kv_number(&j, "dt", meta_dt);
    imp_json_end_object(&j);
    CHECK_OK(imp_npz_set_meta(z, imp_json_text(&j)));
    CHECK_OK(imp_npz_save(z, path));
    imp_json_free(&j);
    imp_npz_free(z);
}

/* issue 27 items 8 and 13: data checked against their system. Rods of
 * another length than the system's, a t stepping otherwise than meta dt
 * (or unevenly), a meta "system" that is not the system text's name: each
 * refused in one message naming what differs; matching data load. */
static void test_data_against_system(void)
{
    char sys_path[64], data[64], bad[64], args[256], err[4096];
    snprintf(sys_path, sizeof sys_path, "sf_chk_%d.txt", (int)getpid());
    write_text(sys_path, DOUBLE_PENDULUM);
    snprintf(data, sizeof data, "sf_chk_%d.npz", (int)getpid());
    snprintf(bad, sizeof bad, "sf_chkbad_%d.npz", (int)getpid());
    snprintf(args, sizeof args, "simulate --system-file %s --trajectories 3 --spread 0.2 --noise 0.01 -o %s", sys_path,
             data);
    CHECK(run(args, err, sizeof err) == 0);
    imp_ctraj t;
    imp_csystem *cs = malloc(sizeof *cs), *cs2 = malloc(sizeof *cs2);
    CHECK_OK(imp_ctraj_load(data, &t, cs));
    /* the same data, written again with meta dt and a matching t: loads */
    write_set(bad, &t, cs, "dp-test", DOUBLE_PENDULUM, 0.03, 0.03);
    imp_ctraj u;
    CHECK_OK(imp_ctraj_load(bad, &u, cs2));
    imp_ctraj_free(&u);
    /* meta "system" optional when the text names it */
    write_set(bad, &t, cs, NULL, DOUBLE_PENDULUM, 0.03, 0);
    CHECK_OK(imp_ctraj_load(bad, &u, cs2));
    CHECK(!strcmp(cs2->name, "dp-test"));
    imp_ctraj_free(&u);
    /* the link 1.1 long in the system, 1 in the data */
    char other[1024];
    snprintf(other, sizeof other, "%s", DOUBLE_PENDULUM);
    const char *link = "link upper lower length 1\n", *at = strstr(DOUBLE_PENDULUM, link);
    if (at) snprintf(other, sizeof other, "%.*slink upper lower length 1.1\n%s", (int)(at - DOUBLE_PENDULUM),
                     DOUBLE_PENDULUM, at + strlen(link));
    write_set(bad, &t, cs, "dp-test", other, 0.03, 0);
    CHECK_FAILS(imp_ctraj_load(bad, &u, cs2), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), bad) && strstr(imp_last_error(), "link upper lower") &&
                  strstr(imp_last_error(), "1.1 in the system") && strstr(imp_last_error(), "length 1"),
              "%s", imp_last_error());
    /* t steps 0.06 against meta dt 0.03; t uneven */
    write_set(bad, &t, cs, "dp-test", DOUBLE_PENDULUM, 0.03, 0.06);
    CHECK_FAILS(imp_ctraj_load(bad, &u, cs2), IMP_ERR_FORMAT);
    CHECK_MSG(strstr(imp_last_error(), "t steps by 0.06 but meta \"dt\" is 0.03"), "%s", imp_last_error());
    write_set(bad, &t, cs, "dp-test", DOUBLE_PENDULUM, 0.03, -0.03); /* its message read t after freeing it */
    CHECK_FAILS(imp_ctraj_load(bad, &u, cs2), IMP_ERR_FORMAT);
    CHECK_MSG(strstr(imp_last_error(), "steps unevenly") && strstr(imp_last_error(), "= 0.045"), "%s", imp_last_error());
    /* a meta system naming another system than the text */
    write_set(bad, &t, cs, "my-pendulum", DOUBLE_PENDULUM, 0.03, 0);
    CHECK_FAILS(imp_ctraj_load(bad, &u, cs2), IMP_ERR_FORMAT);
    CHECK_MSG(strstr(imp_last_error(), "'my-pendulum'") && strstr(imp_last_error(), "'dp-test'"), "%s",
              imp_last_error());
    /* a text that differs from the model's only in comments and spacing: the same system */
    char model[64], commented[1200];
    snprintf(model, sizeof model, "sf_chk_m_%d.npz", (int)getpid());
    snprintf(args, sizeof args, "train chnn --data %s --epochs 1 --hidden 8 --quiet -o %s", data, model);
    CHECK(run(args, err, sizeof err) == 0);
    const char *upper = "body upper mass 1 position 1 0\n", *up = strstr(DOUBLE_PENDULUM, upper);
    if (up) snprintf(commented, sizeof commented, "# exported again\n\n%.*sbody  upper mass 1\tposition 1 0   # top\n%s  \n",
                    (int)(up - DOUBLE_PENDULUM), DOUBLE_PENDULUM, up + strlen(upper));
    write_set(bad, &t, cs, "dp-test", commented, 0.03, 0);
    snprintf(args, sizeof args, "eval --model %s --data %s", model, bad);
    CHECK_MSG(run(args, err, sizeof err) == 0, "%s", err);
    remove(model);
    snprintf(args, sizeof args, "%s.log.jsonl", model);
    remove(args);
    imp_ctraj_free(&t);
    free(cs), free(cs2);
    remove(data), remove(bad), remove(sys_path);
}

/* issue 27 item 5: `impulse import --system-file` turns another
 * simulator's trajectories (CSV columns, or numpy arrays shaped as the
 * strand's own) into a dataset that trains; the rods are checked. */
static void test_import(void)
{
    char sys[64], sys2[64], data[64], csv[64], npz[64], out[64], model[64], args[512], err[4096];
    int pid = (int)getpid();
    snprintf(sys, sizeof sys, "sf_imp_%d.txt", pid);
    snprintf(sys2, sizeof sys2, "sf_imp2_%d.txt", pid);
    snprintf(data, sizeof data, "sf_imp_data_%d.npz", pid);
    snprintf(csv, sizeof csv, "sf_imp_%d.csv", pid);
    snprintf(npz, sizeof npz, "sf_imp_raw_%d.npz", pid);
    snprintf(out, sizeof out, "sf_imp_out_%d.npz", pid);
    snprintf(model, sizeof model, "sf_imp_m_%d.npz", pid);
    write_text(sys, DOUBLE_PENDULUM);
    char other[1024];
    const char *link = "link upper lower length 1\n", *at = strstr(DOUBLE_PENDULUM, link);
    if (at) snprintf(other, sizeof other, "%.*slink upper lower length 1.3\n%s", (int)(at - DOUBLE_PENDULUM),
                     DOUBLE_PENDULUM, at + strlen(link));
    write_text(sys2, other);
    snprintf(args, sizeof args, "simulate --system-file %s --trajectories 3 --spread 0.2 -o %s", sys, data);
    CHECK(run(args, err, sizeof err) == 0);
    imp_ctraj t;
    imp_csystem *cs = malloc(sizeof *cs), *cs2 = malloc(sizeof *cs2);
    CHECK_OK(imp_ctraj_load(data, &t, cs));
    /* CSV: an episode column, a time column, positions x0..x3, velocities v0..v3 */
    FILE *f = fopen(csv, "w");
    if (f) {
        fprintf(f, "episode,time,x0,x1,x2,x3,v0,v1,v2,v3\n");
        for (int i = 0; i < t.n_traj; i++)
            for (int k = 0; k < t.T; k++) {
                const double *r = t.z + ((size_t)i * t.T + k) * 8;
                fprintf(f, "%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", i, k * t.dt, r[0], r[1], r[2],
                        r[3], r[4], r[5], r[6], r[7]);
            }
        fclose(f);
    }
    snprintf(args, sizeof args, "import %s --q x --qdot v --system-file %s -o %s", csv, sys, out);
    CHECK_MSG(run(args, err, sizeof err) == 0 && strstr(err, "rod lengths match"), "%s", err);
    imp_ctraj u;
    CHECK_OK(imp_ctraj_load(out, &u, cs2));
    CHECK(u.n_traj == t.n_traj && u.T == t.T && fabs(u.dt - t.dt) < 1e-12 && !strcmp(cs2->name, "dp-test") &&
          !strcmp(cs2->full.source, DOUBLE_PENDULUM));
    double diff = 0;
    for (size_t i = 0; u.z && i < (size_t)t.n_traj * t.T * 8; i++) diff = fmax(diff, fabs(u.z[i] - t.z[i]));
    CHECK(diff == 0.0);
    imp_ctraj_free(&u);
    snprintf(args, sizeof args, "train chnn --data %s --epochs 1 --hidden 8 --quiet -o %s", out, model);
    CHECK(run(args, err, sizeof err) == 0);
    /* numpy: x and v (trajectories, states, points, d), t */
    imp_npz *z = imp_npz_new();
    size_t sh[4] = {(size_t)t.n_traj, (size_t)t.T, 2, 2}, st1[1] = {(size_t)t.T};
    double *x = malloc((size_t)t.n_traj * t.T * 4 * sizeof(double)), *v = malloc((size_t)t.n_traj * t.T * 4 * sizeof(double)),
           *tt = malloc((size_t)t.T * sizeof(double));
    for (size_t k = 0; k < (size_t)t.n_traj * t.T; k++)
        memcpy(x + 4 * k, t.z + 8 * k, 4 * sizeof(double)), memcpy(v + 4 * k, t.z + 8 * k + 4, 4 * sizeof(double));
    for (int k = 0; k < t.T; k++) tt[k] = k * t.dt;
    CHECK_OK(imp_npz_add_f64(z, "x", 4, sh, x));
    CHECK_OK(imp_npz_add_f64(z, "v", 4, sh, v));
    CHECK_OK(imp_npz_add_f64(z, "t", 1, st1, tt));
    CHECK_OK(imp_npz_save(z, npz));
    imp_npz_free(z);
    free(x), free(v), free(tt);
    snprintf(args, sizeof args, "import %s --system-file %s -o %s", npz, sys, out);
    CHECK_MSG(run(args, err, sizeof err) == 0, "%s", err);
    CHECK_OK(imp_ctraj_load(out, &u, cs2));
    diff = 0;
    for (size_t i = 0; u.z && i < (size_t)t.n_traj * t.T * 8; i++) diff = fmax(diff, fabs(u.z[i] - t.z[i]));
    CHECK(diff == 0.0);
    imp_ctraj_free(&u);
    /* another link length in the file than in the data; contact options */
    snprintf(args, sizeof args, "import %s --system-file %s -o %s", npz, sys2, out);
    expect_error(args, "constraint 'link upper lower'");
    snprintf(args, sizeof args, "import %s --system-file %s --wall 0:0,1:0 -o %s", npz, sys, out);
    expect_error(args, "contact strand");
    imp_ctraj_free(&t);
    free(cs), free(cs2);
    remove(sys), remove(sys2), remove(data), remove(csv), remove(npz), remove(out), remove(model);
    snprintf(args, sizeof args, "%s.log.jsonl", model);
    remove(args);
}

int main(void)
{
    test_constraint_diagnostics();
    test_meta_and_coordinates();
    test_windows_and_warmup();
    test_cli();
    test_data_against_system();
    test_import();
    TEST_MAIN_END();
}
