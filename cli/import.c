/* impulse import FILE [options] -o data.npz: trajectories from numpy, CSV or
 * HDF5 files into a trajectory file every model can train on. */
#include "cli.h"
#include "core/num.h"
#include "impulse/contact_systems.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse import FILE [options] -o data.npz\n"
            "  FILE: .npz / .npy (numpy), .csv (a header row, one row per sample), .h5 / .hdf5\n"
            "        (datasets at the root or one group per trajectory, e.g. /traj0/qpos)\n"
            "  Arrays are (steps, columns), (steps,) or (trajectories, steps, columns). Names:\n"
            "  --q NAME            positions (default q or qpos; with --system-file also x); CSV: column NAME or NAME0, NAME1, ...;\n"
            "                      several names a,b; columns selected with NAME[2] or NAME[0:3];\n"
            "                      .npy: the positions are FILE, the other names are .npy paths\n"
            "  --qdot NAME         velocities at the sample times (default qdot or qvel; with x: v)\n"
            "  --finite-differences  compute the velocities from q by central differences\n"
            "  --contact NAME      contact labels, 0/1 per body (default contact; optional)\n"
            "  --time NAME         sample times (default t or time); gives dt, checked against --dt\n"
            "  --traj COLUMN       CSV: the trajectory id column (default traj, trajectory or episode)\n"
            "  --dt H              sample period in seconds (needed without a time array)\n"
            "  --bodies K --dim D  bodies and coordinates per body (default 1 body, D = columns)\n"
            "  --steps N           keep the first N samples of each trajectory (equal lengths needed)\n"
            "  --masses M,...      one mass per body (default 1 each)\n"
            "  --wall B:N:OFFSET   a wall under body B (repeatable): unit normal N (comma-separated, D values),\n"
            "                      gap = N.q_B - OFFSET (e.g. --wall 0:1:0 for a ball over a floor at 0)\n"
            "  --pair I:J:N:OFFSET a body-body contact, gap = N.(q_J - q_I) - OFFSET (repeatable)\n"
            "                      a last :T (D values) on --wall or --pair: the slip direction of a pair\n"
            "                      that can slide, slip velocity T.(v_J - v_I) (friction: train --friction)\n"
            "  --episodes A:B      keep trajectories A..B-1 only (e.g. 0:8 to train, 8:10 held out)\n"
            "  --noise S --seed K  add Gaussian noise S to positions and velocities; the imported values\n"
            "                      are kept as the clean copy that eval compares against\n"
            "  --restitution E     coefficient of restitution (an initial value where it is learned)\n"
            "  --gravity G --length L --system NAME   for energy metrics (bouncing-ball, pendulum, ...)\n"
            "  --system-file F     constrained strand: the trajectories of the points of the system in F\n"
            "                      (docs/chnn-systems.md; --system pendulum-chain:2 etc. for a benchmark):\n"
            "                      positions (default q, qpos or x) and velocities (qdot, qvel or v) with P x d\n"
            "                      columns, P the system's points (each body's centre, then its axis points);\n"
            "                      the rods' lengths are checked against the file. Writes the constrained\n"
            "                      dataset that train chnn|clnn|hnn|delan|node reads\n"
            "  --contact-labels M  auto (default: onset) | as-given | onset | geometry (labels derived\n"
            "                      from the motion near the contact pairs), see impulse train --help\n"
            "  -o, --output FILE   trajectory file (written atomically; '-': standard output)\n"
            "  --json              one JSON object on stdout instead of the summary (docs/json.md)\n"
            "  --rigid             one rigid body with quaternion states: impulse import --rigid --help\n"
            "  The format: docs/data-format.md.\n");
}

