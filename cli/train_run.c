/* What every `impulse train` run shares, whatever the model family: the
 * JSON-lines training log, progress lines (rate and ETA on a terminal, one
 * line every few seconds otherwise), Ctrl-C (or SIGTERM) stopping after the
 * current epoch, the training-state file for --resume, and saving the model at the
 * end with a rescue copy when the target cannot be written. */
#define _DEFAULT_SOURCE /* TIOCGWINSZ */
#include "cli.h"
#include "impulse/io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Columns of the terminal on standard error (COLUMNS, else 80, when it
 * does not say). */
static int term_width(void)
{
    struct winsize ws;
    if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    const char *c = getenv("COLUMNS");
    int n = c ? atoi(c) : 0;
    return n > 0 ? n : 80;
}

static void format_duration(double s, char *buf, size_t cap)
{
    if (!(s >= 0) || s > 1e8) s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

int cli_run_open(cli_run *r, const char *verb, const char *out, const char *log_path, const char *resume,
                 int quiet)
{
    memset(r, 0, sizeof *r);
    r->verb = verb;
    r->out = out;
    r->quiet = quiet;
    r->tty = isatty(2);
    const char *e = getenv("IMPULSE_PROGRESS");
    if (e && !strcmp(e, "0")) r->quiet = 1;
    r->every = 30.0;
    double every;
    if ((e = getenv("IMPULSE_PROGRESS_SECONDS")) && !cli_parse_double("IMPULSE_PROGRESS_SECONDS", e, 0.01, 1e6, &every))
        r->every = every;
    imp_clear_error();
    r->t_start = r->last_print = imp_time_now();
    int to_stdout = !strcmp(out, "-"); /* the model to standard output: no state, no default log */
    if (!to_stdout && (size_t)snprintf(r->state_path, sizeof r->state_path, "%s.state.npz", out) >= sizeof r->state_path)
        return cli_failf(verb, "-o: path too long");
    if (!log_path) {
        if (to_stdout) {
            cli_catch_stop_signals();
            return 0;
        }
        if ((size_t)snprintf(r->log_path, sizeof r->log_path, "%s.log.jsonl", out) >= sizeof r->log_path)
            return cli_failf(verb, "-o: path too long");
        log_path = r->log_path;
    } else {
        snprintf(r->log_path, sizeof r->log_path, "%s", log_path);
    }
    if (!resume && r->state_path[0] && !access(r->state_path, F_OK))
        fprintf(stderr, "impulse %s: notice: %s holds an interrupted run; this new run replaces it (to continue that "
                        "one instead, stop and add --resume %s)\n", verb, r->state_path, r->state_path);
    /* resuming: the log's lines of epochs after the state's would repeat */
    int state_epoch;
    if (resume && !imp_train_state_epoch(resume, &state_epoch) && imp_train_log_truncate(log_path, state_epoch))
        return cli_failf(verb, "training log '%s': %s (--log FILE puts it elsewhere)", log_path, imp_last_error());
    imp_clear_error(); /* an unreadable state is the training's to report */
    r->log = fopen(log_path, resume ? "a" : "w");
    if (!r->log)
        return cli_failf(verb, "cannot open the training log '%s': %s (--log FILE puts it elsewhere)", log_path,
                         strerror(errno));
    cli_catch_stop_signals();
    return 0;
}

void cli_run_close(cli_run *r)
{
    if (r->log) fclose(r->log);
    r->log = NULL;
}

int cli_run_on_epoch(const imp_epoch_info *info, void *user)
{
    cli_run *r = user;
    if (r->log) {
        imp_json j;
        imp_json_init(&j);
        imp_json_begin_object(&j);
        imp_json_kv_int(&j, "epoch", info->epoch);
        imp_json_kv_int(&j, "epochs", info->epochs);
        imp_json_kv_number(&j, "loss", info->loss);
        for (int i = 1; i < info->n_parts; i++) imp_json_kv_number(&j, info->parts[i].name, info->parts[i].value);
        imp_json_kv_number(&j, "lr", info->lr);
        imp_json_kv_number(&j, "seconds", info->seconds);
        imp_json_kv_int(&j, "best_epoch", info->best_epoch);
        imp_json_end_object(&j);
        const char *t = imp_json_text(&j);
        if (t) {
            fputs(t, r->log);
            fputc('\n', r->log);
            if (fflush(r->log) || ferror(r->log)) {
                fprintf(stderr, "impulse %s: warning: training log %s: write failed (%s); training goes on without it\n",
                        r->verb, r->log_path, strerror(errno));
                fclose(r->log);
                r->log = NULL;
            }
        }
        imp_json_free(&j);
    }
    double now = imp_time_now();
    if (r->first_epoch == 0) r->first_epoch = info->epoch, r->t_start = now;
    int last = info->epoch == info->epochs;
    if (!r->quiet && (now - r->last_print >= (r->tty ? 0.25 : r->every) || (last && r->tty))) {
        r->last_print = now;
        /* rate over this session's epochs after the first */
        int done = info->epoch - r->first_epoch;
        double rate = done > 0 && now > r->t_start ? done / (now - r->t_start) : 0;
        char eta[32] = "?", el[32];
        if (rate > 0) format_duration((info->epochs - info->epoch) / rate, eta, sizeof eta);
        format_duration(info->seconds, el, sizeof el);
        char parts[160] = "";
        size_t o = 0;
        for (int i = 1; i < info->n_parts && o < sizeof parts; i++)
            o += (size_t)snprintf(parts + o, sizeof parts - o, "%s%s %.4g", i > 1 ? ", " : " (", info->parts[i].name,
                                  info->parts[i].value);
        if (info->n_parts > 1 && o < sizeof parts - 1) strcat(parts, ")");
        /* On a terminal the line fits its width (a wrapped line is not
         * rewritten in place): the loss's terms, then the elapsed time, then
         * the rate give way, so that the epoch, loss and ETA always show. */
        char line[512];
        int width = r->tty ? term_width() : 0;
        for (int detail = 3; detail >= 0; detail--) {
            char rate_s[48] = "", el_s[48] = "";
            if (detail >= 1) snprintf(rate_s, sizeof rate_s, "  %.3g epochs/s", rate);
            if (detail >= 2) snprintf(el_s, sizeof el_s, "  elapsed %s", el);
            snprintf(line, sizeof line, "epoch %d/%d  loss %.5g%s%s%s  ETA %s", info->epoch, info->epochs, info->loss,
                     detail >= 3 ? parts : "", rate_s, el_s, eta);
            if (!width || (int)strlen(line) < width) break;
        }
        if (width > 1 && (int)strlen(line) >= width) line[width - 1] = '\0';
        fprintf(stderr, "%s%s%s", r->tty ? "\r\033[K" : "", line, r->tty && !last ? "" : "\n");
        r->printed_tty = r->tty && !last;
    }
    return cli_stop_requested();
}

/* Save to OUT, else to a rescue copy in $TMPDIR; on failure print one line
 * (after `why`, the training's own failure, if any) and return 1. */
static int save_or_rescue(cli_run *r, const char *why, int (*save)(const char *path, void *ctx), void *ctx)
{
    if (r->printed_tty) fputc('\n', stderr), r->printed_tty = 0;
    if (!save(r->out, ctx)) return 0;
    char first[1024];
    snprintf(first, sizeof first, "%s", imp_last_error());
    const char *dir = getenv("TMPDIR");
    if (!dir || !dir[0]) dir = "/tmp";
    const char *base = strrchr(r->out, '/');
    base = base ? base + 1 : r->out;
    char rescue[4096];
    snprintf(rescue, sizeof rescue, "%s/impulse-rescue-%ld-%s", dir, (long)getpid(), base);
    const char *sep = why[0] ? "; then " : "";
    if (!save(rescue, ctx))
        return cli_failf(r->verb, "%s%s%s; the trained model was saved to %s instead", why, sep, first, rescue);
    if (!access(r->state_path, R_OK))
        return cli_failf(r->verb, "%s%s%s; no rescue copy in %s either; the last training state is %s: make room "
                         "and run the same command with --resume %s", why, sep, first, dir, r->state_path,
                         r->state_path);
    return cli_failf(r->verb, "%s%s%s; no rescue copy in %s either: the trained model is lost", why, sep, first, dir);
}

const char *cli_run_kept(const imp_train_report *rep)
{
    return rep->kept_epoch == rep->best_epoch ? "best" : "last";
}

int cli_run_finish(cli_run *r, int st, const imp_train_report *rep, int (*save)(const char *path, void *ctx),
                   void *ctx)
{
    if (r->printed_tty) fputc('\n', stderr), r->printed_tty = 0;
    if (!st && rep->stop == IMP_TRAIN_FINISHED && r->epochs == 0 && rep->epochs_done == 0) {
        /* --epochs 0 checks the data and options: an untrained model is not
         * saved as if trained, and the empty default log goes too */
        char default_log[sizeof r->log_path + 16];
        snprintf(default_log, sizeof default_log, "%s.log.jsonl", r->out);
        cli_run_close(r);
        if (!strcmp(default_log, r->log_path)) unlink(r->log_path);
        fprintf(stderr, "impulse %s: --epochs 0: the data and options check out; nothing trained, no model written "
                        "(%s not created; --epochs E trains)\n", r->verb, r->out);
        r->out = NULL;
        return 0;
    }
    if (!st && rep->stop == IMP_TRAIN_FINISHED) {
        if (save_or_rescue(r, "", save, ctx)) return 1;
        unlink(r->state_path); /* the run is complete: its state is no longer needed */
        if (rep->far_above_best)
            return cli_failf(r->verb, "finished, but the final loss %.6g is %.3g times the best (epoch %d, loss %.6g; "
                             "more than %g times is reported): the learning rate is probably too high; the %s model "
                             "(epoch %d) was saved to %s", rep->final_loss, rep->final_loss / rep->best_loss,
                             rep->best_epoch, rep->best_loss, IMP_TRAIN_FAR_ABOVE_BEST,
                             rep->kept_epoch == rep->best_epoch ? "best" : "last", rep->kept_epoch, r->out),
                   CLI_EXIT_FAR_ABOVE_BEST;
        return 0;
    }
    if (rep->epochs_done == 0 && rep->stop != IMP_TRAIN_DIVERGED) return cli_fail(r->verb);
    /* a run that did not finish: keep what it learnt */
    char why[2048];
    snprintf(why, sizeof why, "%s", st ? imp_last_error() : "");
    if (save_or_rescue(r, why, save, ctx)) return 1;
    int resumable = !access(r->state_path, R_OK);
    if (rep->stop == IMP_TRAIN_STOPPED) {
        fprintf(stderr, "impulse %s: interrupted after epoch %d of %d: the best model (epoch %d, loss %.6g) was saved "
                        "to %s%s%s\n", r->verb, rep->epochs_done, r->epochs, rep->best_epoch, rep->best_loss, r->out,
                resumable ? "; continue with the same command and --resume " : "", resumable ? r->state_path : "");
        return 130;
    }
    if (rep->stop == IMP_TRAIN_DIVERGED) return cli_failf(r->verb, "%s; saved to %s", why, r->out);
    return cli_failf(r->verb, "%s; the model after epoch %d was saved to %s", why, rep->epochs_done, r->out);
}

void cli_run_json(imp_json *j, const cli_run *r, const imp_train_report *rep, const char *model,
                  const char *system)
{
    cli_json_begin(j, r->verb);
    imp_json_kv_string(j, "model", model);
    imp_json_kv_string(j, "system", system);
    imp_json_kv_int(j, "epochs_done", rep->epochs_done);
    imp_json_kv_int(j, "resumed_at", rep->resumed_at);
    imp_json_kv_int(j, "best_epoch", rep->best_epoch);
    imp_json_kv_number(j, "final_loss", r->out ? rep->final_loss : NAN); /* --epochs 0: none */
    imp_json_kv_number(j, "best_loss", rep->best_loss);
    imp_json_kv_number(j, "seconds", rep->seconds);
    imp_json_kv_string(j, "end", r->out ? imp_train_stop_name(rep->stop) : "untrained");
    imp_json_kv_string(j, "kept", cli_run_kept(rep));
    imp_json_kv_int(j, "kept_epoch", rep->kept_epoch);
    imp_json_key(j, "far_above_best");
    imp_json_bool(j, rep->far_above_best);
    imp_json_key(j, "output");
    if (r->out) imp_json_string(j, r->out);
    else imp_json_null(j); /* --epochs 0: nothing written */
}

void cli_run_opts_default(cli_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->checkpoint_seconds = 60;
    o->diverge_factor = 1e3;
}

int cli_run_option(cli_run_opts *o, const char *verb, const char *name, const char *val)
{
    long lv;
    if (!strcmp(name, "--log")) {
        if (!val || !val[0]) return cli_failf(verb, "--log: missing FILE"), -1;
        o->log = val;
    } else if (!strcmp(name, "--resume")) {
        if (!val || !val[0]) return cli_failf(verb, "--resume: missing STATE file"), -1;
        o->resume = val;
    } else if (!strcmp(name, "--checkpoint-every")) {
        if (cli_parse_long(name, val, 0, 100000000, &lv)) return cli_fail(verb), -1;
        o->checkpoint_every = (int)lv;
    } else if (!strcmp(name, "--checkpoint-seconds")) {
        if (cli_parse_double(name, val, 0, 1e9, &o->checkpoint_seconds)) return cli_fail(verb), -1;
    } else if (!strcmp(name, "--keep")) {
        if (!val || (strcmp(val, "best") && strcmp(val, "last")))
            return cli_failf(verb, "--keep: '%s' is neither best nor last", val ? val : ""), -1;
        o->keep = strcmp(val, "last") ? IMP_KEEP_BEST : IMP_KEEP_LAST;
    } else if (!strcmp(name, "--diverge-factor")) {
        if (cli_parse_double(name, val, 0, 1e300, &o->diverge_factor)) return cli_fail(verb), -1;
    } else {
        return 0;
    }
    return 1;
}

void cli_run_hooks(const cli_run_opts *o, cli_run *r, imp_train_hooks *h, imp_train_report *rep, int epochs)
{
    r->epochs = epochs;
    h->on_epoch = cli_run_on_epoch;
    h->user_data = r;
    h->report = rep;
    h->diverge_factor = o->diverge_factor;
    h->keep = o->keep;
    h->state_path = r->state_path[0] ? r->state_path : NULL;
    h->state_every = o->checkpoint_every;
    h->state_seconds = o->checkpoint_seconds;
    h->resume_path = o->resume;
}
