/* impulse eval --model model.npz --data test.npz [--json] */
#include "cli.h"
#include "impulse/cdl.h"
#include "impulse/chnn_models.h"
#include "impulse/io.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cli_eval_usage(FILE *f)
{
    fprintf(f,
            "usage: impulse eval --model model.npz --data test.npz [options]\n"
            "  Rolls the model out from the noise-free first state of every test\n"
            "  trajectory over its whole length and compares with the noise-free truth.\n"
            "  --json              one JSON object on stdout (docs/json.md)\n"
            "CD-Lagrange strand (cdl, vin, resnet, resnet-contact models):\n"
            "  --touch-rollout     gate impulses with the observed contact signal\n"
            "  --projection        project impacts onto the walls in the rollouts (cdl with a contact\n"
            "                      network trained without --projection: no rollout ends a step inside)\n"
            "  --predictions FILE  write predicted states/contacts/energy to FILE (.npz; '-': standard\n"
            "                      output, the summary then goes to standard error)\n"
            "  rmse:      sqrt(mean over steps and state dimensions of the squared error)\n"
            "  rmse_code: the reference code's sqrt(sum over steps and dimensions, contact\n"
            "             column included, / steps)\n"
            "  energy error: mean |E_model(t) - E_data(t)| / max(|E_data(0)|, 1) along the data; energy\n"
            "             drift: max |E_model(t) - E_model(0)| / max(|E(0)|, 1), beside the data's own\n"
            "Constrained networks (chnn, clnn, hnn, delan, node models):\n"
            "  --n-test N          evaluate the first N trajectories (default all)\n"
            "  --steps T           roll out T steps, i.e. T+1 states with the start (default: the data's)\n"
            "  --rtol X            DOPRI5 tolerance (atol X/100)\n"
            "  --contact-rk4       chnn/clnn with contact: one RK4 step per sample interval (training's\n"
            "                      integrator) instead of DOPRI5 between the contact maps\n"
            "  --max-steps-per-sample N, --max-seconds S  budget of each rollout: N DOPRI5 steps per sample\n"
            "                      interval (default %d) and S seconds (default %g); a model that needs more\n"
            "                      (stiff or diverging) stops with an error naming it and the trajectory\n"
            "  geometric-mean relative error: exp of the trapezoid of log(error + 1e-8) over the T steps,\n"
            "             divided by (T + 1) dt as the reference notebooks\n",
            IMP_CEVAL_STEPS_PER_SAMPLE, IMP_CEVAL_MAX_SECONDS);
}

