/* System files: a line-based text description of a constrained system, so
 * that a user can simulate a new mechanism without writing C. The grammar
 * is documented in docs/chnn-systems.md; every error names the file, the
 * line and the offending keyword or body. */
#include "impulse/constrained.h"
#include "impulse/constrained_contact.h"
#include "core/num.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 40

typedef struct parse_ctx {
    imp_csys *s;
    const char *file;
    int line;
    char **tok;
    int n, pos;
    const char *kw;
    int have_dim;
} parse_ctx;

static int perr(parse_ctx *p, const char *fmt, const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    return imp_fail(IMP_ERR_FORMAT, "%s:%d: %s: %s", p->file, p->line, p->kw, msg);
}

/* Keep the library's message but add file:line (errors from the builder). */
static int pwrap(parse_ctx *p, int st)
{
    if (!st) return st;
    return imp_fail_context(IMP_ERR_FORMAT, "%s:%d", p->file, p->line);
}

/* Numbers go through the checked helper (core/num.h): its message says what
 * was wrong ("'1e999' is beyond the range of a double", "2.5 is not an
 * integer", "5 is out of range [0, 2]"), prefixed with file:line: keyword. */
static int num_err(parse_ctx *p, const char *what)
{
    const char *m = imp_last_error();
    if (!strcmp(what, p->kw)) m += strlen(what) + 2; /* "steps: steps: ..." */
    return perr(p, "%s", m);
}

static int next_number(parse_ctx *p, const char *what, double *out)
{
    if (p->pos >= p->n) return perr(p, "missing %s", what);
    if (imp_num_parse_double(p->tok[p->pos++], what, out)) return num_err(p, what);
    return IMP_OK;
}

static int next_int(parse_ctx *p, const char *what, int lo, int hi, int *out)
{
    if (p->pos >= p->n) return perr(p, "missing %s", what);
    if (imp_num_parse_int(p->tok[p->pos++], what, lo, hi, out)) return num_err(p, what);
    return IMP_OK;
}

static int next_vector(parse_ctx *p, const char *what, int n, double *out)
{
    for (int i = 0; i < n; i++) {
        int st = next_number(p, what, &out[i]);
        if (st) return st;
    }
    return IMP_OK;
}

static int next_body(parse_ctx *p, int *b)
{
    if (p->pos >= p->n) return perr(p, "%s", "missing body name");
    const char *name = p->tok[p->pos++];
    *b = imp_csys_body_index(p->s, name);
    if (*b < 0) return perr(p, "unknown body '%.60s'", name);
    return IMP_OK;
}

static int accept(parse_ctx *p, const char *word)
{
    if (p->pos < p->n && strcmp(p->tok[p->pos], word) == 0) {
        p->pos++;
        return 1;
    }
    return 0;
}

static int expect(parse_ctx *p, const char *word)
{
    if (accept(p, word)) return IMP_OK;
    if (p->pos >= p->n) return perr(p, "expected '%s'", word);
    char msg[160];
    snprintf(msg, sizeof msg, "expected '%s', found '%.60s'", word, p->tok[p->pos]);
    return perr(p, "%s", msg);
}

static int end_of_line(parse_ctx *p)
{
    if (p->pos < p->n) return perr(p, "unexpected '%.60s'", p->tok[p->pos]);
    return IMP_OK;
}

static int need_dim(parse_ctx *p)
{
    if (!p->have_dim) return perr(p, "%s", "'dim 2' or 'dim 3' must come first");
    return IMP_OK;
}

static int parse_body(parse_ctx *p)
{
    if (p->pos >= p->n) return perr(p, "%s", "missing body name");
    const char *name = p->tok[p->pos++];
    double mass = 0, inertia[3] = {0}, pos[3] = {0}, vel[3] = {0};
    int n_axes = 0, have_mass = 0, st;
    while (p->pos < p->n) {
        if (accept(p, "mass")) {
            if ((st = next_number(p, "mass", &mass))) return st;
            have_mass = 1;
        } else if (accept(p, "inertia")) {
            while (p->pos < p->n && n_axes < 4) {
                double probe;
                if (imp_num_parse_double(p->tok[p->pos], "inertia", &probe)) { /* the next attribute */
                    imp_clear_error();
                    break;
                }
                if (n_axes >= p->s->d) return perr(p, "more than %s inertia values", p->s->d == 2 ? "2" : "3");
                if ((st = next_number(p, "inertia", &inertia[n_axes]))) return st;
                n_axes++;
            }
            if (n_axes == 0) return perr(p, "%s", "inertia needs 1 to dim values");
        } else if (accept(p, "position")) {
            if ((st = next_vector(p, "position", p->s->d, pos))) return st;
        } else if (accept(p, "velocity")) {
            if ((st = next_vector(p, "velocity", p->s->d, vel))) return st;
        } else {
            return perr(p, "unknown attribute '%.60s' (mass, inertia, position, velocity)", p->tok[p->pos]);
        }
    }
    if (!have_mass) {
        char msg[120];
        snprintf(msg, sizeof msg, "body '%.40s' needs 'mass M'", name);
        return perr(p, "%s", msg);
    }
    int b;
    if ((st = imp_csys_add_body(p->s, name, mass, n_axes, inertia, &b))) return pwrap(p, st);
    for (int k = 0; k < p->s->d; k++) {
        p->s->bodies[b].x0[k] = pos[k];
        p->s->bodies[b].v0[k] = vel[k];
    }
    return IMP_OK;
}

