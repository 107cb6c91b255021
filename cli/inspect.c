/* impulse inspect FILE: what a file holds and whether each strand can train
 * on it; for files impulse cannot read directly, how to import them. */
#include "cli.h"
#include "impulse/cdl.h"
#include "impulse/chnn_models.h"
#include "impulse/io.h"
#include "io/source.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: impulse inspect FILE\n"
               "  FILE: a trajectory file (.npz), or a .npy/.csv/.h5 file to import.\n"
               "  Prints the arrays and meta keys, the contact-label check, and for each strand\n"
               "  whether it can train on the file or what is missing (docs/data-format.md).\n");
}

int cli_inspect(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (argc > 2) return cli_failf("inspect", "unexpected argument '%s' (one file)", argv[2]);
    const char *path = argv[1];
    size_t len = strlen(path);
    if (len < 4 || strcmp(path + len - 4, ".npz")) {
        imp_source *s;
        if (imp_source_open(&s, path, NULL)) return cli_fail("inspect");
        char list[1024];
        imp_source_list(s, list, sizeof list);
        printf("%s: %s file; %s\n", path, imp_source_format(s), list);
        printf("  not a trajectory file: impulse import %s --dt H [--q NAME --qdot NAME --contact NAME "
               "--wall B:N:OFFSET ...] -o data.npz\n", path);
        imp_source_free(s);
        return 0;
    }
    imp_npz *z = NULL;
    if (imp_npz_load(&z, path)) return cli_fail("inspect");
    printf("%s:\n", path);
    for (size_t i = 0; i < imp_npz_count(z); i++) {
        const imp_npy_array *a = imp_npz_at(z, i);
        if (!strcmp(a->name, "meta")) continue;
        printf("  %-16s %-8s (", a->name, imp_dtype_name(a->dtype));
        for (int k = 0; k < a->ndim; k++) printf(k ? ", %zu" : "%zu", a->shape[k]);
        printf(a->ndim == 1 ? ",)\n" : ")\n");
    }
    const char *meta = imp_npz_meta(z);
    printf("  meta %s\n", meta ? meta : "(none)");
    char model[64];
    if (meta && !imp_json_get_string(meta, "model", model, sizeof model)) {
        printf("  a model checkpoint (%s): impulse eval --model %s --data DATA\n", model, path);
        imp_npz_free(z);
        return 0;
    }
    imp_npz_free(z);
    imp_clear_error();
    imp_trajset ts;
    if (imp_trajset_load(&ts, path)) {
        printf("  CD-Lagrange strand (cdl, vin, resnet, resnet-contact): cannot train: %s\n", imp_last_error());
    } else {
        printf("  %d trajectories x %d samples, %d bodies x %d coordinates, dt %g, %d contact pairs, system '%s', "
               "gravity %g, restitution %g\n", ts.n_traj, ts.n_steps, ts.geom.n_bodies, ts.geom.dim, ts.dt,
               ts.geom.n_pairs, ts.system, ts.gravity, ts.geom.restitution);
        if (ts.has_contact) {
            imp_label_report r;
            if (!imp_contact_labels_apply(&ts, IMP_LABELS_AS_GIVEN, &r))
                printf("  contact labels (meta labels \"%s\"): %d in %d intervals, %d impacts, %d impacts with several "
                       "labels (%d extra, %d while separating), %d with no velocity change, %d resting; train's "
                       "default handling: %s\n", ts.labels, r.labels, r.intervals, r.impacts, r.multi, r.extra,
                       r.separating, r.no_change, r.resting,
                       !strcmp(ts.labels, "impact") || !strcmp(ts.labels, "as-given") || !strcmp(ts.labels, "onset")
                           ? "as-given"
                           : "onset");
        }
        printf("  cdl, vin, resnet: can train%s\n", ts.has_contact ? "" : " (no contact labels: --no-touch)");
        printf("  resnet-contact: %s\n", ts.has_contact ? "can train" : "cannot train: needs contact labels ('contact')");
        if (ts.geom.n_pairs == 0 && ts.has_contact)
            printf("  note: no contact pairs: labels cannot be checked against the motion\n");
        double e;
        if (imp_system_energy(ts.system, &ts.geom, ts.gravity, ts.length, ts.q_clean, ts.qdot_clean, &e))
            printf("  energy metrics: not available: %s\n", imp_last_error());
        else
            printf("  energy metrics: available (%s)\n", ts.system);
        imp_trajset_free(&ts);
    }
    imp_clear_error();
    imp_ctraj ct;
    char sys[64];
    if (imp_ctraj_load_cartesian(path, &ct, sys)) {
        printf("  constrained strand (chnn, clnn, hnn, delan, node): cannot train: %s\n", imp_last_error());
    } else {
        printf("  constrained strand (chnn, clnn, hnn, delan, node): can train (%s, %d trajectories)\n", sys, ct.n_traj);
        imp_ctraj_free(&ct);
    }
    return 0;
}
