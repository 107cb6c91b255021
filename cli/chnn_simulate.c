/* `impulse simulate` for the constrained-network systems ([F], issue 3):
 * ground-truth trajectories of a benchmark or of a system file, written as
 * .npz (Cartesian states, generalised coordinates, training chunks, true
 * energies) with the metadata JSON. */
#include "cli.h"
#include "impulse/chnn_systems.h"
#include "impulse/io.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *VERB = "simulate";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse simulate SYSTEM [options] -o data.npz\n"
            "       impulse simulate --system-file path.txt [options] -o data.npz\n"
            "\n"
            "Ground-truth trajectories of a constrained system (Finzi et al. 2020): the\n"
            "constrained Hamiltonian flow in Cartesian coordinates, integrated in double\n"
            "precision by adaptive Dormand-Prince 5(4). Systems with contacts (chain-ground:3,\n"
            "chain-ground-elastic:3, gyroscope-wall, colliding-pendulums, files with 'contact'\n"
            "lines) are simulated event by event: each impact located and resolved by an\n"
            "impulse that keeps the joints (docs/chnn-systems.md, \"Systems with contacts\").\n"
            "\n"
            "SYSTEM: %s\n"
            "\n"
            "options:\n"
            "  --trajectories N  number of trajectories (default 100; system files without\n"
            "                    --spread: 1, the start written in the file)\n"
            "  --steps T         steps per trajectory, i.e. T+1 states (default: the system's;\n"
            "                    the benchmarks' 99 steps are the reference's 100 states)\n"
            "  --dt H            time between saved states (default: the system's)\n"
            "  --noise S         Gaussian observation noise added to the saved states (default 0)\n"
            "  --seed K          random seed for initial states, noise and chunks (default 0)\n"
            "  --chunk L         also save one random window of L steps per trajectory\n"
            "                    (the reference trains on L = 4)\n"
            "  --rollout-start L start each trajectory at the first state of a random\n"
            "                    (L+1)-state window of a reference-length trajectory, as the\n"
            "                    reference's test rollouts (L = 4); saves rollout_offset\n"
            "                    (reference splits: train seed 0, validation 1, test 2)\n"
            "  --spread S        system files: random starts, the file's state plus S N(0, 1) on\n"
            "                    every position and velocity, projected onto the constraints\n"
            "                    (default 0: the file's state itself; a start off the\n"
            "                    constraints is projected onto them with a warning)\n"
            "  --rtol R --atol A integrator tolerances (default 1e-10, 1e-12)\n"
            "  --system-file F   describe the system in a text file (docs/chnn-systems.md)\n"
            "  -o, --output F    output .npz (required; '-': standard output)\n"
            "  --quiet           no progress or summary\n"
            "  --json            one JSON object on stdout instead of the summary (docs/json.md)\n"
            "\n"
            "arrays: t (T+1), z (n, T+1, 2, points, d) = (x, v), energy (n, T+1),\n"
            "q (n, T+1, 2, k) generalised coordinates (benchmarks), chunks, chunk_start,\n"
            "chunks_q (with --chunk); meta: JSON with the system, parameters and seed.\n",
            imp_chnn_system_names());
}

static int is_my_system(const char *name)
{
    if (!name) return 0;
    const char *prefixes[] = {"pendulum-chain", "coupled-pendulums", "magnet-pendulum", "gyroscope",
                              "rotor", "chain-ground", "chain-ground-elastic", "gyroscope-wall",
                              "colliding-pendulums"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(name, prefixes[i], n) == 0 && (name[n] == '\0' || name[n] == ':')) return 1;
    }
    return 0;
}

static int has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], flag) == 0) return 1;
    return 0;
}

/* What a simulation did: the same members in the data file's meta and in
 * the --json object ("steps" differs: the meta's counts steps, --json's
 * states, as every verb's "steps" does). */
typedef struct sim_run {
    long n_traj, steps, seed;
    double dt, noise, max_drift, max_viol, seconds;
} sim_run;

static void json_run(imp_json *j, const sim_run *r)
{
    imp_json_kv_int(j, "trajectories", r->n_traj);
    imp_json_kv_number(j, "dt", r->dt);
    imp_json_kv_int(j, "seed", r->seed);
    imp_json_kv_number(j, "noise", r->noise);
    imp_json_kv_number(j, "max_rel_energy_drift", r->max_drift);
    imp_json_kv_number(j, "max_constraint_violation", r->max_viol);
    imp_json_kv_number(j, "seconds", r->seconds);
}

