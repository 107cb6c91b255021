/* `impulse reproduce chnn`: Finzi et al. 2020 figures 5/7 (mean over test
 * trajectories of the geometric-mean relative error, per system and model),
 * energy and constraint figures (appendix B), and the 2-pendulum data-
 * efficiency sweep (figure 6). Generates its data, trains, evaluates,
 * prints the table and writes results, checkpoints and figures to --out. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "impulse/chnn_models.h"
#include "impulse/io.h"
#include "impulse/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SYS 8
#define MAX_MODELS 5
#define MAX_NTRAIN 12

static const char *verb = "reproduce chnn";

static int split_list(char *text, char **items, int max)
{
    int n = 0;
    for (char *tok = strtok(text, ","); tok && n < max; tok = strtok(NULL, ",")) items[n++] = tok;
    return n;
}

typedef struct cell {
    int done;
    double mean_geo, median_geo, ci95, energy, violation, train_s, eval_s, final_loss;
    int T;
    double *mean_rel, *mean_energy, *mean_viol; /* T, averaged over test trajectories */
} cell;

typedef struct run_cfg {
    int epochs, n_train, n_test, hidden, T, resume, threads;
    double lr;          /* 0: per-system default */
    unsigned long long seed;
    const char *out;
} run_cfg;

static void progress_cb(void *user, int epoch, double loss, double seconds)
{
    const char *tag = user;
    if (cli_progress_enabled() && ((epoch + 1) % 50 == 0 || epoch == 0))
        fprintf(stderr, "  %s: epoch %d loss %.4g (%.0f s)\n", tag, epoch + 1, loss, seconds);
}

/* Magnet and rotor were trained with lr 1e-3 in the reference ([chnn] section 3). */
static double default_lr(const char *sys)
{
    return (!strcmp(sys, "rotor") || !strcmp(sys, "magnet-pendulum")) ? 1e-3 : 3e-3;
}

static void sanitize(const char *in, char *out, size_t cap)
{
    size_t i = 0;
    for (; in[i] && i + 1 < cap; i++) out[i] = (in[i] == ':' || in[i] == '/') ? '-' : in[i];
    out[i] = 0;
}

