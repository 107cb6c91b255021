/* impulse inspect FILE: what a file holds and whether each strand can train
 * on it; for files impulse cannot read directly, how to import them. */
#include "cli.h"
#include "impulse/rigid_traj.h"
#include "impulse/cdl.h"
#include "impulse/chnn_models.h"
#include "impulse/io.h"
#include "io/source.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: impulse inspect FILE [--json]\n"
               "  FILE: a trajectory file (.npz), or a .npy/.csv/.h5 file to import.\n"
               "  Prints the arrays and meta keys, the contact-label check, and for each strand\n"
               "  whether it can train on the file or what is missing (docs/data-format.md).\n"
               "  --json: one JSON object on stdout (docs/json.md).\n");
}

/* "key": why a strand cannot train on the file, or null if it can. */
/* A rigid-body trajectory file (impulse import --rigid, docs/cube.md). */
static int inspect_rigid(const char *path, imp_json *j)
{
    imp_rigid_traj t;
    if (imp_rigid_traj_load(&t, path)) {
        if (j) {
            imp_json_free(j);
            return cli_fail("inspect");
        }
        printf("  rigid-body trajectories, cannot be read: %s\n", imp_last_error());
        return 1;
    }
    if (j) {
        imp_json_kv_string(j, "kind", "rigid-trajectories");
        imp_json_kv_int(j, "episodes", t.n_episodes);
        imp_json_kv_int(j, "samples", (long long)t.n_rows);
        imp_json_kv_number(j, "dt", t.dt);
        imp_json_kv_number(j, "mass", t.body.mass);
        imp_json_kv_number(j, "ground_height", t.ground_height);
    } else {
        printf("  rigid-body trajectories (docs/cube.md): %d episodes, %zu samples, dt %g s, a %g x %g x %g m box of "
               "%g kg, ground z = %g\n", t.n_episodes, t.n_rows, t.dt, t.body.size[0], t.body.size[1], t.body.size[2],
               t.body.mass, t.ground_height);
    }
    imp_rigid_traj_free(&t);
    return j ? cli_json_print(j, "inspect") : 0;
}

static void json_reason(imp_json *j, const char *key, const char *why)
{
    imp_json_key(j, key);
    if (why) imp_json_string(j, why);
    else imp_json_null(j);
}

/* The file's arrays and meta: printed, or as members of j. */
static void list_arrays(const imp_npz *z, const char *path, imp_json *j)
{
    if (j) {
        imp_json_key(j, "arrays");
        imp_json_begin_array(j);
    } else {
        printf("%s:\n", path);
    }
    for (size_t i = 0; i < imp_npz_count(z); i++) {
        const imp_npy_array *a = imp_npz_at(z, i);
        if (!strcmp(a->name, "meta")) continue;
        if (j) {
            imp_json_begin_object(j);
            imp_json_kv_string(j, "name", a->name);
            imp_json_kv_string(j, "dtype", imp_dtype_name(a->dtype));
            imp_json_key(j, "shape");
            imp_json_begin_array(j);
            for (int k = 0; k < a->ndim; k++) imp_json_int(j, (long long)a->shape[k]);
            imp_json_end_array(j);
            imp_json_end_object(j);
            continue;
        }
        printf("  %-16s %-8s (", a->name, imp_dtype_name(a->dtype));
        for (int k = 0; k < a->ndim; k++) printf(k ? ", %zu" : "%zu", a->shape[k]);
        printf(a->ndim == 1 ? ",)\n" : ")\n");
    }
    const char *meta = imp_npz_meta(z);
    if (!j) {
        printf("  meta %s\n", meta ? meta : "(none)");
        return;
    }
    imp_json_end_array(j);
    imp_json_key(j, "meta");
    if (meta && !imp_json_check_object(meta, "meta")) imp_json_raw(j, meta);
    else imp_json_null(j);
    imp_clear_error();
}

