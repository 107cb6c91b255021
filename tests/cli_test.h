/* Running the command-line tool from a test: exit status, stderr captured,
 * and the one-line error contract. Include after test.h. */
#ifndef IMPULSE_CLI_TEST_H
#define IMPULSE_CLI_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Output files TAG_stderr.txt, TAG_stdout.txt in the working directory:
 * test programs that ctest runs at once need different tags. */
#ifndef CLI_TEST_TAG
#define CLI_TEST_TAG "cli"
#endif

/* Run a shell command line; capture stderr into err (first 4 KiB). */
static inline int run(const char *args, char *err, size_t cap)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "IMPULSE_PROGRESS=0 %s %s 2>" CLI_TEST_TAG "_stderr.txt >" CLI_TEST_TAG "_stdout.txt",
             IMPULSE_CLI_PATH, args);
    int status = system(cmd);
    FILE *f = fopen(CLI_TEST_TAG "_stderr.txt", "r");
    size_t n = f ? fread(err, 1, cap - 1, f) : 0;
    err[n] = '\0';
    if (f) fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* A failing invocation: non-zero exit, one stderr line containing `needle`. */
static inline void expect_error(const char *args, const char *needle)
{
    char err[4096];
    int rc = run(args, err, sizeof err);
    int ok = rc != 0 && count_lines(err) == 1 && strstr(err, needle) != NULL && strstr(err, "error") != NULL;
    CHECK_MSG(ok, "impulse %s -> exit %d, stderr '%s' (want one line with '%s')", args, rc, err, needle);
}

#endif