static void meta_parameters(imp_json *j, const imp_csys *s)
{
    imp_json_key(j, "bodies");
    imp_json_begin_array(j);
    for (int b = 0; b < s->n_bodies; b++) {
        const imp_cbody *body = &s->bodies[b];
        imp_json_begin_object(j);
        imp_json_kv_string(j, "name", body->name);
        imp_json_kv_number(j, "mass", body->mass);
        imp_json_kv_int(j, "axes", body->n_axes);
        imp_json_key(j, "inertia");
        imp_json_begin_array(j);
        for (int i = 0; i < body->n_axes; i++) imp_json_number(j, body->inertia[i]);
        imp_json_end_array(j);
        imp_json_kv_int(j, "first_point", body->first_point);
        imp_json_end_object(j);
    }
    imp_json_end_array(j);
    imp_json_key(j, "constraints");
    imp_json_begin_array(j);
    for (int c = 0; c < s->n_cons; c++) {
        const imp_ccon *con = &s->cons[c];
        imp_json_begin_object(j);
        imp_json_kv_string(j, "label", con->label);
        imp_json_kv_int(j, "rows", con->n_rows);
        const imp_crow *r = &s->rows[con->first_row];
        if (r->kind == IMP_CROW_DISTANCE) imp_json_kv_number(j, "length", r->length);
        imp_json_end_object(j);
    }
    imp_json_end_array(j);
    imp_json_key(j, "potential");
    imp_json_begin_array(j);
    for (int p = 0; p < s->n_pots; p++) {
        const imp_cpot *pot = &s->pots[p];
        imp_json_begin_object(j);
        if (pot->kind == IMP_CPOT_GRAVITY) {
            imp_json_kv_string(j, "kind", "gravity");
            imp_json_kv_number(j, "g", pot->g);
            imp_json_kv_int(j, "axis", pot->axis);
        } else if (pot->kind == IMP_CPOT_SPRING) {
            imp_json_kv_string(j, "kind", "spring");
            imp_json_kv_number(j, "k", pot->k);
            imp_json_kv_number(j, "rest", pot->rest);
        } else {
            imp_json_kv_string(j, "kind", "magnet");
            imp_json_kv_number(j, "q", pot->q);
            imp_json_kv_int(j, "magnets", pot->n_magnets);
        }
        imp_json_end_object(j);
    }
    imp_json_end_array(j);
}

/* The start written in a system file should lie on its constraints; if it
 * does not, the simulation starts from its projection: say so, and by how
 * much it moves. */
static int warn_off_constraints(const imp_csys *s, const char *file)
{
    int N = imp_csys_ndof(s);
    double *xv = malloc(4 * (size_t)N * sizeof(double));
    imp_csys_work *w = imp_csys_work_new(s);
    if (!xv || !w) {
        free(xv);
        imp_csys_work_free(w);
        return imp_fail(IMP_ERR_NOMEM, "out of memory");
    }
    double *p = xv + 2 * N;
    imp_csys_nominal_state(s, xv);
    memcpy(p, xv, 2 * (size_t)N * sizeof(double));
    double viol = imp_csys_violation(s, xv, xv + N), scale = 1;
    for (int q = 0; q < 2 * N; q++) scale = fmax(scale, fabs(xv[q]));
    int st = IMP_OK;
    if (viol > 1e-9 * scale) {
        imp_csys_project_opts o = {1e-13, 200};
        st = imp_csys_project(s, p, p + N, &o, w);
        if (!st) {
            double dx = 0, dv = 0;
            for (int q = 0; q < N; q++) {
                dx = fmax(dx, fabs(p[q] - xv[q]));
                dv = fmax(dv, fabs(p[N + q] - xv[N + q]));
            }
            fprintf(stderr,
                    "impulse simulate: warning: %s: the state in the file is off the constraints "
                    "(|(Phi, Phidot)| = %.3g); moved onto them, positions by up to %.3g, velocities by up to %.3g\n",
                    file, viol, dx, dv);
        } else {
            imp_fail_context(st, "%s: the state in the file cannot be projected onto the constraints", file);
        }
    }
    free(xv);
    imp_csys_work_free(w);
    return st;
}

