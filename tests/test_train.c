/* The training-run controls shared by both model families
 * (include/impulse/train.h): the per-epoch callback and stop request, the
 * loss history, the divergence guard keeping the best model, and resumable
 * training states that continue bit-identically. */
#include "impulse/impulse.h"
#include "test.h"
#include "train/train_internal.h"
#include "core/stats.h"

#include <unistd.h>

typedef struct cb_log {
    int calls, stop_at, last_epoch, n_parts;
    double last_lr, lr[32]; /* lr[e - 1]: the rate reported for epoch e */
    char part1[16];
} cb_log;

static int on_epoch(const imp_epoch_info *info, void *user)
{
    cb_log *l = user;
    l->calls++;
    l->last_epoch = info->epoch;
    l->n_parts = info->n_parts;
    l->last_lr = info->lr;
    if (info->epoch >= 1 && info->epoch <= 32) l->lr[info->epoch - 1] = info->lr;
    snprintf(l->part1, sizeof l->part1, "%s", info->n_parts > 1 ? info->parts[1].name : "");
    return l->stop_at > 0 && info->epoch >= l->stop_at;
}

static int ball(imp_trajset *ts)
{
    imp_sim_opts o;
    int st = imp_sim_defaults("bouncing-ball", &o);
    o.noise = 0.05;
    o.restitution = 0.8;
    o.n_steps = 120;
    return st ? st : imp_simulate("bouncing-ball", &o, ts);
}

static imp_model *small_cdl(const imp_trajset *ts)
{
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.hidden = 16;
    cfg.contact_hidden = 8;
    imp_model *m = NULL;
    if (imp_model_create(&m, &cfg, &ts->geom, ts->dt, 3)) return NULL;
    return m;
}

static void cdl_opts(imp_train_opts *t, int epochs)
{
    imp_train_opts_default(t, 1);
    t->epochs = epochs;
    t->batch = 16;
    t->seed = 7;
}

/* A stop request after epoch 3 of 20 is honoured at once; the history holds
 * the three epochs and nothing after; the parameters are the best model's. */
static void test_cdl_callback(const imp_trajset *ts)
{
    imp_model *m = small_cdl(ts);
    CHECK(m != NULL);
    if (!m) return;
    imp_train_opts t;
    cdl_opts(&t, 20);
    double hist[20];
    for (int i = 0; i < 20; i++) hist[i] = -1;
    cb_log l = {0};
    l.stop_at = 3;
    imp_train_report rep;
    t.hooks.on_epoch = on_epoch;
    t.hooks.user_data = &l;
    t.hooks.loss_history = hist;
    t.hooks.report = &rep;
    CHECK_OK(imp_model_train(m, ts, &t, NULL));
    CHECK(l.calls == 3 && l.last_epoch == 3);
    CHECK(l.n_parts == 4 && !strcmp(l.part1, "state"));
    CHECK(l.last_lr == t.lr);
    CHECK(rep.stop == IMP_TRAIN_STOPPED && rep.epochs_done == 3);
    CHECK(hist[0] > 0 && hist[1] > 0 && hist[2] > 0 && hist[3] == -1);
    CHECK(rep.best_epoch >= 0 && rep.best_epoch <= 3);
    if (rep.best_epoch > 0) CHECK(rep.best_loss == hist[rep.best_epoch - 1]);
    imp_model_free(m);
}

/* A learning rate of 10 explodes in the first epoch: IMP_ERR_NUMERIC naming
 * the epoch, and the parameters are the initial ones (the best, epoch 0). */
