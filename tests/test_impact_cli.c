/* `impulse impact ...` end to end: help, bad options -> one error line and a
 * non-zero exit, export/predict/bounds on the data (skipped if absent). */
#define _GNU_SOURCE
#include "impulse/core.h"
#include "impulse/impact.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define DATA IMPULSE_SOURCE_DIR "/../shared/data/planar-impact"

/* Run the CLI with `args`; capture stdout+stderr into out; return exit code. */
static int run(const char *args, char *out, size_t cap)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "IMPULSE_PROGRESS=0 %s %s 2>&1", IMPULSE_CLI_PATH, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int have_data(void)
{
    FILE *f = fopen(DATA "/data_ellipse.mat", "rb");
    if (!f) return 0;
    fclose(f);
    return 1;
}

/* A small set of `rows` impacts of the data set's ellipse, the first
 * `away` of them moving away from the surface (un > 0), written as .npz. */
static int write_set(const char *path, size_t rows, size_t away)
{
    imp_impact_set s;
    if (imp_impact_set_alloc(&s, rows)) return -1;
    for (size_t i = 0; i < rows; i++) {
        double *pre = s.pre + 6 * i, *post = s.post + 6 * i;
        s.n[3 * i + 1] = 1;
        s.n[3 * i + 2] = 0.004 * ((double)i / rows - 0.5);
        s.d[3 * i] = 1;
        s.d[3 * i + 2] = 0.03;
        pre[3] = 0.6;
        pre[4] = i < away ? 1.5 : -2.5;
        pre[5] = 2.0;
        post[3] = 0.4;
        post[4] = i < away ? 1.5 : 1.4;
        post[5] = 1.0;
    }
    int st = imp_impact_set_validate(&s, NULL);
    if (!st) st = imp_impact_save_npz(&s, path);
    imp_impact_set_free(&s);
    return st;
}

/* Sets with rows that are not impacts: counted, never silently dropped; a
 * set without one impact is an error before any table is printed. */
static void test_non_impacting_rows(void)
{
    static char out[1 << 16];
    CHECK_OK(write_set("test_cli_away.npz", 4, 4));
    const char *verbs[4] = {"predict", "identify --k 2 --reps 1 --grid 3", "bounds", "export --out test_cli_away2.npz"};
    for (int v = 0; v < 4; v++) {
        char args[256];
        snprintf(args, sizeof args, "impact %s --data test_cli_away.npz", verbs[v]);
        int rc = run(args, out, sizeof out);
        CHECK_MSG(rc != 0 && !strchr(out, '|') && strstr(out, "error: impact set: no valid impact among 4 rows (4 not impacting"),
                  "%s -> %d: %s", args, rc, out);
        CHECK(strchr(out, '\n') == out + strlen(out) - 1); /* one line */
    }
    FILE *f = fopen("test_cli_away2.npz", "rb");
    CHECK(f == NULL);
    if (f) fclose(f);
    CHECK_OK(write_set("test_cli_away.npz", 10, 3));
    CHECK(run("impact predict --data test_cli_away.npz --model ap-newton", out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "impacts: 7 of 10 rows (left out: 3 not impacting, un >= 0; 0 flagged invalid)"), "%s", out);
    CHECK(run("impact export --data test_cli_away.npz --out test_cli_away2.npz", out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "10 rows, 7 valid impacts (left out of analyses: 3 not impacting"), "%s", out);
    /* --k beyond the set is an error, the default k = 120 on a small set uses all of it and says so */
    CHECK(run("impact identify --data test_cli_away.npz --k 8 --reps 1 --grid 3", out, sizeof out) != 0 &&
          strstr(out, "error: --k: 8 exceeds the 7 impacts of the set") && !strchr(out, '|'));
    CHECK(run("impact identify --data test_cli_away.npz --model ap-newton --reps 1 --grid 3", out, sizeof out) == 0 &&
          strstr(out, "k = 7: every impact"));
    remove("test_cli_away.npz");
    remove("test_cli_away2.npz");
}

