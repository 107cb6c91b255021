/* Running python/ scripts from the library without a shell: posix_spawn
 * with an argv vector (paths with spaces or quotes are safe), stdout
 * discarded, stderr captured through a pipe so a failure can be reported
 * as one line. */
#define _GNU_SOURCE
#include "report_internal.h"
#include "impulse/core.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef IMPULSE_SOURCE_DIR
#define IMPULSE_SOURCE_DIR "."
#endif
#ifndef IMPULSE_DATA_DIR
#define IMPULSE_DATA_DIR "/usr/local/share/impulse"
#endif

#define SCRIPT_MISSING_DEPENDENCY 3

/* First existing <dir>/<script> among the documented locations. */
static int find_script(const char *script, char *out, size_t cap)
{
    const char *env = getenv("IMPULSE_PYTHON_DIR");
    const char *dirs[3] = {env && env[0] ? env : NULL, IMPULSE_SOURCE_DIR "/python", IMPULSE_DATA_DIR "/python"};
    for (int i = 0; i < 3; i++) {
        if (!dirs[i]) continue;
        int n = snprintf(out, cap, "%s/%s", dirs[i], script);
        if (n > 0 && (size_t)n < cap && access(out, R_OK) == 0) return IMP_OK;
    }
    return imp_fail(IMP_ERR_UNSUPPORTED, "%s: script not found (set IMPULSE_PYTHON_DIR; looked in %s%s%s/python, %s/python)",
                    script, env && env[0] ? env : "", env && env[0] ? ", " : "", IMPULSE_SOURCE_DIR,
                    IMPULSE_DATA_DIR);
}

/* Keep only the last non-empty line of `text` (in place). */
static const char *last_line(char *text)
{
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) text[--n] = '\0';
    char *nl = strrchr(text, '\n');
    return nl ? nl + 1 : text;
}

int imp_python_run(const char *script, const char *const *args, size_t nargs)
{
    char script_path[4096];
    int st = find_script(script, script_path, sizeof script_path);
    if (st) return st;
    const char *py = getenv("IMPULSE_PYTHON");
    if (!py || !py[0]) py = "/usr/bin/python3";

    char **argv = calloc(nargs + 3, sizeof *argv);
    if (!argv) return imp_fail(IMP_ERR_NOMEM, "%s: argv", script);
    argv[0] = (char *)py;
    argv[1] = script_path;
    for (size_t i = 0; i < nargs; i++) argv[2 + i] = (char *)args[i];

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        free(argv);
        return imp_fail(IMP_ERR_IO, "%s: pipe: %s", script, strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
    pid_t pid;
    int rc = posix_spawn(&pid, py, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        return imp_fail(IMP_ERR_UNSUPPORTED, "%s: cannot run python interpreter '%s' (set IMPULSE_PYTHON): %s",
                        script, py, strerror(rc));
    }

    /* Drain stderr fully before waiting, or a chatty child could block on
     * a full pipe; keep only the tail, which holds the error. */
    char tail[4096];
    size_t len = 0;
    char chunk[1024];
    for (;;) {
        ssize_t r = read(pipefd[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        size_t k = (size_t)r; /* k <= sizeof chunk < sizeof tail */
        if (len + k > sizeof tail - 1) {
            size_t drop = len + k - (sizeof tail - 1);
            memmove(tail, tail + drop, len - drop);
            len -= drop;
        }
        memcpy(tail + len, chunk, k);
        len += k;
    }
    close(pipefd[0]);
    tail[len] = '\0';

    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return imp_fail(IMP_ERR_IO, "%s: waitpid: %s", script, strerror(errno));
    const char *why = last_line(tail);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return IMP_OK;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return imp_fail(IMP_ERR_UNSUPPORTED, "%s: python interpreter '%s' could not be executed: %s", script, py,
                        why[0] ? why : "exit status 127");
    if (WIFEXITED(status) && WEXITSTATUS(status) == SCRIPT_MISSING_DEPENDENCY)
        return imp_fail(IMP_ERR_UNSUPPORTED, "%s (run by %s): %s", script, py, why[0] ? why : "dependency missing");
    if (WIFSIGNALED(status))
        return imp_fail(IMP_ERR_IO, "%s (run by %s): killed by signal %d%s%s", script, py, WTERMSIG(status),
                        why[0] ? ": " : "", why);
    return imp_fail(IMP_ERR_IO, "%s (run by %s) failed with status %d: %s", script, py, WEXITSTATUS(status),
                    why[0] ? why : "(no message)");
}
