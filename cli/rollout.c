/* impulse rollout --model model.npz (--data d.npz [--trajectory i] | --state q..,v..) --steps T -o out.npz */
#include "cli.h"
#include "impulse/cdl.h"
#include "impulse/io.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cli_rollout_usage(FILE *f)
{
    fprintf(f,
            "usage: impulse rollout --model model.npz [--data d.npz [--trajectory I] | --state x1,x2,...]\n"
            "                       [--steps T] [--touch-rollout] [--projection] [--dt H] [--rtol R]\n"
            "                       [--contact-rk4] -o out.npz\n"
            "  Predicts from an initial state taken from --state or from the (noise-free) first sample\n"
            "  of trajectory I of --data (default 0).\n"
            "CD-Lagrange strand (cdl, vin, resnet, resnet-contact models): the state is q then qdot\n"
            "  (2D values); T samples (default: the data's length), the start included; --touch-rollout\n"
            "  gates impulses with the data's contact signal; --projection projects impacts onto the walls\n"
            "  (cdl trained without it). Writes states (T, 2D) and contact (T, K).\n"
            "Constrained networks (chnn, clnn, hnn, delan, node models): the state is Cartesian, the\n"
            "  positions then the velocities of every point (2 x points x d values); DOPRI5 (--rtol R,\n"
            "  default 1e-7, atol R/100) for T steps (default: the data's, else the system's), --dt H\n"
            "  (default: the data's step, else the system's). Writes t (T+1) and z (T+1, 2, points, d):\n"
            "  the predicted (x, v) at the T+1 states, the start included, and meta JSON. chnn/clnn\n"
            "  with contact: DOPRI5 over each step, the contact map after it; --contact-rk4: one RK4\n"
            "  step instead (training's integrator).\n");
}

int cli_rollout(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_rollout_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--model") && i + 1 < argc) {
            char kind[64];
            imp_model_kind mk;
            int constrained = 0;
            if (cli_checkpoint_kind(argv[i + 1], kind, sizeof kind, &constrained)) return cli_fail("rollout");
            if (constrained || imp_model_kind_from_name(kind, &mk)) {
                imp_clear_error();
                int r = cli_rollout_chnn(argc, argv, kind);
                if (r != CLI_NOT_MINE) return r;
                return cli_failf("rollout", "%s: unknown model kind '%s'", argv[i + 1], kind);
            }
            break;
        }
    }
    const char *model_path = NULL, *data_path = NULL, *out = NULL, *state = NULL;
    long traj = 0, steps = -1;
    int touch = 0, projection = 0;
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"data", required_argument, 0, 'd'},
        {"trajectory", required_argument, 0, 'i'}, {"state", required_argument, 0, 's'},
        {"steps", required_argument, 0, 'T'}, {"touch-rollout", no_argument, 0, 't'},
        {"projection", no_argument, 0, 'P'}, {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 'm': model_path = optarg; break;
        case 'd': data_path = optarg; break;
        case 'i': st = cli_parse_long("--trajectory", optarg, 0, 100000000, &traj); break;
        case 's': state = optarg; break;
        case 'T': st = cli_parse_long("--steps", optarg, 1, 100000000, &steps); break;
        case 't': touch = 1; break;
        case 'P': projection = 1; break;
        case 'o': out = optarg; break;
        case 'h': cli_rollout_usage(stdout); return 0;
        default: return cli_failf("rollout", "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail("rollout");
    }
    if (!model_path || !out) return cli_failf("rollout", "needs --model FILE and -o FILE (see --help)");
    if (!data_path && !state) return cli_failf("rollout", "needs --data FILE or --state VALUES");
    imp_model *m = NULL;
    if (imp_model_load(&m, model_path)) return cli_fail("rollout");
    if (projection && imp_model_set_projection(m, 1)) {
        imp_model_free(m);
        return cli_fail("rollout");
    }
    int S = 2 * m->D, st = IMP_OK;
    double x0[2 * IMP_MAX_BODIES * IMP_MAX_DIM];
    double *gates = NULL;
    imp_trajset ts = {0};
    if (state) {
        st = cli_parse_list("--state", state, S, "q then qdot", x0);
        if (!st && steps < 0) steps = 100;
        if (!st && touch) st = imp_fail(IMP_ERR_INVALID, "--touch-rollout needs --data (the observed contact signal)");
    } else {
        st = imp_trajset_load(&ts, data_path);
        if (!st && traj >= ts.n_traj)
            st = imp_fail(IMP_ERR_INVALID, "--trajectory: %ld, the data has %d", traj, ts.n_traj);
        if (!st && (ts.geom.n_bodies != m->K || ts.geom.dim != m->geom.dim))
            st = imp_fail(IMP_ERR_SHAPE, "--data: %d bodies, the model expects %d", ts.geom.n_bodies, m->K);
        if (!st && fabs(ts.dt - m->dt) > 1e-12 * m->dt)
            st = imp_fail(IMP_ERR_INVALID, "--data: dt %g differs from the model's %g", ts.dt, m->dt);
        if (!st) {
            if (steps < 0) steps = ts.n_steps;
            if (touch && steps > ts.n_steps) st = imp_fail(IMP_ERR_INVALID, "--steps: %ld > data length %d", steps, ts.n_steps);
            memcpy(x0, ts.q_clean + (size_t)traj * ts.n_steps * m->D, m->D * sizeof(double));
            memcpy(x0 + m->D, ts.qdot_clean + (size_t)traj * ts.n_steps * m->D, m->D * sizeof(double));
            if (touch) gates = ts.contact + (size_t)traj * ts.n_steps * m->K;
        }
    }
    double *states = NULL, *contact = NULL;
    if (!st) {
        states = malloc((size_t)steps * S * sizeof(double));
        contact = malloc((size_t)steps * m->K * sizeof(double));
        st = states && contact ? imp_model_rollout(m, x0, (int)steps, gates, states, contact)
                               : imp_fail(IMP_ERR_NOMEM, "rollout: out of memory");
        if (!st) st = imp_check_finite(states, (size_t)steps * S, "rollout states (the model diverges)");
    }
    if (!st) {
        imp_npz *z = imp_npz_new();
        size_t shs[2] = {(size_t)steps, (size_t)S}, shc[2] = {(size_t)steps, (size_t)m->K};
        st = z ? imp_npz_add_f64(z, "states", 2, shs, states) : imp_fail(IMP_ERR_NOMEM, "out of memory");
        if (!st) st = imp_npz_add_f64(z, "contact", 2, shc, contact);
        if (!st) st = imp_npz_save(z, out);
        imp_npz_free(z);
    }
    free(states), free(contact);
    imp_trajset_free(&ts);
    imp_model_free(m);
    return st ? cli_fail("rollout") : 0;
}
