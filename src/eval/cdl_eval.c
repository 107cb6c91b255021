/* Evaluation of the CD-Lagrange strand's models by rollout from the
 * noise-free first state over each whole trajectory (as the reference code):
 * RMSE in two definitions, true energy of the prediction, contact timing. */
#include "impulse/cdl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rising edges of a body's contact signal are impact events. For each true
 * event, the nearest predicted event of the same body (in steps). */
static void timing(const double *truth, const double *pred, int T, int K, double dt, double *sum_abs,
                   int *n_true, int *n_pred, int *missed)
{
    for (int k = 0; k < K; k++) {
        for (int t = 1; t < T; t++) {
            if (pred[(size_t)t * K + k] >= 0.5 && pred[(size_t)(t - 1) * K + k] < 0.5) (*n_pred)++;
            if (!(truth[(size_t)t * K + k] >= 0.5 && truth[(size_t)(t - 1) * K + k] < 0.5)) continue;
            (*n_true)++;
            int best = -1;
            for (int s = 1; s < T; s++)
                if (pred[(size_t)s * K + k] >= 0.5 && pred[(size_t)(s - 1) * K + k] < 0.5 &&
                    (best < 0 || abs(s - t) < abs(best - t)))
                    best = s;
            if (best < 0) (*missed)++;
            else *sum_abs += abs(best - t) * dt;
        }
    }
}

int imp_model_evaluate(const imp_model *m, const imp_trajset *test, int touch_at_rollout,
                       imp_eval_result *res, double *states_out, double *contacts_out,
                       double *energy_out)
{
    memset(res, 0, sizeof *res);
    if (test->geom.n_bodies != m->K || test->geom.dim != m->geom.dim)
        return imp_fail(IMP_ERR_SHAPE, "test data: %d bodies x %d dims, the model expects %d x %d",
                        test->geom.n_bodies, test->geom.dim, m->K, m->geom.dim);
    if (fabs(test->dt - m->dt) > 1e-12 * m->dt)
        return imp_fail(IMP_ERR_INVALID, "test data: dt %g differs from the model's %g", test->dt, m->dt);
    const int T = test->n_steps, D = m->D, K = m->K, S = 2 * D;
    double *states = malloc((size_t)T * S * sizeof(double));
    double *contact = malloc((size_t)T * K * sizeof(double));
    double *x0 = malloc((size_t)S * sizeof(double));
    if (!states || !contact || !x0) {
        free(states), free(contact), free(x0);
        return imp_fail(IMP_ERR_NOMEM, "evaluation: out of memory");
    }
    int st = IMP_OK;
    double se_sum = 0.0, code_sum = 0.0, timing_sum = 0.0, drift = 0.0;
    int has_energy = 1;
    for (int n = 0; n < test->n_traj && !st; n++) {
        size_t base = (size_t)n * T;
        const double *qc = test->q_clean + base * D, *vc = test->qdot_clean + base * D;
        const double *cc = test->contact + base * K;
        memcpy(x0, qc, D * sizeof(double));
        memcpy(x0 + D, vc, D * sizeof(double));
        st = imp_model_rollout(m, x0, T, touch_at_rollout ? cc : NULL, states, contact);
        if (st) {
            imp_fail_context(st, "evaluation of the %s model on trajectory %d", imp_model_kind_name(m->cfg.kind), n + 1);
            break;
        }
        for (size_t q = 0; q < (size_t)T * S; q++)
            if (!isfinite(states[q])) {
                st = imp_fail(IMP_ERR_NUMERIC, "evaluation: the %s model's rollout of trajectory %d is not finite "
                              "at step %zu (it overflows)", imp_model_kind_name(m->cfg.kind), n + 1, q / (size_t)S);
                break;
            }
        if (st) break;
        double e0 = 0.0;
        for (int t = 0; t < T; t++) {
            double row = 0.0;
            for (int i = 0; i < D; i++) {
                double eq = states[(size_t)t * S + i] - qc[(size_t)t * D + i];
                double ev = states[(size_t)t * S + D + i] - vc[(size_t)t * D + i];
                row += eq * eq + ev * ev;
            }
            se_sum += row;
            for (int k = 0; k < K; k++) {
                double ec = contact[(size_t)t * K + k] - cc[(size_t)t * K + k];
                row += ec * ec;
            }
            code_sum += row;
            double e = NAN;
            if (has_energy &&
                imp_system_energy(test->system, &test->geom, test->gravity, test->length,
                                  states + (size_t)t * S, states + (size_t)t * S + D, &e) != IMP_OK) {
                has_energy = 0;
                e = NAN;
                imp_clear_error();
            }
            if (t == 0) e0 = e;
            if (has_energy) {
                double dr = fabs(e - e0) / fmax(fabs(e0), 1.0);
                if (dr > drift || !isfinite(dr)) drift = dr;
            }
            if (energy_out) energy_out[base + t] = e;
        }
        timing(cc, contact, T, K, test->dt, &timing_sum, &res->contacts_true, &res->contacts_pred,
               &res->contacts_missed);
        if (states_out) memcpy(states_out + base * S, states, (size_t)T * S * sizeof(double));
        if (contacts_out) memcpy(contacts_out + base * K, contact, (size_t)T * K * sizeof(double));
    }
    if (!st) {
        double NT = (double)test->n_traj * T;
        res->rmse = sqrt(se_sum / (NT * S));
        res->rmse_code = sqrt(code_sum / NT);
        res->energy_drift = has_energy ? drift : NAN;
        int found = res->contacts_true - res->contacts_missed;
        res->contact_timing = found > 0 ? timing_sum / found : NAN;
        res->n_traj = test->n_traj;
        res->n_steps = T;
        /* finite states can still overflow the sums or the energy */
        if (!isfinite(res->rmse) || !isfinite(res->rmse_code))
            st = imp_fail(IMP_ERR_NUMERIC, "evaluation: the %s model's RMSE is not finite (its rollout overflows)",
                          imp_model_kind_name(m->cfg.kind));
        else if (has_energy && !isfinite(drift))
            st = imp_fail(IMP_ERR_NUMERIC, "evaluation: the %s model's energy is not finite (its rollout overflows)",
                          imp_model_kind_name(m->cfg.kind));
    }
    free(states), free(contact), free(x0);
    return st;
}

int imp_eval_energy_error(const imp_trajset *test, const double *energy_pred, double *error, double *drift_data)
{
    *error = *drift_data = NAN;
    const int T = test->n_steps, D = test->geom.n_bodies * test->geom.dim;
    double sum = 0.0, drift = 0.0;
    for (int n = 0; n < test->n_traj; n++) {
        size_t base = (size_t)n * T;
        double e0 = 0.0;
        for (int t = 0; t < T; t++) {
            double e;
            int st = imp_system_energy(test->system, &test->geom, test->gravity, test->length,
                                       test->q_clean + (base + t) * D, test->qdot_clean + (base + t) * D, &e);
            if (st) return st;
            if (t == 0) e0 = e;
            double scale = fmax(fabs(e0), 1.0);
            sum += fabs(energy_pred[base + t] - e) / scale;
            drift = fmax(drift, fabs(e - e0) / scale);
        }
    }
    *error = sum / ((double)test->n_traj * T);
    *drift_data = drift;
    if (!isfinite(*error)) return imp_fail(IMP_ERR_NUMERIC, "evaluation: the energy error is not finite");
    return IMP_OK;
}