/* Train (or load with --resume) and evaluate one model on one system. */
static int run_cell(const run_cfg *cfg, const imp_csystem *sys, const char *model_name, const imp_ctraj *train,
                    const imp_ctraj *test, int n_train, cell *c)
{
    imp_cmodel_kind kind;
    int st = imp_cmodel_kind_from_name(model_name, &kind);
    if (st) return st;
    imp_cmodel m;
    st = imp_cmodel_init(&m, kind, sys, cfg->hidden, 3);
    if (st) return st;
    char sname[64], path[512], tag[128];
    sanitize(sys->name, sname, sizeof sname);
    snprintf(path, sizeof path, "%s/%s_%s_n%d.npz", cfg->out, sname, model_name, n_train);
    snprintf(tag, sizeof tag, "%s %s n=%d", sys->name, model_name, n_train);
    double *params = NULL;
    imp_ctraj gen;
    memset(&gen, 0, sizeof gen);
    struct stat sb;
    if (cfg->resume && stat(path, &sb) == 0) {
        imp_cmodel m2;
        st = imp_cmodel_load(path, &m2, &params);
        if (st) return st;
        m = m2;
        c->train_s = NAN;
        c->final_loss = NAN;
    } else {
        params = malloc(m.n_params * sizeof(double));
        if (!params) return imp_fail(IMP_ERR_NOMEM, "params");
        imp_rng rng;
        imp_rng_seed(&rng, cfg->seed * 7919 + 17);
        imp_cmodel_init_params(&m, params, &rng);
        if (!m.cartesian) st = imp_ctraj_to_generalised(sys, train, &gen);
        imp_ctrain_opts o;
        imp_ctrain_opts_default(&o);
        o.epochs = cfg->epochs;
        o.lr = cfg->lr > 0 ? cfg->lr : default_lr(sys->name);
        o.n_chunks = n_train;
        o.seed = cfg->seed;
        o.threads = cfg->threads;
        o.progress = progress_cb;
        o.progress_user = tag;
        imp_ctrain_result res;
        if (!st) st = imp_ctrain(&m, params, m.cartesian ? train : &gen, &o, &res);
        imp_ctraj_free(&gen);
        if (!st) st = imp_cmodel_save(path, &m, params, &o, &res);
        if (st) {
            free(params);
            return st;
        }
        c->train_s = res.seconds;
        c->final_loss = res.final_loss;
    }
    imp_ceval_opts eo;
    imp_ceval_opts_default(&eo);
    imp_ceval_result r;
    st = imp_ceval(&m, params, test, &eo, &r);
    free(params);
    if (st) return st;
    c->done = 1;
    c->mean_geo = r.mean_geo;
    c->median_geo = r.median_geo;
    double var = 0;
    for (int i = 0; i < r.n_test; i++) var += (r.geo[i] - r.mean_geo) * (r.geo[i] - r.mean_geo);
    c->ci95 = r.n_test > 1 ? 1.96 * sqrt(var / (r.n_test - 1) / r.n_test) : 0;
    c->energy = r.mean_energy_err;
    c->violation = r.mean_violation;
    c->eval_s = r.seconds;
    c->T = r.T;
    c->mean_rel = calloc((size_t)r.T, sizeof(double));
    c->mean_energy = calloc((size_t)r.T, sizeof(double));
    c->mean_viol = calloc((size_t)r.T, sizeof(double));
    if (c->mean_rel && c->mean_energy && c->mean_viol)
        for (int i = 0; i < r.n_test; i++)
            for (int k = 0; k < r.T; k++) {
                c->mean_rel[k] += r.rel_err[(size_t)i * r.T + k] / r.n_test;
                c->mean_energy[k] += r.energy_err[(size_t)i * r.T + k] / r.n_test;
                c->mean_viol[k] += r.violation[(size_t)i * r.T + k] / r.n_test;
            }
    imp_ceval_result_free(&r);
    fprintf(stderr, "%s: mean geo rel err %.3g (median %.3g), energy %.3g, violation %.3g, train %.0f s\n", tag,
            c->mean_geo, c->median_geo, c->energy, c->violation, c->train_s);
    return IMP_OK;
}

static void cell_free(cell *c)
{
    free(c->mean_rel);
    free(c->mean_energy);
    free(c->mean_viol);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse reproduce chnn [--quick] [--systems a,b,...] [--models chnn,clnn,hnn,delan,node]\n"
            "         [--epochs E] [--n-train N] [--n-test N] [--lr X] [--hidden H] [--seed K]\n"
            "         [--out DIR] [--resume] [--data-efficiency [--n-train-list 20,200,800]] [--threads N]\n"
            "  default: pendulum-chain:1,2,3, gyroscope, rotor; all five models; 2000 epochs,\n"
            "  800 training chunks, 100 test trajectories (the reference settings)\n"
            "  --quick: pendulum-chain:1,2; chnn, node; 30 epochs, 200 chunks, 20 test trajectories\n"
            "  --threads N: training threads per minibatch, 1..64 (default 2); the same N and seed\n"
            "  give bit-identical checkpoints, another N agrees to rounding\n");
}

