/* The restarted bounded NLopt search of the rigid-body fits (nlopt_restarts.h). */
#include "nlopt_restarts.h"

#include <math.h>
#include <string.h>

double imp_nlopt_restarts(nlopt_algorithm alg, unsigned dim, const double *lo, const double *hi, const double *step0,
                          nlopt_func f, void *ctx, const int *evals, int max_evals, double *best_x, int *failed)
{
    double best_f = 1e30;
    *failed = 0;
    if (dim == 0 || dim > 8) {
        *failed = 1;
        return best_f;
    }
    for (unsigned i = 0; i < dim; i++) best_x[i] = fmin(fmax(best_x[i], lo[i]), hi[i]);
    for (int restart = 0; restart < 4 && *evals + (int)dim + 1 < max_evals; restart++) {
        nlopt_opt opt = nlopt_create(alg, dim);
        if (!opt) {
            *failed = 1;
            break;
        }
        double step[8], tol[8], x[8], fx = 1e30;
        for (unsigned i = 0; i < dim; i++) {
            /* a step may not leave the box (BOBYQA needs the start's trust region inside it) */
            step[i] = fmin(step0[i] / (1 << (2 * restart)), 0.5 * (hi[i] - lo[i]));
            tol[i] = 1e-3 * step[i];
            x[i] = best_x[i];
        }
        nlopt_set_lower_bounds(opt, lo);
        nlopt_set_upper_bounds(opt, hi);
        nlopt_set_initial_step(opt, step);
        nlopt_set_xtol_abs(opt, tol);
        nlopt_set_maxeval(opt, max_evals - *evals);
        nlopt_set_min_objective(opt, f, ctx);
        nlopt_result r = nlopt_optimize(opt, x, &fx);
        nlopt_destroy(opt);
        if (r < 0 && r != NLOPT_ROUNDOFF_LIMITED) break;
        if (fx < best_f) best_f = fx, memcpy(best_x, x, dim * sizeof *x);
    }
    return best_f;
}
