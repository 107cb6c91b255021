/* CLI entry points of the constrained-network strand ([F]): training and
 * evaluation of chnn, clnn, hnn, delan, node and resnet (the constrained
 * strand's ResNet when the data are a constrained system's; CD-Lagrange's
 * otherwise). */
#include "cli.h"
#include "impulse/chnn_models.h"
#include "impulse/constrained.h"
#include "impulse/constrained_contact.h"
#include "impulse/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_mine(const char *model)
{
    imp_cmodel_kind k;
    int mine = model && !imp_cmodel_kind_from_name(model, &k);
    imp_clear_error();
    return mine;
}

/* `impulse train resnet` is the constrained strand's when --data holds a
 * constrained system's trajectories (its meta names one), else CD-Lagrange's. */
static int train_is_mine(int argc, char **argv, const char *model)
{
    if (!is_mine(model)) return 0;
    if (strcmp(model, "resnet")) return 1;
    const char *data = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--data")) data = argv[i + 1];
    imp_npz *z = NULL;
    imp_csystem cs;
    int mine = data && !imp_npz_load(&z, data) && imp_npz_meta(z) && !imp_csystem_from_meta(&cs, imp_npz_meta(z), data);
    imp_npz_free(z);
    imp_clear_error();
    return mine;
}

static void train_usage(FILE *f)
{
    fprintf(f, "usage: impulse train chnn|clnn|hnn|delan|node|resnet --data data.npz -o model.npz [options]\n"
               "  resnet         (on a constrained system's data) next state = state + dt MLP(state):\n"
               "                 node's network and inputs, one step per sample interval, in training\n"
               "                 and in rollouts\n"
               "  --epochs E     training epochs (reference 2000; default 2000; 0 checks the data and writes nothing)\n"
               "  --lr X         AdamW learning rate, cosine schedule to 0 (the reference's: 1e-3 for\n"
               "                 rotor and magnet-pendulum, 3e-3 otherwise)\n"
               "  --wd X         AdamW weight decay (1e-4)\n"
               "  --batch B      minibatch size (200)\n"
               "  --chunks N     training chunks (at most; 800)\n"
               "  --windows W    one: one random 5-state window per trajectory, the first N\n"
               "                 trajectories (the reference; default); all: every non-overlapping\n"
               "                 window of every trajectory in order, the first N of them (for a\n"
               "                 few long trajectories)\n"
               "  --warmup S     linear learning-rate warm-up over the first S optimiser steps\n"
               "                 (default 20 for hnn, delan, node, resnet; 0 for chnn, clnn)\n"
               "  --clip X       largest L2 norm of a minibatch gradient, 0 = no clipping\n"
               "                 (default 1 for hnn, delan, node, resnet; 0 for chnn, clnn)\n"
               "  --max-substeps R  most RK4 substeps per sample interval of a window whose data\n"
               "                 move more than 1 rad (or 1 unit) per interval: such a window\n"
               "                 gets ceil(max|qdot| dt) steps of dt/that (default 64; 1 = never)\n"
               "  --skip-factor X  spike filter (default off): from epoch 2 on, a minibatch whose\n"
               "                 loss exceeds X times the best epoch's mean, or whose rollout\n"
               "                 overflows, is skipped instead of stepped (X > 1)\n"
               "  --contact      chnn, clnn: learn the system's contacts (e and mu per contact; the\n"
               "                 impulse through the learned constrained mass after each step);\n"
               "                 the default when the system declares contacts\n"
               "  --no-contact   chnn, clnn: the flow alone, contacts ignored (the comparison)\n"
               "  --contact-substeps R  with contact: a window whose data come near a contact (a\n"
               "                 gap at most 2 dt |normal velocity| at some state) is integrated\n"
               "                 with R RK4 substeps per interval, each followed by the contact\n"
               "                 map (default %d; 1 = one step and one map per sample everywhere)\n"
               "  --hidden H     MLP width (256; 3 hidden layers)\n"
               "  --seed K       initialisation and chunk sampling seed (0)\n"
               "  --threads N    threads per minibatch, 1..64 (default 2): each takes a contiguous\n"
               "                 slice of the batch; the same N and seed give bit-identical results,\n"
               "                 another N agrees to rounding (~1e-12)\n"
               "  --precision P  auto (default), single or double: single runs the network's\n"
               "                 hidden-to-hidden products in float (sgemm), everything else\n"
               "                 double; auto is single for chnn (its 2000-epoch accuracy was\n"
               "                 measured to hold, docs/chnn.md) and double for the others\n"
               "  --quiet        no progress lines\n"
               CLI_RUN_USAGE,
            IMP_CTRAIN_CONTACT_SUBSTEPS);
}

