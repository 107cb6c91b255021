/* Every shell example of README.md, docs/getting-started.md and
 * docs/your-data.md runs (issue 27): the fenced ```sh blocks of each page,
 * in order, in one scratch folder per page, with the built `impulse` first
 * on PATH, under bash -e -o pipefail. The files the pages start from (a
 * MuJoCo-style log.h5, log.csv, z.npy, a held-out set, a constrained
 * system's CSV) are written here first.
 *
 * A block can carry a marker on the line before its fence, in the page's
 * source (an HTML comment, so readers of the rendered page do not see it):
 *   <!-- doc-test: skip: WHY -->         not run (installs, clones), and why
 *   <!-- doc-test: quick: A => B; ... --> run with each text A replaced by B
 *                                         (a shorter run of a long example)
 * Every skip and every quick substitution is printed in the test's output.
 * The reproductions' report figures are not drawn here (IMPULSE_PYTHON=
 * /bin/false in blocks that reproduce: the plotting took most of a minute
 * per reproduction on a loaded machine; test_report draws figures). */
#define _POSIX_C_SOURCE 200809L
#include "impulse/chnn_models.h"
#include "impulse/contact_systems.h"
#include "impulse/io.h"
#include "test.h"

#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIR_ "docs_examples"

/* The stand-in for another simulator's log: compliant-ball trajectories,
 * the height the last of three coordinates (x, y, z). */
