/* impulse import FILE --rigid [options] -o out.npz: one tracked rigid body
 * (quaternion states and ragged episodes, e.g. the ContactNets cube tosses)
 * into a rigid-body trajectory file, with the data's checks printed. */
#include "cli.h"
#include "core/num.h"
#include "impulse/rigid_traj.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse import FILE --rigid [options] -o out.npz\n"
            "  FILE: an .npz with `states` (N, 13): quaternion w x y z (body to world), position (m),\n"
            "        body-frame angular velocity (rad/s), world linear velocity (m/s); and `lengths` (E,):\n"
            "        samples per episode (the ContactNets cube-toss file). --rigid is implied when FILE\n"
            "        holds both and no --q is given.\n"
            "  --states NAME --lengths NAME --ids NAME   array names (default states, lengths, toss or ids)\n"
            "  --size S[,S,S]     box side lengths, m (default 0.1048: the ContactNets cube)\n"
            "  --mass M           kg (default 0.37)\n"
            "  --inertia I[,I,I]  principal moments, kg m^2 (default 0.00081 for the default cube,\n"
            "                     else a uniform box's m (b^2 + c^2)/12)\n"
            "  --dt H             sample period, s (default 1/148)\n"
            "  --ground Z         height of the ground plane z = Z (default 0)\n"
            "  --gravity G        m/s^2 along -z (default 9.81)\n"
            "  --quat-tol T       largest accepted | |q| - 1 | (default 1e-6)\n"
            "  --episodes A:B     keep episodes A..B-1 only (in the file's order; their ids are kept),\n"
            "                     e.g. 400:500 as a held-out test file, 0:400 to train on\n"
            "  -o, --output FILE  rigid-body trajectory file (docs/data-format.md)\n"
            "  --json             one JSON object on stdout instead of the summary (docs/json.md)\n");
}

/* "S" or "S,S,S", each > 0 */
static int parse_three(const char *opt, const char *text, double out[3])
{
    int n = 0;
    double v[3];
    if (cli_parse_double_list(opt, text, v, 3, &n)) return IMP_ERR_INVALID;
    if (n != 1 && n != 3) return imp_fail(IMP_ERR_INVALID, "%s: '%s' is neither one value nor three", opt, text);
    for (int i = 0; i < 3; i++) {
        out[i] = v[n == 1 ? 0 : i];
        if (!(out[i] > 0) || !isfinite(out[i])) return imp_fail(IMP_ERR_INVALID, "%s: %g is not > 0", opt, out[i]);
    }
    return IMP_OK;
}

/* Episodes a..b-1 of t moved to the front, the rest dropped (--episodes). */
static int keep_episodes(imp_rigid_traj *t, const char *in, int a, int b)
{
    if (b > t->n_episodes)
        return imp_fail(IMP_ERR_INVALID, "--episodes %d:%d: %s has %d episodes (0..%d)", a, b, in, t->n_episodes,
                        t->n_episodes - 1);
    const size_t r0 = imp_rigid_traj_offset(t, a), r1 = imp_rigid_traj_offset(t, b);
    memmove(t->states, t->states + r0 * IMP_RIGID_STATE, (r1 - r0) * IMP_RIGID_STATE * sizeof *t->states);
    memmove(t->lengths, t->lengths + a, (size_t)(b - a) * sizeof *t->lengths);
    if (t->ids) memmove(t->ids, t->ids + a, (size_t)(b - a) * sizeof *t->ids);
    t->n_rows = r1 - r0;
    t->n_episodes = b - a;
    return IMP_OK;
}

/* Does FILE look like rigid-body states (an .npz with `states` (N, 13) and
 * `lengths`)? Any failure to read it is left to the importer that runs. */
int cli_import_is_rigid(const char *path)
{
    size_t len = strlen(path);
    if (len < 4 || strcmp(path + len - 4, ".npz")) return 0;
    imp_npz *z = NULL;
    if (imp_npz_load(&z, path)) {
        imp_clear_error();
        return 0;
    }
    const imp_npy_array *s = imp_npz_find(z, "states"), *l = imp_npz_find(z, "lengths");
    int yes = s && l && s->ndim == 2 && s->shape[1] == IMP_RIGID_STATE && !imp_npz_find(z, "q") &&
              !imp_npz_find(z, "qpos");
    imp_npz_free(z);
    return yes;
}

