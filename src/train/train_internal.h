/* What both training loops share: the epoch bookkeeping behind
 * imp_train_hooks (history, best model, divergence guard, callback, report)
 * and the resumable training-state file. Internal to the library. */
#ifndef IMPULSE_TRAIN_INTERNAL_H
#define IMPULSE_TRAIN_INTERNAL_H

#include "impulse/core.h"
#include "impulse/nn.h"
#include "impulse/train.h"

typedef struct imp_track {
    imp_train_hooks h;       /* a copy (zero hooks when none were given) */
    int epochs;              /* of the whole run */
    size_t n;                /* parameters */
    double *best;            /* n: the best model so far: the completed epoch of the lowest
                              * loss, the initial parameters before one completes */
    int best_epoch;          /* its epoch (0: the initial parameters) */
    double best_epoch_loss;  /* its epoch's loss (+inf before an epoch completes) */
    double best_loss;        /* the guard's reference: the lowest of the best epoch's loss and
                              * the initial parameters' estimate (+inf until known) */
    int have_epoch;          /* an epoch has completed (the guard's reference is an epoch's) */
    int epoch;               /* epochs completed */
    int resumed_at;
    double final_loss;
    double *history;         /* epochs: own copy, for the state file */
    double t0, seconds_before, last_state;
    int stop;                /* enum imp_train_stop */
    const char *remedy;      /* what a diverged run should try (NULL: a smaller learning rate) */
    int tolerate;            /* epochs in a row above diverge_factor times the best that the
                              * guard lets pass (0: the first one stops the run) */
    int over;                /* epochs in a row above it so far */
} imp_track;

/* hooks may be NULL. Copies params as the best model of epoch 0. */
int imp_track_init(imp_track *t, const imp_train_hooks *hooks, int epochs, const double *params, size_t n);
void imp_track_free(imp_track *t);
/* The loss of the first minibatch of a fresh run, before any update: the
 * estimate of the initial parameters' loss (epoch 0 of the best model). */
void imp_track_initial_loss(imp_track *t, double loss);
/* After each epoch (t->epoch + 1) with the end-of-epoch parameters and the
 * epoch's mean loss parts (parts[0] the total). Returns IMP_OK with *stop = 0
 * to go on, IMP_OK with *stop = 1 when the callback asked to stop, or
 * IMP_ERR_NUMERIC (message names the epoch, the loss and the best) when the
 * loss is non-finite or above diverge_factor times the best. */
int imp_track_epoch(imp_track *t, const double *params, const imp_loss_part *parts, int n_parts, double lr,
                    int *stop);
/* A minibatch failed with status st inside epoch t->epoch + 1: a numeric
 * failure (non-finite loss or gradient) becomes a divergence. Returns st
 * with the message in context. */
int imp_track_batch_failed(imp_track *t, int st);
/* Is a training state due after the epoch just completed? */
int imp_track_state_due(const imp_track *t);
/* End of the run with status st: params become the best model's when the
 * run was stopped or diverged; fills the report. Returns st. */
int imp_track_end(imp_track *t, int st, double *params);
double imp_track_seconds(const imp_track *t);

/* ---- the training-state file ---- */
typedef struct imp_train_state {
    const char *family;      /* "cdl" or "cmodel" */
    const char *fingerprint; /* JSON text of everything the result depends on */
    imp_adam *opt;
    imp_rng *rng;
    size_t *order;           /* the shuffling permutation (n_order) */
    size_t n_order;
    double *params;          /* the current parameters (t->n) */
} imp_train_state;

/* Write t and s atomically to t->h.state_path. */
int imp_train_state_save(imp_track *t, const imp_train_state *s);
/* Read t->h.resume_path into t and s (buffers already sized); refuses a file
 * of another family, another fingerprint or other sizes. */
int imp_train_state_load(imp_track *t, imp_train_state *s);

#endif
