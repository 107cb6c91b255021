/* The constrained systems as the models see them: a thin view over the
 * ground-truth description (constrained.h, chnn_systems.h), so that models,
 * data and evaluation share one set of constraints, masses and potentials. */
#include "impulse/chnn_models.h"
#include "impulse/chnn_systems.h"

#include "impulse/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int imp_csystem_from_csys(imp_csystem *cs, const imp_csys *s)
{
    if (!cs || !s) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    memset(cs, 0, sizeof *cs);
    cs->full = *s;
    /* A system without generalised coordinates (a system file): the
     * baselines (HNN, DeLaN, NODE) see its Cartesian coordinates, without
     * the constraints. */
    if (s->kind == IMP_CSYS_CUSTOM && s->n_gen == 0 && imp_csys_ndof(s) <= IMP_CSYS_MAX_GEN) {
        cs->full.n_gen = imp_csys_ndof(s);
        memset(cs->full.gen_is_angle, 0, sizeof cs->full.gen_is_angle);
    }
    s = &cs->full;
    snprintf(cs->name, sizeof cs->name, "%s", s->name);
    cs->d = s->d;
    cs->n_points = s->n_points;
    cs->n_bodies = s->n_bodies;
    cs->n_rows = s->n_rows;
    cs->n_gen = s->n_gen;
    cs->dt = s->dt;
    for (int b = 0; b < s->n_bodies; b++) {
        cs->body_first[b] = s->bodies[b].first_point;
        cs->body_size[b] = s->bodies[b].n_axes + 1;
    }
    for (int g = 0; g < s->n_gen && g < IMP_CSYS_MAX_GEN; g++) cs->gen_is_angle[g] = s->gen_is_angle[g];
    return IMP_OK;
}

int imp_csystem_from_name(imp_csystem *cs, const char *name)
{
    if (!cs || !name) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    imp_csys *s = malloc(sizeof *s);
    if (!s) return imp_fail(IMP_ERR_NOMEM, "system: out of memory");
    int st = imp_chnn_system(s, name);
    if (!st) st = imp_csystem_from_csys(cs, s);
    free(s);
    return st;
}

int imp_csystem_from_meta(imp_csystem *cs, const char *meta, const char *what)
{
    if (!cs || !meta) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    const char *src = what ? what : "meta";
    size_t cap = strlen(meta) + 1;
    char *text = malloc(cap);
    imp_csys *s = malloc(sizeof *s);
    int st = text && s ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "system: out of memory");
    if (!st && imp_json_get_string(meta, "system_text", text, cap) == IMP_OK) {
        char label[300];
        snprintf(label, sizeof label, "%s: meta \"system_text\"", src);
        st = imp_csys_parse(s, text, label);
        if (!st) st = imp_csystem_from_csys(cs, s);
        /* meta "system" may be left out; given, it must be the text's name,
         * not be replaced by it unseen */
        char name[IMP_CSYS_NAME_LEN];
        if (!st && imp_json_get_string(meta, "system", name, sizeof name) == IMP_OK && strcmp(name, cs->name))
            st = imp_fail(IMP_ERR_FORMAT, "%s: meta \"system\" '%s' differs from the name '%s' of its \"system_text\" "
                          "(the text's `name` line): make them agree", src, name, cs->name);
        if (!st) imp_clear_error();
    } else if (!st) {
        imp_clear_error();
        char name[IMP_CSYS_NAME_LEN];
        if (imp_json_get_string(meta, "system", name, sizeof name)) {
            st = imp_fail(IMP_ERR_FORMAT, "%s: meta: missing \"system\"", src);
        } else if ((st = imp_chnn_system(s, name)) == IMP_ERR_NOT_FOUND) {
            st = imp_fail(IMP_ERR_NOT_FOUND,
                          "%s: system '%s': not built in (%s) and the file carries no \"system_text\" "
                          "(simulate it again with --system-file)",
                          src, name, imp_chnn_system_names());
        }
        if (!st) st = imp_csystem_from_csys(cs, s);
    }
    free(text);
    free(s);
    return st;
}

void imp_csystem_violation(const imp_csystem *cs, const double *y, double *phi, double *phidot)
{
    int N = cs->n_points * cs->d;
    imp_csys_phi(&cs->full, y, phi);
    imp_csys_phidot(&cs->full, y, y + N, phidot);
}

double imp_csystem_energy(const imp_csystem *cs, const double *y)
{
    int N = cs->n_points * cs->d;
    return imp_csys_energy(&cs->full, y, y + N);
}

int imp_csystem_to_generalised(const imp_csystem *cs, const double *y, double *z)
{
    return imp_chnn_to_generalized(&cs->full, y, z);
}

int imp_csystem_from_generalised(const imp_csystem *cs, const double *z, double *y)
{
    return imp_chnn_from_generalized(&cs->full, z, y);
}

/* The next line of a system text that says something: comment (#) cut,
 * blanks collapsed to one space, empty lines skipped. 0 at the end. */
static int next_line(const char **p, int *line, char *buf, size_t cap)
{
    while (**p) {
        size_t n = 0;
        int space = 0, comment = 0;
        (*line)++;
        for (; **p && **p != '\n'; (*p)++) {
            char c = **p;
            if (c == '#') comment = 1;
            if (comment) continue;
            if (c == ' ' || c == '\t' || c == '\r') {
                space = n > 0;
                continue;
            }
            if (space && n + 1 < cap) buf[n++] = ' ';
            space = 0;
            if (n + 1 < cap) buf[n++] = c;
        }
        if (**p == '\n') (*p)++;
        buf[n] = '\0';
        if (n > 0) return 1;
    }
    buf[0] = '\0';
    return 0;
}

int imp_csystem_same(const imp_csystem *a, const imp_csystem *b, char *why, size_t cap)
{
    if (strcmp(a->name, b->name)) {
        snprintf(why, cap, "system '%s' differs from the model's '%s'", a->name, b->name);
        return 0;
    }
    const char *pa = a->full.source, *pb = b->full.source;
    char la[256], lb[256];
    int na = 0, nb = 0;
    for (;;) {
        int ha = next_line(&pa, &na, la, sizeof la), hb = next_line(&pb, &nb, lb, sizeof lb);
        if (!ha && !hb) return 1;
        if (ha && hb && !strcmp(la, lb)) continue;
        snprintf(why, cap, "system '%s' comes from another system file than the model's: line %d '%s' here, line "
                 "%d '%s' in the model's (comments, blank lines and spacing aside)", a->name, na, ha ? la : "(end)", nb,
                 hb ? lb : "(end)");
        return 0;
    }
}