static void print_summary(const char *in, const char *out, const imp_rigid_traj *t, const imp_rigid_stats *s,
                          const imp_rigid_metrics *ball, double pen_mean, double pen_max)
{
    fprintf(stderr, "impulse import: %s: %d episodes, %zu samples (%zu to %zu per episode), dt %.9g s\n", in,
            s->n_episodes, s->n_rows, s->min_length, s->max_length, t->dt);
    fprintf(stderr, "  quaternions: max | |q| - 1 | = %.3g; largest rotation between samples %.3g deg\n",
            s->max_quat_norm_error, s->max_step_angle * 180 / 3.14159265358979323846);
    fprintf(stderr, "  linear velocity vs (p_k - p_k-1)/dt over %zu pairs: median %.3g, 95%% %.3g, max %.3g m/s "
            "(fastest sample %.3g m/s)\n", s->n_diffs, s->lin_median, s->lin_p95, s->lin_max, s->max_speed);
    fprintf(stderr, "  angular velocity (body frame) vs log(q_k-1^-1 q_k)/dt: median %.3g, 95%% %.3g, max %.3g rad/s "
            "(read as world-frame: median %.3g rad/s)\n", s->ang_median, s->ang_p95, s->ang_max, s->ang_world_median);
    fprintf(stderr, "  repeated rows: %zu of %zu identical to the previous row; %zu repeat the angular velocity "
            "(%d episodes in their first two samples)\n", s->repeated_rows, s->n_diffs, s->repeated_angvel,
            s->first_angvel_repeated);
    fprintf(stderr, "  measured poses vs the ground z = %g with a %g x %g x %g m box: lowest corner below it by "
            "%.3g %% of the width on average, %.3g %% at most\n", t->ground_height, t->body.size[0], t->body.size[1],
            t->body.size[2], pen_mean, pen_max);
    fprintf(stderr, "  ballistic flight (no contact) from each episode's first state: position error %.4g %% of the "
            "width, rotation error %.4g deg, penetration %.4g %%\n", ball->position_error_pct,
            ball->rotation_error_deg, ball->penetration_pct);
    fprintf(stderr, "  -> %s\n", out);
}