int main(void)
{
    static char out[1 << 16];
    CHECK(run("impact --help", out, sizeof out) == 0 && strstr(out, "list-models"));
    CHECK(run("impact list-models", out, sizeof out) == 0 && strstr(out, "wang-mason") && strstr(out, "0.547"));
    CHECK(run("impact predict --help", out, sizeof out) == 0 && strstr(out, "usage"));
    CHECK(run("impact nosuchverb", out, sizeof out) != 0 && strstr(out, "error: unknown verb"));
    /* bad options: each one stderr line naming the problem */
    CHECK(run("impact predict --model newton --data x.mat", out, sizeof out) != 0 && strstr(out, "--model"));
    CHECK(run("impact predict --mu -1", out, sizeof out) != 0 && strstr(out, "--mu"));
    CHECK(run("impact predict --eps 1.5", out, sizeof out) != 0 && strstr(out, "--eps"));
    CHECK(run("impact predict --eps nan", out, sizeof out) != 0 && strstr(out, "--eps"));
    CHECK(run("impact predict --convention flipped", out, sizeof out) != 0 && strstr(out, "--convention"));
    CHECK(run("impact predict --bogus 1", out, sizeof out) != 0 && strstr(out, "unknown option"));
    CHECK(run("impact identify --k 0", out, sizeof out) != 0 && strstr(out, "--k"));
    CHECK(run("impact predict --data /nonexistent.mat", out, sizeof out) != 0 && strstr(out, "cannot open"));
    CHECK(run("impact export --data /nonexistent.mat", out, sizeof out) != 0 && strstr(out, "--out"));
    test_non_impacting_rows();
    /* issue 27 item 1: the default --out is ./reproduce-impact, like cdl and chnn (it was results/impact,
     * which a fresh folder lacks); a file of that name stops it before any work, naming the folder */
    FILE *blocker = fopen("reproduce-impact", "w");
    if (blocker) fclose(blocker);
    CHECK(run("reproduce impact --quick --data /nonexistent.mat", out, sizeof out) != 0 &&
          strstr(out, "reproduce-impact") && !strstr(out, "results/impact"));
    remove("reproduce-impact");
    CHECK(run("reproduce impact --help", out, sizeof out) == 0 && strstr(out, "default reproduce-impact"));
    if (!have_data()) {
        printf("SKIP: data set not found at %s\n", DATA);
        TEST_MAIN_END();
    }
    CHECK(run("impact predict --data " DATA "/p_models.mat", out, sizeof out) != 0 && strstr(out, "'data' missing"));
    CHECK(run("impact export --data " DATA "/data_ellipse.mat --convention corrected --out test_cli_set.npz", out,
              sizeof out) == 0);
    imp_impact_set s;
    CHECK_OK(imp_impact_load_npz(&s, "test_cli_set.npz"));
    CHECK(s.count == 1718 && s.convention == IMP_TANGENT_CORRECTED);
    imp_impact_set_free(&s);
    /* predict from the .npz: the corrected set gives the same corrected rows */
    static char out2[1 << 16];
    CHECK(run("impact predict --data test_cli_set.npz --model ap-newton --convention corrected", out, sizeof out) == 0);
    CHECK(strstr(out, "| corrected | ap-newton | authors | 0.0840 | 0.5470 |") != NULL);
    CHECK(run("impact predict --data " DATA "/data_ellipse.mat --model ap-newton --convention corrected", out2, sizeof out2) == 0);
    CHECK(strcmp(out, out2) == 0);
    CHECK(run("impact bounds --data " DATA "/data_ellipse.mat", out, sizeof out) == 0);
    CHECK(strstr(out, "| stored |") && strstr(out, "| corrected |"));
    /* the authors' stored impulses as targets: only on the processed set */
    CHECK(run("impact identify --data " DATA "/ellipse_uniform_raw2000.mat --target p-data --k 5 --reps 1", out,
              sizeof out) != 0 && strstr(out, "processed set"));
    CHECK(run("impact identify --data " DATA "/data_ellipse.mat --convention stored --model ap-newton --target p-data "
              "--k 30 --reps 2 --grid 6", out, sizeof out) == 0 && strstr(out, "| stored | ap-newton | authors | p-data |"));
    CHECK(run("impact identify --data " DATA "/data_ellipse.mat --k 5000", out, sizeof out) != 0 &&
          strstr(out, "impulse impact identify: error: --k: 5000 exceeds the 1718 impacts of the set") && !strchr(out, '|'));
    remove("test_cli_set.npz");
    TEST_MAIN_END();
}