static void test_cdl_diverges(const imp_trajset *ts)
{
    imp_model *m = small_cdl(ts), *m0 = small_cdl(ts);
    CHECK(m && m0);
    if (!m || !m0) return;
    imp_train_opts t;
    cdl_opts(&t, 30);
    t.lr = 1e3;
    imp_train_report rep;
    t.hooks.report = &rep;
    int st = imp_model_train(m, ts, &t, NULL);
    CHECK(st == IMP_ERR_NUMERIC);
    CHECK_MSG(strstr(imp_last_error(), "diverged at epoch") && strstr(imp_last_error(), "best model"), "%s",
              imp_last_error());
    CHECK(rep.stop == IMP_TRAIN_DIVERGED);
    CHECK(rep.best_epoch == 0);
    CHECK(!memcmp(m->params, m0->params, m->n_params * sizeof(double)));
    imp_model_free(m);
    imp_model_free(m0);
}

/* Stop after epoch 4 writing a state, resume to 9 epochs: the same bits as
 * 9 epochs in one go (also when resuming a state written by state_every). */
static void test_cdl_resume(const imp_trajset *ts)
{
    const char *sp = "test_train_cdl.state.npz";
    imp_model *a = small_cdl(ts), *b = small_cdl(ts), *c = small_cdl(ts);
    CHECK(a && b && c);
    if (!a || !b || !c) return;
    imp_train_opts t;
    cdl_opts(&t, 9);
    double ha[9], hb[9];
    t.hooks.loss_history = ha;
    CHECK_OK(imp_model_train(a, ts, &t, NULL));
    cb_log l = {0};
    l.stop_at = 4;
    t.hooks.on_epoch = on_epoch;
    t.hooks.user_data = &l;
    t.hooks.state_path = sp;
    t.hooks.loss_history = hb;
    CHECK_OK(imp_model_train(b, ts, &t, NULL));
    CHECK(l.calls == 4);
    imp_train_report rep;
    l.stop_at = 0;
    t.hooks.resume_path = sp;
    t.hooks.state_path = NULL;
    t.hooks.report = &rep;
    CHECK_OK(imp_model_train(c, ts, &t, NULL));
    CHECK(rep.resumed_at == 4 && rep.epochs_done == 9 && rep.stop == IMP_TRAIN_FINISHED);
    CHECK(!memcmp(a->params, c->params, a->n_params * sizeof(double)));
    CHECK(!memcmp(ha, hb, sizeof ha));
    /* another seed: the state is refused, naming the fingerprint */
    t.seed = 8;
    CHECK_FAILS(imp_model_train(c, ts, &t, NULL), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "fingerprint") != NULL);
    unlink(sp);
    imp_model_free(a);
    imp_model_free(b);
    imp_model_free(c);
}

/* The schedules' rates: constant is lr in every epoch; cosine starts at
 * lr, falls strictly, stays positive, is lr/2 halfway and symmetric about
 * it (lr_e + lr_(E+2-e) = lr); names round-trip, an unknown name or value
 * fails with one line naming it. */
static void test_lr_schedule_values(void)
{
    const double lr = 1e-2;
    for (int E = 1; E <= 12; E++)
        for (int e = 1; e <= E; e++) {
            CHECK(imp_train_epoch_lr(IMP_LR_CONSTANT, lr, e, E) == lr);
            double c = imp_train_epoch_lr(IMP_LR_COSINE, lr, e, E);
            CHECK(c > 0 && c <= lr);
            if (e == 1) CHECK(c == lr);
            if (e > 1) CHECK(c < imp_train_epoch_lr(IMP_LR_COSINE, lr, e - 1, E));
            if (e > 1) CHECK_CLOSE(c + imp_train_epoch_lr(IMP_LR_COSINE, lr, E + 2 - e, E), lr, 1e-14, 1e-16);
            if (E % 2 == 0 && e == E / 2 + 1) CHECK_CLOSE(c, lr / 2, 1e-14, 0);
        }
    CHECK(isnan(imp_train_epoch_lr(IMP_LR_AUTO, lr, 1, 10)) && isnan(imp_train_epoch_lr(7, lr, 1, 10)));
    const char *names[] = {"auto", "constant", "cosine"};
    for (int i = 0; i < 3; i++) {
        int v = -1;
        CHECK_OK(imp_lr_schedule_from_name(names[i], &v));
        CHECK(imp_lr_schedule_name(v) && !strcmp(imp_lr_schedule_name(v), names[i]));
    }
    int v = -1;
    CHECK_FAILS(imp_lr_schedule_from_name("linear", &v), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "'linear'") && !strchr(imp_last_error(), '\n'), "%s", imp_last_error());
    CHECK(imp_lr_schedule_name(3) == NULL);
}

