/* Whole-file reads and atomic writes.
 *
 * Atomic means: a reader of `path` sees either the old content or the
 * complete new content, never a prefix. We write a temp file in the SAME
 * directory (rename(2) is atomic only within one filesystem), fsync it,
 * rename it over the target and fsync the directory so the rename itself
 * survives a crash. On any failure the temp file is removed and the old
 * file is untouched. A writer killed mid-way leaves its temp file behind;
 * the next write to the same path removes it.
 *
 * "-" is standard output (writes) or standard input (reads; read once and
 * kept, so "-" may be read again in the same process), and a target
 * that exists but is not a regular file (/dev/null, a FIFO, a terminal) is
 * written in place: renaming over it would replace the device with a file. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"
#include "impulse/core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Distinguishes temp names of concurrent writers in one process. */
static atomic_uint temp_counter;

static int write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        size_t chunk = len > (1u << 30) ? (1u << 30) : len;
        ssize_t w = write(fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += (size_t)w;
        len -= (size_t)w;
    }
    return 0;
}

/* Best effort: some filesystems refuse fsync on directories; the data file
 * itself has already been synced, so a failure here is not reported. */
static void fsync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) return;
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Remove temp files "<name>.tmp.<pid>.<n>" of `path` left by writers that
 * no longer run (killed between creating and renaming them). Temp files of
 * live processes, this one included, are left alone. Best effort. */
static void remove_stale_temps(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    } else return;
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (strncmp(n, base, blen) || strncmp(n + blen, ".tmp.", 5)) continue;
        char *end;
        errno = 0;
        long pid = strtol(n + blen + 5, &end, 10);
        if (errno || end == n + blen + 5 || *end != '.' || pid <= 0 || pid == (long)getpid()) continue;
        const char *c = end + 1;
        if (!*c) continue;
        while (*c >= '0' && *c <= '9') c++;
        if (*c) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to judge) */
        char full[4096 + 256];
        snprintf(full, sizeof full, "%s/%s", dir, n);
        unlink(full);
    }
    closedir(d);
}

/* Write to stdout ("-") or to an existing non-regular file, no rename. */
static int write_stream(const char *path, const void *data, size_t len)
{
    int is_stdout = !strcmp(path, "-");
    int fd = is_stdout ? STDOUT_FILENO : open(path, O_WRONLY | O_APPEND);
    if (fd < 0) return imp_fail(IMP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    int st = write_all(fd, data, len) != 0 ? imp_fail(IMP_ERR_IO, "%s: write failed: %s",
                                                      is_stdout ? "standard output" : path, strerror(errno))
                                           : IMP_OK;
    if (!is_stdout && close(fd) != 0 && !st) st = imp_fail(IMP_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    return st;
}

int imp_write_file_atomic(const char *path, const void *data, size_t len)
{
    if (!path || !path[0]) return imp_fail(IMP_ERR_INVALID, "path: empty");
    if (!data && len > 0) return imp_fail(IMP_ERR_INVALID, "%s: data is NULL", path);
    struct stat sb;
    if (!strcmp(path, "-") || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)))
        return write_stream(path, data, len);

    size_t plen = strlen(path);
    size_t cap = plen + 64;
    char *tmp = malloc(cap);
    if (!tmp) return imp_fail(IMP_ERR_NOMEM, "%s: temp name", path);
    snprintf(tmp, cap, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&temp_counter, 1u));
    remove_stale_temps(path);

    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return imp_fail(IMP_ERR_IO, "%s: cannot create temp file: %s", path, strerror(e));
    }
    const char *step = NULL;
    int e = 0;
    if (write_all(fd, data, len) != 0) step = "write";
    else if (fsync(fd) != 0) step = "fsync";
    if (step) e = errno;
    if (close(fd) != 0 && !step) {
        step = "close";
        e = errno;
    }
    if (!step && rename(tmp, path) != 0) {
        step = "rename";
        e = errno;
    }
    if (step) {
        unlink(tmp);
        free(tmp);
        return imp_fail(IMP_ERR_IO, "%s: %s failed: %s", path, step, strerror(e));
    }
    free(tmp);
    fsync_parent_dir(path);
    return IMP_OK;
}

/* All of stream f into a malloc'd, NUL-terminated buffer (path names it in
 * messages); the input limit applies. */
static int read_stream(FILE *f, const char *path, unsigned char **data, size_t *len)
{
    /* Grow as we read rather than trusting a size from stat: works for
     * pipes and for files that change while we read. */
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap + 1);
    if (!buf) return imp_fail(IMP_ERR_NOMEM, "%s: read buffer", path);
    for (;;) {
        if (n > imp_input_limit()) {
            free(buf);
            return imp_fail(IMP_ERR_FORMAT, "%s: larger than the input limit of %zu bytes (IMPULSE_MAX_INPUT_BYTES)",
                            path, imp_input_limit());
        }
        if (n == cap) {
            size_t ncap;
            if (!imp_size_mul(cap, 2, &ncap) || ncap == SIZE_MAX) {
                free(buf);
                return imp_fail(IMP_ERR_NOMEM, "%s: file too large", path);
            }
            unsigned char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                return imp_fail(IMP_ERR_NOMEM, "%s: file too large to read", path);
            }
            buf = nb;
            cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        return imp_fail(IMP_ERR_IO, "%s: read error", path);
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return IMP_OK;
}

/* Standard input is read once and kept, so that "-" can be read again in
 * the same process (a verb that first peeks at a file's kind, then loads
 * it, reads the same bytes twice). */
static pthread_mutex_t stdin_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *stdin_data;
static size_t stdin_len;
static int stdin_status = -1; /* -1: not read yet, else the status of the read */

static int read_stdin(unsigned char **data, size_t *len)
{
    pthread_mutex_lock(&stdin_lock);
    int first = stdin_status < 0;
    if (first) stdin_status = read_stream(stdin, "-", &stdin_data, &stdin_len);
    int st = stdin_status;
    if (st && !first) st = imp_fail(st, "-: standard input could not be read (an earlier read failed)");
    if (!st) {
        *data = malloc(stdin_len + 1);
        if (*data) {
            memcpy(*data, stdin_data, stdin_len + 1);
            *len = stdin_len;
        } else {
            st = imp_fail(IMP_ERR_NOMEM, "-: read buffer");
        }
    }
    pthread_mutex_unlock(&stdin_lock);
    return st;
}

int imp_input_budget(size_t count, size_t size, const char *what)
{
    size_t bytes;
    if (imp_size_mul(count, size, &bytes) && bytes <= imp_input_limit()) return IMP_OK;
    return imp_fail(IMP_ERR_FORMAT, "%s: %zu values of %zu bytes exceed the input limit of %zu bytes "
                    "(IMPULSE_MAX_INPUT_BYTES)", what, count, size, imp_input_limit());
}

int imp_read_file(const char *path, unsigned char **data, size_t *len)
{
    if (!path || !data || !len) return imp_fail(IMP_ERR_INVALID, "read_file: NULL argument");
    *data = NULL;
    *len = 0;
    if (!strcmp(path, "-")) return read_stdin(data, len);
    FILE *f = fopen(path, "rb");
    if (!f) return imp_fail(IMP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    int st = read_stream(f, path, data, len);
    fclose(f);
    return st;
}
