/* Energy lost at impacts along trajectories, the truth's against a model's
 * (issue #25's acceptance "at impacts, the energy lost matches the truth's
 * within 5 %"). Both are measured with the true energy H = 1/2 v^T M v +
 * V(x) of the system, so a learned model's own energy plays no part: what
 * is compared is the state the model reaches across each impact. */
#include "impulse/constrained_contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void imp_impact_energy_opts_default(imp_impact_energy_opts *o)
{
    if (!o) return;
    o->threshold = 1e-4;
    o->window = 0;
    o->one_step = 0;
}

int imp_csys_impact_energy(const imp_csys *s, const double *truth, const double *model, int n_traj, int T,
                           const imp_impact_energy_opts *opts, imp_impact_energy *out, double *truth_loss,
                           double *model_loss, int cap)
{
    if (!s || !truth || !model || !out) return imp_fail(IMP_ERR_INVALID, "impact energy: NULL");
    if (n_traj < 1) return imp_fail(IMP_ERR_INVALID, "impact energy: trajectories %d must be >= 1", n_traj);
    if (T < 2) return imp_fail(IMP_ERR_INVALID, "impact energy: T %d states must be >= 2", T);
    imp_impact_energy_opts o;
    imp_impact_energy_opts_default(&o);
    if (opts) o = *opts;
    if (!(o.threshold > 0) || !isfinite(o.threshold))
        return imp_fail(IMP_ERR_INVALID, "impact energy: threshold %g must be > 0", o.threshold);
    if (o.window < 0 || o.window > T)
        return imp_fail(IMP_ERR_INVALID, "impact energy: window %d must be in [0, %d]", o.window, T);
    if ((truth_loss || model_loss) && cap < 0) return imp_fail(IMP_ERR_INVALID, "impact energy: cap %d < 0", cap);
    int N = imp_csys_ndof(s);
    size_t len = (size_t)n_traj * T * 2 * N;
    int st = imp_check_finite(truth, len, "impact energy: truth");
    if (!st) st = imp_check_finite(model, len, "impact energy: model");
    if (st) return st;
    double *Ht = malloc(2 * (size_t)T * sizeof(double)), *Hm = Ht ? Ht + T : NULL;
    if (!Ht) return imp_fail(IMP_ERR_NOMEM, "impact energy: buffers");
    memset(out, 0, sizeof *out);
    double sum_rel = 0;
    for (int i = 0; i < n_traj; i++) {
        const double *zt = truth + (size_t)i * T * 2 * N, *zm = model + (size_t)i * T * 2 * N;
        double kmax = 0;
        for (int k = 0; k < T; k++) {
            const double *a = zt + (size_t)k * 2 * N, *b = zm + (size_t)k * 2 * N;
            Ht[k] = imp_csys_energy(s, a, a + N);
            Hm[k] = imp_csys_energy(s, b, b + N);
            kmax = fmax(kmax, Ht[k] - imp_csys_potential(s, a));
        }
        double thr = fmax(o.threshold * kmax, 1e-300);
        int w = o.one_step ? 0 : o.window;
        for (int k = 0; k + 1 < T; k++) {
            if (!(Ht[k] - Ht[k + 1] > thr)) continue;
            /* an impact in step k -> k+1; with a window, impact steps whose
             * windows overlap make one event */
            int a = k - w < 0 ? 0 : k - w, b = k + 1 + w > T - 1 ? T - 1 : k + 1 + w;
            for (int j = k + 1; j + 1 < T && j - w <= b; j++)
                if (Ht[j] - Ht[j + 1] > thr) {
                    k = j;
                    b = j + 1 + w > T - 1 ? T - 1 : j + 1 + w;
                }
            double lt = Ht[a] - Ht[b];
            double lm = o.one_step ? Ht[a] - Hm[b] : Hm[a] - Hm[b];
            double rel = fabs(lm - lt) / lt;
            if (truth_loss && out->impacts < cap) truth_loss[out->impacts] = lt;
            if (model_loss && out->impacts < cap) model_loss[out->impacts] = lm;
            out->impacts++;
            out->truth_lost += lt;
            out->model_lost += lm;
            sum_rel += rel;
            out->max_rel_error = fmax(out->max_rel_error, rel);
            if (rel <= 0.05) out->within_5pct++;
        }
    }
    if (out->impacts > 0) {
        out->mean_rel_error = sum_rel / out->impacts;
        out->rel_error = fabs(out->model_lost - out->truth_lost) / out->truth_lost;
    }
    free(Ht);
    return IMP_OK;
}
