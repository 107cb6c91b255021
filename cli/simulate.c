/* impulse simulate SYSTEM ... -o data.npz */
#include "cli.h"
#include "impulse/chnn_systems.h"
#include "impulse/cdl.h"

#include <getopt.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse simulate SYSTEM [options] -o data.npz\n"
            "  SYSTEM: pendulum | bouncing-ball | newtons-cradle (CD-Lagrange experiments),\n"
            "          compliant-ball | compliant-cradle (spring-damper contact: a stand-in for\n"
            "          data from other simulators and labs; labels from a touch sensor),\n"
            "          bouncing-disk (a spinning disk bouncing on a floor with friction:\n"
            "          sliding impacts by AP Newton; q = (x, y, k theta), k = R/sqrt(2)),\n"
            "          bouncing-points:N (N <= 8 point masses in a 2-D box, e and mu per contact),\n"
            "          bouncing-disks:N (N <= 5 spinning disks in a 2-D box, disk-wall and disk-disk\n"
            "          contacts, e and mu per contact; q = (x, y, k theta) per disk, k = r/sqrt(2)),\n"
            "          box-toss (a rigid box tossed onto the ground in 3-D; impulse simulate box-toss --help),\n"
            "          ball-box | compliant-ball-box (a ball in a 2-D box: floor and two side\n"
            "          walls at x = +-1.5 m; rigid impacts or spring-damper contact; e default 0.8),\n"
            "          pendulum-chain:N, coupled-pendulums:3, magnet-pendulum, gyroscope, rotor,\n"
            "          chain-ground:3, chain-ground-elastic:3, gyroscope-wall, colliding-pendulums\n"
            "          (with contacts; colliding-pendulums: a double pendulum and a pendulum whose bobs collide)\n"
            "          (constrained systems; see impulse simulate pendulum-chain:2 --help)\n"
            "  --trajectories N   number of trajectories (default 1; later ones start at random states)\n"
            "  --steps T          samples per trajectory (default: the paper's)\n"
            "  --dt H             sample period in seconds (default: the paper's)\n"
            "  --noise S          Gaussian noise std on positions and velocities (default 0)\n"
            "  --restitution E    coefficient of restitution in [0, 1] (default 1; disk, box 0.8)\n"
            "  --friction MU      bouncing-disk: Coulomb friction coefficient (default 0.2)\n"
            "  --q0 Q --v0 V      initial position/velocity of the first trajectory\n"
            "                     (disk: drop height and horizontal velocity)\n"
            "  --spin W           bouncing-disk: initial spin of the first trajectory, rad/s (-30)\n"
            "  --stiffness K      compliant systems: contact spring (default 2.5e4); the damper\n"
            "                     is chosen from --restitution\n"
            "  --seed K           random seed (default 0)\n"
            "  -o, --output FILE  output .npz (written atomically; '-': standard output)\n"
            "  --json             one JSON object on stdout instead of the summary line (docs/json.md)\n");
}