static int write_figures(const run_cfg *cfg, char **systems, int n_sys, char **models, int n_models, cell *cells,
                         const double *floor_geo)
{
    /* bar chart: groups = models, categories = systems */
    double *vals = malloc((size_t)(n_models + 1) * n_sys * sizeof(double));
    double *errs = malloc((size_t)(n_models + 1) * n_sys * sizeof(double));
    const char *groups[MAX_MODELS + 1];
    for (int mi = 0; mi < n_models; mi++) groups[mi] = models[mi];
    groups[n_models] = "GT + 1e-4 pert";
    for (int si = 0; si < n_sys; si++) {
        for (int mi = 0; mi < n_models; mi++) {
            cell *c = &cells[si * MAX_MODELS + mi];
            vals[mi * n_sys + si] = c->done ? c->mean_geo : NAN;
            errs[mi * n_sys + si] = c->done ? c->ci95 : 0;
        }
        vals[n_models * n_sys + si] = floor_geo[si];
        errs[n_models * n_sys + si] = 0;
    }
    char stem[512];
    int st = IMP_OK;
    imp_figure *fig = imp_figure_new(1, 1, 8, 4);
    if (fig) {
        imp_figure_axes(fig, 0, "Geometric mean of the relative error (mean over test trajectories, 95% CI)", NULL,
                        "relative error");
        imp_figure_logscale(fig, 0, 0, 1);
        imp_figure_bars(fig, 0, (const char *const *)systems, (size_t)n_sys, groups, (size_t)n_models + 1, vals, errs);
        snprintf(stem, sizeof stem, "%s/chnn_bars", cfg->out);
        st = imp_figure_save(fig, stem);
        imp_figure_free(fig);
    }
    free(vals);
    free(errs);
    const char *names[3] = {"rel_err", "energy", "constraint"};
    const char *ylabels[3] = {"relative error", "relative energy error", "|Psi(x, v)|"};
    for (int kind = 0; kind < 3 && !st; kind++) {
        imp_figure *f = imp_figure_new(1, n_sys, 3.2 * n_sys, 3.2);
        if (!f) break;
        for (int si = 0; si < n_sys; si++) {
            imp_figure_axes(f, si, systems[si], "time (s)", si == 0 ? ylabels[kind] : NULL);
            imp_figure_logscale(f, si, 0, 1);
            for (int mi = 0; mi < n_models; mi++) {
                cell *c = &cells[si * MAX_MODELS + mi];
                if (!c->done) continue;
                double *t = malloc((size_t)c->T * sizeof(double));
                double dt = 0;
                imp_csystem cs;
                if (!imp_csystem_from_name(&cs, systems[si])) dt = cs.dt;
                for (int k = 0; k < c->T; k++) t[k] = k * dt;
                const double *y = kind == 0 ? c->mean_rel : kind == 1 ? c->mean_energy : c->mean_viol;
                /* from the first step on: at t = 0 the errors are ~0 and would
                 * stretch the log axis */
                if (c->T > 1) imp_figure_line(f, si, t + 1, y + 1, (size_t)c->T - 1, models[mi], NULL);
                free(t);
            }
        }
        snprintf(stem, sizeof stem, "%s/chnn_%s", cfg->out, names[kind]);
        st = imp_figure_save(f, stem);
        imp_figure_free(f);
    }
    return st;
}