/* auto: constant on impulse's own bouncing ball (the callback reports lr
 * in every epoch), cosine on the compliant ball's touch-sensor data, also
 * after the onset label handling and with the labels named as given (as
 * imported data); the rates the callback reports are the schedule's; an
 * unknown schedule value is refused. */
static void test_lr_schedule_auto(const imp_trajset *ball_ts)
{
    CHECK(imp_train_default_lr_schedule(ball_ts) == IMP_LR_CONSTANT);
    imp_trajset soft;
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball", &o));
    o.noise = 0.05, o.restitution = 0.8, o.n_steps = 120;
    CHECK_OK(imp_simulate("compliant-ball", &o, &soft));
    CHECK(imp_train_default_lr_schedule(&soft) == IMP_LR_COSINE);
    const imp_trajset *sets[2] = {ball_ts, &soft};
    for (int k = 0; k < 2; k++) {
        imp_model *m = small_cdl(sets[k]);
        CHECK(m != NULL);
        if (!m) continue;
        imp_train_opts t;
        cdl_opts(&t, 6);
        CHECK(t.lr_schedule == IMP_LR_AUTO);
        cb_log l = {0};
        t.hooks.on_epoch = on_epoch;
        t.hooks.user_data = &l;
        CHECK_OK(imp_model_train(m, sets[k], &t, NULL));
        CHECK(l.calls == 6);
        int sched = k ? IMP_LR_COSINE : IMP_LR_CONSTANT;
        for (int e = 1; e <= 6; e++)
            CHECK_MSG(l.lr[e - 1] == imp_train_epoch_lr(sched, t.lr, e, 6), "%s data, epoch %d: lr %g",
                      k ? "compliant" : "bouncing-ball", e, l.lr[e - 1]);
        t.lr_schedule = 5;
        CHECK_FAILS(imp_model_train(m, sets[k], &t, NULL), IMP_ERR_INVALID);
        CHECK(strstr(imp_last_error(), "lr_schedule") != NULL);
        imp_model_free(m);
    }
    CHECK_OK(imp_contact_labels_apply(&soft, IMP_LABELS_ONSET, NULL));
    CHECK(!strcmp(soft.labels, "onset") && imp_train_default_lr_schedule(&soft) == IMP_LR_COSINE);
    snprintf(soft.labels, sizeof soft.labels, "as-given");
    CHECK(imp_train_default_lr_schedule(&soft) == IMP_LR_COSINE);
    soft.labels[0] = 0;
    CHECK(imp_train_default_lr_schedule(&soft) == IMP_LR_COSINE);
    imp_trajset_free(&soft);
}

/* Stopped at epoch 4 of 9 under the cosine schedule, resumed: the same bits
 * and the same rates as 9 epochs in one go; the state is refused by a run of
 * another length (another schedule) or with the constant rate. */
