/* impulse reproduce your-data: CD-Lagrange against ResNetContact and ResNet
 * on data not made by an event-driven simulator: the compliant (spring-damper)
 * bouncing ball with a touch sensor, observation noise, trained once with the
 * default label handling (auto: onset for touch-sensor labels) and once with
 * the labels as given, evaluated on held-out trajectories. The table behind
 * docs/your-data.md. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "impulse/cdl.h"
#include "impulse/io.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct settings {
    const char *out, *system;
    int seeds, epochs, jobs, heldout;
    double restitution, noise;
    int impact_law; /* CD-Lagrange's impact law (IMP_CDL_IMPACT_PAPER or _NEWTON; -1: the data's default) */
    int lr_schedule; /* every model's (IMP_LR_*; AUTO: train's default, cosine on these data) */
} settings;

typedef struct job {
    const char *model;
    const char *labels; /* "auto" or "as-given"; resnet: "-" (it takes no labels) */
    int seed;
} job;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse reproduce your-data [options]\n"
            "  CD-Lagrange, ResNetContact and ResNet on compliant-contact data with a touch sensor\n"
            "  (impulse simulate compliant-ball), labels handled by default (auto: onset) and as\n"
            "  given; held-out trajectories; reference-code RMSE, the learned force at the floor.\n"
            "  --seeds N        seeds (default 5): new noise, held-out starts and initialisation\n"
            "  --epochs E       training epochs (default 2000; --quick: 100)\n"
            "  --quick          2 seeds, 100 epochs (a smoke test, not a result)\n"
            "  --restitution E  target restitution of the spring-damper contact (default 0.7)\n"
            "  --noise S        observation noise (default 0.2)\n"
            "  --system S       compliant-ball (default)\n"
            "  --jobs J         training processes at once (default 2)\n"
            "  --impact-law L   CD-Lagrange's impact law: auto (default: newton on these data, as\n"
            "                   train's default), paper or newton (see train --help; use another\n"
            "                   --out)\n"
            "  --lr-schedule S  every model's learning-rate schedule: auto (default: cosine on these\n"
            "                   data, as train's default), constant or cosine (use another --out\n"
            "                   for each)\n"
            "  --out DIR        results folder (default reproduce-your-data): finished runs are\n"
            "                   kept and a later call with the same settings adds the missing\n"
            "                   ones; a folder made with other settings is refused\n");
}

static void run_path(char *buf, size_t cap, const settings *s, const job *j)
{
    snprintf(buf, cap, "%s/runs/%s-%s-%d.txt", s->out, j->model, j->labels[0] == '-' ? "none" : j->labels, j->seed);
}

static int make_data(const settings *s, int seed, int heldout, imp_trajset *ts)
{
    imp_sim_opts o;
    int st = imp_sim_defaults(s->system, &o);
    if (st) return st;
    o.restitution = s->restitution;
    o.noise = heldout ? 0.0 : s->noise;
    o.seed = (heldout ? 2000u : 1000u) + (unsigned)seed;
    o.n_traj = heldout ? s->heldout + 1 : 1;
    o.randomize = 1;
    if ((st = imp_simulate(s->system, &o, ts))) return st;
    if (heldout) {
        /* drop the first (the training trajectory's start): random starts only */
        size_t D = (size_t)ts->geom.n_bodies * ts->geom.dim, K = (size_t)ts->geom.n_bodies;
        size_t T = (size_t)ts->n_steps, n = (size_t)s->heldout * T;
        memmove(ts->q, ts->q + T * D, n * D * sizeof(double));
        memmove(ts->qdot, ts->qdot + T * D, n * D * sizeof(double));
        memmove(ts->q_clean, ts->q_clean + T * D, n * D * sizeof(double));
        memmove(ts->qdot_clean, ts->qdot_clean + T * D, n * D * sizeof(double));
        memmove(ts->contact, ts->contact + T * K, n * K * sizeof(double));
        ts->n_traj = s->heldout;
    }
    return IMP_OK;
}

/* One run in a worker: train, evaluate on the held-out set, write
 * "rmse_code rmse dUdq_floor/g e seconds". */