static int data_efficiency(const run_cfg *cfg, char **models, int n_models, int *ntr, int n_ntr)
{
    imp_csystem sys;
    int st = imp_csystem_from_name(&sys, "pendulum-chain:2");
    if (st) return st;
    int maxn = 0;
    for (int i = 0; i < n_ntr; i++) maxn = ntr[i] > maxn ? ntr[i] : maxn;
    imp_ctraj train, test;
    fprintf(stderr, "generating pendulum-chain:2 data (%d train, %d test)\n", maxn, cfg->n_test);
    st = imp_cexp_train_data(&sys, maxn, cfg->T, 0, &train);
    if (st) return st;
    st = imp_cexp_test_data(&sys, cfg->n_test, cfg->T, 2, &test);
    if (st) {
        imp_ctraj_free(&train);
        return st;
    }
    cell cells[MAX_NTRAIN * MAX_MODELS];
    memset(cells, 0, sizeof cells);
    for (int i = 0; i < n_ntr; i++)
        for (int mi = 0; mi < n_models; mi++)
            if (run_cell(cfg, &sys, models[mi], &train, &test, ntr[i], &cells[i * MAX_MODELS + mi]))
                fprintf(stderr, "impulse %s: warning: n_train %d %s failed: %s\n", verb, ntr[i], models[mi],
                        imp_last_error());
    if (!st) {
        printf("\nData efficiency, pendulum-chain:2 (mean geometric-mean relative error, %d test trajectories, %d epochs)\n\n",
               cfg->n_test, cfg->epochs);
        printf("| n_train |");
        for (int mi = 0; mi < n_models; mi++) printf(" %s |", models[mi]);
        printf("\n|---|");
        for (int mi = 0; mi < n_models; mi++) printf("---|");
        printf("\n");
        for (int i = 0; i < n_ntr; i++) {
            printf("| %d |", ntr[i]);
            for (int mi = 0; mi < n_models; mi++) {
                cell *c = &cells[i * MAX_MODELS + mi];
                if (c->done) printf(" %.3g ± %.2g |", c->mean_geo, c->ci95);
                else printf(" failed |");
            }
            printf("\n");
        }
        imp_figure *f = imp_figure_new(1, 1, 5, 4);
        if (f) {
            imp_figure_axes(f, 0, "pendulum-chain:2 data efficiency", "training trajectories", "geometric-mean rel. error");
            imp_figure_logscale(f, 0, 1, 1);
            for (int mi = 0; mi < n_models; mi++) {
                double x[MAX_NTRAIN], y[MAX_NTRAIN], e[MAX_NTRAIN];
                for (int i = 0; i < n_ntr; i++) {
                    x[i] = ntr[i];
                    y[i] = cells[i * MAX_MODELS + mi].mean_geo;
                    e[i] = cells[i * MAX_MODELS + mi].ci95;
                }
                imp_figure_errorbar(f, 0, x, y, e, (size_t)n_ntr, models[mi], "o-");
            }
            char stem[512];
            snprintf(stem, sizeof stem, "%s/chnn_data_efficiency", cfg->out);
            if (imp_figure_save(f, stem)) fprintf(stderr, "impulse %s: warning: %s\n", verb, imp_last_error());
            imp_figure_free(f);
        }
    }
    for (int i = 0; i < MAX_NTRAIN * MAX_MODELS; i++) cell_free(&cells[i]);
    imp_ctraj_free(&train);
    imp_ctraj_free(&test);
    return st;
}