/* Optional "at c1 .. ck" body-frame coordinates of a body point. */
static int parse_at(parse_ctx *p, int b, double *c, int *given)
{
    *given = 0;
    if (!accept(p, "at")) return IMP_OK;
    int k = p->s->bodies[b].n_axes;
    if (k == 0) return perr(p, "body '%.40s' is a point mass: 'at' needs an extended body", p->s->bodies[b].name);
    *given = 1;
    return next_vector(p, "at", k, c);
}

static int parse_line(parse_ctx *p)
{
    imp_csys *s = p->s;
    const char *kw = p->kw = p->tok[0];
    p->pos = 1;
    int st;
    if (strcmp(kw, "name") == 0) {
        if (p->n != 2) return perr(p, "%s", "expected one word");
        snprintf(s->name, sizeof s->name, "%s", p->tok[1]);
        return IMP_OK;
    }
    if (strcmp(kw, "dim") == 0) {
        if (p->have_dim) return perr(p, "%s", "given twice");
        if (s->n_bodies) return perr(p, "%s", "must come before the bodies");
        int d;
        if ((st = next_int(p, "dimension", 2, 3, &d)) || (st = end_of_line(p))) return st;
        char name[IMP_CSYS_NAME_LEN];
        memcpy(name, s->name, sizeof name);
        imp_csys_init(s, name, d);
        p->have_dim = 1;
        return IMP_OK;
    }
    if ((st = need_dim(p))) return st;
    if (strcmp(kw, "body") == 0) return parse_body(p);
    if (strcmp(kw, "dt") == 0) {
        if ((st = next_number(p, "dt", &s->dt)) || (st = end_of_line(p))) return st;
        if (!(s->dt > 0)) return perr(p, "%s", "must be positive");
        return IMP_OK;
    }
    if (strcmp(kw, "steps") == 0) {
        if ((st = next_int(p, "steps", 1, IMP_CSYS_MAX_STEPS, &s->n_steps)) || (st = end_of_line(p))) return st;
        return IMP_OK;
    }
    if (strcmp(kw, "tether") == 0) {
        int b;
        double len, anchor[3] = {0};
        if ((st = next_body(p, &b)) || (st = expect(p, "length")) || (st = next_number(p, "length", &len)))
            return st;
        if (accept(p, "anchor") && (st = next_vector(p, "anchor", s->d, anchor))) return st;
        if ((st = end_of_line(p))) return st;
        return pwrap(p, imp_csys_add_tether(s, b, anchor, len, p->line));
    }
    if (strcmp(kw, "link") == 0) {
        int a, b;
        double len;
        if ((st = next_body(p, &a)) || (st = next_body(p, &b)) || (st = expect(p, "length")) ||
            (st = next_number(p, "length", &len)) || (st = end_of_line(p)))
            return st;
        return pwrap(p, imp_csys_add_link(s, a, b, len, p->line));
    }
    if (strcmp(kw, "joint") == 0) {
        int a, b = -1, ga, gb = 0;
        double ca[3] = {0}, cb[3] = {0}, anchor[3] = {0};
        if ((st = next_body(p, &a)) || (st = parse_at(p, a, ca, &ga))) return st;
        if (accept(p, "to")) {
            if ((st = next_body(p, &b)) || (st = parse_at(p, b, cb, &gb))) return st;
        } else if (accept(p, "anchor")) {
            if ((st = next_vector(p, "anchor", s->d, anchor))) return st;
        }
        if ((st = end_of_line(p))) return st;
        return pwrap(p, imp_csys_add_joint(s, a, ga ? ca : NULL, b, gb ? cb : NULL, anchor, p->line));
    }
    if (strcmp(kw, "hinge") == 0) {
        int a, b;
        double ua[3] = {0}, ub[3] = {0};
        if ((st = next_body(p, &a)) || (st = expect(p, "axis"))) return st;
        if (s->bodies[a].n_axes == 0) return perr(p, "body '%.40s' is a point mass", s->bodies[a].name);
        if ((st = next_vector(p, "axis", s->bodies[a].n_axes, ua))) return st;
        if ((st = next_body(p, &b)) || (st = expect(p, "axis"))) return st;
        if (s->bodies[b].n_axes == 0) return perr(p, "body '%.40s' is a point mass", s->bodies[b].name);
        if ((st = next_vector(p, "axis", s->bodies[b].n_axes, ub)) || (st = end_of_line(p))) return st;
        return pwrap(p, imp_csys_add_hinge(s, a, ua, b, ub, p->line));
    }
    if (strcmp(kw, "gravity") == 0) {
        double g;
        int axis = -1; /* the last axis */
        if ((st = next_number(p, "g", &g))) return st;
        if (accept(p, "axis")) {
            if (p->pos < p->n && strlen(p->tok[p->pos]) == 1 && strchr("xyz", p->tok[p->pos][0])) {
                axis = p->tok[p->pos][0] - 'x';
                p->pos++;
            } else if ((st = next_int(p, "axis", 0, s->d - 1, &axis))) {
                return st;
            }
        }
        if ((st = end_of_line(p))) return st;
        return pwrap(p, imp_csys_add_gravity(s, g, axis));
    }
    if (strcmp(kw, "spring") == 0) {
        int a, b = -1;
        double k, rest, anchor[3] = {0};
        if ((st = next_body(p, &a))) return st;
        if (accept(p, "anchor")) {
            if ((st = next_vector(p, "anchor", s->d, anchor))) return st;
        } else if ((st = next_body(p, &b))) {
            return st;
        }
        if ((st = expect(p, "k")) || (st = next_number(p, "k", &k)) || (st = expect(p, "rest")) ||
            (st = next_number(p, "rest", &rest)) || (st = end_of_line(p)))
            return st;
        return pwrap(p, imp_csys_add_spring(s, a, b, anchor, k, rest));
    }
    if (strcmp(kw, "magnet") == 0) {
        int b;
        double q, pos[3], mom[3];
        if ((st = next_body(p, &b)) || (st = expect(p, "q")) || (st = next_number(p, "q", &q)) ||
            (st = expect(p, "at")) || (st = next_vector(p, "at", 3, pos)) ||
            (st = expect(p, "moment")) || (st = next_vector(p, "moment", 3, mom)) ||
            (st = end_of_line(p)))
            return st;
        return pwrap(p, imp_csys_add_magnet(s, b, q, pos, mom));
    }
    if (strcmp(kw, "plane") == 0) {
        if ((st = need_dim(p))) return st;
        if (p->pos >= p->n) return perr(p, "%s", "missing plane name");
        const char *name = p->tok[p->pos++];
        double n[3] = {0}, off;
        if ((st = expect(p, "normal")) || (st = next_vector(p, "normal", s->d, n)) || (st = expect(p, "offset")) ||
            (st = next_number(p, "offset", &off)) || (st = end_of_line(p)))
            return st;
        return pwrap(p, imp_csys_add_plane(s, name, n, off, NULL));
    }
    if (strcmp(kw, "contact") == 0) {
        int b, ga, disk = 0;
        double ca[3] = {0}, r = 0, axis[3] = {0}, e, mu;
        if ((st = next_body(p, &b)) || (st = parse_at(p, b, ca, &ga))) return st;
        if (accept(p, "disk")) {
            disk = 1;
            if ((st = next_number(p, "disk", &r)) || (st = expect(p, "axis")) ||
                (st = next_vector(p, "axis", 3, axis)))
                return st;
        } else if (accept(p, "radius") && (st = next_number(p, "radius", &r))) {
            return st;
        }
        if (accept(p, "body")) {
            /* a body-body contact: the other body's sphere */
            int b2, gb;
            double cb[3] = {0}, r2 = 0;
            if (disk) return perr(p, "%s", "a disk rim touches planes only (give the body a sphere: radius R)");
            if ((st = next_body(p, &b2)) || (st = parse_at(p, b2, cb, &gb)) || (st = expect(p, "radius")) ||
                (st = next_number(p, "radius", &r2)) || (st = expect(p, "e")) || (st = next_number(p, "e", &e)) ||
                (st = expect(p, "mu")) || (st = next_number(p, "mu", &mu)) || (st = end_of_line(p)))
                return st;
            return pwrap(p, imp_csys_add_body_contact(s, b, ga ? ca : NULL, r, b2, gb ? cb : NULL, r2, e, mu,
                                                      p->line));
        }
        if (p->pos < p->n && strcmp(p->tok[p->pos], "plane") != 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "expected 'plane' or 'body', found '%.60s'", p->tok[p->pos]);
            return perr(p, "%s", msg);
        }
        if ((st = expect(p, "plane"))) return st;
        if (p->pos >= p->n) return perr(p, "%s", "missing plane name");
        const char *pname = p->tok[p->pos++];
        int pl = imp_csys_plane_index(s, pname);
        if (pl < 0) return perr(p, "unknown plane '%.60s' (declare it with 'plane' first)", pname);
        if ((st = expect(p, "e")) || (st = next_number(p, "e", &e)) || (st = expect(p, "mu")) ||
            (st = next_number(p, "mu", &mu)) || (st = end_of_line(p)))
            return st;
        if (disk) return pwrap(p, imp_csys_add_disk_contact(s, b, ga ? ca : NULL, axis, r, pl, e, mu, p->line));
        return pwrap(p, imp_csys_add_contact(s, b, ga ? ca : NULL, r, pl, e, mu, p->line));
    }
    return perr(p, "%s", "unknown keyword (name, dim, body, tether, link, joint, hinge, gravity, spring, magnet, plane, contact, dt, steps)");
}