int cli_simulate_chnn(int argc, char **argv, const char *system)
{
    const char *system_file = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--system-file") == 0) system_file = argv[i + 1];
    int mine = is_my_system(system) || has_flag(argc, argv, "--system-file");
    if (!mine) return CLI_NOT_MINE;

    long n_traj = -1, steps = -1, seed = 0, chunk = 0, rollout_L = 0;
    double dt = 0, noise = 0, spread = -1, rtol = 1e-10, atol = 1e-12;
    const char *out = NULL;
    int quiet = 0, json = 0, st = IMP_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (system && !strcmp(a, system)) continue;
        if (!strcmp(a, "--quiet")) { quiet = 1; continue; }
        if (!strcmp(a, "--json")) { json = 1; continue; }
        if (!strcmp(a, "--trajectories")) st = cli_parse_long(a, val, 1, 10000000, &n_traj);
        else if (!strcmp(a, "--steps")) st = cli_parse_long(a, val, 1, 100000000, &steps);
        else if (!strcmp(a, "--seed")) st = cli_parse_long(a, val, 0, INT64_MAX, &seed);
        else if (!strcmp(a, "--chunk")) st = cli_parse_long(a, val, 1, 100000000, &chunk);
        else if (!strcmp(a, "--rollout-start")) st = cli_parse_long(a, val, 1, 100000000, &rollout_L);
        else if (!strcmp(a, "--dt")) st = cli_parse_double(a, val, 1e-12, 1e6, &dt);
        else if (!strcmp(a, "--noise")) st = cli_parse_double(a, val, 0, 1e6, &noise);
        else if (!strcmp(a, "--spread")) st = cli_parse_double(a, val, 0, 1e6, &spread);
        else if (!strcmp(a, "--rtol")) st = cli_parse_double(a, val, 1e-15, 1, &rtol);
        else if (!strcmp(a, "--atol")) st = cli_parse_double(a, val, 1e-300, 1, &atol);
        else if (!strcmp(a, "--system-file")) { if (!val) st = imp_fail(IMP_ERR_INVALID, "--system-file: missing path"); }
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!val) st = imp_fail(IMP_ERR_INVALID, "%s: missing path", a);
            out = val;
        } else {
            return cli_failf(VERB, "unknown option '%s' (impulse simulate --help)", a);
        }
        if (st) return cli_fail(VERB);
        i++;
    }
    if (!out) return cli_failf(VERB, "-o: output file required");
    if (cli_json_check_output(VERB, json, out)) return 1;
    if (system_file && is_my_system(system))
        return cli_failf(VERB, "give either a system name or --system-file, not both");

    imp_csys s;
    st = system_file ? imp_csys_load(&s, system_file) : imp_chnn_system(&s, system);
    if (st) return cli_fail(VERB);
    if (system_file) {
        if (spread < 0) spread = 0;
        if (n_traj < 0) n_traj = spread > 0 || rollout_L > 0 ? 100 : 1;
        if (n_traj > 1 && spread == 0 && rollout_L == 0)
            return cli_failf(VERB, "--trajectories %ld: without --spread every trajectory starts at the state "
                             "written in %s (add --spread S for random starts around it)", n_traj, system_file);
        if ((st = warn_off_constraints(&s, system_file))) return cli_fail(VERB);
    } else {
        if (spread >= 0) return cli_failf(VERB, "--spread: only for --system-file (the benchmarks draw "
                                          "from the reference's distributions)");
        spread = 0;
        if (n_traj < 0) n_traj = 100;
    }
    if (dt == 0) dt = s.dt > 0 ? s.dt : 0.03;
    if (steps < 0) steps = s.n_steps > 0 ? s.n_steps : 99;
    long T = steps + 1;
    if (chunk > 0 && chunk + 1 > T)
        return cli_failf(VERB, "--chunk: %ld steps need %ld states, trajectories have %ld", chunk,
                         chunk + 1, T);
    int N = imp_csys_ndof(&s), dim = 2 * N, k = s.n_gen;
    size_t n_states = (size_t)n_traj * (size_t)T;
    if (n_states * (size_t)dim > ((size_t)1 << 31))
        return cli_failf(VERB, "%ld trajectories x %ld states is too large", n_traj, T);

    double *traj = malloc(n_states * dim * sizeof(double));
    double *energy = malloc(n_states * sizeof(double));
    double *qtraj = k > 0 ? malloc(n_states * 2 * k * sizeof(double)) : NULL;
    if (!traj || !energy || (k > 0 && !qtraj)) {
        free(traj); free(energy); free(qtraj);
        return cli_failf(VERB, "out of memory for %ld trajectories", n_traj);
    }
    imp_chnn_sim_opts so = {rtol, atol};
    double t0 = imp_time_now();
    int progress = !quiet && cli_progress_enabled();
    /* generate in blocks so progress can be shown; each block has its own
     * seed derived from the run seed, so the result does not depend on it */
    imp_csys_work *w = imp_csys_work_new(&s);
    imp_rng rng;
    imp_rng_seed(&rng, (uint64_t)seed);
    double *xv = malloc((size_t)dim * sizeof(double));
    double max_drift = 0, max_viol = 0;
    long rhs = 0;
    int64_t *offsets = rollout_L > 0 ? calloc((size_t)n_traj, sizeof(int64_t)) : NULL;
    if (rollout_L > 0 && !offsets) st = imp_fail(IMP_ERR_NOMEM, "rollout offsets");
    for (long i = 0; i < n_traj && !st; i++) {
        double *ti = traj + (size_t)i * T * dim;
        imp_dopri5_stats ds = {0, 0, 0};
        if (rollout_L > 0) {
            int off = 0;
            st = imp_chnn_sample_rollout_start(&s, &rng, spread, (int)rollout_L, &so, xv, &off, w);
            offsets[i] = off;
        } else {
            st = imp_chnn_sample_state(&s, &rng, spread, xv, w);
        }
        if (!st) st = imp_chnn_simulate(&s, xv, dt, (int)steps, &so, ti, &ds);
        if (st) {
            imp_fail_context(st, "trajectory %ld", i);
            break;
        }
        rhs += ds.n_rhs;
        /* Drift relative to the trajectory's energy scale: |H0|, or its largest kinetic energy
           where the potential's zero makes H0 vanish (a chain released at rest at V = 0). */
        double H0 = imp_csys_energy(&s, ti, ti + N), scale = fabs(H0), drift = 0;
        for (long t = 0; t < T; t++) {
            const double *z = ti + (size_t)t * dim;
            double H = imp_csys_energy(&s, z, z + N);
            energy[(size_t)i * T + t] = H;
            scale = fmax(scale, fabs(H - imp_csys_potential(&s, z)));
            drift = fmax(drift, fabs(H - H0));
            max_viol = fmax(max_viol, imp_csys_violation(&s, z, z + N));
        }
        max_drift = fmax(max_drift, drift / fmax(scale, 1e-300));
        if (progress && (i % 50 == 49 || i == n_traj - 1))
            fprintf(stderr, "\rimpulse simulate: %ld/%ld trajectories", i + 1, n_traj);
    }
    if (progress) fputc('\n', stderr);
    free(xv);
    imp_csys_work_free(w);
    double seconds = imp_time_now() - t0;
    if (!st && noise > 0)
        for (size_t q = 0; q < n_states * dim; q++) traj[q] += noise * imp_rng_normal(&rng);
    if (!st && k > 0) {
        for (long i = 0; i < n_traj && !st; i++) {
            for (long t = 0; t < T && !st; t++)
                st = imp_chnn_to_generalized(&s, traj + ((size_t)i * T + t) * dim,
                                             qtraj + ((size_t)i * T + t) * 2 * k);
            imp_chnn_unwrap(&s, qtraj + (size_t)i * T * 2 * k, (int)T);
        }
    }
    double *chunks = NULL, *chunks_q = NULL;
    int *start = NULL;
    if (!st && chunk > 0) {
        size_t clen = (size_t)(chunk + 1);
        chunks = malloc((size_t)n_traj * clen * dim * sizeof(double));
        start = malloc((size_t)n_traj * sizeof(int));
        if (k > 0) chunks_q = malloc((size_t)n_traj * clen * 2 * k * sizeof(double));
        if (!chunks || !start || (k > 0 && !chunks_q)) st = imp_fail(IMP_ERR_NOMEM, "chunks");
        if (!st) st = imp_chnn_chunks(traj, (int)n_traj, (int)T, dim, (int)chunk, &rng, chunks, start);
        if (!st && k > 0)
            for (long i = 0; i < n_traj; i++)
                memcpy(chunks_q + (size_t)i * clen * 2 * k, qtraj + ((size_t)i * T + start[i]) * 2 * k,
                       clen * 2 * k * sizeof(double));
    }
    imp_npz *z = NULL;
    if (!st) {
        z = imp_npz_new();
        if (!z) st = imp_fail(IMP_ERR_NOMEM, "npz");
    }
    if (!st) {
        double *t = malloc((size_t)T * sizeof(double));
        if (!t) st = imp_fail(IMP_ERR_NOMEM, "t");
        for (long i = 0; !st && i < T; i++) t[i] = i * dt;
        size_t sh_t[1] = {(size_t)T};
        if (!st) st = imp_npz_add_f64(z, "t", 1, sh_t, t);
        free(t);
        size_t sh_z[5] = {(size_t)n_traj, (size_t)T, 2, (size_t)s.n_points, (size_t)s.d};
        if (!st) st = imp_npz_add_f64(z, "z", 5, sh_z, traj);
        size_t sh_e[2] = {(size_t)n_traj, (size_t)T};
        if (!st) st = imp_npz_add_f64(z, "energy", 2, sh_e, energy);
        if (!st && k > 0) {
            size_t sh_q[4] = {(size_t)n_traj, (size_t)T, 2, (size_t)k};
            st = imp_npz_add_f64(z, "q", 4, sh_q, qtraj);
        }
        if (!st && rollout_L > 0) {
            size_t sh_o[1] = {(size_t)n_traj};
            st = imp_npz_add_i64(z, "rollout_offset", 1, sh_o, offsets);
        }
        if (!st && chunk > 0) {
            size_t sh_c[5] = {(size_t)n_traj, (size_t)(chunk + 1), 2, (size_t)s.n_points, (size_t)s.d};
            st = imp_npz_add_f64(z, "chunks", 5, sh_c, chunks);
            int64_t *st64 = malloc((size_t)n_traj * sizeof(int64_t));
            if (!st64 && !st) st = imp_fail(IMP_ERR_NOMEM, "chunk_start");
            for (long i = 0; !st && i < n_traj; i++) st64[i] = start[i];
            size_t sh_s[1] = {(size_t)n_traj};
            if (!st) st = imp_npz_add_i64(z, "chunk_start", 1, sh_s, st64);
            free(st64);
            if (!st && k > 0) {
                size_t sh_cq[4] = {(size_t)n_traj, (size_t)(chunk + 1), 2, (size_t)k};
                st = imp_npz_add_f64(z, "chunks_q", 4, sh_cq, chunks_q);
            }
        }
    }
    const sim_run run = {n_traj, steps, seed, dt, noise, max_drift, max_viol, seconds};
    imp_json j;
    cli_chnn_data_meta(&j, "impulse", &s, system_file);
    if (!st) {
        imp_json_kv_int(&j, "n_gen", k);
        imp_json_key(&j, "gen_is_angle");
        imp_json_begin_array(&j);
        for (int i = 0; i < k; i++) imp_json_int(&j, s.gen_is_angle[i]);
        imp_json_end_array(&j);
        json_run(&j, &run);
        imp_json_kv_int(&j, "steps", steps);
        imp_json_kv_number(&j, "spread", spread);
        imp_json_kv_int(&j, "chunk", chunk);
        imp_json_kv_int(&j, "rollout_start", rollout_L);
        imp_json_kv_string(&j, "integrator", "dopri5 on (x, p), constrained Hamiltonian flow [F] eq 6");
        imp_json_kv_number(&j, "rtol", rtol);
        imp_json_kv_number(&j, "atol", atol);
        imp_json_key(&j, "parameters");
        imp_json_begin_object(&j);
        meta_parameters(&j, &s);
        imp_json_end_object(&j);
    }
    st = cli_npz_save_with_meta(z, &j, st, out);
    free(traj); free(energy); free(qtraj); free(chunks); free(chunks_q); free(start); free(offsets);
    if (st) return cli_fail(VERB);
    if (json) {
        imp_json j;
        cli_json_begin(&j, "simulate");
        imp_json_kv_string(&j, "system", s.name);
        json_run(&j, &run);
        imp_json_kv_int(&j, "steps", T); /* states per trajectory, the initial one included */
        imp_json_kv_string(&j, "output", out);
        return cli_json_print(&j, VERB);
    }
    if (!quiet)
        fprintf(stderr,
                "impulse simulate: %s: %ld trajectories x %ld steps (dt %g) in %.2f s, %ld rhs; "
                "max relative energy drift %.2e, max constraint violation %.2e -> %s\n",
                s.name, n_traj, steps, dt, seconds, rhs, max_drift, max_viol, out);
    return 0;
}