static void write_fixtures(const char *dir)
{
    imp_sim_opts o;
    imp_trajset ts;
    CHECK_OK(imp_sim_defaults("compliant-ball", &o));
    o.restitution = 0.7, o.noise = 0.0, o.n_traj = 2, o.n_steps = 150, o.seed = 5;
    CHECK_OK(imp_simulate("compliant-ball", &o, &ts));
    const int T = ts.n_steps;
    char path[1024];
    snprintf(path, sizeof path, "%s/log.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    for (int n = 0; n < ts.n_traj; n++) {
        char g_name[32];
        snprintf(g_name, sizeof g_name, "episode%d", n);
        hid_t g = H5Gcreate2(f, g_name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        hsize_t d3[2] = {(hsize_t)T, 3}, d1[2] = {(hsize_t)T, 1};
        hid_t s3 = H5Screate_simple(2, d3, NULL), s1 = H5Screate_simple(2, d1, NULL), st = H5Screate_simple(1, d1, NULL);
        double *qp = calloc((size_t)T * 3, sizeof(double)), *qv = calloc((size_t)T * 3, sizeof(double));
        double *tt = malloc((size_t)T * sizeof(double)), *c = malloc((size_t)T * sizeof(double));
        for (int t = 0; t < T; t++) {
            size_t i = (size_t)n * T + t;
            qp[3 * t + 2] = ts.q[i], qv[3 * t + 2] = ts.qdot[i], tt[t] = t * ts.dt, c[t] = ts.contact[i];
        }
        const char *names[4] = {"qpos", "qvel", "contact", "time"};
        hid_t spaces[4] = {s3, s3, s1, st};
        double *data[4] = {qp, qv, c, tt};
        for (int k = 0; k < 4; k++) {
            hid_t d = H5Dcreate2(g, names[k], H5T_IEEE_F64LE, spaces[k], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data[k]);
            H5Dclose(d);
        }
        free(qp), free(qv), free(tt), free(c);
        H5Sclose(s3), H5Sclose(s1), H5Sclose(st), H5Gclose(g);
    }
    H5Fclose(f);
    snprintf(path, sizeof path, "%s/log.csv", dir);
    FILE *csv = fopen(path, "w");
    if (csv) {
        fprintf(csv, "t,episode,z,vz,touch\n");
        for (int n = 0; n < ts.n_traj; n++)
            for (int t = 0; t < T; t++) {
                size_t i = (size_t)n * T + t;
                fprintf(csv, "%.17g,%d,%.17g,%.17g,%d\n", t * ts.dt, n, ts.q[i], ts.qdot[i], (int)ts.contact[i]);
            }
        fclose(csv);
    }
    snprintf(path, sizeof path, "%s/z.npy", dir);
    CHECK_OK(imp_npy_save_f64(path, 2, (size_t[]){(size_t)T, 1}, ts.q));
    snprintf(path, sizeof path, "%s/heldout.npz", dir);
    snprintf(ts.system, sizeof ts.system, "%s", "");
    CHECK_OK(imp_trajset_save(&ts, path));
    imp_trajset_free(&ts);
    /* a spinning disk as another simulator logs it: x, y and k theta */
    CHECK_OK(imp_sim_defaults("bouncing-disk", &o));
    o.n_traj = 2, o.n_steps = 100, o.seed = 3;
    CHECK_OK(imp_simulate("bouncing-disk", &o, &ts));
    snprintf(path, sizeof path, "%s/disk.csv", dir);
    csv = fopen(path, "w");
    if (csv) {
        fprintf(csv, "episode,t,x,y,ktheta,vx,vy,kw\n");
        for (int n = 0; n < ts.n_traj; n++)
            for (int t = 0; t < ts.n_steps; t++) {
                size_t i = ((size_t)n * ts.n_steps + t) * 3;
                fprintf(csv, "%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", n, t * ts.dt, ts.q[i], ts.q[i + 1],
                        ts.q[i + 2], ts.qdot[i], ts.qdot[i + 1], ts.qdot[i + 2]);
            }
        fclose(csv);
    }
    imp_trajset_free(&ts);
}

/* A double pendulum's trajectories as another simulator writes them: one
 * CSV row per sample (episode, time, x0..x3 positions, v0..v3 velocities). */
static void write_pendulum_csv(const char *dir)
{
    char cmd[2048], path[1024];
    snprintf(cmd, sizeof cmd, "IMPULSE_PROGRESS=0 %s simulate pendulum-chain:2 --trajectories 4 --seed 2 -o %s/.pc.npz "
             "2>/dev/null", IMPULSE_CLI_PATH, dir);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/.pc.npz", dir);
    imp_ctraj t;
    imp_csystem *cs = malloc(sizeof *cs);
    CHECK_OK(imp_ctraj_load(path, &t, cs));
    remove(path);
    snprintf(path, sizeof path, "%s/pendulum.csv", dir);
    FILE *f = fopen(path, "w");
    if (f && t.z) {
        fprintf(f, "episode,time,x0,x1,x2,x3,v0,v1,v2,v3\n");
        for (int i = 0; i < t.n_traj; i++)
            for (int k = 0; k < t.T; k++) {
                const double *r = t.z + ((size_t)i * t.T + k) * 8;
                fprintf(f, "%d,%.17g", i, k * t.dt);
                for (int c = 0; c < 8; c++) fprintf(f, ",%.17g", r[c]);
                fprintf(f, "\n");
            }
    }
    if (f) fclose(f);
    imp_ctraj_free(&t);
    free(cs);
}

/* Replace every occurrence of `from` in *text by `to` (reallocated). */
static int substitute(char **text, const char *from, const char *to)
{
    int n = 0;
    size_t lf = strlen(from), lt = strlen(to);
    if (!lf) return 0;
    for (char *p = strstr(*text, from); p; p = strstr(p + lf, from)) n++;
    if (!n) return 0;
    char *out = malloc(strlen(*text) + (size_t)n * (lt + 1) + 1), *w = out;
    const char *r = *text;
    for (const char *p = strstr(r, from); p; p = strstr(r, from)) {
        memcpy(w, r, (size_t)(p - r)), w += p - r;
        memcpy(w, to, lt), w += lt;
        r = p + lf;
    }
    strcpy(w, r);
    free(*text);
    *text = out;
    return n;
}

static char *trim(char *s)
{
    while (*s == ' ') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n')) s[--n] = '\0';
    return s;
}

/* Run `block` (marker: the doc-test comment before it, or "") in dir. */
static void run_block(const char *page, int line, char *block, const char *marker, const char *dir)
{
    char *text = malloc(strlen(block) + 1);
    strcpy(text, block);
    if (!strncmp(marker, "skip:", 5)) {
        printf("%s:%d: skipped: %s\n", page, line, marker + 5);
        free(text);
        return;
    }
    if (!strncmp(marker, "quick:", 6)) {
        char subs[2048];
        snprintf(subs, sizeof subs, "%s", marker + 6);
        for (char *s = strtok(subs, ";"); s; s = strtok(NULL, ";")) {
            char *arrow = strstr(s, "=>");
            CHECK_MSG(arrow != NULL, "%s:%d: quick '%s' is not A => B", page, line, s);
            if (!arrow) continue;
            *arrow = '\0';
            char *from = trim(s), *to = trim(arrow + 2);
            CHECK_MSG(substitute(&text, from, to) > 0, "%s:%d: quick: '%s' is not in the block", page, line, from);
            printf("%s:%d: quick: '%s' => '%s'\n", page, line, from, to);
        }
    }
    char script[1024], log[1024];
    snprintf(script, sizeof script, "%s/.block.sh", dir);
    snprintf(log, sizeof log, "%s/.block.log", dir);
    FILE *f = fopen(script, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    char bin[1024];
    snprintf(bin, sizeof bin, "%s", IMPULSE_CLI_PATH);
    char *slash = strrchr(bin, '/');
    if (slash) *slash = '\0';
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && PATH=%s:$PATH IMPULSE_PROGRESS=0 %s bash -e -o pipefail .block.sh > .block.log 2>&1",
             dir, bin, strstr(text, "reproduce ") ? "IMPULSE_PYTHON=/bin/false" : "");
    double t0 = imp_time_now();
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    double secs = imp_time_now() - t0;
    size_t n = 0;
    unsigned char *out = NULL;
    imp_read_file(log, &out, &n);
    const char *tail = out ? (const char *)out + (n > 1500 ? n - 1500 : 0) : "";
    CHECK_MSG(rc == 0, "%s:%d: the block exits %d:\n%s\n--- output (end):\n%s", page, line, rc, text, tail);
    if (rc == 0) printf("%s:%d: ran (%.1f s)\n", page, line, secs);
    fflush(stdout);
    free(out);
    free(text);
}

static void run_page(const char *rel)
{
    char path[1024], dir[512];
    snprintf(path, sizeof path, "%s/%s", IMPULSE_SOURCE_DIR, rel);
    snprintf(dir, sizeof dir, DIR_ "/%s", rel);
    for (char *p = dir + strlen(DIR_) + 1; *p; p++)
        if (*p == '/' || *p == '.') *p = '_';
    mkdir(dir, 0755);
    write_fixtures(dir);
    write_pendulum_csv(dir);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return;
    char line[4096], marker[2048] = "", prev[4096] = "";
    static char block[1 << 16];
    int in = 0, lineno = 0, start = 0, n_blocks = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!in && (!strncmp(line, "```sh", 5) || !strncmp(line, "```bash", 7))) {
            in = 1, start = lineno, block[0] = '\0';
            marker[0] = '\0';
            char *m = strstr(prev, "<!-- doc-test:");
            if (m) {
                snprintf(marker, sizeof marker, "%s", m + strlen("<!-- doc-test:"));
                char *end = strstr(marker, "-->");
                if (end) *end = '\0';
                snprintf(marker, sizeof marker, "%s", trim(marker));
            }
            continue;
        }
        if (in && !strncmp(line, "```", 3)) {
            in = 0;
            n_blocks++;
            run_block(rel, start, block, marker, dir);
            continue;
        }
        if (in && strlen(block) + strlen(line) + 1 < sizeof block) strcat(block, line);
        snprintf(prev, sizeof prev, "%s", line);
    }
    fclose(f);
    CHECK_MSG(n_blocks > 0, "%s: no shell blocks", rel);
}

int main(void)
{
    if (system("rm -rf " DIR_) != 0) return 1;
    mkdir(DIR_, 0755);
    /* the planar-impact data for the README's impact lines, where the checkout has them */
    char data[1024];
    snprintf(data, sizeof data, "%s/../shared/data/planar-impact", IMPULSE_SOURCE_DIR);
    if (!access(data, R_OK)) setenv("IMPULSE_IMPACT_DATA", data, 1);
    run_page("README.md");
    run_page("docs/getting-started.md");
    run_page("docs/your-data.md");
    TEST_MAIN_END();
}