int cli_eval(int argc, char **argv)
{
    const char *model_path = NULL, *data_path = NULL, *pred_path = NULL;
    int json = 0, touch = 0, projection = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_eval_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--model") && i + 1 < argc) model_path = argv[i + 1];
    }
    if (!model_path) return cli_failf("eval", "missing --model FILE (see --help)");
    char kind[64];
    int constrained = 0;
    if (cli_checkpoint_kind(model_path, kind, sizeof kind, &constrained)) return cli_fail("eval");
    imp_model_kind mk;
    if (constrained || imp_model_kind_from_name(kind, &mk)) {
        imp_clear_error();
        int r = cli_eval_chnn(argc, argv, kind);
        if (r != CLI_NOT_MINE) return r;
        return cli_failf("eval", "%s: unknown model kind '%s'", model_path, kind);
    }
    static const struct option opts[] = {{"model", required_argument, 0, 'm'}, {"data", required_argument, 0, 'd'},
                                         {"json", no_argument, 0, 'j'},         {"touch-rollout", no_argument, 0, 't'},
                                         {"predictions", required_argument, 0, 'p'}, {"projection", no_argument, 0, 'P'},
                                         {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model_path = optarg; break;
        case 'd': data_path = optarg; break;
        case 'j': json = 1; break;
        case 't': touch = 1; break;
        case 'p': pred_path = optarg; break;
        case 'P': projection = 1; break;
        default: return cli_failf("eval", "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_failf("eval", "unexpected argument '%s'", argv[optind]);
    if (!data_path) return cli_failf("eval", "missing --data FILE");
    if (cli_json_check_output("eval", json, pred_path)) return 1;
    /* the summary goes to stderr when stdout holds the predictions */
    FILE *txt = pred_path && !strcmp(pred_path, "-") ? stderr : stdout;
    imp_model *m = NULL;
    imp_trajset test;
    if (imp_model_load(&m, model_path)) return cli_fail("eval");
    if (projection && imp_model_set_projection(m, 1)) {
        imp_model_free(m);
        return cli_fail("eval");
    }
    if (imp_trajset_load(&test, data_path)) {
        imp_model_free(m);
        return cli_fail("eval");
    }
    cli_note_widened("eval", data_path, test.widened_f32);
    double e_probe;
    if (imp_system_energy(test.system, &test.geom, test.gravity, test.length, test.q_clean, test.qdot_clean,
                          &e_probe))
        fprintf(stderr, "impulse eval: notice: energy drift not computed: %s\n", imp_last_error());
    else if (!imp_system_energy_known(test.system, test.geom.dim))
        fprintf(stderr, "impulse eval: notice: energy of %s: point masses, height the last coordinate (system '%s' "
                "is not one impulse simulates)\n", data_path, test.system);
    imp_clear_error();
    size_t N = (size_t)test.n_traj * test.n_steps;
    double *states = malloc(N * 2 * m->D * sizeof(double)), *contact = malloc(N * m->K * sizeof(double));
    double *energy = malloc(N * sizeof(double));
    imp_eval_result res;
    int st = states && contact && energy ? imp_model_evaluate(m, &test, touch, &res, states, contact, energy)
                                         : imp_fail(IMP_ERR_NOMEM, "eval: out of memory");
    double e_err = NAN, e_drift_data = NAN;
    if (!st && isfinite(res.energy_drift) && imp_eval_energy_error(&test, energy, &e_err, &e_drift_data))
        st = 1;
    if (!st && pred_path) {
        imp_npz *z = imp_npz_new();
        size_t shs[3] = {(size_t)test.n_traj, (size_t)test.n_steps, (size_t)(2 * m->D)};
        size_t shc[3] = {(size_t)test.n_traj, (size_t)test.n_steps, (size_t)m->K};
        size_t she[2] = {(size_t)test.n_traj, (size_t)test.n_steps};
        st = z ? imp_npz_add_f64(z, "states", 3, shs, states) : imp_fail(IMP_ERR_NOMEM, "out of memory");
        if (!st) st = imp_npz_add_f64(z, "contact", 3, shc, contact);
        if (!st) st = imp_npz_add_f64(z, "energy", 2, she, energy);
        if (!st) st = imp_npz_save(z, pred_path);
        imp_npz_free(z);
    }
    double min_gap[IMP_MAX_CONTACTS];
    if (!st) imp_contact_min_gaps(&m->geom, states, N, 2 * (size_t)m->D, min_gap);
    const double tol = m->cfg.contact_tol == IMP_CONTACT_TOL_AUTO ? 0.0 : m->cfg.contact_tol;
    if (!st) {
        if (json) {
            imp_json j;
            cli_json_begin(&j, "eval");
            imp_json_kv_string(&j, "model", kind);
            imp_json_kv_string(&j, "system", test.system);
            imp_json_kv_number(&j, "rmse", res.rmse);
            imp_json_kv_number(&j, "rmse_code", res.rmse_code);
            imp_json_kv_number(&j, "energy_drift", res.energy_drift);
            imp_json_kv_number(&j, "energy_drift_data", e_drift_data);
            imp_json_kv_number(&j, "energy_error", e_err);
            imp_json_kv_number(&j, "contact_timing_s", res.contact_timing);
            imp_json_kv_int(&j, "contacts_true", res.contacts_true);
            imp_json_kv_int(&j, "contacts_predicted", res.contacts_pred);
            imp_json_kv_int(&j, "contacts_missed", res.contacts_missed);
            imp_json_kv_int(&j, "trajectories", res.n_traj);
            imp_json_kv_int(&j, "steps", res.n_steps);
            imp_json_kv_int(&j, "touch_rollout", touch);
            imp_json_kv_int(&j, "projection", m->cfg.projection);
            if (mk == IMP_MODEL_CDL) cli_json_contact_law(&j, m);
            cli_contact_pairs(&m->geom, mk == IMP_MODEL_CDL ? m : NULL, tol, min_gap, &j, NULL);
            st = cli_json_print(&j, "eval");
        } else {
            fprintf(txt, "model %s on %s (%d trajectories x %d steps)\n", kind, test.system, res.n_traj, res.n_steps);
            fprintf(txt, "  rmse (paper)       %.6g (root mean square of the error in q and v over samples and "
                    "coordinates)\n  rmse (ref. code)   %.6g (the reference code's: squares summed over coordinates "
                    "and the contact column, mean over samples)\n", res.rmse, res.rmse_code);
            if (isfinite(res.energy_drift)) {
                /* the drift from E(0) means nothing on dissipative data: the
                 * error against the data's energy curve comes first */
                fprintf(txt, "  energy error       %.4g (mean |E_model(t) - E_data(t)| / max(|E_data(0)|, 1) along the "
                        "data)\n", e_err);
                fprintf(txt, "  energy drift       %.4g (max |E_model(t) - E_model(0)| / max(|E(0)|, 1); the data's "
                        "own: %.4g%s)\n", res.energy_drift, e_drift_data,
                        e_drift_data > 1e-3 ? ", they do not keep their energy: read the energy error" : "");
            } else {
                fprintf(txt, "  energy             n/a (see the notice above)\n");
            }
            if (isfinite(res.contact_timing)) {
                fprintf(txt, "  contact timing     %.4g s (from each true impact to the nearest predicted one; "
                       "%d true, %d predicted impacts",
                       res.contact_timing, res.contacts_true, res.contacts_pred);
                if (res.contacts_missed > 0)
                    fprintf(txt, "; %d true with no prediction for their body", res.contacts_missed);
                fprintf(txt, ")\n");
            } else {
                fprintf(txt, "  contact timing     n/a (%d true, %d predicted impacts)\n", res.contacts_true,
                       res.contacts_pred);
            }
            if (mk == IMP_MODEL_CDL && m->geom.n_pairs > 0) {
                double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
                imp_model_get_contact_law(m, e, mu);
                fprintf(txt, "  restitution        ");
                for (int p = 0; p < m->geom.n_pairs; p++) fprintf(txt, "%s%.4g", p ? " " : "", e[p]);
                fprintf(txt, " (%s, per contact pair)\n", m->cfg.learn_restitution ? "learned" : "fixed");
                if (m->cfg.friction) {
                    fprintf(txt, "  friction (mu)      ");
                    for (int p = 0; p < m->geom.n_pairs; p++)
                        fprintf(txt, "%s%.4g", p ? " " : "", imp_contact_pair_has_tangent(&m->geom, p) ? mu[p] : NAN);
                    fprintf(txt, " (learned, per contact pair; nan: the pair cannot slide)\n");
                }
            }
            if (mk == IMP_MODEL_CDL) cli_contact_pairs(&m->geom, m, tol, min_gap, NULL, txt);
        }
    }
    free(states), free(contact), free(energy);
    imp_model_free(m);
    imp_trajset_free(&test);
    return st ? cli_fail("eval") : 0;
}