static void test_cdl_resume_cosine(const imp_trajset *ts)
{
    const char *sp = "test_train_cos.state.npz";
    imp_model *a = small_cdl(ts), *b = small_cdl(ts), *c = small_cdl(ts);
    CHECK(a && b && c);
    if (!a || !b || !c) return;
    imp_train_opts t;
    cdl_opts(&t, 9);
    t.lr_schedule = IMP_LR_COSINE;
    cb_log la = {0}, lb = {0};
    t.hooks.on_epoch = on_epoch;
    t.hooks.user_data = &la;
    CHECK_OK(imp_model_train(a, ts, &t, NULL));
    lb.stop_at = 4;
    t.hooks.user_data = &lb;
    t.hooks.state_path = sp;
    CHECK_OK(imp_model_train(b, ts, &t, NULL));
    CHECK(lb.calls == 4);
    lb.stop_at = 0;
    t.hooks.resume_path = sp;
    t.hooks.state_path = NULL;
    CHECK_OK(imp_model_train(c, ts, &t, NULL));
    CHECK(lb.calls == 9);
    CHECK_MSG(!memcmp(a->params, c->params, a->n_params * sizeof(double)),
              "cosine schedule: resumed parameters differ from the uninterrupted run's");
    CHECK(!memcmp(la.lr, lb.lr, 9 * sizeof(double)) && la.lr[8] < la.lr[0]);
    /* does the uninterrupted run differ from the constant rate at all? */
    imp_model *d = small_cdl(ts);
    imp_train_opts tc;
    cdl_opts(&tc, 9);
    tc.lr_schedule = IMP_LR_CONSTANT;
    CHECK_OK(imp_model_train(d, ts, &tc, NULL));
    CHECK(memcmp(a->params, d->params, a->n_params * sizeof(double)) != 0);
    imp_model_free(d);
    t.epochs = 12;
    CHECK_FAILS(imp_model_train(c, ts, &t, NULL), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "fingerprint") != NULL);
    t.epochs = 9;
    t.lr_schedule = IMP_LR_CONSTANT;
    CHECK_FAILS(imp_model_train(c, ts, &t, NULL), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "fingerprint") != NULL);
    unlink(sp);
    imp_model_free(a);
    imp_model_free(b);
    imp_model_free(c);
}

static void chnn_model(imp_cmodel *m, double **params)
{
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:2"));
    CHECK_OK(imp_cmodel_init(m, IMP_CMODEL_CHNN, &cs, 16, 3));
    *params = malloc(m->n_params * sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, 4);
    imp_cmodel_init_params(m, *params, &rng);
}

static void chnn_opts(imp_ctrain_opts *o, int epochs)
{
    imp_ctrain_opts_default(o);
    o->epochs = epochs;
    o->batch = 5;
    o->n_chunks = 12;
    o->seed = 9;
    o->threads = 2;
}

/* The constrained family: callback stop, history, resume bit-identical. */
static void test_chnn(void)
{
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:2"));
    imp_ctraj data;
    CHECK_OK(imp_cexp_train_data(&cs, 12, 15, 1, &data));
    imp_cmodel m;
    double *pa, *pb;
    chnn_model(&m, &pa);
    chnn_model(&m, &pb);
    imp_ctrain_opts o;
    imp_ctrain_result res;
    chnn_opts(&o, 7);
    double ha[7], hb[7] = {0};
    o.hooks.loss_history = ha;
    CHECK_OK(imp_ctrain(&m, pa, &data, &o, &res));
    const char *sp = "test_train_chnn.state.npz";
    cb_log l = {0};
    l.stop_at = 2;
    imp_train_report rep;
    o.hooks.on_epoch = on_epoch;
    o.hooks.user_data = &l;
    o.hooks.loss_history = hb;
    o.hooks.state_path = sp;
    o.hooks.report = &rep;
    CHECK_OK(imp_ctrain(&m, pb, &data, &o, &res));
    CHECK(l.calls == 2 && rep.stop == IMP_TRAIN_STOPPED && l.n_parts == 1);
    CHECK(l.last_lr > 0 && l.last_lr < o.lr); /* the cosine schedule */
    CHECK(hb[2] == 0);
    l.stop_at = 0;
    o.hooks.resume_path = sp;
    CHECK_OK(imp_ctrain(&m, pb, &data, &o, &res));
    CHECK(rep.resumed_at == 2 && rep.epochs_done == 7 && res.epochs == 7);
    CHECK(!memcmp(pa, pb, m.n_params * sizeof(double)));
    CHECK(!memcmp(ha, hb, sizeof ha));
    CHECK(res.final_loss == ha[6]);
    /* a CD-Lagrange state is not a constrained-network state */
    o.hooks.resume_path = "test_train_cdl_other.state.npz";
    unlink(sp);
    free(pa);
    free(pb);
    imp_ctraj_free(&data);
}