static int run_job(const settings *s, const job *j)
{
    imp_trajset train, test;
    int st = make_data(s, j->seed, 0, &train);
    if (st) return st;
    if ((st = make_data(s, j->seed, 1, &test))) {
        imp_trajset_free(&train);
        return st;
    }
    imp_cdl_config cfg;
    imp_model_kind kind;
    if (!(st = imp_model_kind_from_name(j->model, &kind))) imp_cdl_config_default(&cfg, kind);
    cfg.act = IMP_ACT_SOFTPLUS;
    cfg.touch = kind != IMP_MODEL_RESNET;
    if (!st && cfg.touch) {
        imp_label_mode mode;
        st = imp_label_mode_from_name(j->labels, &mode);
        if (!st) st = imp_contact_labels_apply(&train, mode, NULL);
    }
    imp_train_opts to;
    imp_train_opts_default(&to, 1);
    to.epochs = s->epochs;
    to.seed = (unsigned long long)j->seed;
    to.lr_schedule = s->lr_schedule;
    /* CD-Lagrange learns e, starting from the data's estimate around the
     * labelled contacts (not from the meta, which holds the target) */
    cfg.learn_restitution = kind == IMP_MODEL_CDL;
    if (kind == IMP_MODEL_CDL) cfg.impact_law = s->impact_law >= 0 ? s->impact_law : imp_cdl_default_impact_law(&train);
    imp_model *m = NULL;
    if (!st) st = imp_model_create(&m, &cfg, &train.geom, train.dt, to.seed);
    if (!st) st = imp_model_init_contact_law(m, &train, IMP_LAW_INIT_DATA, 0, IMP_LAW_INIT_DEFAULT, 0, NULL);
    double t0 = imp_time_now();
    if (!st) st = imp_model_train(m, &train, &to, NULL);
    double secs = imp_time_now() - t0;
    imp_eval_result r;
    if (!st && imp_model_evaluate(m, &test, 0, &r, NULL, NULL, NULL)) r.rmse = r.rmse_code = INFINITY;
    double force = NAN, e = NAN;
    if (!st && kind == IMP_MODEL_CDL) {
        double q0 = 0.0;
        if (!imp_model_potential_grad(m, &q0, 1, &force)) force /= train.gravity;
        double ec[IMP_MAX_CONTACTS];
        imp_model_get_contact_law(m, ec, NULL);
        e = ec[0];
    }
    if (!st) {
        char path[1024], text[256];
        run_path(path, sizeof path, s, j);
        int n = snprintf(text, sizeof text, "%.17g %.17g %.17g %.17g %.3f\n", r.rmse_code, r.rmse, force, e, secs);
        st = imp_write_file_atomic(path, text, (size_t)n);
    }
    imp_model_free(m);
    imp_trajset_free(&train);
    imp_trajset_free(&test);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One table row: mean +- standard error and median of the runs' rmse_code. */
static void row(FILE *f, const settings *s, const char *model, const char *labels)
{
    double v[256], force = 0, fmin = INFINITY, fmax_ = -INFINITY, es = 0, emin = INFINITY, emax = -INFINITY;
    int n = 0, nf = 0, ne = 0;
    for (int seed = 0; seed < s->seeds && n < 256; seed++) {
        job j = {model, labels, seed};
        char path[1024];
        run_path(path, sizeof path, s, &j);
        unsigned char *buf = NULL;
        size_t len;
        if (imp_read_file(path, &buf, &len)) continue;
        double rc, rm, fo, e, sec;
        if (sscanf((char *)buf, "%lf %lf %lf %lf %lf", &rc, &rm, &fo, &e, &sec) == 5) {
            v[n++] = rc;
            if (isfinite(fo)) force += fo, nf++, fmin = fmin < fo ? fmin : fo, fmax_ = fmax_ > fo ? fmax_ : fo;
            if (isfinite(e)) es += e, ne++, emin = emin < e ? emin : e, emax = emax > e ? emax : e;
        }
        free(buf);
    }
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++) mean += v[i] / n;
    for (int i = 0; i < n; i++) var += (v[i] - mean) * (v[i] - mean) / (n > 1 ? n - 1 : 1);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double med = n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : NAN;
    fprintf(f, "| %-14s | %-8s | %d | %.3g ± %.2g | %.3g |", model, labels[0] == '-' ? "none" : labels, n, mean,
            sqrt(var / (n ? n : 1)), med);
    if (nf) fprintf(f, " %.3f (%.3f .. %.3f) |", force / nf, fmin, fmax_);
    else fprintf(f, " n/a |");
    if (ne) fprintf(f, " %.3f (%.3f .. %.3f) |\n", es / ne, emin, emax);
    else fprintf(f, " n/a |\n");
}

