/* Sweep tasks of the contact comparisons (issues 24 and 25, docs/contact.md):
 * one contact model (CD-Lagrange with its contact law learned per contact
 * pair, ResNetContact or ResNet) trained with one seed on a multi-contact
 * system's simulated trajectories and rolled out from the noise-free starts
 * of held-out ones. Settings:
 *   system=compliant-ball-box|bouncing-points:N|any simulator with contact
 *   pairs (imp_simulate) config=NAME (the report's row; default the model)
 *   model=cdl|resnet-contact|resnet seed=K epochs=E (200)
 *   labels=auto|as-given|onset|none (the data's per-body touch labels, handled
 *   as `impulse train --contact-labels`; none: trained without them,
 *   --no-touch; resnet takes none, resnet-contact needs them)
 *   gates=learned|geometry (cdl: impulses gated by the contact network or by
 *   geometry alone, --geometry-gates, which needs labels=none)
 *   friction=0|1 projection=0|1 (cdl: Coulomb mu learned per pair; the
 *   closest-point projection at impacts)
 *   impact_law=auto|paper|newton (cdl; auto: the data's default, as train's)
 *   impact_timing=step|event (cdl: impacts at the sample step, the default,
 *   or at their time inside it, as `impulse train --impact-timing`; event
 *   takes no impact_law and no projection=1)
 *   e_init=X (cdl: the learned e's start; absent: the data's estimate)
 *   law_identify=0|1 (cdl with friction=1: each pair's e and mu identified
 *   from its impacts after training, as `impulse train --law-identify`)
 *   contact_tol=X (cdl: as `impulse train --contact-tol`; absent: 3 x the
 *   data's noise)
 *   restitution=E (the simulator's; absent: its default) noise=S (0)
 *   n_train=N (20) n_test=M (4) data_seed=100 test_seed=200 (the training
 *   and test draws: the test draw holds M + 1 noise-free trajectories of
 *   which the first, which starts where the training set's first does, is
 *   left out) threads=1 state_seconds=60 state_every=0
 * The learning-rate schedule is the data's default, as `impulse train`
 * picks it. Files: tasks/<id>/train_state.npz, model.npz
 * and result.npz: "metrics" (rmse, rmse_code, min_gap, seconds), per pair
 * "e", "mu" (learned; NaN where not learned), "e_true", "mu_true" (the
 * simulator's; NaN unknown), "impacts" (labelled impacts in the training
 * data, imp_cdl_estimate_contact_law), "pairs" (P x 2: bodies, -1 a wall)
 * and "normals" (P x d); meta the same scalars. min_gap is the lowest gap of
 * any contact pair in any rollout (below 0: inside a wall or the floor). */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "core/num.h"
