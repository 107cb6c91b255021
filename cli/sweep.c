/* `impulse sweep plan|run|report`: reproductions as plans of independent
 * tasks, run resumably by one process, several processes sharing a folder,
 * a scheduler's array of tasks (--task K), or MPI ranks (mpirun -np N; tasks
 * handed out one at a time by rank 0 as ranks become free). */
#define _XOPEN_SOURCE 700
#include "cli.h"
#include "impulse/sweep.h"

#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef IMPULSE_HAVE_MPI
#include <mpi.h>
#endif

static const char *verb = "sweep";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse sweep plan chnn [--preset full|all|quick|tiny] [--quick] [--seeds N] [--epochs E]\n"
            "                                [--systems LIST] [--models LIST] [--precision double|single] -o PLAN\n"
            "       impulse sweep plan cdl [--quick] [--seeds N] [--epochs E] [--only ID,...] -o PLAN\n"
            "       impulse sweep plan impact --data FILE [--quick] -o PLAN            (-o -: stdout)\n"
            "       impulse sweep plan your-data [--quick] [--seeds N] [--epochs E] -o PLAN\n"
            "       impulse sweep plan contact [--quick] [--seeds N] [--epochs E] [--only PART,...] -o PLAN\n"
            "       (impulse reproduce chnn|cdl|impact|your-data|contact ... --plan PLAN writes the plan of any of its\n"
            "       options)\n"
            "       impulse sweep run PLAN --out DIR [--task K] [--threads N]\n"
            "       impulse sweep report DIR\n"
            "  plan:   write the task list of a reproduction. chnn (full: CHNN and CLNN on the eight systems\n"
            "          of Finzi et al. figs 5/7, HNN/DeLaN/NODE on pendulum-chain:3, gyroscope, rotor, 2000\n"
            "          epochs; all: every model on every system; quick: minutes; tiny: seconds; --precision\n"
            "          single: float hidden-to-hidden products, ids ending .f32); cdl (Hochlehnert et al.:\n"
            "          experiment x model x seed); impact (Fazeli et al.: a task per table);\n"
            "          your-data (CD-Lagrange on compliant contact with a touch sensor: model x labels x seed);\n"
            "          contact (ball in a box, several bodies, constrained systems, box tosses: docs/contact.md)\n"
            "  run:    run the tasks of PLAN not yet done in DIR, longest first; a killed run resumes\n"
            "          where it stopped, a finished task is never rerun. Several runs may share DIR.\n"
            "          --task K runs only the plan's K-th task (0-based), e.g. K=$SLURM_ARRAY_TASK_ID.\n"
            "          Under mpirun (built with MPI: `impulse info`) rank 0 hands out the tasks one at\n"
            "          a time and runs tasks too; --threads N training threads per task (default %d)\n"
            "  report: tables, figures and the list of missing tasks from whatever is finished:\n"
            "          DIR/report.md, DIR/index.html and each strand's tables and figures\n",
            CLI_DEFAULT_THREADS);
}

/* The first Ctrl-C (or SIGTERM) stops after the task being run; the second
 * ends the process at once (the task is then run again on resume). */
static int should_stop(void *user)
{
    (void)user;
    return cli_stop_requested();
}

static void print_progress(void *user, const char *line)
{
    const char *who = user;
    fprintf(stderr, "[%s] %s\n", who, line);
}

int cli_sweep_start(const char *verb_name, const imp_sweep_plan *plan, const char *dir, int threads,
                    imp_sweep_run_opts *o)
{
    if (imp_sweep_prepare(plan, dir)) return cli_fail(verb_name);
    cli_catch_stop_signals();
    imp_sweep_run_opts_default(o);
    o->threads = threads;
    o->should_stop = should_stop;
    o->progress = cli_progress_enabled() ? print_progress : NULL;
    o->progress_user = (void *)"main";
    return 0;
}

/* `impulse reproduce X`: write the plan with --plan, or run the plan in
 * `dir` with `jobs` processes sharing the folder (the claims keep each task
 * to one of them), then print the report of whatever is finished. */