int cli_simulate(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    /* the constrained strand also takes `--system-file FILE` in place of a name */
    const char *system = argv[1][0] != '-' ? argv[1] : NULL;
    int r = cli_simulate_chnn(argc, argv, system);
    if (r != CLI_NOT_MINE) return r;
    if ((r = cli_simulate_box(argc, argv, system)) != CLI_NOT_MINE) return r;
    if (!system) return cli_failf("simulate", "missing SYSTEM (see --help)");
    imp_sim_opts o;
    if (imp_sim_defaults(system, &o))
        /* one line naming both strands' systems (the library's names one) */
        return cli_failf("simulate", "unknown system '%s': contact strand: pendulum, bouncing-ball, newtons-cradle, "
                         "compliant-ball, compliant-cradle, bouncing-disk, ball-box, compliant-ball-box, bouncing-points:N, bouncing-disks:N; "
                         "rigid bodies: box-toss; constrained strand: %s, or --system-file FILE",
                         system, imp_chnn_system_names());
    const char *out = NULL;
    int json = 0;
    static const struct option opts[] = {
        {"trajectories", required_argument, 0, 'n'}, {"steps", required_argument, 0, 'T'},
        {"dt", required_argument, 0, 'd'},           {"noise", required_argument, 0, 's'},
        {"restitution", required_argument, 0, 'e'},  {"seed", required_argument, 0, 'k'},
        {"q0", required_argument, 0, 'q'},           {"v0", required_argument, 0, 'v'},
        {"friction", required_argument, 0, 'f'},     {"spin", required_argument, 0, 'w'},
        {"output", required_argument, 0, 'o'},       {"help", no_argument, 0, 'h'},
        {"stiffness", required_argument, 0, 'K'},    {"json", no_argument, 0, 'J'},
        {0, 0, 0, 0}};
    optind = 2;
    opterr = 0;
    int c;
    long lv;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 'n': st = cli_parse_long("--trajectories", optarg, 1, 1000000, &lv), o.n_traj = (int)lv; break;
        case 'T': st = cli_parse_long("--steps", optarg, 2, 100000000, &lv), o.n_steps = (int)lv; break;
        case 'd': st = cli_parse_double("--dt", optarg, 1e-9, 1e3, &o.dt); break;
        case 's': st = cli_parse_double("--noise", optarg, 0, 1e6, &o.noise); break;
        case 'e': st = cli_parse_double("--restitution", optarg, 0, 1, &o.restitution); break;
        case 'k': st = cli_parse_long("--seed", optarg, 0, __LONG_MAX__, &lv), o.seed = (unsigned long long)lv; break;
        case 'q': st = cli_parse_double("--q0", optarg, -1e6, 1e6, &o.q0); break;
        case 'v': st = cli_parse_double("--v0", optarg, -1e6, 1e6, &o.v0); break;
        case 'K': st = cli_parse_double("--stiffness", optarg, 1e-6, 1e12, &o.stiffness); break;
        case 'f': st = cli_parse_double("--friction", optarg, 0, 10, &o.friction); break;
        case 'w': st = cli_parse_double("--spin", optarg, -1e4, 1e4, &o.spin); break;
        case 'o': out = optarg; break;
        case 'J': json = 1; break;
        case 'h': usage(stdout); return 0;
        default: return cli_failf("simulate", "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail("simulate");
    }
    if (optind < argc) return cli_failf("simulate", "unexpected argument '%s'", argv[optind]);
    if (!out) return cli_failf("simulate", "missing -o FILE");
    if (cli_json_check_output("simulate", json, out)) return 1;
    imp_trajset ts;
    if (imp_simulate(system, &o, &ts)) return cli_fail("simulate");
    int st = imp_trajset_save(&ts, out);
    int impacts = 0;
    for (size_t i = 0; i < (size_t)ts.n_traj * ts.n_steps * ts.geom.n_bodies; i++) impacts += ts.contact[i] > 0.5;
    imp_trajset_free(&ts);
    if (st) return cli_fail("simulate");
    if (json) {
        imp_json j;
        cli_json_begin(&j, "simulate");
        imp_json_kv_string(&j, "system", system);
        imp_json_kv_int(&j, "trajectories", o.n_traj);
        imp_json_kv_int(&j, "steps", o.n_steps);
        imp_json_kv_number(&j, "dt", o.dt);
        imp_json_kv_number(&j, "noise", o.noise);
        imp_json_kv_int(&j, "seed", (long long)o.seed);
        imp_json_kv_number(&j, "restitution", o.restitution);
        if (!strcmp(system, "bouncing-disk")) imp_json_kv_number(&j, "friction", o.friction);
        imp_json_kv_int(&j, "contact_samples", impacts);
        imp_json_kv_string(&j, "output", out);
        return cli_json_print(&j, "simulate");
    }
    char fr[48] = "";
    if (!strcmp(system, "bouncing-disk")) snprintf(fr, sizeof fr, "e %g, mu %g", o.restitution, o.friction);
    else if (!strncmp(system, "bouncing-points", 15) || !strncmp(system, "bouncing-disks", 14))
        snprintf(fr, sizeof fr, "e and mu per contact");
    else snprintf(fr, sizeof fr, "e %g", o.restitution);
    fprintf(stderr, "impulse simulate: %s, %d trajectories x %d steps (dt %g, noise %g, %s), %d contact samples -> %s\n",
            system, o.n_traj, o.n_steps, o.dt, o.noise, fr, impacts, out);
    return 0;
}
