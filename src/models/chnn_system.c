/* The constrained systems as the models see them: a thin view over the
 * ground-truth description (constrained.h, chnn_systems.h), so that models,
 * data and evaluation share one set of constraints, masses and potentials. */
#include "impulse/chnn_models.h"
#include "impulse/chnn_systems.h"

#include <stdio.h>
#include <string.h>

int imp_csystem_from_csys(imp_csystem *cs, const imp_csys *s)
{
    if (!cs || !s) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    memset(cs, 0, sizeof *cs);
    cs->full = *s;
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
    int st = imp_chnn_system(&cs->full, name);
    if (st) return st;
    imp_csys s = cs->full;
    return imp_csystem_from_csys(cs, &s);
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