/* The guard itself on a scripted loss sequence: the best epoch's
 * parameters come back when the loss jumps past diverge_factor times the
 * best or turns NaN; with factor 0 only NaN stops. */
static int run_script_guard(const double *losses, int tolerate, int n, double factor, int *best_epoch,
                            double *p_out, char *msg)
{
    imp_train_hooks h;
    imp_train_hooks_default(&h);
    h.diverge_factor = factor;
    double p = 0;
    imp_track t;
    if (imp_track_init(&t, &h, n, &p, 1)) return -100;
    t.tolerate = tolerate;
    imp_track_initial_loss(&t, 10.0);
    int st = IMP_OK, stop = 0;
    for (int e = 0; e < n && !st; e++) {
        p = 100 + e + 1; /* the parameters after epoch e + 1 */
        imp_loss_part part = {"total", losses[e]};
        st = imp_track_epoch(&t, &p, &part, 1, 0.1, &stop);
    }
    if (st) snprintf(msg, 256, "%s", imp_last_error());
    imp_track_end(&t, st, &p);
    *best_epoch = t.best_epoch;
    *p_out = p;
    imp_track_free(&t);
    return st;
}

static int run_script(const double *losses, int n, double factor, int *best_epoch, double *p_out, char *msg)
{
    return run_script_guard(losses, 0, n, factor, best_epoch, p_out, msg);
}

static void test_guard(void)
{
    const double up[] = {5, 3, 2, 2.5, 5000, 1};
    int be;
    double p;
    char msg[256] = "";
    CHECK(run_script(up, 6, 1e3, &be, &p, msg) == IMP_ERR_NUMERIC);
    CHECK(be == 3 && p == 103);
    CHECK_MSG(strstr(msg, "epoch 5 of 6") && strstr(msg, "best model (epoch 3, loss 2)"), "%s", msg);
    CHECK(run_script(up, 6, 0, &be, &p, msg) == IMP_OK && p == 106);
    const double nan_at_2[] = {5, NAN, 1};
    CHECK(run_script(nan_at_2, 3, 0, &be, &p, msg) == IMP_ERR_NUMERIC);
    CHECK(be == 1 && p == 101);
    /* before any epoch the reference is the first minibatch's loss (10) */
    const double first[] = {20000, 1};
    CHECK(run_script(first, 2, 1e3, &be, &p, msg) == IMP_ERR_NUMERIC);
    CHECK(be == 0 && p == 0);
    /* the baselines' guard lets one epoch above the bound pass, not two in a row */
    CHECK(run_script_guard(up, 1, 6, 1e3, &be, &p, msg) == IMP_OK && p == 106 && be == 6);
    const double twice[] = {5, 3, 2, 5000, 2.5, 4000, 1}; /* apart: both pass */
    CHECK(run_script_guard(twice, 1, 7, 1e3, &be, &p, msg) == IMP_OK && p == 107 && be == 7);
    const double in_a_row[] = {5, 3, 2, 5000, 4000, 1};
    CHECK(run_script_guard(in_a_row, 1, 6, 1e3, &be, &p, msg) == IMP_ERR_NUMERIC && be == 3 && p == 103);
    CHECK_MSG(strstr(msg, "epoch 5 of 6") && strstr(msg, "loss 4000 is more than 1000 times the best for 2 epochs in a row"),
              "%s", msg);
    /* the median of the contact-label and restitution estimates */
    double odd[3] = {3, 1, 2}, even[4] = {4, 1, 3, 2};
    CHECK(imp_median_sort(odd, 3) == 2 && imp_median_sort(even, 4) == 2.5 && even[0] == 1);
}

/* Which model a finished run returns, and the report of one that ended far
 * above its best (under the guard's 1000x: the `--lr 10` run that finished
 * 214 times above its best and saved its last model). */