/* e and mu per contact, learned and declared (the truth of a simulated system). */
static void cli_chnn_contact_json(imp_json *j, const imp_cmodel *m, const double *params)
{
    const imp_csys *s = &m->sys.full;
    double e[IMP_CSYS_MAX_CONTACTS], mu[IMP_CSYS_MAX_CONTACTS];
    imp_cmodel_contact_values(m, params, e, mu);
    imp_json_key(j, "contacts");
    imp_json_begin_array(j);
    for (int c = 0; c < s->n_contacts; c++) {
        imp_json_begin_object(j);
        imp_json_kv_int(j, "contact", c);
        char name[2 * 32 + 2]; /* two body (plane) names, imp_cbody.name */
        imp_csys_contact_name(s, c, name, sizeof name);
        imp_json_kv_string(j, "name", name);
        imp_json_kv_string(j, "body", s->bodies[s->contacts[c].body].name);
        if (s->contacts[c].other >= 0) imp_json_kv_string(j, "other", s->bodies[s->contacts[c].other].name);
        else imp_json_kv_string(j, "plane", s->planes[s->contacts[c].plane].name);
        imp_json_kv_number(j, "e", e[c]);
        imp_json_kv_number(j, "mu", mu[c]);
        imp_json_kv_number(j, "e_declared", s->contacts[c].e);
        imp_json_kv_number(j, "mu_declared", s->contacts[c].mu);
        imp_json_end_object(j);
    }
    imp_json_end_array(j);
}

static void cli_chnn_contact_print(FILE *f, const imp_cmodel *m, const double *params)
{
    const imp_csys *s = &m->sys.full;
    double e[IMP_CSYS_MAX_CONTACTS], mu[IMP_CSYS_MAX_CONTACTS];
    imp_cmodel_contact_values(m, params, e, mu);
    for (int c = 0; c < s->n_contacts; c++) {
        char name[2 * 32 + 2]; /* two body (plane) names, imp_cbody.name */
        imp_csys_contact_name(s, c, name, sizeof name);
        fprintf(f, "  contact %d (%s): e %.4f, mu %.4f (declared e %g, mu %g)\n", c, name, e[c], mu[c],
                s->contacts[c].e, s->contacts[c].mu);
    }
}

typedef struct save_ctx {
    const imp_cmodel *m;
    const double *params;
    const imp_ctrain_opts *o;
    const imp_ctrain_result *res;
} save_ctx;

static int save_cmodel(const char *path, void *ctx)
{
    save_ctx *c = ctx;
    return imp_cmodel_save(path, c->m, c->params, c->o, c->res);
}

