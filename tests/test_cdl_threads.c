/* CD-Lagrange training on several threads (src/train/cdl_pool.c): the
 * minibatch loss and gradient of 1..3 threads against one call of
 * imp_model_window_loss on the whole batch (double: to rounding; the
 * default single-precision training: to float rounding), and whole
 * trainings: the same thread count twice gives bit-identical parameters,
 * another count agrees closely but not bit for bit (the slices really
 * ran separately). */
#include "impulse/cdl.h"
#include "train/cdl_pool.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* max |a - b| over max |b| */
static double rel_diff(const double *a, const double *b, size_t n) { return test_grad_rel_err(a, b, n, 1e-300); }

static void test_pool_loss(const imp_trajset *ts)
{
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.hidden = 37;
    imp_model *m = NULL;
    CHECK_OK(imp_model_create(&m, &cfg, &ts->geom, ts->dt, 3));
    enum { B = 7, H = 5 };
    const int D = m->D, K = m->K, S = 2 * D;
    double x0[B * 2], target[B * H * 2], labels[B * H];
    CHECK(S == 2 && K == 1);
    static const int starts[B] = {66, 68, 70, 20, 3, 140, 200};
    for (int b = 0; b < B; b++) {
        x0[b * S] = ts->q[starts[b]], x0[b * S + 1] = ts->qdot[starts[b]];
        for (int k = 0; k < H; k++) {
            target[(b * H + k) * S] = ts->q[starts[b] + 1 + k];
            target[(b * H + k) * S + 1] = ts->qdot[starts[b] + 1 + k];
            labels[b * H + k] = ts->contact[starts[b] + 1 + k];
        }
    }
    for (int single = 0; single < 2; single++) {
        double *g1 = calloc(m->n_params, sizeof(double)), *gT = calloc(m->n_params, sizeof(double));
        imp_model_work *w = imp_model_work_new(m, B, H);
        CHECK_OK(imp_model_work_set_single_contact(w, single));
        CHECK_OK(imp_model_work_set_single_potential(w, single));
        imp_loss_parts l1, lT;
        CHECK_OK(imp_model_window_loss(m, m->params, w, x0, target, labels, NULL, B, H, 0.01, g1, &l1));
        for (int T = 1; T <= 3; T++) {
            imp_cdl_pool *p = NULL;
            CHECK_OK(imp_cdl_pool_new(&p, m, B, H, T, single, single));
            for (int bs = B; bs >= B - 1; bs--) {
                memset(gT, 0, m->n_params * sizeof(double));
                CHECK_OK(imp_cdl_pool_loss(p, m->params, x0, target, labels, NULL, bs, 0.01, gT, &lT));
                if (bs < B) continue; /* a short last minibatch: runs, loss finite */
                double e = fmax(rel_diff(gT, g1, m->n_params), fabs(lT.total - l1.total) / l1.total);
                e = fmax(e, fabs(lT.l2 - l1.l2) / l1.l2);
                printf("%s training, %d thread%s: loss %.6g, gradient and loss relative difference to one call %.2e\n",
                       single ? "single" : "double", T, T > 1 ? "s" : "", lT.total, e);
                if (T == 1) CHECK(e == 0.0);
                else CHECK_MSG(e < (single ? 2e-5 : 1e-12), "%d threads differ from one call by %.2e", T, e);
            }
            CHECK(isfinite(lT.total));
            CHECK_FAILS(imp_cdl_pool_loss(p, m->params, x0, target, labels, NULL, B + 1, 0.01, gT, &lT), IMP_ERR_SHAPE);
            imp_cdl_pool_free(p);
        }
        imp_model_work_free(w);
        free(g1), free(gT);
    }
    imp_model_free(m);
}

static void train(const imp_trajset *ts, int threads, int single, double *params_out, size_t *n)
{
    imp_cdl_config cfg;
    imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
    cfg.hidden = 37;
    imp_model *m = NULL;
    CHECK_OK(imp_model_create(&m, &cfg, &ts->geom, ts->dt, 9));
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    to.epochs = 2;
    to.batch = 15;
    to.threads = threads;
    to.single_contact = to.single_potential = single;
    CHECK_OK(imp_model_train(m, ts, &to, NULL));
    memcpy(params_out, m->params, m->n_params * sizeof(double));
    *n = m->n_params;
    imp_model_free(m);
}

static void test_training(const imp_trajset *ts)
{
    enum { MAXP = 100000 };
    double *p[4];
    for (int k = 0; k < 4; k++) p[k] = malloc(MAXP * sizeof(double));
    size_t n = 0;
    for (int single = 0; single < 2; single++) {
        train(ts, 1, single, p[0], &n);
        CHECK(n < MAXP);
        train(ts, 2, single, p[1], &n);
        train(ts, 2, single, p[2], &n);
        train(ts, 3, single, p[3], &n);
        CHECK(memcmp(p[1], p[2], n * sizeof(double)) == 0); /* deterministic for a given count */
        double e2 = rel_diff(p[1], p[0], n), e3 = rel_diff(p[3], p[0], n);
        printf("%s training, 2 epochs: parameters of 2 and 3 threads against 1: %.2e, %.2e\n",
               single ? "single" : "double", e2, e3);
        CHECK(e2 > 0.0 && e3 > 0.0);
        CHECK(e2 < (single ? 1e-3 : 1e-9) && e3 < (single ? 1e-3 : 1e-9));
    }
    for (int k = 0; k < 4; k++) free(p[k]);
}

int main(void)
{
    imp_blas_init();
    imp_sim_opts o;
    imp_trajset ts;
    CHECK_OK(imp_sim_defaults("bouncing-ball", &o));
    o.noise = 0.05;
    CHECK_OK(imp_simulate("bouncing-ball", &o, &ts));
    test_pool_loss(&ts);
    test_training(&ts);
    imp_trajset_free(&ts);
    TEST_MAIN_END();
}
