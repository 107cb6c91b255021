/* Checked numbers: the one place where text becomes a number and a double
 * becomes an integer. Internal to the library and the CLI (not installed).
 *
 * Every function returns IMP_OK or IMP_ERR_INVALID with a one-line message
 * "WHAT: <value as given> <what is wrong>", where WHAT names the field or
 * option (e.g. "seed: 2.5 is not an integer", "axis: 1e+300 is out of range
 * [0, 2]", "--steps: 'abc' is not a number"). On failure *out is untouched.
 * No conversion here is undefined behaviour and none truncates silently. */
#ifndef IMPULSE_CORE_NUM_H
#define IMPULSE_CORE_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Text -> double. The whole of `text` must be one number (strtod's grammar,
 * no leading or trailing blanks) with a finite value. Values below the
 * smallest normal double (1e-308, 1e-320) are numbers: they read as the
 * nearest subnormal or as zero. Overflow ("1e999"), "nan" and "inf" fail. */
int imp_num_parse_double(const char *text, const char *what, double *out);

/* Text -> integer in [lo, hi]. Accepts decimal integers ("-12", "+3") and
 * integral numbers written in floating-point form up to 2^53 ("1e6",
 * "2000.0"); "2.5", "0x10", "" and "12abc" fail, as does anything outside
 * [lo, hi] (reported as written, with the range). */
int imp_num_parse_int64(const char *text, const char *what, int64_t lo, int64_t hi, int64_t *out);
int imp_num_parse_int(const char *text, const char *what, int lo, int hi, int *out);

/* double -> integer in [lo, hi]: the value must be finite, integral (2.5
 * fails; no rounding), and in range. The message shows the double as given
 * (shortest form that reads back exactly), never the converted value. */
int imp_num_to_int64(double x, const char *what, int64_t lo, int64_t hi, int64_t *out);
int imp_num_to_int(double x, const char *what, int lo, int hi, int *out);
int imp_num_to_size(double x, const char *what, size_t lo, size_t hi, size_t *out);
/* Whole uint64 range [0, 2^64 - 1] (seeds). */
int imp_num_to_uint64(double x, const char *what, uint64_t *out);

/* Shortest of %.15g/%.16g/%.17g that reads back as exactly x ("0.1",
 * "1e+300", "nan", "inf"). buf needs IMP_NUM_FMT_CAP bytes. */
#define IMP_NUM_FMT_CAP 32
const char *imp_num_format(double x, char buf[IMP_NUM_FMT_CAP]);

#endif
