/* Private to src/report: running the bundled Python scripts. */
#ifndef IMPULSE_REPORT_INTERNAL_H
#define IMPULSE_REPORT_INTERNAL_H

#include <stddef.h>

/* Run `<python> <script dir>/<script> args...` (argv-style, no shell) and
 * wait for it. Returns IMP_OK on exit status 0; IMP_ERR_UNSUPPORTED if the
 * interpreter or script is missing or the script exits with status 3 (its
 * "dependency missing" code); IMP_ERR_IO otherwise. Failure messages end
 * with the script's last non-empty stderr line. */
int imp_python_run(const char *script, const char *const *args, size_t nargs);

#endif