int cli_train_chnn(int argc, char **argv, const char *model)
{
    if (!train_is_mine(argc, argv, model)) return CLI_NOT_MINE;
    const char *verb = "train";
    const char *data_path = NULL, *out_path = NULL;
    imp_ctrain_opts o;
    imp_ctrain_opts_default(&o);
    o.threads = CLI_DEFAULT_THREADS;
    long hidden = 256;
    int lr_given = 0;
    int quiet = 0, json = 0, contact = -1; /* -1: when the system declares contacts */
    cli_run_opts ro;
    cli_run_opts_default(&ro);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        long lv;
        double dv;
        int r = cli_run_option(&ro, verb, a, val);
        if (r < 0) return 1;
        if (r > 0) {
            i++;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            train_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--contact") || !strcmp(a, "--no-contact")) {
            contact = !strcmp(a, "--contact");
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, model) || !strcmp(a, "--model")) {
            if (!strcmp(a, "--model")) i++;
            continue;
        } else if (!strcmp(a, "--data")) {
            data_path = val;
            i++;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            out_path = val;
            i++;
        } else if (!strcmp(a, "--epochs")) {
            if (cli_parse_long(a, val, 0, 1000000, &lv)) return cli_fail(verb);
            o.epochs = (int)lv;
            i++;
        } else if (!strcmp(a, "--batch")) {
            if (cli_parse_long(a, val, 1, 100000, &lv)) return cli_fail(verb);
            o.batch = (int)lv;
            i++;
        } else if (!strcmp(a, "--chunks")) {
            if (cli_parse_long(a, val, 1, 100000000, &lv)) return cli_fail(verb);
            o.n_chunks = (int)lv;
            i++;
        } else if (!strcmp(a, "--hidden")) {
            if (cli_parse_long(a, val, 1, 4096, &hidden)) return cli_fail(verb);
            i++;
        } else if (!strcmp(a, "--seed")) {
            if (cli_parse_long(a, val, 0, 2147483647L, &lv)) return cli_fail(verb);
            o.seed = (unsigned long long)lv;
            i++;
        } else if (!strcmp(a, "--lr")) {
            if (cli_parse_double(a, val, 1e-12, 10.0, &dv)) return cli_fail(verb);
            o.lr = dv;
            lr_given = 1;
            i++;
        } else if (!strcmp(a, "--threads")) {
            if (cli_parse_long(a, val, 1, CLI_MAX_THREADS, &lv)) return cli_fail(verb);
            o.threads = (int)lv;
            i++;
        } else if (!strcmp(a, "--precision")) {
            if (val && !strcmp(val, "auto")) o.single_products = -1;
            else if (val && (!strcmp(val, "single") || !strcmp(val, "double"))) o.single_products = !strcmp(val, "single");
            else {
                imp_fail(IMP_ERR_INVALID, "%s: '%s', want auto, single or double", a, val ? val : "(missing)");
                return cli_fail(verb);
            }
            i++;
        } else if (!strcmp(a, "--warmup")) {
            if (cli_parse_long(a, val, 0, 100000000, &lv)) return cli_fail(verb);
            o.warmup_steps = (int)lv;
            i++;
        } else if (!strcmp(a, "--clip")) {
            if (cli_parse_double(a, val, 0.0, 1e300, &dv)) return cli_fail(verb);
            o.grad_clip = dv;
            i++;
        } else if (!strcmp(a, "--max-substeps")) {
            if (cli_parse_long(a, val, 1, IMP_CTRAIN_MAX_SUBSTEPS, &lv)) return cli_fail(verb);
            o.max_substeps = (int)lv;
            i++;
        } else if (!strcmp(a, "--contact-substeps")) {
            if (cli_parse_long(a, val, 1, IMP_CTRAIN_MAX_SUBSTEPS, &lv)) return cli_fail(verb);
            o.contact_substeps = (int)lv;
            i++;
        } else if (!strcmp(a, "--skip-factor")) {
            if (cli_parse_double(a, val, 1.0, 1e300, &dv)) return cli_fail(verb);
            o.skip_factor = dv;
            i++;
        } else if (!strcmp(a, "--windows")) {
            if (!val || (strcmp(val, "one") && strcmp(val, "all")))
                return cli_failf(verb, "--windows: '%s' must be 'one' or 'all'", val ? val : "");
            o.all_windows = !strcmp(val, "all");
            i++;
        } else if (!strcmp(a, "--wd")) {
            if (cli_parse_double(a, val, 0.0, 10.0, &dv)) return cli_fail(verb);
            o.weight_decay = dv;
            i++;
        } else {
            return cli_failf(verb, "unknown option '%s' (see impulse train %s --help)", a, model);
        }
    }
    if (!data_path) return cli_failf(verb, "--data: missing (trajectory file from impulse simulate)");
    if (!out_path) return cli_failf(verb, "-o: missing (checkpoint path)");
    if (cli_json_check_output(verb, json, out_path)) return 1;
    imp_cmodel_kind kind;
    if (imp_cmodel_kind_from_name(model, &kind)) return cli_fail(verb);
    imp_ctraj cart, gen;
    memset(&gen, 0, sizeof gen);
    imp_csystem cs;
    if (imp_ctraj_load(data_path, &cart, &cs)) return cli_fail(verb);
    cli_note_widened(verb, data_path, cart.widened_f32);
    const char *sysname = cs.name;
    imp_cmodel m;
    double *params = NULL;
    if (!lr_given) o.lr = imp_ctrain_reference_lr(cs.name);
    int st = imp_cmodel_init(&m, kind, &cs, (int)hidden, 3);
    if (!st && contact == 1 && !m.cartesian)
        st = imp_fail(IMP_ERR_INVALID, "--contact: only chnn and clnn learn contacts (not %s)", model);
    if (!st && contact == 1 && cs.full.n_contacts == 0)
        st = imp_fail(IMP_ERR_INVALID, "--contact: system '%s' declares no contacts (plane and contact lines)",
                      cs.name);
    if (!st && contact != 0 && m.cartesian && cs.full.n_contacts > 0) st = imp_cmodel_enable_contact(&m);
    if (!st && !m.cartesian) st = imp_ctraj_to_generalised(&cs, &cart, &gen);
    if (st) {
        imp_ctraj_free(&cart);
        return cli_fail(verb);
    }
    params = malloc(m.n_params * sizeof(double));
    if (!params) {
        imp_ctraj_free(&cart);
        imp_ctraj_free(&gen);
        return cli_failf(verb, "out of memory");
    }
    imp_rng rng;
    imp_rng_seed(&rng, o.seed ^ 0x5eedULL);
    imp_cmodel_init_params(&m, params, &rng);
    imp_cmodel_init_contact_params(&m, params);
    cli_run run;
    if (cli_run_open(&run, verb, out_path, ro.log, ro.resume, quiet)) {
        imp_ctraj_free(&cart);
        imp_ctraj_free(&gen);
        free(params);
        return 1;
    }
    imp_train_report rep = {0};
    cli_run_hooks(&ro, &run, &o.hooks, &rep, o.epochs);
    imp_ctrain_result res;
    memset(&res, 0, sizeof res);
    st = imp_ctrain(&m, params, m.cartesian ? &cart : &gen, &o, &res);
    if (res.substepped_windows > res.contact_windows && !quiet)
        fprintf(stderr, "impulse train: %d of the training windows move more than 1 %s per sample interval: "
                        "integrated with up to %d RK4 substeps per interval\n",
                res.substepped_windows - res.contact_windows, m.cartesian ? "unit" : "rad", res.max_substeps);
    if (res.contact_windows > 0 && !quiet)
        fprintf(stderr, "impulse train: %d of the training windows come near a contact: integrated with %d RK4 "
                        "substeps per interval, each followed by the contact map\n",
                res.contact_windows, imp_ctrain_contact_substeps(&m, &o));
    if (res.skipped_batches > 0 && !quiet)
        fprintf(stderr, "impulse train: the spike filter skipped %d minibatch%s (loss above %g times the best "
                        "epoch's mean, or not finite)\n",
                res.skipped_batches, res.skipped_batches == 1 ? "" : "es", o.skip_factor);
    save_ctx sc = {&m, params, &o, &res};
    int rc = cli_run_finish(&run, st, &rep, save_cmodel, &sc);
    cli_run_close(&run);
    imp_ctraj_free(&cart);
    imp_ctraj_free(&gen);
    if (rc) {
        free(params);
        return rc;
    }
    if (json) {
        imp_json j;
        cli_run_json(&j, &run, &rep, model, sysname);
        imp_json_kv_int(&j, "parameters", (long long)m.n_params);
        imp_json_kv_int(&j, "threads", o.threads);
        imp_json_kv_string(&j, "precision", imp_ctrain_single_products(&m, &o) ? "single" : "double");
        imp_json_kv_int(&j, "substepped_windows", res.substepped_windows);
        imp_json_kv_int(&j, "max_substeps", res.max_substeps);
        imp_json_kv_int(&j, "skipped_batches", res.skipped_batches);
        if (m.contact) {
            imp_json_kv_int(&j, "contact_substeps", imp_ctrain_contact_substeps(&m, &o));
            imp_json_kv_int(&j, "contact_windows", res.contact_windows);
            cli_chnn_contact_json(&j, &m, params);
        }
        free(params);
        return cli_json_print(&j, verb);
    }
    if (m.contact && run.out) cli_chnn_contact_print(strcmp(out_path, "-") ? stdout : stderr, &m, params);
    free(params);
    if (!run.out) return 0; /* --epochs 0: said so */
    fprintf(strcmp(out_path, "-") ? stdout : stderr, "trained %s on %s: %d epochs, final loss %.6g, kept the %s model (epoch %d, loss %.6g), %.2f s (%.3f s/epoch, %d thread%s), %zu parameters -> %s\n",
           model, sysname, res.epochs, res.final_loss, cli_run_kept(&rep), rep.kept_epoch,
           rep.kept_epoch == rep.best_epoch ? rep.best_loss : rep.final_loss, res.seconds,
           res.epochs ? res.seconds / res.epochs : 0.0, o.threads, o.threads == 1 ? "" : "s", m.n_params, out_path);
    return 0;
}