int cli_import_rigid(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    const char *in = NULL, *out = NULL, *sname = "states", *lname = "lengths", *iname = NULL;
    double quat_tol = IMP_RIGID_QUAT_TOL;
    int json = 0, size_given = 0, mass_given = 0, inertia_given = 0, ep_a = -1, ep_b = -1;
    static const struct option opts[] = {
        {"rigid", no_argument, 0, 'R'},          {"states", required_argument, 0, 'S'},
        {"lengths", required_argument, 0, 'L'},  {"ids", required_argument, 0, 'I'},
        {"size", required_argument, 0, 's'},     {"mass", required_argument, 0, 'm'},
        {"inertia", required_argument, 0, 'i'},  {"dt", required_argument, 0, 'd'},
        {"ground", required_argument, 0, 'g'},   {"gravity", required_argument, 0, 'G'},
        {"quat-tol", required_argument, 0, 'q'}, {"output", required_argument, 0, 'o'},
        {"json", no_argument, 0, 'x'},           {"help", no_argument, 0, 'h'},
        {"episodes", required_argument, 0, 'E'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 'R': break;
        case 'S': sname = optarg; break;
        case 'L': lname = optarg; break;
        case 'I': iname = optarg; break;
        case 's': st = parse_three("--size", optarg, t.body.size), size_given = 1; break;
        case 'm': st = cli_parse_double("--mass", optarg, 1e-12, 1e12, &t.body.mass), mass_given = 1; break;
        case 'i': st = parse_three("--inertia", optarg, t.body.inertia), inertia_given = 1; break;
        case 'd': st = cli_parse_double("--dt", optarg, 1e-12, 1e6, &t.dt); break;
        case 'g': st = cli_parse_double("--ground", optarg, -1e6, 1e6, &t.ground_height); break;
        case 'G': st = cli_parse_double("--gravity", optarg, 0, 1e6, &t.gravity); break;
        case 'q': st = cli_parse_double("--quat-tol", optarg, 1e-15, 1, &quat_tol); break;
        case 'E': st = cli_parse_range("--episodes", optarg, &ep_a, &ep_b); break;
        case 'o': out = optarg; break;
        case 'x': json = 1; break;
        case 'h': usage(stdout); return 0;
        default: return cli_failf("import", "unknown or incomplete option '%s' for rigid bodies (see --rigid --help)",
                                  argv[optind - 1]);
        }
        if (st) return cli_fail("import");
    }
    if (optind < argc) in = argv[optind++];
    if (optind < argc) return cli_failf("import", "unexpected argument '%s' (one input file)", argv[optind]);
    if (!in) return cli_failf("import", "missing input FILE (see --rigid --help)");
    if (!out) return cli_failf("import", "missing -o FILE");
    if (cli_json_check_output("import", json, out)) return 1;
    if ((size_given || mass_given) && !inertia_given) {
        const double *a = t.body.size;
        t.body.inertia[0] = t.body.mass * (a[1] * a[1] + a[2] * a[2]) / 12;
        t.body.inertia[1] = t.body.mass * (a[0] * a[0] + a[2] * a[2]) / 12;
        t.body.inertia[2] = t.body.mass * (a[0] * a[0] + a[1] * a[1]) / 12;
    }
    snprintf(t.source, sizeof t.source, "%s", in);
    int st;
    if (iname) st = imp_rigid_traj_read_arrays(&t, in, sname, lname, iname, quat_tol);
    else {
        /* the ContactNets file names its episodes `toss` */
        imp_npz *z = NULL;
        st = imp_npz_load(&z, in);
        if (!st) iname = imp_npz_find(z, "toss") ? "toss" : "ids";
        imp_npz_free(z);
        if (!st) st = imp_rigid_traj_read_arrays(&t, in, sname, lname, iname, quat_tol);
    }
    if (!st && ep_a >= 0 && (st = keep_episodes(&t, in, ep_a, ep_b))) imp_rigid_traj_free(&t);
    if (st) return cli_fail("import");
    imp_rigid_stats s;
    imp_rigid_metrics ball;
    double pen_mean = 0, pen_max = 0;
    st = imp_rigid_traj_stats(&t, &s);
    if (!st) st = imp_rigid_traj_penetration(&t, t.ground_height, &pen_mean, &pen_max);
    if (!st) st = imp_rigid_eval_ballistic(&t, NULL, 0, &ball);
    if (!st) st = imp_rigid_traj_save(&t, out);
    imp_rigid_traj u;
    if (!st && strcmp(out, "-")) { /* read back what a user will load */
        st = imp_rigid_traj_load(&u, out);
        imp_rigid_traj_free(&u);
    }
    if (st) {
        imp_rigid_traj_free(&t);
        return cli_fail("import");
    }
    if (json) {
        imp_json j;
        cli_json_begin(&j, "import");
        imp_json_kv_string(&j, "input", in);
        imp_json_kv_string(&j, "format", "rigid");
        imp_json_kv_int(&j, "episodes", s.n_episodes);
        imp_json_kv_int(&j, "samples", (long long)s.n_rows);
        imp_json_kv_int(&j, "min_length", (long long)s.min_length);
        imp_json_kv_int(&j, "max_length", (long long)s.max_length);
        imp_json_kv_number(&j, "dt", t.dt);
        imp_json_kv_number(&j, "max_quat_norm_error", s.max_quat_norm_error);
        imp_json_kv_number(&j, "linear_velocity_error_median", s.lin_median);
        imp_json_kv_number(&j, "linear_velocity_error_p95", s.lin_p95);
        imp_json_kv_number(&j, "linear_velocity_error_max", s.lin_max);
        imp_json_kv_number(&j, "angular_velocity_error_median", s.ang_median);
        imp_json_kv_number(&j, "angular_velocity_error_p95", s.ang_p95);
        imp_json_kv_number(&j, "angular_velocity_error_max", s.ang_max);
        imp_json_kv_number(&j, "angular_velocity_world_error_median", s.ang_world_median);
        imp_json_kv_int(&j, "repeated_rows", (long long)s.repeated_rows);
        imp_json_kv_int(&j, "repeated_angular_velocity_rows", (long long)s.repeated_angvel);
        imp_json_kv_int(&j, "first_angular_velocity_repeated", s.first_angvel_repeated);
        imp_json_kv_number(&j, "measured_penetration_pct", pen_mean);
        imp_json_kv_number(&j, "ballistic_position_error_pct", ball.position_error_pct);
        imp_json_kv_number(&j, "ballistic_rotation_error_deg", ball.rotation_error_deg);
        imp_json_kv_number(&j, "ballistic_penetration_pct", ball.penetration_pct);
        imp_json_kv_string(&j, "output", out);
        imp_rigid_traj_free(&t);
        return cli_json_print(&j, "import");
    }
    print_summary(in, out, &t, &s, &ball, pen_mean, pen_max);
    imp_rigid_traj_free(&t);
    return 0;
}
