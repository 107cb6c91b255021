/* A fixed team of threads for data-parallel passes (src/core/pool.c); not
 * a public header. One pool serves one caller thread at a time. */
#ifndef IMPULSE_CORE_POOL_H
#define IMPULSE_CORE_POOL_H

#include "impulse/core.h"

#define IMP_POOL_MAX_THREADS 64

typedef struct imp_pool imp_pool;
/* task t of the current job, t in 0..threads-1 */
typedef void (*imp_pool_fn)(void *ctx, int t);

/* Starts threads - 1 threads (1..IMP_POOL_MAX_THREADS; 1: none, every job
 * runs on the caller's thread). IMP_ERR_NOMEM or IMP_ERR_INVALID if a
 * thread cannot be started (none is left running). */
int imp_pool_new(imp_pool **out, int threads);
void imp_pool_free(imp_pool *p);
int imp_pool_threads(const imp_pool *p);
/* fn(ctx, t) for every t, task 0 on the calling thread; returns when all
 * are done (everything the tasks wrote is then visible to the caller). */
void imp_pool_run(imp_pool *p, imp_pool_fn fn, void *ctx);

#endif