/* One impact_energy entry of eval --json (imp_csys_impact_energy's result). */
static void cli_impact_energy_json(imp_json *j, const char *key, const imp_impact_energy *e)
{
    imp_json_key(j, key);
    imp_json_begin_object(j);
    imp_json_kv_int(j, "impacts", e->impacts);
    imp_json_kv_number(j, "truth_lost", e->truth_lost);
    imp_json_kv_number(j, "model_lost", e->model_lost);
    imp_json_kv_number(j, "rel_error", e->rel_error);
    imp_json_kv_number(j, "mean_rel_error", e->mean_rel_error);
    imp_json_kv_number(j, "max_rel_error", e->max_rel_error);
    imp_json_kv_int(j, "within_5pct", e->within_5pct);
    imp_json_end_object(j);
}

int cli_eval_chnn(int argc, char **argv, const char *model_kind)
{
    if (model_kind && !is_mine(model_kind)) return CLI_NOT_MINE;
    const char *verb = "eval";
    const char *model_path = NULL, *data_path = NULL;
    int json = 0;
    imp_ceval_opts eo;
    imp_ceval_opts_default(&eo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        long lv;
        double dv;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cli_eval_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--model")) {
            model_path = val;
            i++;
        } else if (!strcmp(a, "--data")) {
            data_path = val;
            i++;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--n-test")) {
            if (cli_parse_long(a, val, 1, 1000000, &lv)) return cli_fail(verb);
            eo.n_test = (int)lv;
            i++;
        } else if (!strcmp(a, "--steps")) {
            if (cli_parse_long(a, val, 1, 10000000, &lv)) return cli_fail(verb);
            eo.steps = (int)lv;
            i++;
        } else if (!strcmp(a, "--max-steps-per-sample")) {
            if (cli_parse_long(a, val, 1, 1000000, &lv)) return cli_fail(verb);
            eo.max_steps_per_sample = (int)lv;
            i++;
        } else if (!strcmp(a, "--max-seconds")) {
            if (cli_parse_double(a, val, 1e-3, 1e7, &dv)) return cli_fail(verb);
            eo.max_seconds = dv;
            i++;
        } else if (!strcmp(a, "--rtol")) {
            if (cli_parse_double(a, val, 1e-14, 1.0, &dv)) return cli_fail(verb);
            eo.rtol = dv;
            eo.atol = dv * 1e-2;
            i++;
        } else if (!strcmp(a, "--contact-rk4")) {
            eo.contact_rk4 = 1;
        } else {
            return cli_failf(verb, "unknown option '%s'", a);
        }
    }
    if (!model_path) return cli_failf(verb, "--model: missing");
    if (!data_path) return cli_failf(verb, "--data: missing");
    imp_cmodel m;
    double *params = NULL;
    if (imp_cmodel_load(model_path, &m, &params)) return cli_fail(verb);
    imp_ctraj test;
    imp_csystem cs;
    if (imp_ctraj_load(data_path, &test, &cs)) {
        free(params);
        return cli_fail(verb);
    }
    cli_note_widened(verb, data_path, test.widened_f32);
    char why[800];
    if (!imp_csystem_same(&cs, &m.sys, why, sizeof why)) {
        free(params);
        imp_ctraj_free(&test);
        return cli_failf(verb, "%s: %s", data_path, why);
    }
    imp_ceval_result r;
    int st = imp_ceval(&m, params, &test, &eo, &r);
    imp_ctraj_free(&test);
    if (st) {
        free(params);
        return cli_fail(verb);
    }
    if (json) {
        imp_json j;
        imp_json_init(&j);
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "verb", "eval");
        imp_json_kv_string(&j, "model", imp_cmodel_kind_name(m.kind));
        imp_json_kv_string(&j, "system", m.sys.name);
        imp_json_kv_int(&j, "trajectories", r.n_test);
        /* "steps" counts states as every verb's does; the integral of the
         * geometric mean spans the T - 1 intervals and is divided by T dt
         * (the reference notebooks'): both counts, and which divides */
        imp_json_kv_int(&j, "steps", r.T);
        imp_json_kv_int(&j, "samples", r.T);
        imp_json_kv_int(&j, "intervals", r.T - 1);
        imp_json_kv_string(&j, "geo_rel_err_time", "trapezoid over the intervals, divided by samples x dt");
        imp_json_kv_number(&j, "mean_geo_rel_err", r.mean_geo);
        imp_json_kv_number(&j, "median_geo_rel_err", r.median_geo);
        imp_json_kv_number(&j, "mean_energy_err", r.mean_energy_err);
        imp_json_kv_number(&j, "mean_violation", r.mean_violation);
        imp_json_kv_number(&j, "seconds", r.seconds);
        imp_json_kv_number(&j, "sum_rel_err_5", r.sum_rel_err_5);
        imp_json_kv_number(&j, "sum_rel_err", r.sum_rel_err);
        imp_json_kv_string(&j, "contact", m.contact ? "learned" : "none");
        if (m.contact) {
            cli_chnn_contact_json(&j, &m, params);
            imp_json_kv_string(&j, "contact_integrator", eo.contact_rk4 ? "rk4" : "dopri5");
            imp_json_kv_number(&j, "mean_violation_away", r.mean_violation_away);
            imp_json_kv_int(&j, "violation_away_states", r.violation_away_states);
            imp_json_key(&j, "impact_energy");
            imp_json_begin_object(&j);
            imp_json_kv_int(&j, "window", IMP_CEVAL_IMPACT_WINDOW);
            cli_impact_energy_json(&j, "one_step", &r.impact_one_step);
            cli_impact_energy_json(&j, "rollout", &r.impact_rollout);
            imp_json_key(&j, "at_model_impacts");
            imp_json_begin_object(&j);
            imp_json_kv_int(&j, "steps", r.map_steps);
            imp_json_kv_number(&j, "truth_lost", r.map_truth_lost);
            imp_json_kv_number(&j, "model_lost", r.map_model_lost);
            imp_json_kv_number(&j, "kinetic", r.map_kinetic);
            imp_json_end_object(&j);
            /* the impact map alone, from the truth's pre-impact states (free of the flow's error) */
            cli_impact_energy_json(&j, "impact_map", &r.impact_map);
            cli_impact_energy_json(&j, "impact_map_true_masses", &r.impact_map_true);
            imp_json_kv_int(&j, "impact_map_elastic", r.map_elastic);
            imp_json_kv_int(&j, "impact_map_resting", r.map_resting);
            imp_json_key(&j, "compliance");
            imp_json_begin_object(&j);
            imp_json_kv_number(&j, "tt_over_nn_model", r.compliance_tt_model);
            imp_json_kv_number(&j, "tt_over_nn_truth", r.compliance_tt_truth);
            imp_json_kv_number(&j, "nt_over_nn_model", r.compliance_nt_model);
            imp_json_kv_number(&j, "nt_over_nn_truth", r.compliance_nt_truth);
            imp_json_kv_number(&j, "rel_error", r.compliance_rel_error);
            imp_json_end_object(&j);
            imp_json_end_object(&j);
        }
        imp_json_end_object(&j);
        const char *t = imp_json_text(&j);
        printf("%s\n", t ? t : "{}");
        imp_json_free(&j);
    } else {
        printf("%s on %s: %d test trajectories x %d states (%d steps)\n", imp_cmodel_kind_name(m.kind), m.sys.name,
               r.n_test, r.T, r.T - 1);
        printf("  geometric-mean relative error: mean %.4g, median %.4g (exp of the trapezoid of log error over the %d "
               "steps, divided by %d dt as the reference notebooks)\n", r.mean_geo, r.median_geo, r.T - 1, r.T);
        printf("  mean energy error %.4g, mean constraint violation %.4g (%.2f s)\n", r.mean_energy_err,
               r.mean_violation, r.seconds);
        if (m.contact) {
            cli_chnn_contact_print(stdout, &m, params);
            printf("  mean constraint violation %.4g away from impacts (%ld states, %d or more from an interval in "
                   "which the contact map acted; %s rollouts)\n", r.mean_violation_away, r.violation_away_states,
                   IMP_CEVAL_IMPACT_WINDOW, eo.contact_rk4 ? "RK4" : "DOPRI5");
            const imp_impact_energy *ie[2] = {&r.impact_one_step, &r.impact_rollout};
            for (int q = 0; q < 2; q++)
                printf("  energy lost at %d impacts (%s): truth %.4g, model %.4g, relative error %.3g (per impact "
                       "mean %.3g, max %.3g, %d within 5 %%)\n", ie[q]->impacts, q ? "rollouts" : "one-step",
                       ie[q]->truth_lost, ie[q]->model_lost, ie[q]->rel_error, ie[q]->mean_rel_error,
                       ie[q]->max_rel_error, ie[q]->within_5pct);
            printf("  one-step predictions in which the contact map acted: %ld; energy lost: truth %.4g, model %.4g, "
                   "of a kinetic energy %.4g\n", r.map_steps, r.map_truth_lost, r.map_model_lost, r.map_kinetic);
            const imp_impact_energy *im[2] = {&r.impact_map, &r.impact_map_true};
            for (int q = 0; q < 2; q++)
                printf("  impact map alone at %d located impacts (%s masses): fraction of kinetic energy lost, relative "
                       "error %.3g (per impact mean %.3g, max %.3g, %d within 5 %%)\n", im[q]->impacts,
                       q ? "true" : "learned", im[q]->rel_error, im[q]->mean_rel_error, im[q]->max_rel_error,
                       im[q]->within_5pct);
            printf("  contact compliance J P J^T / its normal entry: tangential %.4g (truth %.4g), normal-tangential "
                   "%.4g (truth %.4g), relative error %.3g\n", r.compliance_tt_model, r.compliance_tt_truth,
                   r.compliance_nt_model, r.compliance_nt_truth, r.compliance_rel_error);
        }
    }
    free(params);
    imp_ceval_result_free(&r);
    return 0;
}