static void run_keep(const double *losses, int n, int keep, double *p, imp_train_report *r)
{
    imp_train_hooks h;
    imp_train_hooks_default(&h);
    h.keep = keep;
    h.report = r;
    *p = 0;
    imp_track t;
    CHECK_OK(imp_track_init(&t, &h, n, p, 1));
    int st = IMP_OK, stop = 0;
    for (int e = 0; e < n && !st; e++) {
        *p = 100 + e + 1;
        imp_loss_part part = {"total", losses[e]};
        st = imp_track_epoch(&t, p, &part, 1, 0.1, &stop);
    }
    CHECK(imp_track_end(&t, st, p) == IMP_OK);
    imp_track_free(&t);
}

static void test_keep(void)
{
    const double up[] = {5, 3, 2, 40, 30}; /* ends 15 times above the best */
    double p;
    imp_train_report r;
    run_keep(up, 5, IMP_KEEP_BEST, &p, &r);
    CHECK_MSG(r.stop == IMP_TRAIN_FINISHED && p == 103 && r.kept_epoch == 3 && r.best_epoch == 3 && r.far_above_best,
              "p %g kept %d far %d", p, r.kept_epoch, r.far_above_best);
    run_keep(up, 5, IMP_KEEP_LAST, &p, &r);
    CHECK(r.stop == IMP_TRAIN_FINISHED && p == 105 && r.kept_epoch == 5 && r.best_epoch == 3 && r.far_above_best);
    const double near[] = {5, 3, 2, 19}; /* 9.5 times: under the threshold */
    run_keep(near, 4, IMP_KEEP_BEST, &p, &r);
    CHECK(p == 103 && r.kept_epoch == 3 && !r.far_above_best);
    const double down[] = {5, 3, 2};
    run_keep(down, 3, IMP_KEEP_BEST, &p, &r);
    CHECK(p == 103 && r.kept_epoch == 3 && !r.far_above_best);
    imp_train_hooks h;
    imp_train_hooks_default(&h);
    h.keep = 2;
    imp_track t;
    CHECK_FAILS(imp_track_init(&t, &h, 1, &p, 1), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "keep"));
}

/* A resumed run's log keeps the epochs its state holds, no more. */
static void test_log_truncate(void)
{
    const char *log = "train_trunc.jsonl";
    const char *text = "{\"epoch\":1,\"loss\":3}\n{\"epoch\":2,\"loss\":2}\n{\"epoch\":3,\"loss\":1}\n"
                       "{\"epoch\":4,\"loss\":0.5}\n{\"epoch\":5,\"lo";
    CHECK_OK(imp_write_file_atomic(log, text, strlen(text)));
    CHECK_OK(imp_train_log_truncate(log, 2));
    unsigned char *b = NULL;
    size_t n = 0;
    CHECK_OK(imp_read_file(log, &b, &n));
    CHECK_MSG(b && n == strlen("{\"epoch\":1,\"loss\":3}\n{\"epoch\":2,\"loss\":2}\n") && !memcmp(b, text, n), "%.*s",
              (int)n, b ? (const char *)b : "");
    free(b);
    CHECK_OK(imp_write_file_atomic(log, text, strlen(text)));
    CHECK_OK(imp_train_log_truncate(log, 9)); /* all complete lines, not the torn one */
    CHECK_OK(imp_read_file(log, &b, &n));
    CHECK(b && n == (size_t)(strstr(text, "{\"epoch\":5") - text));
    free(b);
    CHECK_OK(imp_train_log_truncate("train_trunc_none.jsonl", 3));
    CHECK(access("train_trunc_none.jsonl", F_OK) != 0);
}

int main(void)
{
    test_guard();
    test_keep();
    test_log_truncate();
    imp_blas_init();
    imp_trajset ts;
    CHECK_OK(ball(&ts));
    test_cdl_callback(&ts);
    test_cdl_diverges(&ts);
    test_cdl_resume(&ts);
    test_lr_schedule_values();
    test_lr_schedule_auto(&ts);
    test_cdl_resume_cosine(&ts);
    test_chnn();
    imp_trajset_free(&ts);
    TEST_MAIN_END();
}