int cli_reproduce_sweep_run(const char *verb_name, imp_sweep_plan *plan, const char *dir, int threads, int jobs)
{
    imp_sweep_run_opts o;
    int rc = cli_sweep_start(verb_name, plan, dir, threads, &o);
    if (rc) return rc;
    fprintf(stderr, "impulse %s: %d tasks in %s (%d process%s)\n", verb_name, plan->n_tasks, dir, jobs,
            jobs == 1 ? "" : "es");
    fflush(NULL);
    pid_t kids[64];
    int n_kids = 0;
    for (int k = 1; k < jobs && k < 64; k++) {
        pid_t pid = fork();
        if (pid < 0) break; /* fewer helpers: the tasks still all run */
        if (pid == 0) {
            char who[32];
            snprintf(who, sizeof who, "process %d", k + 1);
            o.runner = who;
            o.progress_user = who;
            imp_sweep_summary s;
            int st = imp_sweep_run_plan(plan, dir, &o, &s);
            fflush(NULL);
            _exit(st ? 1 : 0);
        }
        kids[n_kids++] = pid;
    }
    imp_sweep_summary s = {0, 0, 0};
    /* a task that fails (a diverging model) is reported, not fatal */
    if (imp_sweep_run_plan(plan, dir, &o, &s)) fprintf(stderr, "impulse %s: warning: %s\n", verb_name, imp_last_error());
    for (int k = 0; k < n_kids; k++) waitpid(kids[k], NULL, 0);
    int done = 0;
    for (int i = 0; i < plan->n_tasks; i++) done += imp_sweep_task_state(dir, &plan->tasks[i]) == IMP_SWEEP_DONE;
    fprintf(stderr, "%d of %d tasks done (%d run by this process)%s\n", done, plan->n_tasks, s.ran,
            cli_stop_requested() ? " (stopped: run the same command again to resume)" : "");
    return 0;
}

int cli_reproduce_sweep(const char *verb_name, imp_sweep_plan *plan, const char *plan_out, const char *dir,
                        int threads, int jobs)
{
    if (plan_out) {
        int st = imp_sweep_plan_save(plan, plan_out);
        if (!st) fprintf(stderr, "%s: %d tasks (impulse sweep run %s --out DIR)\n", plan_out, plan->n_tasks, plan_out);
        return st ? cli_fail(verb_name) : 0;
    }
    int rc = cli_reproduce_sweep_run(verb_name, plan, dir, threads, jobs);
    if (rc) return rc;
    char *md = NULL;
    if (imp_sweep_report(dir, &md)) return cli_fail(verb_name);
    fputs(md, stdout);
    free(md);
    fprintf(stderr, "wrote %s/report.md and %s/index.html\n", dir, dir);
    return cli_stop_requested() ? 130 : 0;
}

int cli_reproduce_sweep_json(const char *verb_name, imp_sweep_plan *plan, const char *dir, int threads, int jobs,
                             int (*rows)(const char *dir, char **jsonl))
{
    int rc = cli_reproduce_sweep_run(verb_name, plan, dir, threads, jobs);
    if (rc) return rc;
    char *text = NULL;
    if (rows(dir, &text)) return cli_fail(verb_name);
    fputs(text, stdout);
    free(text);
    if (imp_sweep_report(dir, NULL)) return cli_fail(verb_name);
    fprintf(stderr, "wrote %s/report.md and %s/index.html\n", dir, dir);
    return cli_stop_requested() ? 130 : 0;
}

static int cmd_plan(int argc, char **argv)
{
    const char *strand = NULL, *out = NULL;
    imp_sweep_chnn_opts co;
    imp_sweep_chnn_opts_default(&co);
    imp_sweep_cdl_opts cd;
    imp_sweep_cdl_opts_default(&cd);
    imp_sweep_impact_opts io;
    imp_sweep_impact_opts_default(&io);
    imp_sweep_your_data_opts yo;
    imp_sweep_your_data_opts_default(&yo);
    imp_sweep_contact_opts ko;
    imp_sweep_contact_opts_default(&ko);
    int quick = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        long lv;
        if (!strcmp(a, "--preset") && val) co.preset = argv[++i];
        else if (!strcmp(a, "--quick")) quick = 1;
        else if (!strcmp(a, "--seeds")) {
            if (cli_parse_long(a, val, 1, 1000, &lv)) return cli_fail(verb);
            co.seeds = cd.seeds = yo.seeds = ko.seeds = (int)lv;
            i++;
        } else if (!strcmp(a, "--epochs")) {
            if (cli_parse_long(a, val, 1, 1000000, &lv)) return cli_fail(verb);
            co.epochs = cd.epochs = yo.epochs = ko.epochs = (int)lv;
            i++;
        } else if (!strcmp(a, "--only") && val) cd.only = ko.only = argv[++i];
        else if (!strcmp(a, "--data") && val) io.data = argv[++i];
        else if (!strcmp(a, "--precision")) {
            if (cli_parse_precision(a, val, &co.single)) return cli_fail(verb);
            i++;
        } else if (!strcmp(a, "--systems") && val) co.systems = argv[++i];
        else if (!strcmp(a, "--models") && val) co.models = argv[++i];
        else if ((!strcmp(a, "-o") || !strcmp(a, "--out")) && val) out = argv[++i];
        else if (a[0] != '-' && !strand) strand = a;
        else return cli_failf(verb, "plan: unknown option '%s' (see --help)", a);
    }
    if (!strand) return cli_failf(verb, "plan: name the reproduction (chnn, cdl, impact, your-data or contact)");
    if (!out) return cli_failf(verb, "plan: -o PLAN is required ('-' for stdout)");
    imp_sweep_plan plan;
    int st;
    if (!strcmp(strand, "chnn")) {
        if (quick) co.preset = "quick";
        st = imp_sweep_plan_chnn(&plan, &co);
    } else if (!strcmp(strand, "cdl")) {
        cd.quick = quick;
        st = imp_sweep_plan_cdl(&plan, &cd);
    } else if (!strcmp(strand, "impact")) {
        char abs_path[4096];
        if (io.data && realpath(io.data, abs_path)) io.data = abs_path;
        io.quick = quick;
        st = imp_sweep_plan_impact(&plan, &io);
    } else if (!strcmp(strand, "your-data")) {
        yo.quick = quick;
        st = imp_sweep_plan_your_data(&plan, &yo);
    } else if (!strcmp(strand, "contact")) {
        ko.quick = quick;
        st = imp_sweep_plan_contact(&plan, &ko);
    } else {
        return cli_failf(verb, "plan: '%s' has no plan (known: chnn, cdl, impact, your-data, contact)", strand);
    }
    if (st) return cli_fail(verb);
    if (!strcmp(out, "-")) {
        char *text = NULL;
        st = imp_sweep_plan_text(&plan, &text);
        if (!st) fputs(text, stdout);
        free(text);
    } else {
        st = imp_sweep_plan_save(&plan, out);
        if (!st) fprintf(stderr, "%s: %d tasks\n", out, plan.n_tasks);
    }
    imp_sweep_plan_free(&plan);
    return st ? cli_fail(verb) : 0;
}

