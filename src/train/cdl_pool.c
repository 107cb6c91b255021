/* The CD-Lagrange window loss of a minibatch on several threads: the
 * minibatch's windows are independent until their gradients are summed, so
 * each thread rolls out and differentiates a contiguous slice with its own
 * model work space and gradient buffer (the team of threads is the one of
 * the CHNN training, src/core/pool.c). See cdl_pool.h for the reduction. */
#include "train/cdl_pool.h"
#include "core/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cdl_slice {
    imp_model_work *w;
    double *grad; /* n_params, threads > 1 only */
    int b0, nb;
    int status;
    imp_loss_parts lp;
    char msg[1024];
} cdl_slice;

struct imp_cdl_pool {
    const imp_model *m;
    int threads, B, H;
    cdl_slice *slices;
    imp_pool *team;
    /* the current job */
    const double *params, *x0, *target, *labels, *weight;
    double l2;
    int want_grad;
};

void imp_cdl_pool_free(imp_cdl_pool *p)
{
    if (!p) return;
    imp_pool_free(p->team);
    if (p->slices)
        for (int t = 0; t < p->threads; t++) {
            imp_model_work_free(p->slices[t].w);
            free(p->slices[t].grad);
        }
    free(p->slices);
    free(p);
}

int imp_cdl_pool_new(imp_cdl_pool **out, const imp_model *m, int B, int H, int threads, int single_contact,
                     int single_potential)
{
    *out = NULL;
    if (threads < 1 || threads > IMP_POOL_MAX_THREADS)
        return imp_fail(IMP_ERR_INVALID, "threads: %d must be in 1..%d", threads, IMP_POOL_MAX_THREADS);
    if (threads > B) threads = B; /* no empty slices */
    imp_cdl_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->slices = calloc((size_t)threads, sizeof *p->slices))) {
        free(p);
        return imp_fail(IMP_ERR_NOMEM, "training: out of memory");
    }
    p->m = m, p->threads = threads, p->B = B, p->H = H;
    const int slice = (B + threads - 1) / threads;
    int st = IMP_OK;
    for (int t = 0; t < threads && !st; t++) {
        cdl_slice *s = &p->slices[t];
        s->w = imp_model_work_new(m, slice, H);
        if (threads > 1) s->grad = malloc(m->n_params * sizeof(double));
        if (!s->w || (threads > 1 && !s->grad)) st = imp_fail(IMP_ERR_NOMEM, "training: out of memory");
        /* the contact classifier's 100 x 100 products in float: see src/nn/mlp_single.c */
        if (!st) st = imp_model_work_set_single_contact(s->w, single_contact);
        /* and the potential's sweeps: see src/nn/mlp_fused.c */
        if (!st) st = imp_model_work_set_single_potential(s->w, single_potential);
    }
    if (!st) st = imp_pool_new(&p->team, threads);
    if (st) {
        imp_cdl_pool_free(p);
        return st;
    }
    *out = p;
    return IMP_OK;
}

static void slice_task(void *ctx, int t)
{
    imp_cdl_pool *p = ctx;
    cdl_slice *s = &p->slices[t];
    memset(&s->lp, 0, sizeof s->lp);
    s->status = IMP_OK;
    if (s->nb < 1) return;
    const int K = p->m->K, S = 2 * p->m->D, H = p->H;
    if (p->want_grad) memset(s->grad, 0, p->m->n_params * sizeof(double));
    s->status = imp_model_window_loss(p->m, p->params, s->w, p->x0 + (size_t)s->b0 * S,
                                      p->target + (size_t)s->b0 * H * S,
                                      p->labels ? p->labels + (size_t)s->b0 * H * K : NULL,
                                      p->weight ? p->weight + (size_t)s->b0 * H : NULL, s->nb, H, p->l2,
                                      p->want_grad ? s->grad : NULL, &s->lp);
    if (s->status) { /* messages are thread-local: keep this one for the caller's thread */
        snprintf(s->msg, sizeof s->msg, "%s", imp_last_error());
    }
}

int imp_cdl_pool_loss(imp_cdl_pool *p, const double *params, const double *x0, const double *target,
                      const double *labels, const double *weight, int bs, double l2, double *grad,
                      imp_loss_parts *parts)
{
    if (bs < 1 || bs > p->B) return imp_fail(IMP_ERR_SHAPE, "batch: %d windows, the pool holds 1..%d", bs, p->B);
    if (p->threads == 1)
        return imp_model_window_loss(p->m, params, p->slices[0].w, x0, target, labels, weight, bs, p->H, l2, grad,
                                     parts);
    const int T = p->threads;
    int b0 = 0;
    for (int t = 0; t < T; t++) {
        p->slices[t].b0 = b0;
        p->slices[t].nb = bs / T + (t < bs % T ? 1 : 0);
        b0 += p->slices[t].nb;
    }
    p->params = params, p->x0 = x0, p->target = target, p->labels = labels, p->weight = weight, p->l2 = l2;
    p->want_grad = grad != NULL;
    imp_pool_run(p->team, slice_task, p);
    for (int t = 0; t < T; t++)
        if (p->slices[t].status)
            return imp_fail(p->slices[t].status, "windows %d..%d (thread %d of %d): %s", p->slices[t].b0,
                            p->slices[t].b0 + p->slices[t].nb - 1, t + 1, T, p->slices[t].msg);
    imp_loss_parts lp = {0};
    for (int t = 0; t < T; t++) {
        const cdl_slice *s = &p->slices[t];
        if (s->nb < 1) continue;
        const double wt = (double)s->nb / (double)bs;
        lp.state += wt * s->lp.state, lp.contact += wt * s->lp.contact, lp.l2 += wt * s->lp.l2;
        if (grad)
            for (size_t q = 0; q < p->m->n_params; q++) grad[q] += wt * s->grad[q];
    }
    lp.total = lp.state + lp.contact + lp.l2;
    if (parts) *parts = lp;
    return IMP_OK;
}