int cli_reproduce_your_data(int argc, char **argv)
{
    settings s = {"reproduce-your-data", "compliant-ball", 5, 2000, 2, 5, 0.7, 0.2, -1, IMP_LR_AUTO};
    int quick = 0, epochs_given = 0;
    static const struct option opts[] = {
        {"seeds", required_argument, 0, 's'}, {"epochs", required_argument, 0, 'E'},
        {"quick", no_argument, 0, 'q'},       {"restitution", required_argument, 0, 'e'},
        {"noise", required_argument, 0, 'n'}, {"system", required_argument, 0, 'S'},
        {"jobs", required_argument, 0, 'j'},  {"out", required_argument, 0, 'o'},
        {"impact-law", required_argument, 0, 'I'}, {"lr-schedule", required_argument, 0, 'L'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    long lv;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 's': st = cli_parse_long("--seeds", optarg, 1, 200, &lv), s.seeds = (int)lv; break;
        case 'E': st = cli_parse_long("--epochs", optarg, 1, 1000000, &lv), s.epochs = (int)lv, epochs_given = 1; break;
        case 'q': quick = 1; break;
        case 'e': st = cli_parse_double("--restitution", optarg, 0, 1, &s.restitution); break;
        case 'n': st = cli_parse_double("--noise", optarg, 0, 100, &s.noise); break;
        case 'S':
            if (strcmp(optarg, "compliant-ball"))
                return cli_failf("reproduce your-data", "--system: '%s' is not compliant-ball", optarg);
            s.system = optarg;
            break;
        case 'j': st = cli_parse_long("--jobs", optarg, 1, 64, &lv), s.jobs = (int)lv; break;
        case 'o': s.out = optarg; break;
        case 'I':
            if (!strcmp(optarg, "paper")) s.impact_law = IMP_CDL_IMPACT_PAPER;
            else if (!strcmp(optarg, "newton")) s.impact_law = IMP_CDL_IMPACT_NEWTON;
            else if (!strcmp(optarg, "auto")) s.impact_law = -1;
            else return cli_failf("reproduce your-data", "--impact-law: '%s' is not auto, paper or newton", optarg);
            break;
        case 'L':
            if (imp_lr_schedule_from_name(optarg, &s.lr_schedule))
                return cli_failf("reproduce your-data", "--lr-schedule: '%s' is not constant, cosine or auto", optarg);
            break;
        case 'h': usage(stdout); return 0;
        default:
            return cli_failf("reproduce your-data", "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail("reproduce your-data");
    }
    if (optind < argc) return cli_failf("reproduce your-data", "unexpected argument '%s'", argv[optind]);
    if (quick) {
        if (!epochs_given) s.epochs = 100;
        if (s.seeds > 2) s.seeds = 2;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/runs", s.out);
    if ((mkdir(s.out, 0777) && errno != EEXIST) || (mkdir(dir, 0777) && errno != EEXIST))
        return cli_failf("reproduce your-data", "%s: cannot create: %s", dir, strerror(errno));
    /* runs are resumed by name: a folder keeps the settings its runs were made
     * with, and a run with other settings is refused instead of mixed in */
    {
        char spath[1100], want[512];
        snprintf(spath, sizeof spath, "%s/settings.txt", dir);
        int n = snprintf(want, sizeof want,
                         "system=%s epochs=%d restitution=%.15g noise=%.15g impact_law=%s lr_schedule=%s\n", s.system,
                         s.epochs, s.restitution, s.noise,
                         s.impact_law < 0 ? "auto" : s.impact_law == IMP_CDL_IMPACT_NEWTON ? "newton" : "paper",
                         imp_lr_schedule_name(s.lr_schedule));
        unsigned char *have = NULL;
        size_t len = 0;
        if (access(spath, F_OK) == 0) {
            if (imp_read_file(spath, &have, &len)) return cli_fail("reproduce your-data");
            int same = len == (size_t)n && !memcmp(have, want, len);
            if (!same) {
                if (len && have[len - 1] == '\n') have[len - 1] = 0;
                want[n - 1] = 0;
                int rc = cli_failf("reproduce your-data",
                                   "%s holds runs made with other settings (%s; this run: %s): use another --out",
                                   s.out, (char *)have, want);
                free(have);
                return rc;
            }
            free(have);
        } else {
            DIR *dd = opendir(dir);
            int old_runs = 0;
            for (struct dirent *e; dd && (e = readdir(dd));)
                if (strstr(e->d_name, ".txt")) old_runs = 1;
            if (dd) closedir(dd);
            if (old_runs)
                return cli_failf("reproduce your-data",
                                 "%s holds runs whose settings were not recorded (an older build): use another --out",
                                 s.out);
            if (imp_write_file_atomic(spath, want, (size_t)n)) return cli_fail("reproduce your-data");
        }
    }
    const char *models[][2] = {{"cdl", "auto"},         {"cdl", "as-given"}, {"resnet-contact", "auto"},
                               {"resnet-contact", "as-given"}, {"resnet", "-"}};
    int nm = (int)(sizeof models / sizeof models[0]), njobs = nm * s.seeds, running = 0, failed = 0;
    job *jobs = calloc((size_t)njobs, sizeof *jobs);
    if (!jobs) return cli_failf("reproduce your-data", "out of memory");
    for (int i = 0; i < njobs; i++) jobs[i] = (job){models[i % nm][0], models[i % nm][1], i / nm};
    double t0 = imp_time_now();
    for (int i = 0; i < njobs || running > 0;) {
        char path[1024];
        if (i < njobs && running < s.jobs) {
            run_path(path, sizeof path, &s, &jobs[i]);
            if (access(path, F_OK) == 0) {
                i++;
                continue;
            }
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                free(jobs);
                return cli_failf("reproduce your-data", "fork: %s", strerror(errno));
            }
            if (pid == 0) {
                int st = run_job(&s, &jobs[i]);
                if (st) fprintf(stderr, "impulse reproduce your-data: error: %s %s seed %d: %s\n", jobs[i].model,
                                jobs[i].labels, jobs[i].seed, imp_last_error());
                _exit(st ? 1 : 0);
            }
            running++, i++;
            continue;
        }
        int status;
        if (wait(&status) > 0) {
            running--;
            if (!WIFEXITED(status) || WEXITSTATUS(status)) failed++;
        }
    }
    free(jobs);
    /* the contact's apparent restitution: rebound over approach speed at the
     * first bounce from the training height, sampled every 1e-4 s */
    double apparent = NAN;
    {
        imp_sim_opts o;
        imp_trajset d;
        if (!imp_sim_defaults(s.system, &o)) {
            o.restitution = s.restitution, o.n_traj = 1, o.dt = 1e-4, o.n_steps = 20000;
            if (!imp_simulate(s.system, &o, &d)) {
                int a = -1, b = -1;
                for (int t = 0; t < d.n_steps && b < 0; t++) {
                    if (a < 0 && d.contact[t] > 0) a = t;
                    if (a > 0 && d.contact[t] == 0) b = t;
                }
                if (a > 0 && b > a) apparent = -d.qdot_clean[b] / d.qdot_clean[a - 1];
                imp_trajset_free(&d);
            }
        }
    }
    /* the schedule the runs used: auto resolved on a training set as the runs do */
    char lr_name[32];
    double lr = NAN;
    {
        imp_train_opts to;
        imp_train_opts_default(&to, 1);
        lr = to.lr;
        int sched = s.lr_schedule;
        imp_trajset d;
        if (sched == IMP_LR_AUTO && !make_data(&s, 0, 0, &d)) {
            snprintf(lr_name, sizeof lr_name, "auto (%s)", imp_lr_schedule_name(imp_train_default_lr_schedule(&d)));
            imp_trajset_free(&d);
        } else {
            snprintf(lr_name, sizeof lr_name, "%s", imp_lr_schedule_name(sched));
        }
    }
    FILE *tf;
    char tpath[1024];
    snprintf(tpath, sizeof tpath, "%s/table.md", s.out);
    for (int pass = 0; pass < 2; pass++) {
        FILE *f = pass ? (tf = fopen(tpath, "w")) : stdout;
        if (!f) break;
        fprintf(f,
                "%s, e = %g (apparent restitution of the contact %.4f), noise %g, touch-sensor labels; %d held-out "
                "trajectories per seed, %d epochs, %d seeds; CD-Lagrange learns e from the data's estimate, "
                "impact law %s; learning rate %g, schedule %s\n\n"
                "| model          | labels   | runs | RMSE held-out (ref. code def.) | median | learned dU/dq at the floor / g "
                "(min .. max) | learned e (min .. max) |\n| --- | --- | --- | --- | --- | --- | --- |\n",
                s.system, s.restitution, apparent, s.noise, s.heldout, s.epochs, s.seeds,
                s.impact_law < 0 ? "auto (newton)" : s.impact_law == IMP_CDL_IMPACT_NEWTON ? "newton" : "paper",
                lr, lr_name);
        for (int k = 0; k < nm; k++) row(f, &s, models[k][0], models[k][1]);
        if (pass) fclose(f);
    }
    fprintf(stderr, "impulse reproduce your-data: %.0f s; table -> %s\n", imp_time_now() - t0, tpath);
    if (failed) return cli_failf("reproduce your-data", "%d runs failed (see above)", failed);
    return 0;
}
