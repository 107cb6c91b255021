/* Contact geometry of single-node bodies: the trajectory geometry's checks
 * and its .npz arrays. Its gaps, normals and velocities along them are the
 * contact module's detection (src/contact/collision.c, sec 1b of
 * docs/derivations/contact.md). */
#include "impulse/contact_systems.h"

#include "impulse/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int imp_contact_geometry_check(const imp_contact_geometry *g)
{
    if (g->n_bodies < 1 || g->n_bodies > IMP_MAX_BODIES)
        return imp_fail(IMP_ERR_INVALID, "n_bodies: %d is outside [1, %d]", g->n_bodies, IMP_MAX_BODIES);
    if (g->dim < 1 || g->dim > IMP_MAX_DIM)
        return imp_fail(IMP_ERR_INVALID, "dim: %d is outside [1, %d]", g->dim, IMP_MAX_DIM);
    for (int k = 0; k < g->n_bodies; k++)
        if (!(g->mass[k] > 0.0) || !isfinite(g->mass[k]))
            return imp_fail(IMP_ERR_INVALID, "masses[%d]: %g must be positive and finite", k, g->mass[k]);
    if (!isnan(g->restitution) && !(g->restitution >= 0.0 && g->restitution <= 1.0))
        return imp_fail(IMP_ERR_INVALID, "restitution: %g is outside [0, 1]", g->restitution);
    if (g->n_pairs < 0 || g->n_pairs > IMP_MAX_CONTACTS)
        return imp_fail(IMP_ERR_INVALID, "contact_pairs: %d pairs, at most %d", g->n_pairs, IMP_MAX_CONTACTS);
    for (int k = 0; g->has_radii && k < g->n_bodies; k++)
        if (!(g->radius[k] > 0.0) || !isfinite(g->radius[k]))
            return imp_fail(IMP_ERR_INVALID, "radii[%d]: %g must be positive and finite", k, g->radius[k]);
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        if (c->body_j < 0 || c->body_j >= g->n_bodies)
            return imp_fail(IMP_ERR_INVALID, "contact_pairs[%d]: body %d does not exist", p, c->body_j);
        if (c->body_i != IMP_WALL && (c->body_i < 0 || c->body_i >= g->n_bodies || c->body_i == c->body_j))
            return imp_fail(IMP_ERR_INVALID, "contact_pairs[%d]: body %d is not a valid partner", p, c->body_i);
        if (c->kind != IMP_PAIR_PLANE && c->kind != IMP_PAIR_SPHERE)
            return imp_fail(IMP_ERR_INVALID, "contact_kinds[%d]: %d is neither 0 (plane) nor 1 (sphere)", p, c->kind);
        double nn = 0.0;
        for (int a = 0; a < g->dim; a++) nn += c->normal[a] * c->normal[a];
        if (c->kind == IMP_PAIR_SPHERE && !g->linearized) {
            if (c->body_i == IMP_WALL)
                return imp_fail(IMP_ERR_INVALID, "contact_kinds[%d]: a sphere pair joins two bodies, not a body and a wall", p);
            if (!g->has_radii)
                return imp_fail(IMP_ERR_INVALID, "contact_kinds[%d]: a sphere pair needs the bodies' radii (npz radii)", p);
            if (g->dim < 2)
                return imp_fail(IMP_ERR_INVALID, "contact_kinds[%d]: a sphere pair needs 2 or 3 coordinates per body, not %d", p, g->dim);
            if (nn != 0.0 || c->offset != 0.0)
                return imp_fail(IMP_ERR_INVALID, "contact_normals[%d]: a sphere pair's normal follows the centres: give a zero normal and offset", p);
            for (int a = 0; a < 2; a++)
                if (c->tangent[a] != 0.0 && g->dim > 2)
                    return imp_fail(IMP_ERR_INVALID, "contact_tangents[%d]: a sphere pair's tangent holds only its spin part (the first two components are 0)", p);
        } else if (!(fabs(nn - 1.0) < 1e-9))
            return imp_fail(IMP_ERR_INVALID, "contact_normals[%d]: not a unit vector (|n|^2 = %g)", p, nn);
        if (!isfinite(c->offset))
            return imp_fail(IMP_ERR_INVALID, "contact_offsets[%d]: not finite", p);
        for (int a = 0; a < g->dim; a++)
            if (!isfinite(c->tangent[a]))
                return imp_fail(IMP_ERR_INVALID, "contact_tangents[%d]: not finite", p);
        if (g->has_pair_law && !(g->pair_e[p] >= 0.0 && g->pair_e[p] <= 1.0))
            return imp_fail(IMP_ERR_INVALID, "contact_restitution[%d]: %g is outside [0, 1]", p, g->pair_e[p]);
        if (g->has_pair_law && (!(g->pair_mu[p] >= 0.0) || !isfinite(g->pair_mu[p])))
            return imp_fail(IMP_ERR_INVALID, "contact_friction[%d]: %g is not >= 0", p, g->pair_mu[p]);
    }
    return IMP_OK;
}

