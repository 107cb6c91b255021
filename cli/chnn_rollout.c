/* `impulse rollout` for the constrained-network checkpoints (chnn, clnn,
 * hnn, delan, node): one prediction from a Cartesian start, taken from a
 * trajectory file or given on the command line, written as .npz. */
#include "cli.h"
#include "impulse/chnn_models.h"
#include "impulse/io.h"

#include <stdlib.h>
#include <string.h>

static const char *VERB = "rollout";

/* model_kind: the checkpoint's kind (cli_checkpoint_kind); CLI_NOT_MINE
 * unless it is one of the constrained networks. */
int cli_rollout_chnn(int argc, char **argv, const char *model_kind)
{
    imp_cmodel_kind kind;
    if (!model_kind || imp_cmodel_kind_from_name(model_kind, &kind)) {
        imp_clear_error();
        return CLI_NOT_MINE;
    }
    const char *model_path = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--model")) model_path = argv[i + 1];
    const char *data_path = NULL, *state = NULL, *out = NULL;
    long traj = 0, steps = -1;
    double dt = 0;
    imp_ceval_opts eo;
    imp_ceval_opts_default(&eo);
    int st = IMP_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cli_rollout_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--model")) { i++; continue; }
        if (!strcmp(a, "--contact-rk4")) {
            eo.contact_rk4 = 1;
            continue;
        }
        if (!strcmp(a, "--data")) data_path = val;
        else if (!strcmp(a, "--state")) state = val;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) out = val;
        else if (!strcmp(a, "--trajectory")) st = cli_parse_long(a, val, 0, 100000000, &traj);
        else if (!strcmp(a, "--steps")) st = cli_parse_long(a, val, 1, 10000000, &steps);
        else if (!strcmp(a, "--dt")) st = cli_parse_double(a, val, 1e-12, 1e6, &dt);
        else if (!strcmp(a, "--rtol")) {
            st = cli_parse_double(a, val, 1e-14, 1.0, &eo.rtol);
            eo.atol = eo.rtol * 1e-2;
        } else return cli_failf(VERB, "unknown option '%s' (see impulse rollout --help)", a);
        if (st) return cli_fail(VERB);
        if (!val) return cli_failf(VERB, "%s: missing value", a);
        i++;
    }
    if (!out) return cli_failf(VERB, "-o: missing (output .npz)");
    if (!data_path == !state) return cli_failf(VERB, "give exactly one of --data FILE and --state VALUES");
    imp_cmodel m;
    double *params = NULL;
    if (imp_cmodel_load(model_path, &m, &params)) return cli_fail(VERB);
    int N = m.sys.n_points * m.sys.d, cdim = 2 * N;
    double *xv0 = calloc((size_t)cdim, sizeof(double)), *pred = NULL;
    imp_ctraj data = {0};
    if (!xv0) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
    if (!st && data_path) {
        imp_csystem *cs = malloc(sizeof *cs);
        st = cs ? imp_ctraj_load(data_path, &data, cs) : imp_fail(IMP_ERR_NOMEM, "out of memory");
        char why[800];
        if (!st && !imp_csystem_same(cs, &m.sys, why, sizeof why))
            st = imp_fail(IMP_ERR_INVALID, "--data: %s: %s", data_path, why);
        free(cs);
        if (!st && traj >= data.n_traj)
            st = imp_fail(IMP_ERR_INVALID, "--trajectory: %ld, the data has %d", traj, data.n_traj);
        if (!st) {
            memcpy(xv0, data.z + (size_t)traj * data.T * cdim, (size_t)cdim * sizeof(double));
            if (steps < 0) steps = data.T - 1;
            if (dt == 0) dt = data.dt;
        }
    } else if (!st) {
        char what[96];
        snprintf(what, sizeof what, "%d Cartesian positions, then %d velocities", N, N);
        st = cli_parse_list("--state", state, cdim, what, xv0);
    }
    if (!st && steps < 0) steps = m.sys.full.n_steps > 0 ? m.sys.full.n_steps : 99;
    if (!st && dt == 0) dt = m.sys.dt;
    if (!st && !(dt > 0)) st = imp_fail(IMP_ERR_INVALID, "--dt: the system '%s' has no time step; give --dt", m.sys.name);
    if (!st) {
        pred = malloc((size_t)(steps + 1) * cdim * sizeof(double));
        st = pred ? imp_cmodel_rollout(&m, params, xv0, (int)steps + 1, dt, &eo, pred) : imp_fail(IMP_ERR_NOMEM, "out of memory");
    }
    imp_npz *z = NULL;
    if (!st) {
        z = imp_npz_new();
        double *t = malloc((size_t)(steps + 1) * sizeof(double));
        if (!z || !t) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
        for (long k = 0; !st && k <= steps; k++) t[k] = k * dt;
        size_t sh_t[1] = {(size_t)steps + 1};
        size_t sh_z[4] = {(size_t)steps + 1, 2, (size_t)m.sys.n_points, (size_t)m.sys.d};
        if (!st) st = imp_npz_add_f64(z, "t", 1, sh_t, t);
        if (!st) st = imp_npz_add_f64(z, "z", 4, sh_z, pred);
        free(t);
    }
    imp_json j;
    imp_json_init(&j);
    if (!st) {
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "format", "impulse-chnn-rollout");
        imp_json_kv_string(&j, "version", IMP_VERSION_STRING);
        imp_json_kv_string(&j, "model", imp_cmodel_kind_name(m.kind));
        imp_json_kv_string(&j, "checkpoint", model_path);
        imp_json_kv_string(&j, "system", m.sys.name);
        if (m.sys.full.source[0]) imp_json_kv_string(&j, "system_text", m.sys.full.source);
        imp_json_kv_int(&j, "steps", steps);
        imp_json_kv_number(&j, "dt", dt);
        imp_json_kv_number(&j, "rtol", eo.rtol);
        imp_json_kv_number(&j, "atol", eo.atol);
    }
    st = cli_npz_save_with_meta(z, &j, st, out);
    imp_ctraj_free(&data);
    free(xv0);
    free(pred);
    free(params);
    return st ? cli_fail(VERB) : 0;
}
