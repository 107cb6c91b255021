/* A fixed team of threads for data-parallel passes: the caller's thread is
 * task 0 and threads - 1 POSIX threads, started once, wait for jobs. A job
 * runs fn(ctx, t) for every t in 0..threads-1 and returns when all are
 * done; which work each t gets, and the order in which the caller then
 * combines the results, is the caller's, so a reduction in task order is
 * deterministic for a given thread count. Used by the CHNN-family training
 * (src/train/chnn_train.c) and the CD-Lagrange training
 * (src/train/cdl_train.c). */
#define _POSIX_C_SOURCE 200809L
#include "core/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct pool_thread {
    pthread_t thread;
    int t;
    struct imp_pool *pool;
} pool_thread;

struct imp_pool {
    int threads, started, have_sync;
    pool_thread *team;
    pthread_mutex_t mu;
    pthread_cond_t go, fin;
    unsigned long gen; /* job generation: workers run when it changes */
    int pending;       /* workers still running the current job */
    int quit;
    imp_pool_fn fn;
    void *ctx;
};

static void *worker_main(void *arg)
{
    pool_thread *me = arg;
    imp_pool *p = me->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) break;
        seen = p->gen;
        imp_pool_fn fn = p->fn;
        void *ctx = p->ctx;
        pthread_mutex_unlock(&p->mu);
        fn(ctx, me->t);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->fin);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void imp_pool_free(imp_pool *p)
{
    if (!p) return;
    if (p->started > 0) {
        pthread_mutex_lock(&p->mu);
        p->quit = 1;
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
        for (int t = 1; t <= p->started; t++) pthread_join(p->team[t].thread, NULL);
    }
    if (p->have_sync) {
        pthread_cond_destroy(&p->fin);
        pthread_cond_destroy(&p->go);
        pthread_mutex_destroy(&p->mu);
    }
    free(p->team);
    free(p);
}

int imp_pool_new(imp_pool **out, int threads)
{
    if (!out) return imp_fail(IMP_ERR_INVALID, "pool: NULL argument");
    *out = NULL;
    if (threads < 1 || threads > IMP_POOL_MAX_THREADS)
        return imp_fail(IMP_ERR_INVALID, "threads: %d must be in 1..%d", threads, IMP_POOL_MAX_THREADS);
    imp_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->team = calloc((size_t)threads, sizeof *p->team))) {
        free(p);
        return imp_fail(IMP_ERR_NOMEM, "pool: out of memory");
    }
    p->threads = threads;
    if (threads > 1) {
        if (pthread_mutex_init(&p->mu, NULL)) goto sync_fail;
        if (pthread_cond_init(&p->go, NULL)) {
            pthread_mutex_destroy(&p->mu);
            goto sync_fail;
        }
        if (pthread_cond_init(&p->fin, NULL)) {
            pthread_cond_destroy(&p->go);
            pthread_mutex_destroy(&p->mu);
            goto sync_fail;
        }
        p->have_sync = 1;
        for (int t = 1; t < threads; t++) {
            p->team[t].t = t;
            p->team[t].pool = p;
            int e = pthread_create(&p->team[t].thread, NULL, worker_main, &p->team[t]);
            if (e) {
                imp_pool_free(p);
                return imp_fail(e == EAGAIN ? IMP_ERR_NOMEM : IMP_ERR_INVALID,
                                "threads: cannot start thread %d of %d (%s)", t + 1, threads, strerror(e));
            }
            p->started = t;
        }
    }
    *out = p;
    return IMP_OK;
sync_fail:
    imp_pool_free(p);
    return imp_fail(IMP_ERR_NOMEM, "threads: cannot create the pool's mutex or condition variables");
}

int imp_pool_threads(const imp_pool *p) { return p ? p->threads : 0; }

void imp_pool_run(imp_pool *p, imp_pool_fn fn, void *ctx)
{
    if (p->threads > 1) {
        pthread_mutex_lock(&p->mu);
        p->fn = fn;
        p->ctx = ctx;
        p->pending = p->threads - 1;
        p->gen++;
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
    }
    fn(ctx, 0); /* task 0 on the calling thread */
    if (p->threads > 1) {
        pthread_mutex_lock(&p->mu);
        while (p->pending > 0) pthread_cond_wait(&p->fin, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
