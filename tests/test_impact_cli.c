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
    remove("test_cli_set.npz");
    TEST_MAIN_END();
}