int cli_reproduce_chnn(int argc, char **argv)
{
    run_cfg cfg = {2000, 800, 100, 256, 100, 0, CLI_DEFAULT_THREADS, 0.0, 0, "reproduce-chnn"};
    char sys_default[] = "pendulum-chain:1,pendulum-chain:2,pendulum-chain:3,gyroscope,rotor";
    char models_default[] = "chnn,clnn,hnn,delan,node";
    char ntr_default[] = "20,200,800";
    char *sys_text = sys_default, *model_text = models_default, *ntr_text = ntr_default;
    int quick = 0, deff = 0, set_epochs = 0, set_ntrain = 0, set_ntest = 0, set_sys = 0, set_models = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        long lv;
        double dv;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "--resume")) {
            cfg.resume = 1;
        } else if (!strcmp(a, "--data-efficiency")) {
            deff = 1;
        } else if (!strcmp(a, "--systems") && val) {
            sys_text = argv[++i];
            set_sys = 1;
        } else if (!strcmp(a, "--models") && val) {
            model_text = argv[++i];
            set_models = 1;
        } else if (!strcmp(a, "--n-train-list") && val) {
            ntr_text = argv[++i];
        } else if (!strcmp(a, "--out") && val) {
            cfg.out = argv[++i];
        } else if (!strcmp(a, "--epochs")) {
            if (cli_parse_long(a, val, 0, 1000000, &lv)) return cli_fail(verb);
            cfg.epochs = (int)lv;
            set_epochs = 1;
            i++;
        } else if (!strcmp(a, "--n-train")) {
            if (cli_parse_long(a, val, 1, 1000000, &lv)) return cli_fail(verb);
            cfg.n_train = (int)lv;
            set_ntrain = 1;
            i++;
        } else if (!strcmp(a, "--n-test")) {
            if (cli_parse_long(a, val, 1, 100000, &lv)) return cli_fail(verb);
            cfg.n_test = (int)lv;
            set_ntest = 1;
            i++;
        } else if (!strcmp(a, "--hidden")) {
            if (cli_parse_long(a, val, 1, 4096, &lv)) return cli_fail(verb);
            cfg.hidden = (int)lv;
            i++;
        } else if (!strcmp(a, "--seed")) {
            if (cli_parse_long(a, val, 0, 2147483647L, &lv)) return cli_fail(verb);
            cfg.seed = (unsigned long long)lv;
            i++;
        } else if (!strcmp(a, "--lr")) {
            if (cli_parse_double(a, val, 1e-12, 10, &dv)) return cli_fail(verb);
            cfg.lr = dv;
            i++;
        } else if (!strcmp(a, "--threads")) {
            if (cli_parse_long(a, val, 1, CLI_MAX_THREADS, &lv)) return cli_fail(verb);
            cfg.threads = (int)lv;
            i++;
        } else {
            return cli_failf(verb, "unknown option '%s' (see --help)", a);
        }
    }
    char quick_sys[] = "pendulum-chain:1,pendulum-chain:2", quick_models[] = "chnn,node";
    if (quick) {
        if (!set_epochs) cfg.epochs = 30;
        if (!set_ntrain) cfg.n_train = 200;
        if (!set_ntest) cfg.n_test = 20;
        if (!set_sys) sys_text = quick_sys;
        if (!set_models) model_text = quick_models;
    }
    mkdir(cfg.out, 0777);
    struct stat sb;
    if (stat(cfg.out, &sb) || !S_ISDIR(sb.st_mode)) return cli_failf(verb, "--out: cannot create directory '%s'", cfg.out);
    char *models[MAX_MODELS];
    int n_models = split_list(model_text, models, MAX_MODELS);
    for (int mi = 0; mi < n_models; mi++) {
        imp_cmodel_kind k;
        if (imp_cmodel_kind_from_name(models[mi], &k)) return cli_fail(verb);
    }
    if (deff) {
        char *items[MAX_NTRAIN];
        int n = split_list(ntr_text, items, MAX_NTRAIN);
        int ntr[MAX_NTRAIN];
        for (int i = 0; i < n; i++) {
            long lv;
            if (cli_parse_long("--n-train-list", items[i], 1, 1000000, &lv)) return cli_fail(verb);
            ntr[i] = (int)lv;
        }
        return data_efficiency(&cfg, models, n_models, ntr, n) ? cli_fail(verb) : 0;
    }
    char *systems[MAX_SYS];
    int n_sys = split_list(sys_text, systems, MAX_SYS);
    cell *cells = calloc((size_t)MAX_SYS * MAX_MODELS, sizeof(cell));
    double floor_geo[MAX_SYS];
    int st = IMP_OK;
    for (int si = 0; si < n_sys && !st; si++) {
        imp_csystem sys;
        st = imp_csystem_from_name(&sys, systems[si]);
        if (st) break;
        imp_ctraj train, test;
        fprintf(stderr, "%s: generating %d training and %d test trajectories\n", sys.name, cfg.n_train, cfg.n_test);
        st = imp_cexp_train_data(&sys, cfg.n_train, cfg.T, 0, &train);
        if (st) break;
        st = imp_cexp_test_data(&sys, cfg.n_test, cfg.T, 2, &test);
        if (!st) st = imp_cexp_perturbed_floor(&sys, &test, 3, &floor_geo[si]);
        for (int mi = 0; mi < n_models && !st; mi++) {
            imp_cmodel_kind k;
            imp_cmodel_kind_from_name(models[mi], &k);
            if (k != IMP_CMODEL_CHNN && k != IMP_CMODEL_CLNN && sys.n_gen < 1) continue;
            /* a model that diverges in training or evaluation is reported, not fatal */
            if (run_cell(&cfg, &sys, models[mi], &train, &test, cfg.n_train, &cells[si * MAX_MODELS + mi]))
                fprintf(stderr, "impulse %s: warning: %s %s failed: %s\n", verb, sys.name, models[mi],
                        imp_last_error());
        }
        imp_ctraj_free(&train);
        imp_ctraj_free(&test);
    }
    if (st) {
        free(cells);
        return cli_fail(verb);
    }
    /* table: systems x models */
    printf("\nMean over %d test trajectories of the geometric-mean relative error ([F] figs 5/7)\n", cfg.n_test);
    printf("(%d epochs, %d training chunks, seed %llu, %d training thread%s)\n\n", cfg.epochs, cfg.n_train, cfg.seed,
           cfg.threads, cfg.threads == 1 ? "" : "s");
    const char *hdr[MAX_MODELS + 2];
    hdr[0] = "system";
    for (int mi = 0; mi < n_models; mi++) hdr[mi + 1] = models[mi];
    hdr[n_models + 1] = "GT + 1e-4 pert";
    imp_table *tab = imp_table_new((size_t)n_models + 2, hdr);
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_int(&j, "epochs", cfg.epochs);
    imp_json_kv_int(&j, "n_train", cfg.n_train);
    imp_json_kv_int(&j, "n_test", cfg.n_test);
    imp_json_kv_int(&j, "seed", (long long)cfg.seed);
    imp_json_kv_int(&j, "threads", cfg.threads);
    imp_json_key(&j, "results");
    imp_json_begin_array(&j);
    for (int si = 0; si < n_sys; si++) {
        imp_table_cellf(tab, "%s", systems[si]);
        for (int mi = 0; mi < n_models; mi++) {
            cell *c = &cells[si * MAX_MODELS + mi];
            if (c->done) imp_table_cellf(tab, "%.3g ± %.2g", c->mean_geo, c->ci95);
            else imp_table_cellf(tab, "failed");
            if (!c->done) continue;
            imp_json_begin_object(&j);
            imp_json_kv_string(&j, "system", systems[si]);
            imp_json_kv_string(&j, "model", models[mi]);
            imp_json_kv_number(&j, "mean_geo_rel_err", c->mean_geo);
            imp_json_kv_number(&j, "ci95", c->ci95);
            imp_json_kv_number(&j, "median_geo_rel_err", c->median_geo);
            imp_json_kv_number(&j, "mean_energy_err", c->energy);
            imp_json_kv_number(&j, "mean_violation", c->violation);
            imp_json_kv_number(&j, "final_train_loss", c->final_loss);
            imp_json_kv_number(&j, "train_seconds", c->train_s);
            imp_json_kv_number(&j, "eval_seconds", c->eval_s);
            imp_json_end_object(&j);
        }
        imp_table_cellf(tab, "%.3g", floor_geo[si]);
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "system", systems[si]);
        imp_json_kv_string(&j, "model", "gt-pert");
        imp_json_kv_number(&j, "mean_geo_rel_err", floor_geo[si]);
        imp_json_end_object(&j);
    }
    imp_json_end_array(&j);
    imp_json_end_object(&j);
    char *md = NULL, path[512];
    if (tab && !imp_table_markdown(tab, &md)) printf("%s\n", md);
    free(md);
    snprintf(path, sizeof path, "%s/chnn_table.md", cfg.out);
    if (tab) imp_table_save_markdown(tab, path);
    snprintf(path, sizeof path, "%s/chnn_table.csv", cfg.out);
    if (tab) imp_table_save_csv(tab, path);
    imp_table_free(tab);
    snprintf(path, sizeof path, "%s/chnn_results.json", cfg.out);
    const char *jt = imp_json_text(&j);
    if (jt) imp_write_file_atomic(path, jt, strlen(jt));
    imp_json_free(&j);
    if (write_figures(&cfg, systems, n_sys, models, n_models, cells, floor_geo))
        fprintf(stderr, "impulse %s: warning: figures not written: %s\n", verb, imp_last_error());
    for (int i = 0; i < MAX_SYS * MAX_MODELS; i++) cell_free(&cells[i]);
    free(cells);
    return 0;
}