/* B:N1[,N2,N3]:OFFSET (wall) or I:J:N...:OFFSET (pair). */
static int parse_contact(const char *opt, const char *text, int pair, imp_contact_pair *p, int *n_comp)
{
    char buf[256];
    if (strlen(text) >= sizeof buf) return imp_fail(IMP_ERR_INVALID, "%s: '%s' is too long", opt, text);
    snprintf(buf, sizeof buf, "%s", text);
    char *f[5];
    int n = 0;
    for (char *s = buf; n < 5;) {
        f[n++] = s;
        char *c = strchr(s, ':');
        if (!c) break;
        *c = '\0';
        s = c + 1;
    }
    if (n != (pair ? 4 : 3) && n != (pair ? 5 : 4))
        return imp_fail(IMP_ERR_INVALID, "%s: '%s' is not %s", opt, text,
                        pair ? "I:J:NORMAL:OFFSET[:TANGENT]" : "BODY:NORMAL:OFFSET[:TANGENT]");
    memset(p, 0, sizeof *p);
    int st = imp_num_parse_int(f[0], opt, 0, IMP_MAX_BODIES - 1, pair ? &p->body_i : &p->body_j);
    if (!st && pair) st = imp_num_parse_int(f[1], opt, 0, IMP_MAX_BODIES - 1, &p->body_j);
    if (!pair) p->body_i = IMP_WALL;
    char *normal = f[pair ? 2 : 1];
    *n_comp = 0;
    for (char *s = normal; !st && s;) {
        char *c = strchr(s, ',');
        if (c) *c = '\0';
        if (*n_comp >= IMP_MAX_DIM) return imp_fail(IMP_ERR_INVALID, "%s: more than %d normal components", opt, IMP_MAX_DIM);
        st = imp_num_parse_double(s, opt, &p->normal[(*n_comp)++]);
        s = c ? c + 1 : NULL;
    }
    if (!st) st = imp_num_parse_double(f[pair ? 3 : 2], opt, &p->offset);
    /* the slip direction of a pair that can slide (friction): as many
     * components as the normal */
    int n_t = 0;
    for (char *s = n == (pair ? 5 : 4) ? f[pair ? 4 : 3] : NULL; !st && s;) {
        char *c = strchr(s, ',');
        if (c) *c = '\0';
        if (n_t >= IMP_MAX_DIM) return imp_fail(IMP_ERR_INVALID, "%s: more than %d tangent components", opt, IMP_MAX_DIM);
        st = imp_num_parse_double(s, opt, &p->tangent[n_t++]);
        s = c ? c + 1 : NULL;
    }
    if (!st && n_t && n_t != *n_comp)
        st = imp_fail(IMP_ERR_INVALID, "%s: '%s': the tangent has %d components, the normal %d", opt, text, n_t, *n_comp);
    return st;
}

void cli_import_notes_print(const char *in, const imp_import_notes *nt, double dt, int steps)
{
    if (nt->fd_velocities)
        fprintf(stderr, "impulse import: notice: no velocities in %s: computed by central finite differences of the "
                "positions (one-sided at the ends); noisy positions give noisier velocities\n", in);
    if (nt->dt_from_time) fprintf(stderr, "impulse import: notice: dt = %.9g s from the time stamps\n", dt);
    if (nt->truncated) fprintf(stderr, "impulse import: notice: trajectories cut to their first %d samples (--steps)\n", steps);
}

/* Trajectories a..b-1 of ts, moved to the front (--episodes). */
static int keep_episodes(imp_trajset *ts, const char *in, int a, int b)
{
    if (b > ts->n_traj)
        return imp_fail(IMP_ERR_INVALID, "--episodes %d:%d: %s has %d trajectories (0..%d)", a, b, in, ts->n_traj,
                        ts->n_traj - 1);
    size_t T = (size_t)ts->n_steps, D = (size_t)ts->geom.n_bodies * ts->geom.dim, K = (size_t)ts->geom.n_bodies;
    double *per_d[4] = {ts->q, ts->qdot, ts->q_clean, ts->qdot_clean};
    for (int k = 0; k < 4; k++) memmove(per_d[k], per_d[k] + a * T * D, (size_t)(b - a) * T * D * sizeof(double));
    if (ts->contact) memmove(ts->contact, ts->contact + a * T * K, (size_t)(b - a) * T * K * sizeof(double));
    if (ts->interior) memmove(ts->interior, ts->interior + a * T, (size_t)(b - a) * T * sizeof(double));
    ts->n_traj = b - a;
    return IMP_OK;
}