int imp_csys_parse(imp_csys *s, const char *text, const char *filename)
{
    if (!s || !text) return imp_fail(IMP_ERR_INVALID, "system file: NULL");
    const char *file = filename ? filename : "<system>";
    imp_csys_init(s, "custom", 3);
    parse_ctx p = {s, file, 0, NULL, 0, 0, "", 0};
    char linebuf[1024];
    char *tok[MAX_TOKENS];
    const char *cur = text;
    while (*cur) {
        const char *eol = strchr(cur, '\n');
        size_t len = eol ? (size_t)(eol - cur) : strlen(cur);
        p.line++;
        if (len >= sizeof linebuf)
            return imp_fail(IMP_ERR_FORMAT, "%s:%d: line longer than %zu characters", file, p.line,
                            sizeof linebuf - 1);
        memcpy(linebuf, cur, len);
        linebuf[len] = '\0';
        cur = eol ? eol + 1 : cur + len;
        char *hash = strchr(linebuf, '#');
        if (hash) *hash = '\0';
        int n = 0;
        char *c = linebuf;
        while (*c) {
            while (*c == ' ' || *c == '\t' || *c == '\r') c++;
            if (!*c) break;
            if (n >= MAX_TOKENS)
                return imp_fail(IMP_ERR_FORMAT, "%s:%d: more than %d words", file, p.line, MAX_TOKENS);
            tok[n++] = c;
            while (*c && *c != ' ' && *c != '\t' && *c != '\r') c++;
            if (*c) *c++ = '\0';
        }
        if (n == 0) continue;
        p.tok = tok;
        p.n = n;
        int st = parse_line(&p);
        if (st) return st;
    }
    if (!p.have_dim) return imp_fail(IMP_ERR_FORMAT, "%s: no 'dim' line", file);
    if (s->n_bodies == 0) return imp_fail(IMP_ERR_FORMAT, "%s: no bodies", file);
    int st = imp_csys_check_constraints(s);
    if (!st) st = imp_csys_validate(s);
    if (!st && s->n_contacts > 0) {
        /* a body-body contact needs a normal at the file's state */
        double xv[2 * 3 * IMP_CSYS_MAX_POINTS];
        imp_csys_nominal_state(s, xv);
        st = imp_csys_check_contact_normals(s, xv);
    }
    if (st) return imp_fail_context(IMP_ERR_FORMAT, "%s", file);
    size_t len = strlen(text);
    if (len >= sizeof s->source)
        return imp_fail(IMP_ERR_FORMAT, "%s: %zu characters; a system file may have at most %zu "
                        "(datasets and checkpoints keep its text)", file, len, sizeof s->source - 1);
    memcpy(s->source, text, len + 1);
    return IMP_OK;
}

int imp_csys_load(imp_csys *s, const char *path)
{
    if (!path) return imp_fail(IMP_ERR_INVALID, "system file: NULL path");
    FILE *f = fopen(path, "rb");
    if (!f) return imp_fail(IMP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *data = malloc(cap);
    int st = IMP_OK;
    while (data) {
        if (len + 1 >= cap) {
            if (cap >= ((size_t)1 << 24)) { st = imp_fail(IMP_ERR_FORMAT, "%s: larger than 16 MiB", path); break; }
            char *bigger = realloc(data, cap * 2);
            if (!bigger) break;
            data = bigger;
            cap *= 2;
        }
        size_t got = fread(data + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) break;
    }
    if (!data) { fclose(f); return imp_fail(IMP_ERR_NOMEM, "%s: reading", path); }
    if (!st && ferror(f)) st = imp_fail(IMP_ERR_IO, "%s: read error", path);
    fclose(f);
    if (!st) {
        data[len] = '\0';
        if (strlen(data) != len) st = imp_fail(IMP_ERR_FORMAT, "%s: not a text file (NUL byte)", path);
        else st = imp_csys_parse(s, data, path);
    }
    free(data);
    return st;
}