int cli_inspect(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!path) path = argv[i];
        else return cli_failf("inspect", "unexpected argument '%s' (one file)", argv[i]);
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    imp_json jo, *j = json ? &jo : NULL;
    if (j) {
        cli_json_begin(j, "inspect");
        imp_json_kv_string(j, "file", path);
    }
    size_t len = strlen(path);
    if (strcmp(path, "-") && (len < 4 || strcmp(path + len - 4, ".npz"))) { /* '-': an .npz on stdin */
        imp_source *s;
        if (imp_source_open(&s, path, NULL)) {
            if (j) imp_json_free(j);
            return cli_fail("inspect");
        }
        char list[1024];
        imp_source_list(s, list, sizeof list);
        if (j) {
            imp_json_kv_string(j, "format", imp_source_format(s));
            imp_json_kv_string(j, "contents", list);
            imp_source_free(s);
            return cli_json_print(j, "inspect");
        }
        printf("%s: %s file; %s\n", path, imp_source_format(s), list);
        /* the import command it needs: only the options its names do not
         * already answer (the names import looks for by default) */
        const char *tn = imp_source_has(s, "t") ? "t" : imp_source_has(s, "time") ? "time" : NULL;
        int has_q = imp_source_has(s, "q") || imp_source_has(s, "qpos") || imp_source_has(s, "x");
        int has_v = imp_source_has(s, "qdot") || imp_source_has(s, "qvel") || imp_source_has(s, "v");
        printf("  not a trajectory file: impulse import %s%s%s%s [--wall B:N:OFFSET ...] -o data.npz", path,
               tn ? "" : " --dt H", has_q ? "" : " --q NAME",
               has_v ? "" : " --qdot NAME (or --finite-differences)");
        if (tn) printf(" (dt from its '%s')", tn);
        printf("\n  or, for a constrained system: impulse import %s --system-file SYSTEM.txt -o data.npz\n", path);
        imp_clear_error();
        imp_source_free(s);
        return 0;
    }
    imp_npz *z = NULL;
    if (imp_npz_load(&z, path)) {
        if (j) imp_json_free(j);
        return cli_fail("inspect");
    }
    if (j) imp_json_kv_string(j, "format", "npz");
    list_arrays(z, path, j);
    const char *meta = imp_npz_meta(z);
    char model[64];
    if (meta && !imp_json_get_string(meta, "model", model, sizeof model)) {
        imp_npz_free(z);
        /* a CD-Lagrange strand checkpoint: what it does with each contact pair */
        imp_model_kind mk;
        imp_model *m = NULL;
        if (!imp_model_kind_from_name(model, &mk) && imp_model_load(&m, path)) {
            if (j) imp_json_free(j);
            return cli_fail("inspect");
        }
        imp_clear_error();
        double tol = m && m->cfg.contact_tol != IMP_CONTACT_TOL_AUTO ? m->cfg.contact_tol : 0.0;
        if (j) {
            imp_json_kv_string(j, "model", model);
            if (m) {
                imp_json_kv_number(j, "contact_tol", tol);
                cli_contact_pairs(&m->geom, mk == IMP_MODEL_CDL ? m : NULL, tol, NULL, j, NULL);
            }
            imp_model_free(m);
            return cli_json_print(j, "inspect");
        }
        printf("  a model checkpoint (%s): impulse eval --model %s --data DATA\n", model, path);
        if (m && mk == IMP_MODEL_CDL) cli_contact_pairs(&m->geom, m, tol, NULL, NULL, stdout);
        else if (m && m->geom.n_pairs > 0)
            printf("  %s has no contact geometry of its own: its network predicts the next state\n", model);
        imp_model_free(m);
        return 0;
    }
    char kind[64];
    if (meta && !imp_json_get_string(meta, "kind", kind, sizeof kind) && !strcmp(kind, "rigid-trajectories")) {
        imp_npz_free(z);
        return inspect_rigid(path, j);
    }
    imp_npz_free(z);
    imp_clear_error();
    if (cli_import_is_rigid(path)) { /* the ContactNets layout */
        if (j) imp_json_kv_string(j, "rigid_body", "states and lengths: impulse import FILE --rigid");
        else printf("  one rigid body's states and lengths: impulse import %s --rigid ... -o cube.npz (docs/cube.md)\n", path);
    }
    imp_trajset ts;
    int contact_ok = 0; /* the contact strand reads it: the shared members are written */
    if (imp_trajset_load(&ts, path)) {
        if (j) json_reason(j, "contact_strand", imp_last_error());
        else printf("  CD-Lagrange strand (cdl, vin, resnet, resnet-contact): cannot train: %s\n", imp_last_error());
    } else {
        imp_label_report r;
        int labels_ok = ts.has_contact && !imp_contact_labels_apply(&ts, IMP_LABELS_AS_GIVEN, &r);
        const char *handling =
            !strcmp(ts.labels, "impact") || !strcmp(ts.labels, "as-given") || !strcmp(ts.labels, "onset") ? "as-given"
                                                                                                       : "onset";
        double e;
        int energy = !imp_system_energy(ts.system, &ts.geom, ts.gravity, ts.length, ts.q_clean, ts.qdot_clean, &e);
        contact_ok = 1;
        if (j) {
            json_reason(j, "contact_strand", NULL);
            imp_json_kv_string(j, "system", ts.system);
            imp_json_kv_int(j, "trajectories", ts.n_traj);
            imp_json_kv_int(j, "steps", ts.n_steps);
            imp_json_kv_int(j, "bodies", ts.geom.n_bodies);
            imp_json_kv_int(j, "dim", ts.geom.dim);
            imp_json_kv_number(j, "dt", ts.dt);
            imp_json_kv_int(j, "contact_pairs", ts.geom.n_pairs);
            imp_json_kv_number(j, "gravity", ts.gravity);
            imp_json_kv_number(j, "restitution", ts.geom.restitution);
            imp_json_key(j, "contact_labels");
            if (labels_ok) imp_json_int(j, r.labels);
            else imp_json_null(j);
            if (ts.has_contact) imp_json_kv_string(j, "label_handling", handling);
            imp_json_key(j, "energy_metrics");
            imp_json_bool(j, energy);
            imp_json_kv_number(j, "contact_tol", imp_cdl_default_contact_tol(&ts));
            cli_contact_pairs(&ts.geom, NULL, imp_cdl_default_contact_tol(&ts), NULL, j, NULL);
        } else {
            printf("  %d trajectories x %d samples, %d bodies x %d coordinates, dt %g, %d contact pairs, system '%s', "
                   "gravity %g, restitution %g\n", ts.n_traj, ts.n_steps, ts.geom.n_bodies, ts.geom.dim, ts.dt,
                   ts.geom.n_pairs, ts.system, ts.gravity, ts.geom.restitution);
            if (labels_ok)
                printf("  contact labels (meta labels \"%s\"): %d in %d intervals, %d impacts, %d impacts with several "
                       "labels (%d extra, %d while separating), %d with no velocity change, %d resting; train's "
                       "default handling: %s\n", ts.labels, r.labels, r.intervals, r.impacts, r.multi, r.extra,
                       r.separating, r.no_change, r.resting, handling);
            printf("  cdl, vin, resnet: can train%s\n", ts.has_contact ? "" : " (no contact labels: --no-touch)");
            printf("  resnet-contact: %s\n", ts.has_contact ? "can train" : "cannot train: needs contact labels ('contact')");
            if (ts.geom.n_pairs == 0 && ts.has_contact)
                printf("  note: no contact pairs: labels cannot be checked against the motion\n");
            cli_contact_pairs(&ts.geom, NULL, imp_cdl_default_contact_tol(&ts), NULL, NULL, stdout);
            if (energy) printf("  energy metrics: available (%s)\n", ts.system);
            else printf("  energy metrics: not available: %s\n", imp_last_error());
        }
        imp_trajset_free(&ts);
    }
    imp_clear_error();
    imp_ctraj ct;
    char sys[64];
    if (imp_ctraj_load_cartesian(path, &ct, sys)) {
        if (j) json_reason(j, "constrained_strand", imp_last_error());
        else printf("  constrained strand (chnn, clnn, hnn, delan, node): cannot train: %s\n", imp_last_error());
    } else {
        if (j) {
            json_reason(j, "constrained_strand", NULL);
            if (!contact_ok) {
                imp_json_kv_string(j, "system", sys);
                imp_json_kv_int(j, "trajectories", ct.n_traj);
            }
        } else {
            printf("  constrained strand (chnn, clnn, hnn, delan, node): can train (%s, %d trajectories)\n", sys,
                   ct.n_traj);
        }
        imp_ctraj_free(&ct);
    }
    return j ? cli_json_print(j, "inspect") : 0;
}