/* The plain runner: walk the plan longest first. */
typedef struct walk {
    int *order, n, pos;
} walk;
static int walk_next(void *user)
{
    walk *w = user;
    return w->pos < w->n ? w->order[w->pos++] : -1;
}

static int launched_by_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

#ifdef IMPULSE_HAVE_MPI
/* Rank 0's dispatcher: its main thread answers the other ranks' requests
 * (without spinning) while a second thread runs tasks from the same queue;
 * only the main thread calls MPI (MPI_THREAD_FUNNELED). */
enum { TAG_REQ = 1, TAG_TASK = 2 };

typedef struct queue {
    pthread_mutex_t mu;
    walk w;
} queue;
static int queue_next(void *user)
{
    queue *q = user;
    pthread_mutex_lock(&q->mu);
    int k = walk_next(&q->w);
    pthread_mutex_unlock(&q->mu);
    return k;
}

typedef struct local_job {
    const imp_sweep_plan *plan;
    const char *dir;
    imp_sweep_run_opts *opts;
    queue *q;
    imp_sweep_summary sum;
    int st;
    char msg[1024];
    volatile int finished;
} local_job;
static void *local_worker(void *arg)
{
    local_job *j = arg;
    j->st = imp_sweep_run(j->plan, j->dir, j->opts, queue_next, j->q, &j->sum);
    if (j->st) snprintf(j->msg, sizeof j->msg, "%s", imp_last_error());
    __atomic_store_n(&j->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int remote_next(void *user)
{
    (void)user;
    int req = cli_stop_requested() ? -1 : 0, k = -1;
    MPI_Send(&req, 1, MPI_INT, 0, TAG_REQ, MPI_COMM_WORLD);
    MPI_Recv(&k, 1, MPI_INT, 0, TAG_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return k;
}

static int run_mpi(const imp_sweep_plan *plan, const char *dir, imp_sweep_run_opts *o, int *order)
{
    int provided, rank, size;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char who[32];
    snprintf(who, sizeof who, "rank %d", rank);
    o->runner = who;
    o->progress_user = who;
    imp_sweep_summary sum = {0, 0, 0};
    int st = IMP_OK;
    char msg[1024] = "";
    if (rank == 0) {
        queue q = {PTHREAD_MUTEX_INITIALIZER, {order, plan->n_tasks, 0}};
        local_job job = {plan, dir, o, &q, {0, 0, 0}, 0, "", 0};
        pthread_t th;
        int have_thread = pthread_create(&th, NULL, local_worker, &job) == 0;
        if (!have_thread) job.finished = 1;
        int remote_left = size - 1;
        while (remote_left > 0) {
            int flag = 0;
            MPI_Status s;
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &flag, &s);
            if (!flag) {
                struct timespec ts = {0, 5000000};
                nanosleep(&ts, NULL);
                continue;
            }
            int req, k;
            MPI_Recv(&req, 1, MPI_INT, s.MPI_SOURCE, TAG_REQ, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            k = (req < 0 || cli_stop_requested()) ? -1 : queue_next(&q);
            MPI_Send(&k, 1, MPI_INT, s.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD);
            if (k < 0) remote_left--;
        }
        if (have_thread) pthread_join(th, NULL);
        sum = job.sum;
        st = job.st;
        snprintf(msg, sizeof msg, "%s", job.msg);
    } else {
        st = imp_sweep_run(plan, dir, o, remote_next, NULL, &sum);
        if (st) snprintf(msg, sizeof msg, "%s", imp_last_error());
    }
    int local[3] = {sum.ran, sum.skipped, sum.failed}, total[3] = {0, 0, 0};
    MPI_Reduce(local, total, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (st) fprintf(stderr, "impulse %s: error: %s: %s\n", verb, who, msg);
    if (rank == 0)
        fprintf(stderr, "%d ranks: %d tasks run, %d already done or taken, %d failed\n", size, total[0], total[1],
                total[2]);
    int any_fail = st != IMP_OK, all_fail = 0;
    MPI_Allreduce(&any_fail, &all_fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_fail ? 1 : 0;
}
#endif

static int cmd_run(int argc, char **argv)
{
    const char *plan_path = NULL, *dir = NULL;
    long task = -1, threads = CLI_DEFAULT_THREADS;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--out") && val) dir = argv[++i];
        else if (!strcmp(a, "--task")) {
            if (cli_parse_long(a, val, 0, 100000000, &task)) return cli_fail(verb);
            i++;
        } else if (!strcmp(a, "--threads")) {
            if (cli_parse_long(a, val, 1, CLI_MAX_THREADS, &threads)) return cli_fail(verb);
            i++;
        } else if (a[0] != '-' && !plan_path) plan_path = a;
        else return cli_failf(verb, "run: unknown option '%s' (see --help)", a);
    }
    if (!plan_path) return cli_failf(verb, "run: name the plan file");
    if (!dir) return cli_failf(verb, "run: --out DIR is required");
    imp_sweep_plan plan;
    if (imp_sweep_plan_load(&plan, plan_path)) return cli_fail(verb);
    if (task >= plan.n_tasks) {
        imp_sweep_plan_free(&plan);
        return cli_failf(verb, "run: --task %ld out of range: the plan has %d tasks (0..%d)", task, plan.n_tasks,
                         plan.n_tasks - 1);
    }
    imp_sweep_run_opts o;
    int rc = cli_sweep_start(verb, &plan, dir, (int)threads, &o);
    if (rc) {
        imp_sweep_plan_free(&plan);
        return rc;
    }
    int *order = malloc((size_t)plan.n_tasks * sizeof(int));
    if (!order) {
        imp_sweep_plan_free(&plan);
        return cli_failf(verb, "out of memory");
    }
    if (task >= 0) {
        order[0] = (int)task;
        walk w = {order, 1, 0};
        imp_sweep_summary s;
        rc = imp_sweep_run(&plan, dir, &o, walk_next, &w, &s) ? cli_fail(verb) : 0;
        if (!rc)
            fprintf(stderr, "task %ld (%s): %s\n", task, plan.tasks[task].id, s.ran ? "done" : "already done or taken");
    } else if (launched_by_mpirun()) {
        imp_sweep_order(&plan, order);
#ifdef IMPULSE_HAVE_MPI
        rc = run_mpi(&plan, dir, &o, order);
#else
        /* Without MPI every process walks the whole plan; the claims keep
         * each task to one of them. */
        imp_sweep_summary s;
        rc = imp_sweep_run_plan(&plan, dir, &o, &s) ? cli_fail(verb) : 0;
#endif
    } else {
        imp_sweep_summary s = {0, 0, 0};
        rc = imp_sweep_run_plan(&plan, dir, &o, &s) ? cli_fail(verb) : 0;
        fprintf(stderr, "%d tasks run, %d already done or taken, %d failed%s\n", s.ran, s.skipped, s.failed,
                cli_stop_requested() ? " (stopped: run again to resume)" : "");
    }
    free(order);
    imp_sweep_plan_free(&plan);
    if (!rc && cli_stop_requested()) rc = 130;
    return rc;
}

static int cmd_report(int argc, char **argv)
{
    const char *dir = NULL;
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] != '-' && !dir) dir = argv[i];
        else return cli_failf(verb, "report: unknown option '%s' (see --help)", argv[i]);
    }
    if (!dir) return cli_failf(verb, "report: name the sweep folder");
    char *md = NULL;
    if (imp_sweep_report(dir, &md)) return cli_fail(verb);
    fputs(md, stdout);
    free(md);
    return 0;
}

int cli_sweep(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "plan")) return cmd_plan(argc, argv);
    if (!strcmp(argv[1], "run")) return cmd_run(argc, argv);
    if (!strcmp(argv[1], "report")) return cmd_report(argc, argv);
    return cli_failf(verb, "unknown sub-command '%s' (plan, run, report)", argv[1]);
}
