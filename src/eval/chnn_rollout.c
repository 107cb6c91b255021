/* One prediction of a constrained-network model: DOPRI5 from a Cartesian
 * start, in the model's own coordinates, mapped back to Cartesian (x, v). */
#include "impulse/chnn_models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int imp_crollout(const imp_cmodel *m, const double *params, const double *xv0, int n_steps, double dt,
                 const imp_ceval_opts *o, double *out)
{
    if (!m || !params || !xv0 || !out) return imp_fail(IMP_ERR_INVALID, "rollout: NULL argument");
    if (n_steps < 1) return imp_fail(IMP_ERR_INVALID, "steps: %d must be >= 1", n_steps);
    if (!(dt > 0) || !isfinite(dt)) return imp_fail(IMP_ERR_INVALID, "dt: %g must be positive", dt);
    const imp_csystem *cs = &m->sys;
    int cdim = 2 * cs->n_points * cs->d, dim = m->dim, T = n_steps + 1;
    int st = imp_check_finite(xv0, (size_t)cdim, "initial state");
    if (st) return st;
    imp_ceval_opts dflt;
    imp_ceval_opts_default(&dflt);
    if (!o) o = &dflt;
    double *y = malloc((size_t)T * dim * sizeof(double)), *t = malloc((size_t)T * sizeof(double));
    imp_cmodel_work *w = imp_cmodel_work_new(m, 1);
    if (!y || !t || !w) {
        st = imp_fail(IMP_ERR_NOMEM, "rollout: out of memory");
        goto done;
    }
    if (m->cartesian) memcpy(y, xv0, (size_t)cdim * sizeof(double));
    else if ((st = imp_csystem_to_generalised(cs, xv0, y))) goto done;
    for (int k = 0; k < T; k++) t[k] = k * dt;
    imp_cmodel_binding bind = {m, params, w};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    imp_dopri5_opts dop = {o->rtol > 0 ? o->rtol : dflt.rtol, o->atol > 0 ? o->atol : dflt.atol, 0.0, 0};
    double y0[2 * IMP_CSYS_MAX_POINTS * 3];
    memcpy(y0, y, (size_t)dim * sizeof(double));
    if ((st = imp_dopri5_solve(&ode, &dop, 0.0, y0, 1, t, T, y, NULL))) {
        imp_fail_context(st, "rollout of %s", imp_cmodel_kind_name(m->kind));
        goto done;
    }
    for (int k = 0; k < T && !st; k++) {
        if (m->cartesian) memcpy(out + (size_t)k * cdim, y + (size_t)k * dim, (size_t)cdim * sizeof(double));
        else st = imp_csystem_from_generalised(cs, y + (size_t)k * dim, out + (size_t)k * cdim);
    }
done:
    free(y);
    free(t);
    imp_cmodel_work_free(w);
    return st;
}
