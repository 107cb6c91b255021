/* impulse simulate box-toss: random tosses of a rigid box onto the ground,
 * written as a rigid-body trajectory file (include/impulse/rigid_model.h). */
#include "cli.h"
#include "impulse/rigid_model.h"

#include <getopt.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: impulse simulate box-toss [options] -o tosses.npz\n"
               "  a rigid box (default the ContactNets cube: 0.1048 m, 0.37 kg, 0.00081 kg m^2) tossed onto\n"
               "  the ground at random (bouncing, rolling, sliding, sticking); the rigid-body step of the\n"
               "  contact module in fine sub-steps (docs/cube.md)\n"
               "  --trajectories N  tosses (default 1)\n"
               "  --steps T         samples per toss (default 148: 1 s)\n"
               "  --dt H            sample period (default 1/148 s)\n"
               "  --substeps S      steps per sample (default 64)\n"
               "  --restitution E   (default 0.3)    --friction MU (default 0.25)\n"
               "  --ground Z        the plane z = Z (default 0)\n"
               "  --seed K          (default 0)\n"
               "  -o FILE           output rigid-body trajectory file (.npz, written atomically)\n");
}

int cli_simulate_box(int argc, char **argv, const char *system)
{
    if (!system || strcmp(system, "box-toss")) return CLI_NOT_MINE;
    imp_box_toss_opts o;
    imp_box_toss_defaults(&o);
    const char *out = NULL;
    static const struct option opts[] = {
        {"trajectories", required_argument, 0, 'n'}, {"steps", required_argument, 0, 'T'},
        {"dt", required_argument, 0, 'd'},           {"substeps", required_argument, 0, 'S'},
        {"restitution", required_argument, 0, 'e'},  {"friction", required_argument, 0, 'f'},
        {"ground", required_argument, 0, 'g'},       {"seed", required_argument, 0, 'k'},
        {"output", required_argument, 0, 'o'},       {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    optind = 2;
    opterr = 0;
    int c;
    long lv;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 'n': st = cli_parse_long("--trajectories", optarg, 1, 1000000, &lv), o.n_tosses = (int)lv; break;
        case 'T': st = cli_parse_long("--steps", optarg, 2, 100000000, &lv), o.n_samples = (int)lv; break;
        case 'd': st = cli_parse_double("--dt", optarg, 1e-9, 1e3, &o.dt); break;
        case 'S': st = cli_parse_long("--substeps", optarg, 1, 100000, &lv), o.substeps = (int)lv; break;
        case 'e': st = cli_parse_double("--restitution", optarg, 0, 1, &o.e); break;
        case 'f': st = cli_parse_double("--friction", optarg, 0, 10, &o.mu); break;
        case 'g': st = cli_parse_double("--ground", optarg, -1e3, 1e3, &o.ground); break;
        case 'k': st = cli_parse_long("--seed", optarg, 0, __LONG_MAX__, &lv), o.seed = (unsigned long long)lv; break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return 0;
        default: return cli_failf("simulate", "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail("simulate");
    }
    if (optind < argc) return cli_failf("simulate", "unexpected argument '%s'", argv[optind]);
    if (!out) return cli_failf("simulate", "missing -o FILE");
    imp_rigid_traj t;
    imp_rigid_traj_default(&t);
    int st = imp_box_toss_simulate(&o, &t);
    if (!st) st = imp_rigid_traj_save(&t, out);
    imp_rigid_traj_free(&t);
    if (st) return cli_fail("simulate");
    fprintf(stderr, "impulse simulate: box-toss, %d tosses x %d samples (dt %g, %d substeps, e %g, mu %g, ground %g) -> %s\n",
            o.n_tosses, o.n_samples, o.dt, o.substeps, o.e, o.mu, o.ground, out);
    return 0;
}