int imp_contact_pair_has_tangent(const imp_contact_geometry *g, int p)
{
    for (int a = 0; a < g->dim; a++)
        if (g->pairs[p].tangent[a] != 0.0) return 1;
    return 0;
}

void imp_contact_pair_compliance(const imp_contact_geometry *g, int p, double wsum, double W[4])
{
    const imp_contact_pair *c = &g->pairs[p];
    double tt = 0.0, tn = 0.0;
    for (int a = 0; a < g->dim; a++) {
        tt += c->tangent[a] * c->tangent[a];
        tn += c->tangent[a] * c->normal[a];
    }
    W[0] = wsum * tt;
    W[1] = W[2] = wsum * tn;
    W[3] = wsum; /* |n| = 1 */
}

int imp_contact_geometry_has_spheres(const imp_contact_geometry *g)
{
    for (int p = 0; p < g->n_pairs; p++)
        if (g->pairs[p].kind == IMP_PAIR_SPHERE) return 1;
    return 0;
}

int imp_contact_geometry_to_npz(const imp_contact_geometry *g, imp_npz *z)
{
    int K = g->n_bodies, d = g->dim, P = g->n_pairs;
    double normals[IMP_MAX_CONTACTS * IMP_MAX_DIM], offsets[IMP_MAX_CONTACTS];
    int64_t pairs[IMP_MAX_CONTACTS * 2];
    for (int p = 0; p < P; p++) {
        pairs[2 * p] = g->pairs[p].body_i;
        pairs[2 * p + 1] = g->pairs[p].body_j;
        offsets[p] = g->pairs[p].offset;
        for (int a = 0; a < d; a++) normals[p * d + a] = g->pairs[p].normal[a];
    }
    size_t shm[1] = {(size_t)K}, shp[2] = {(size_t)P, 2}, shn[2] = {(size_t)P, (size_t)d},
           sho[1] = {(size_t)P};
    int st = imp_npz_add_f64(z, "masses", 1, shm, g->mass);
    if (!st) st = imp_npz_add_i64(z, "contact_pairs", 2, shp, pairs);
    if (!st) st = imp_npz_add_f64(z, "contact_normals", 2, shn, normals);
    if (!st) st = imp_npz_add_f64(z, "contact_offsets", 1, sho, offsets);
    int any_tangent = 0;
    double tangents[IMP_MAX_CONTACTS * IMP_MAX_DIM];
    for (int p = 0; p < P; p++)
        for (int a = 0; a < d; a++) {
            tangents[p * d + a] = g->pairs[p].tangent[a];
            any_tangent |= g->pairs[p].tangent[a] != 0.0;
        }
    if (!st && any_tangent) st = imp_npz_add_f64(z, "contact_tangents", 2, shn, tangents);
    if (!st && imp_contact_geometry_has_spheres(g)) {
        int64_t kinds[IMP_MAX_CONTACTS];
        for (int p = 0; p < P; p++) kinds[p] = g->pairs[p].kind;
        st = imp_npz_add_i64(z, "contact_kinds", 1, sho, kinds);
    }
    if (!st && g->has_radii) st = imp_npz_add_f64(z, "radii", 1, shm, g->radius);
    if (!st && g->has_pair_law) st = imp_npz_add_f64(z, "contact_restitution", 1, sho, g->pair_e);
    if (!st && g->has_pair_law) st = imp_npz_add_f64(z, "contact_friction", 1, sho, g->pair_mu);
    return st;
}