#include "impulse/cdl.h"
#include "impulse/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sweep_contact_read(const imp_sweep_task *t, sweep_contact_settings *s)
{
    memset(s, 0, sizeof *s);
    s->system = imp_sweep_task_get(t, "system");
    if (!s->system) return imp_fail(IMP_ERR_INVALID, "task '%s': needs system=", t->id);
    s->model = imp_sweep_task_get(t, "model");
    if (!s->model) return imp_fail(IMP_ERR_INVALID, "task '%s': needs model=", t->id);
    if (strcmp(s->model, "cdl") && strcmp(s->model, "resnet-contact") && strcmp(s->model, "resnet"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': model=%s is not cdl, resnet-contact or resnet", t->id, s->model);
    imp_model_kind_from_name(s->model, &s->kind);
    s->config = imp_sweep_task_get(t, "config");
    if (!s->config) s->config = s->model;
    const int cdl = s->kind == IMP_MODEL_CDL;
    s->labels = imp_sweep_task_get(t, "labels");
    if (!s->labels) s->labels = s->kind == IMP_MODEL_RESNET ? "none" : "auto";
    imp_label_mode mode;
    if (strcmp(s->labels, "none") && imp_label_mode_from_name(s->labels, &mode))
        return imp_fail(IMP_ERR_INVALID, "task '%s': labels=%s is not auto, as-given, onset or none", t->id, s->labels);
    if (s->kind == IMP_MODEL_RESNET && strcmp(s->labels, "none"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': labels=%s: model=resnet takes no labels (none)", t->id, s->labels);
    if (s->kind == IMP_MODEL_RESNET_CONTACT && !strcmp(s->labels, "none"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': labels=none: model=resnet-contact is fed the labels", t->id);
    const char *gates = imp_sweep_task_get(t, "gates");
    if (gates && strcmp(gates, "learned") && strcmp(gates, "geometry"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': gates=%s is not learned or geometry", t->id, gates);
    s->geometry_gates = gates && !strcmp(gates, "geometry");
    if (s->geometry_gates && strcmp(s->labels, "none"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': gates=geometry needs labels=none (geometry alone)", t->id);
    static const char *const cdl_only[] = {"gates",      "friction",      "projection",  "e_init",
                                           "impact_law", "impact_timing", "law_identify", "contact_tol"};
    for (size_t k = 0; k < sizeof cdl_only / sizeof cdl_only[0]; k++)
        if (!cdl && imp_sweep_task_get(t, cdl_only[k]))
            return imp_fail(IMP_ERR_INVALID, "task '%s': %s= applies to model=cdl only", t->id, cdl_only[k]);
    const char *law = imp_sweep_task_get(t, "impact_law");
    s->impact_law = -1;
    if (law && !strcmp(law, "paper")) s->impact_law = IMP_CDL_IMPACT_PAPER;
    else if (law && !strcmp(law, "newton")) s->impact_law = IMP_CDL_IMPACT_NEWTON;
    else if (law && strcmp(law, "auto"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': impact_law=%s is not auto, paper or newton", t->id, law);
    const char *timing = imp_sweep_task_get(t, "impact_timing");
    if (timing && imp_cdl_timing_from_name(timing, &s->impact_timing))
        return imp_fail(IMP_ERR_INVALID, "task '%s': impact_timing=%s is not step or event", t->id, timing);
    if (s->impact_timing == IMP_CDL_TIMING_EVENT && law && strcmp(law, "auto"))
        return imp_fail(IMP_ERR_INVALID, "task '%s': impact_law= applies to impact_timing=step", t->id);
    imp_sim_opts so;
    int st = imp_sim_defaults(s->system, &so);
    if (st) return imp_fail_context(st, "task '%s': system=%s", t->id, s->system);
    if (!st) st = imp_sweep_task_double(t, "restitution", so.restitution, 0, 1, &s->restitution);
    if (!st) st = imp_sweep_task_double(t, "noise", 0, 0, 100, &s->noise);
    if (!st) st = imp_sweep_task_double(t, "e_init", NAN, 1e-3, 1 - 1e-3, &s->e_init);
    if (!st) st = imp_sweep_task_int(t, "seed", 0, 0, 2147483647L, &s->seed);
    if (!st) st = imp_sweep_task_int(t, "epochs", 200, 1, 1000000, &s->epochs);
    if (!st) st = imp_sweep_task_int(t, "n_train", 20, 1, 100000, &s->n_train);
    if (!st) st = imp_sweep_task_int(t, "n_test", 4, 1, 100000, &s->n_test);
    if (!st) st = imp_sweep_task_int(t, "data_seed", 100, 0, 2147483647L, &s->data_seed);
    if (!st) st = imp_sweep_task_int(t, "test_seed", 200, 0, 2147483647L, &s->test_seed);
    if (!st) st = imp_sweep_task_int(t, "friction", 0, 0, 1, &s->friction);
    if (!st) st = imp_sweep_task_int(t, "projection", 0, 0, 1, &s->projection);
    if (!st) st = imp_sweep_task_int(t, "law_identify", 0, 0, 1, &s->law_identify);
    if (!st) st = imp_sweep_task_double(t, "contact_tol", NAN, 0, 1e6, &s->contact_tol);
    if (!st && s->law_identify && !s->friction)
        st = imp_fail(IMP_ERR_INVALID, "task '%s': law_identify=1 needs friction=1 (it identifies e and mu)", t->id);
    if (!st) st = imp_sweep_task_int(t, "threads", 1, 1, 64, &s->threads);
    if (!st) st = imp_sweep_task_double(t, "state_seconds", 60, 0, 1e9, &s->state_seconds);
    if (!st) st = imp_sweep_task_int(t, "state_every", 0, 0, 1000000, &s->state_every);
    if (!st && s->projection && s->impact_timing == IMP_CDL_TIMING_EVENT)
        st = imp_fail(IMP_ERR_INVALID, "task '%s': projection=1 does not train with impact_timing=event", t->id);
    return st;
}

/* The lowest gap of any contact pair over every predicted state. */
static double lowest_gap(const imp_contact_geometry *g, const double *states, size_t n_states, int D)
{
    double gaps[IMP_MAX_CONTACTS], low = INFINITY;
    imp_contact_min_gaps(g, states, n_states, 2 * (size_t)D, gaps);
    for (int p = 0; p < g->n_pairs && !isnan(low); p++)
        if (gaps[p] < low || isnan(gaps[p])) low = gaps[p];
    return low;
}

/* The per-pair arrays of a result. */
static int add_pairs(imp_npz *z, const imp_contact_geometry *g, const double *e, const double *mu,
                     const double *impacts)
{
    const int P = g->n_pairs, d = g->dim;
    double e_true[IMP_MAX_CONTACTS], mu_true[IMP_MAX_CONTACTS], pairs[2 * IMP_MAX_CONTACTS];
    double normals[IMP_MAX_CONTACTS * IMP_MAX_DIM];
    for (int p = 0; p < P; p++) {
        e_true[p] = g->has_pair_law ? g->pair_e[p] : g->restitution;
        mu_true[p] = g->has_pair_law ? g->pair_mu[p] : imp_contact_pair_has_tangent(g, p) ? NAN : 0.0;
        pairs[2 * p] = g->pairs[p].body_i, pairs[2 * p + 1] = g->pairs[p].body_j;
        for (int k = 0; k < d; k++) normals[p * d + k] = g->pairs[p].normal[k];
    }
    size_t s1[1] = {(size_t)P}, s2[2] = {(size_t)P, 2}, sn[2] = {(size_t)P, (size_t)d};
    int st = imp_npz_add_f64(z, "e", 1, s1, e);
    if (!st) st = imp_npz_add_f64(z, "mu", 1, s1, mu);
    if (!st) st = imp_npz_add_f64(z, "e_true", 1, s1, e_true);
    if (!st) st = imp_npz_add_f64(z, "mu_true", 1, s1, mu_true);
    if (!st) st = imp_npz_add_f64(z, "impacts", 1, s1, impacts);
    if (!st) st = imp_npz_add_f64(z, "pairs", 2, s2, pairs);
    if (!st) st = imp_npz_add_f64(z, "normals", 2, sn, normals);
    return st;
}

int sweep_exec_contact(const imp_sweep_task *t, const char *task_dir, const imp_sweep_run_opts *o, imp_npz *result)
{
    sweep_contact_settings s;
    int st = sweep_contact_read(t, &s);
    if (st) return st;
    imp_trajset train, draw;
    st = sweep_simulate(s.system, s.restitution, s.noise, (unsigned)s.data_seed, (int)s.n_train, 0, &train);
    if (st) return imp_fail_context(st, "task '%s'", t->id);
    if ((st = sweep_simulate(s.system, s.restitution, 0.0, (unsigned)s.test_seed, (int)s.n_test + 1, 0, &draw))) {
        imp_trajset_free(&train);
        return imp_fail_context(st, "task '%s'", t->id);
    }
    imp_trajset test = sweep_trajectory_view(&draw, 1, (int)s.n_test);
    const imp_contact_geometry *g = &train.geom;
    const int P = g->n_pairs;
    /* each pair's labelled impacts in the training data, before any label handling */
    double impacts[IMP_MAX_CONTACTS], e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    int n_events[IMP_MAX_CONTACTS];
    if (train.has_contact && !imp_cdl_estimate_contact_law(&train, e, mu, n_events))
        for (int p = 0; p < P; p++) impacts[p] = n_events[p];
    else
        for (int p = 0; p < P; p++) impacts[p] = NAN;
    imp_clear_error();
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, s.kind);
    cfg.act = IMP_ACT_SOFTPLUS;
    cfg.touch = strcmp(s.labels, "none") != 0;
    if (cfg.touch && !train.has_contact)
        st = imp_fail(IMP_ERR_INVALID, "task '%s': labels=%s: %s's data have no contact labels", t->id, s.labels,
                      s.system);
    if (!st && cfg.touch) {
        imp_label_mode mode;
        imp_label_mode_from_name(s.labels, &mode);
        st = imp_contact_labels_apply(&train, mode, NULL);
    }
    const int cdl = s.kind == IMP_MODEL_CDL;
    cfg.learn_restitution = cdl;
    cfg.friction = (int)s.friction;
    cfg.projection = (int)s.projection;
    cfg.gate_geometry = s.geometry_gates;
    if (cdl) cfg.impact_law = s.impact_law >= 0 ? s.impact_law : imp_cdl_default_impact_law(&train);
    cfg.impact_timing = s.impact_timing;
    if (!isnan(s.contact_tol)) cfg.contact_tol = s.contact_tol;
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    to.epochs = (int)s.epochs;
    to.seed = (unsigned long long)s.seed;
    to.lr_schedule = imp_train_default_lr_schedule(&train);
    to.threads = (int)s.threads;
    to.hooks.state_seconds = s.state_seconds;
    to.hooks.state_every = (int)s.state_every;
    if (s.law_identify) {
        imp_law_refit_opts_identify(&to.refit);
        to.law_refit = 1;
    }
    imp_model *m = NULL;
    imp_train_report rep;
    double seconds = NAN;
    if (!st) st = sweep_train_model(t, task_dir, o, &cfg, &to, &train, cdl, s.e_init, &m, &rep, &seconds);
    if (st) {
        imp_trajset_free(&train);
        imp_trajset_free(&draw);
        return st == SWEEP_STOPPED ? st : imp_fail_context(st, "task '%s'", t->id);
    }
    /* a baseline may leave the box from an unseen state: that is a result */
    const size_t n_states = (size_t)test.n_traj * test.n_steps;
    double *states = malloc(n_states * 2 * (size_t)m->D * sizeof(double));
    imp_eval_result r;
    memset(&r, 0, sizeof r);
    double low = NAN;
    if (!states) st = imp_fail(IMP_ERR_NOMEM, "task '%s': out of memory", t->id);
    else if (imp_model_evaluate(m, &test, 0, &r, states, NULL, NULL)) {
        r.rmse = r.rmse_code = INFINITY;
        imp_clear_error();
    } else {
        low = lowest_gap(g, states, n_states, m->D);
    }
    free(states);
    for (int p = 0; p < P; p++) e[p] = mu[p] = NAN;
    if (cdl) imp_model_get_contact_law(m, e, cfg.friction ? mu : NULL);
    imp_model_free(m);
    imp_json j;
    sweep_meta_begin(&j, t);
    imp_json_kv_string(&j, "system", s.system);
    imp_json_kv_string(&j, "config", s.config);
    imp_json_kv_string(&j, "model", s.model);
    imp_json_kv_string(&j, "labels", s.labels);
    imp_json_kv_int(&j, "seed", s.seed);
    imp_json_kv_int(&j, "epochs", s.epochs);
    imp_json_kv_int(&j, "n_train", s.n_train);
    imp_json_kv_int(&j, "n_test", s.n_test);
    imp_json_kv_number(&j, "noise", s.noise);
    if (cdl) imp_json_kv_string(&j, "impact_law", cfg.impact_law == IMP_CDL_IMPACT_NEWTON ? "newton" : "paper");
    if (!isnan(s.contact_tol)) imp_json_kv_number(&j, "contact_tol", s.contact_tol);
    if (cfg.impact_timing) imp_json_kv_string(&j, "impact_timing", "event");
    if (s.law_identify) imp_json_kv_int(&j, "law_identify", 1);
    imp_json_kv_string(&j, "lr_schedule", imp_lr_schedule_name(to.lr_schedule));
    imp_json_kv_number(&j, "rmse", r.rmse);
    imp_json_kv_number(&j, "rmse_code", r.rmse_code);
    imp_json_kv_number(&j, "min_gap", low);
    imp_json_kv_number(&j, "seconds", seconds);
    imp_json_kv_int(&j, "resumed_at_epoch", rep.resumed_at);
    if (!st) st = sweep_meta_set(result, &j);
    else imp_json_free(&j);
    double v[SWEEP_CONTACT_NMETRICS] = {r.rmse, r.rmse_code, low, seconds};
    size_t shape[1] = {SWEEP_CONTACT_NMETRICS};
    if (!st) st = imp_npz_add_f64(result, "metrics", 1, shape, v);
    if (!st) st = add_pairs(result, g, e, mu, impacts);
    imp_trajset_free(&train);
    imp_trajset_free(&draw);
    return st;
}

/* ---- plans ---- */

/* The systems of the comparison and the rows each gets. A system the build
 * cannot simulate (imp_sim_defaults does not know it) is left out of the
 * plan, so that a simulator still being written joins by its row here. */
typedef struct contact_row {
    const char *config, *words; /* the report's row, the task's model settings */
} contact_row;
typedef struct contact_system {
    const char *part, *system;
    double noise;
    int n_train, n_test, epochs, seeds;
    const char *extra; /* settings of every task of the system */
    contact_row rows[10];
} contact_system;

static const contact_system contact_systems[] = {
    /* issue 24's ball in a box (scripts/ball_box_acceptance.sh before this plan) */
    {"ball-box", "compliant-ball-box", 0.05, 24, 6, 200, 3, "",
     {{"cdl", "model=cdl labels=auto e_init=0.5"},
      {"cdl-projection", "model=cdl labels=auto projection=1 e_init=0.5"},
      {"cdl-paperlaw", "model=cdl labels=auto impact_law=paper e_init=0.5"},
      {"cdl-nolabels", "model=cdl labels=none e_init=0.5"},
      {"cdl-geometry", "model=cdl labels=none gates=geometry e_init=0.5"},
      {"cdl-geomlabels", "model=cdl labels=geometry contact_tol=0 e_init=0.5"},
      {"resnet-contact", "model=resnet-contact labels=auto"},
      {"resnet", "model=resnet labels=none"},
      {NULL, NULL}}},
    /* several bodies, heterogeneous e and mu per contact */
    {"points", "bouncing-points:5", 0.0, 20, 4, 150, 5, "",
     {{"cdl", "model=cdl labels=auto friction=1 e_init=0.5"},
      {"cdl-onset", "model=cdl labels=onset friction=1 e_init=0.5"},
      {"cdl-event", "model=cdl labels=auto friction=1 e_init=0.5 impact_timing=event"},
      {"cdl-identify", "model=cdl labels=auto friction=1 e_init=0.5 impact_timing=event law_identify=1"},
      {"resnet-contact", "model=resnet-contact labels=auto"},
      {"resnet", "model=resnet labels=none"},
      {NULL, NULL}}},
    {"disks", "bouncing-disks:5", 0.0, 20, 4, 150, 5, "",
     {{"cdl", "model=cdl labels=auto friction=1 e_init=0.5"},
      {"cdl-event", "model=cdl labels=auto friction=1 e_init=0.5 impact_timing=event"},
      {"cdl-identify", "model=cdl labels=auto friction=1 e_init=0.5 impact_timing=event law_identify=1"},
      {"resnet-contact", "model=resnet-contact labels=auto"},
      {"resnet", "model=resnet labels=none"},
      {NULL, NULL}}},
};
#define N_CONTACT_SYSTEMS ((int)(sizeof contact_systems / sizeof contact_systems[0]))

/* The constrained systems with contact (issue 25) and the constrained
 * models run on them (strand=chnn tasks): CHNN and CLNN with their contact
 * law learned (chnn-contact, clnn-contact), the same networks without
 * contact, the Neural ODE and the ResNet (NODE's network stepping
 * y + dt f(y) once per sample). */
static const char *const constrained_systems[] = {"chain-ground:3", "chain-ground-elastic:3", "gyroscope-wall"};
#define N_CONSTRAINED ((int)(sizeof constrained_systems / sizeof constrained_systems[0]))
static const char *const constrained_models[] = {"chnn-contact", "clnn-contact", "chnn", "clnn", "node", "resnet"};
#define N_CONSTRAINED_MODELS ((int)(sizeof constrained_models / sizeof constrained_models[0]))

int sweep_contact_constrained_system(const char *system)
{
    for (int i = 0; system && i < N_CONSTRAINED; i++)
        if (!strcmp(system, constrained_systems[i])) return 1;
    return 0;
}

void imp_sweep_contact_opts_default(imp_sweep_contact_opts *o)
{
    memset(o, 0, sizeof *o);
    o->box_tosses = 16;
}

static int part_wanted(const char *only, const char *part)
{
    if (!only) return 1;
    size_t n = strlen(part);
    for (const char *p = only; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !strncmp(p, part, n)) return 1;
        p += len + (c != NULL);
    }
    return 0;
}

static const char *const contact_parts[] = {"ball-box", "points", "disks", "constrained", "box-toss"};

int imp_sweep_plan_contact(imp_sweep_plan *plan, const imp_sweep_contact_opts *o)
{
    if (!plan || !o) return imp_fail(IMP_ERR_INVALID, "contact plan: NULL");
    memset(plan, 0, sizeof *plan);
    if (o->seeds < 0 || o->seeds > 1000) return imp_fail(IMP_ERR_INVALID, "contact plan: seeds %d out of [0, 1000]", o->seeds);
    if (o->epochs < 0) return imp_fail(IMP_ERR_INVALID, "contact plan: epochs %d < 0", o->epochs);
    if (o->threads < 0 || o->threads > 64)
        return imp_fail(IMP_ERR_INVALID, "contact plan: threads %d out of [0, 64]", o->threads);
    if (o->box_tosses < 1 || o->box_tosses > 100000)
        return imp_fail(IMP_ERR_INVALID, "contact plan: box tosses %d out of [1, 100000]", o->box_tosses);
    /* every name of --only known */
    for (const char *p = o->only; p && *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        int known = 0;
        for (size_t k = 0; k < sizeof contact_parts / sizeof contact_parts[0]; k++)
            known |= strlen(contact_parts[k]) == len && !strncmp(p, contact_parts[k], len);
        if (!known)
            return imp_fail(IMP_ERR_INVALID, "contact plan: only: '%.*s' is not ball-box, points, disks, constrained "
                            "or box-toss", (int)len, p);
        p += len + (c != NULL);
    }
    char words[1024], thr[24] = "", sigma[IMP_NUM_FMT_CAP];
    if (o->threads > 1) snprintf(thr, sizeof thr, " threads=%d", o->threads);
    int st = IMP_OK;
    char missing[256] = "";
    for (int i = 0; i < N_CONTACT_SYSTEMS && !st; i++) {
        const contact_system *cs = &contact_systems[i];
        imp_sim_opts so;
        if (!part_wanted(o->only, cs->part)) continue;
        if (imp_sim_defaults(cs->system, &so)) { /* not in this build yet */
            imp_clear_error();
            size_t l = strlen(missing);
            snprintf(missing + l, sizeof missing - l, "%s%s", l ? ", " : "", cs->system);
            continue;
        }
        int seeds = o->seeds ? o->seeds : o->quick ? 2 : cs->seeds;
        int epochs = o->epochs ? o->epochs : o->quick ? 30 : cs->epochs;
        int n_train = o->quick && cs->n_train > 8 ? 8 : cs->n_train, n_test = cs->n_test;
        for (int s = 0; s < seeds && !st; s++)
            for (const contact_row *r = cs->rows; r->config && !st; r++) {
                const char *model = strstr(r->words, "model=") + 6;
                char mname[32];
                snprintf(mname, sizeof mname, "%.*s", (int)strcspn(model, " "), model);
                snprintf(words, sizeof words,
                         "id=contact.%s.%s.s%d strand=contact system=%s config=%s %s seed=%d epochs=%d n_train=%d "
                         "n_test=%d noise=%s%s%s cost=%.3g",
                         cs->part, r->config, s, cs->system, r->config, r->words, s, epochs, n_train, n_test,
                         imp_num_format(cs->noise, sigma), cs->extra, thr,
                         sweep_model_cost(mname, epochs, n_train * so.n_steps));
                st = imp_sweep_plan_add(plan, words);
                sweep_contact_settings cset;
                if (!st && (st = sweep_contact_read(&plan->tasks[plan->n_tasks - 1], &cset)))
                    imp_fail_context(st, "contact plan");
            }
    }
    /* the constrained systems' networks (strand=chnn; 100 test trajectories as issue 25 asks) */
    if (part_wanted(o->only, "constrained")) {
        int seeds = o->seeds ? o->seeds : o->quick ? 1 : 5;
        int epochs = o->epochs ? o->epochs : o->quick ? 10 : 500, n_train = o->quick ? 10 : 400;
        int n_test = o->quick ? 20 : 100;
        /* seed by seed: the runner takes equal costs in plan order, so a run
         * stopped part-way has whole comparisons (every model of a seed) */
        for (int s = 0; s < seeds && !st; s++)
            for (int i = 0; i < N_CONSTRAINED && !st; i++)
                for (int k = 0; k < N_CONSTRAINED_MODELS && !st; k++) {
                    /* training, and the event-accurate simulation of the data (the gyroscope's is slow:
                     * about 1 s a test trajectory, measured under load) */
                    double sim = !strcmp(constrained_systems[i], "gyroscope-wall") ? 1.0 : 0.15;
                    snprintf(words, sizeof words,
                             "id=contact.constrained.%s.%s.s%d strand=chnn system=%s model=%s seed=%d epochs=%d "
                             "n_train=%d n_test=%d cost=%.3g",
                             constrained_systems[i], constrained_models[k], s, constrained_systems[i],
                             constrained_models[k], s, epochs, n_train, n_test,
                             2e-3 * epochs * n_train + sim * (n_train + 2 * n_test));
                    st = imp_sweep_plan_add(plan, words);
                }
    }
    /* the box tosses: rigid-identified (and, in full, impulse's learned box) on simulated tosses (strand=cube) */
    if (part_wanted(o->only, "box-toss")) {
        int seeds = o->seeds ? o->seeds : o->quick ? 1 : 3;
        static const char *const models[] = {"rigid-identified", "impulse"};
        for (int k = 0; k < (o->quick ? 1 : 2) && !st; k++)
            for (int s = 0; s < seeds && !st; s++) {
                snprintf(words, sizeof words,
                         "id=contact.box-toss.%s.n%d.s%d strand=cube model=%s simulate=box-toss sim_seed=%d "
                         "tosses=%d seed=%d substeps=16 max_evals=%d cost=%.3g",
                         models[k], o->box_tosses, s, models[k], 1000 + s, o->box_tosses, s, o->quick ? 40 : 100,
                         (o->quick ? 0.4 : 1.0) * o->box_tosses * (k ? 10 : 1));
                st = imp_sweep_plan_add(plan, words);
            }
    }
    if (!st && plan->n_tasks == 0)
        st = imp_fail(IMP_ERR_INVALID, "contact plan: no tasks (only: %s)%s%s", o->only ? o->only : "all",
                      missing[0] ? "; not simulators of this build: " : "", missing);
    if (st) imp_sweep_plan_free(plan);
    return st;
}