int cli_import(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    /* one rigid body with quaternion states (cli/import_rigid.c): --rigid, or
     * FILE first and holding `states` (N, 13) and `lengths` */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--rigid")) return cli_import_rigid(argc, argv);
    if (argv[1][0] != '-' && cli_import_is_rigid(argv[1])) return cli_import_rigid(argc, argv);
    imp_import_opts o;
    imp_import_opts_default(&o);
    const char *in = NULL, *out = NULL, *labels = "auto";
    static const struct option opts[] = {
        {"q", required_argument, 0, 'q'},          {"qdot", required_argument, 0, 'v'},
        {"contact", required_argument, 0, 'c'},    {"time", required_argument, 0, 't'},
        {"traj", required_argument, 0, 'J'},       {"dt", required_argument, 0, 'd'},
        {"bodies", required_argument, 0, 'K'},     {"dim", required_argument, 0, 'D'},
        {"steps", required_argument, 0, 'T'},      {"finite-differences", no_argument, 0, 'f'},
        {"masses", required_argument, 0, 'm'},     {"wall", required_argument, 0, 'w'},
        {"pair", required_argument, 0, 'p'},       {"restitution", required_argument, 0, 'e'},
        {"gravity", required_argument, 0, 'g'},    {"length", required_argument, 0, 'l'},
        {"system", required_argument, 0, 's'},     {"contact-labels", required_argument, 0, 'C'},
        {"output", required_argument, 0, 'o'},     {"help", no_argument, 0, 'h'},
        {"json", no_argument, 0, 'x'},             {"system-file", required_argument, 0, 'S'},
        {"episodes", required_argument, 0, 'E'},   {"noise", required_argument, 0, 'N'},
        {"seed", required_argument, 0, 'k'},       {0, 0, 0, 0}};
    int ep_a = -1, ep_b = -1;
    double noise = 0;
    long seed = 0;
    const char *system_file = NULL;
    optind = 1;
    opterr = 0;
    int c;
    int json = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int st = IMP_OK;
        if (c == 'x') {
            json = 1;
            continue;
        }
        switch (c) {
        case 'q': o.q = optarg; break;
        case 'v': o.qdot = optarg; break;
        case 'c': o.contact = optarg; break;
        case 't': o.time = optarg; break;
        case 'J': o.traj = optarg; break;
        case 'd': st = cli_parse_double("--dt", optarg, 1e-12, 1e6, &o.dt); break;
        case 'K': st = imp_num_parse_int(optarg, "--bodies", 1, IMP_MAX_BODIES, &o.bodies); break;
        case 'D': st = imp_num_parse_int(optarg, "--dim", 1, IMP_MAX_DIM, &o.dim); break;
        case 'T': st = imp_num_parse_int(optarg, "--steps", 2, 1 << 28, &o.steps); break;
        case 'f': o.finite_differences = 1; break;
        case 'm': {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", optarg);
            o.n_masses = 0;
            for (char *s = buf; !st && s;) {
                char *k = strchr(s, ',');
                if (k) *k = '\0';
                if (o.n_masses >= IMP_MAX_BODIES) st = imp_fail(IMP_ERR_INVALID, "--masses: more than %d", IMP_MAX_BODIES);
                else st = imp_num_parse_double(s, "--masses", &o.masses[o.n_masses++]);
                s = k ? k + 1 : NULL;
            }
            break;
        }
        case 'w':
        case 'p':
            if (o.n_pairs >= IMP_MAX_CONTACTS) return cli_failf("import", "--wall/--pair: at most %d", IMP_MAX_CONTACTS);
            st = parse_contact(c == 'w' ? "--wall" : "--pair", optarg, c == 'p', &o.pairs[o.n_pairs], &o.normal_components[o.n_pairs]);
            o.n_pairs++;
            break;
        case 'e': st = cli_parse_double("--restitution", optarg, 0, 1, &o.restitution); break;
        case 'g': st = cli_parse_double("--gravity", optarg, -1e6, 1e6, &o.gravity); break;
        case 'l': st = cli_parse_double("--length", optarg, 1e-12, 1e6, &o.length); break;
        case 's': snprintf(o.system, sizeof o.system, "%s", optarg); break;
        case 'S': system_file = optarg; break;
        case 'E': st = cli_parse_range("--episodes", optarg, &ep_a, &ep_b); break;
        case 'N': st = cli_parse_double("--noise", optarg, 0, 1e6, &noise); break;
        case 'k': st = cli_parse_long("--seed", optarg, 0, 1L << 62, &seed); break;
        case 'C': labels = optarg; break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return 0;
        default: return cli_failf("import", "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail("import");
    }
    if (optind < argc) in = argv[optind++];
    if (optind < argc) return cli_failf("import", "unexpected argument '%s' (one input file)", argv[optind]);
    if (!in) return cli_failf("import", "missing input FILE (see --help)");
    if (!out) return cli_failf("import", "missing -o FILE");
    if (cli_json_check_output("import", json, out)) return 1;
    /* the constrained strand: a system file or a benchmark's name */
    if (system_file && o.system[0])
        return cli_failf("import", "give either --system-file or --system, not both");
    if ((system_file || cli_import_is_constrained(o.system)) && (ep_a >= 0 || noise > 0))
        return cli_failf("import", "--episodes and --noise are for the CD-Lagrange strand's data; a constrained "
                         "dataset takes them at simulate or in numpy");
    if (system_file || cli_import_is_constrained(o.system)) {
        if (strlen(in) > 4 && !strcmp(in + strlen(in) - 4, ".npy") && !o.q) o.q = in;
        return cli_import_chnn(in, &o, system_file, out, json);
    }
    imp_label_mode lm;
    if (imp_label_mode_from_name(labels, &lm)) return cli_fail("import");
    /* .npy: the input file is the positions */
    if (strlen(in) > 4 && !strcmp(in + strlen(in) - 4, ".npy") && !o.q) o.q = in;
    imp_trajset ts;
    imp_import_notes nt;
    if (imp_trajset_import(in, &o, &ts, &nt)) return cli_fail("import");
    if (ep_a >= 0 && keep_episodes(&ts, in, ep_a, ep_b)) {
        imp_trajset_free(&ts);
        return cli_fail("import");
    }
    if (noise > 0) {
        imp_rng rng;
        imp_rng_seed(&rng, (unsigned long long)seed);
        size_t n = (size_t)ts.n_traj * ts.n_steps * ts.geom.n_bodies * ts.geom.dim;
        for (size_t i = 0; i < n; i++) ts.q[i] += noise * imp_rng_normal(&rng);
        for (size_t i = 0; i < n; i++) ts.qdot[i] += noise * imp_rng_normal(&rng);
        ts.noise = noise, ts.seed = (unsigned long long)seed;
        fprintf(stderr, "impulse import: notice: Gaussian noise %g (seed %ld) added to the positions and velocities; "
                        "the imported values are the clean copy eval compares against\n", noise, seed);
    }
    cli_import_notes_print(in, &nt, ts.dt, ts.n_steps);
    if (nt.default_masses) fprintf(stderr, "impulse import: notice: no --masses: mass 1 for every body\n");
    if (nt.default_restitution)
        fprintf(stderr, "impulse import: notice: no --restitution: 1 written (meta 'restitution')\n");
    if (ts.geom.n_pairs == 0)
        fprintf(stderr, "impulse import: notice: no contact geometry (--wall B:N:OFFSET, --pair I:J:N:OFFSET): models "
                "will know of no contacts\n");
    if (!ts.has_contact && lm != IMP_LABELS_GEOMETRY)
        fprintf(stderr, "impulse import: notice: no contact labels ('contact'; --contact NAME): cdl, vin and resnet train "
                "without touch feedback (--no-touch), resnet-contact cannot train\n");
    double e_probe;
    if (imp_system_energy(ts.system, &ts.geom, ts.gravity, ts.length, ts.q, ts.qdot, &e_probe))
        fprintf(stderr, "impulse import: notice: energy metrics unavailable: %s\n", imp_last_error());
    else if (!imp_system_energy_known(ts.system, ts.geom.dim))
        fprintf(stderr, "impulse import: notice: energy metrics: point masses in Cartesian coordinates, height the last "
                "coordinate (--system pendulum for angles, bouncing-disk for x, y, k theta)\n");
    imp_clear_error();
    char note[1024];
    if ((ts.has_contact || lm == IMP_LABELS_GEOMETRY) && cli_handle_labels("import", &ts, labels, 0, note, sizeof note)) {
        imp_trajset_free(&ts);
        return 1;
    }
    if (ts.has_contact && note[0]) fprintf(stderr, "%s\n", note);
    if (ts.has_contact && lm == IMP_LABELS_AS_GIVEN) snprintf(ts.labels, sizeof ts.labels, "as-given");
    int st = imp_trajset_save(&ts, out);
    int n_traj = ts.n_traj, T = ts.n_steps, K = ts.geom.n_bodies, d = ts.geom.dim;
    double dt = ts.dt;
    imp_trajset_free(&ts);
    int to_stdout = !strcmp(out, "-");
    if (!st && !to_stdout) st = imp_trajset_load(&ts, out); /* what train will read */
    if (st) return cli_fail("import");
    if (!to_stdout) imp_trajset_free(&ts);
    if (json) {
        imp_json j;
        cli_json_begin(&j, "import");
        imp_json_kv_string(&j, "input", in);
        imp_json_kv_string(&j, "format", nt.format);
        imp_json_kv_int(&j, "trajectories", n_traj);
        imp_json_kv_int(&j, "steps", T);
        imp_json_kv_int(&j, "bodies", K);
        imp_json_kv_int(&j, "dim", d);
        imp_json_kv_number(&j, "dt", dt);
        imp_json_kv_string(&j, "output", out);
        return cli_json_print(&j, "import");
    }
    fprintf(stderr, "impulse import: %s (%s): %d trajectories x %d samples, %d bodies x %d coordinates, dt %g -> %s\n",
            in, nt.format, n_traj, T, K, d, dt, out);
    return 0;
}