int imp_contact_geometry_from_npz(const imp_npz *z, const char *meta, imp_contact_geometry *g)
{
    memset(g, 0, sizeof *g);
    const double *masses;
    size_t shm[1];
    int st = imp_npz_get_f64(z, "masses", 1, NULL, &masses, shm);
    if (st) return st;
    if (shm[0] < 1 || shm[0] > IMP_MAX_BODIES)
        return imp_fail(IMP_ERR_SHAPE, "masses: %zu bodies, need 1..%d", shm[0], IMP_MAX_BODIES);
    g->n_bodies = (int)shm[0];
    memcpy(g->mass, masses, shm[0] * sizeof(double));
    int dim = 1;
    double e = 0;
    if ((st = imp_json_get_int(meta, "dim", 1, IMP_MAX_DIM, &dim))) return imp_fail_context(st, "meta");
    /* restitution is optional: unknown (NaN) when absent or null, then a
     * CD-Lagrange model has to learn it */
    if (imp_json_get_number(meta, "restitution", &e)) {
        e = NAN;
        imp_clear_error();
    }
    g->dim = dim;
    g->restitution = e;
    int64_t *pairs = NULL;
    size_t shp[2];
    st = imp_npz_get_i64_copy(z, "contact_pairs", 2, (size_t[]){0, 2}, &pairs, shp);
    if (st) return st;
    if (shp[0] > IMP_MAX_CONTACTS) {
        free(pairs);
        return imp_fail(IMP_ERR_SHAPE, "contact_pairs: %zu pairs, at most %d", shp[0], IMP_MAX_CONTACTS);
    }
    g->n_pairs = (int)shp[0];
    const double *normals = NULL, *offsets = NULL, *tangents = NULL;
    size_t P = shp[0];
    /* optional: radii (K) and pair kinds (P) */
    if (imp_npz_find(z, "radii")) {
        const double *radii = NULL;
        st = imp_npz_get_f64(z, "radii", 1, (size_t[]){shm[0]}, &radii, NULL);
        if (!st) g->has_radii = 1, memcpy(g->radius, radii, shm[0] * sizeof(double));
    }
    int64_t *kinds = NULL;
    if (!st && imp_npz_find(z, "contact_kinds")) st = imp_npz_get_i64_copy(z, "contact_kinds", 1, (size_t[]){P}, &kinds, NULL);
    for (size_t p = 0; !st && kinds && p < P; p++) {
        if (kinds[p] != IMP_PAIR_PLANE && kinds[p] != IMP_PAIR_SPHERE)
            st = imp_fail(IMP_ERR_INVALID, "contact_kinds[%zu]: %lld is neither 0 (plane) nor 1 (sphere)", p, (long long)kinds[p]);
        else
            g->pairs[p].kind = (int)kinds[p];
    }
    free(kinds);
    if (st) {
        free(pairs);
        return st;
    }
    if (P > 0) {
        st = imp_npz_get_f64(z, "contact_normals", 2, (size_t[]){P, (size_t)g->dim}, &normals, NULL);
        if (!st) st = imp_npz_get_f64(z, "contact_offsets", 1, (size_t[]){P}, &offsets, NULL);
        /* optional: tangents of pairs that can slide (friction) */
        if (!st && imp_npz_find(z, "contact_tangents"))
            st = imp_npz_get_f64(z, "contact_tangents", 2, (size_t[]){P, (size_t)g->dim}, &tangents, NULL);
        /* optional: the true e and mu per pair, both or neither */
        int has_e = imp_npz_find(z, "contact_restitution") != NULL, has_mu = imp_npz_find(z, "contact_friction") != NULL;
        if (!st && has_e != has_mu)
            st = imp_fail(IMP_ERR_FORMAT, "%s: given without %s (the true e and mu per pair come together)",
                          has_e ? "contact_restitution" : "contact_friction",
                          has_e ? "contact_friction" : "contact_restitution");
        const double *pe = NULL, *pm = NULL;
        if (!st && has_e) st = imp_npz_get_f64(z, "contact_restitution", 1, (size_t[]){P}, &pe, NULL);
        if (!st && has_e) st = imp_npz_get_f64(z, "contact_friction", 1, (size_t[]){P}, &pm, NULL);
        if (!st && has_e) {
            g->has_pair_law = 1;
            memcpy(g->pair_e, pe, P * sizeof(double));
            memcpy(g->pair_mu, pm, P * sizeof(double));
        }
    }
    for (size_t p = 0; !st && p < P; p++) {
        if (pairs[2 * p] < IMP_WALL || pairs[2 * p] >= IMP_MAX_BODIES || pairs[2 * p + 1] < 0 ||
            pairs[2 * p + 1] >= IMP_MAX_BODIES) {
            st = imp_fail(IMP_ERR_INVALID, "contact_pairs[%zu]: bodies (%lld, %lld) out of range", p,
                          (long long)pairs[2 * p], (long long)pairs[2 * p + 1]);
            break;
        }
        g->pairs[p].body_i = (int)pairs[2 * p];
        g->pairs[p].body_j = (int)pairs[2 * p + 1];
        g->pairs[p].offset = offsets[p];
        for (int a = 0; a < g->dim; a++) g->pairs[p].normal[a] = normals[p * (size_t)g->dim + a];
        if (tangents)
            for (int a = 0; a < g->dim; a++) g->pairs[p].tangent[a] = tangents[p * (size_t)g->dim + a];
    }
    free(pairs);
    if (!st) st = imp_contact_geometry_check(g);
    return st;
}

