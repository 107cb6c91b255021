/* Compliant-contact simulators (spring-damper ball and cradle), contact
 * labels checked against the motion and their onset handling, and the
 * trajectory reader's handling of user files (float32, missing keys). */
#include "impulse/cdl.h"
#include "impulse/io.h"
#include "test.h"

/* Total energy with the contact spring's: the rigid system's plus k s^2 / 2. */
static double total_energy(const imp_trajset *ts, double k, const double *q, const double *v)
{
    double e = NAN;
    CHECK_OK(imp_system_energy(ts->system, &ts->geom, ts->gravity, ts->length, q, v, &e));
    for (int p = 0; p < ts->geom.n_pairs; p++) {
        double s = -imp_contact_gap(&ts->geom, p, q);
        if (s > 0) e += 0.5 * k * s * s;
    }
    return e;
}

/* e = 1: no damping, the spring returns all energy (RK4 on 256 sub-steps). */
static void test_energy(const char *system)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults(system, &o));
    o.restitution = 1.0;
    imp_trajset ts;
    CHECK_OK(imp_simulate(system, &o, &ts));
    int D = ts.geom.n_bodies * ts.geom.dim, labels = 0;
    double e0 = total_energy(&ts, o.stiffness, ts.q, ts.qdot), drift = 0, pen = 0;
    for (int t = 0; t < ts.n_steps; t++) {
        double e = total_energy(&ts, o.stiffness, ts.q + (size_t)t * D, ts.qdot + (size_t)t * D);
        drift = fmax(drift, fabs(e - e0) / fabs(e0));
        pen = fmax(pen, -imp_contact_gap(&ts.geom, 0, ts.q + (size_t)t * D));
        for (int k = 0; k < ts.geom.n_bodies; k++) labels += ts.contact[(size_t)t * ts.geom.n_bodies + k] > 0;
    }
    printf("%s e = 1: relative energy drift %.2e over %d samples, %d contact labels, max penetration %.4f\n",
           system, drift, ts.n_steps, labels, pen);
    CHECK(drift < 1e-9);
    CHECK(labels > 0 && pen > 0); /* contacts happened and the bodies overlapped */
    CHECK(!strcmp(ts.labels, "touch"));
    imp_trajset_free(&ts);
}

/* The apparent restitution, read from velocities sampled densely around the
 * first bounce (dt 1e-4: the contact's start and end within 1e-4 s), is the
 * target up to the gravity acting during the contact. */
static void test_restitution(double e)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball", &o));
    o.restitution = e, o.dt = 1e-4, o.n_steps = 16000, o.q0 = 1.0;
    imp_trajset ts;
    CHECK_OK(imp_simulate("compliant-ball", &o, &ts));
    int a = -1, b = -1;
    for (int t = 0; t < ts.n_steps && b < 0; t++) {
        if (a < 0 && ts.contact[t] > 0) a = t;
        if (a >= 0 && ts.contact[t] == 0) b = t;
    }
    CHECK(a > 0 && b > a);
    if (a > 0 && b > a) {
        double ratio = -ts.qdot[b] / ts.qdot[a - 1];
        double duration = (b - a) * o.dt, g_share = 9.81 * duration / fabs(ts.qdot[a - 1]);
        printf("compliant ball e = %.2f: apparent restitution %.4f, contact %.4f s (%.1f samples of 0.02 s)\n", e,
               ratio, duration, duration / 0.02);
        /* gravity during the contact changes the ratio by at most g t_c / v */
        CHECK(fabs(ratio - e) <= g_share + 2e-3);
    }
    imp_trajset_free(&ts);
}

static int count_labels(const imp_trajset *ts)
{
    int n = 0;
    for (size_t i = 0; i < (size_t)ts->n_traj * ts->n_steps * ts->geom.n_bodies; i++) n += ts->contact[i] > 0;
    return n;
}

/* Labels against the motion: a touch sensor on a compliant contact gives
 * several labels per bounce; onset keeps the first (the step in which the
 * ball met the floor), marks the samples where the ball still touches as
 * interior, and afterwards every impact has exactly one label. The
 * event-driven simulators' labels pass the check untouched. */
/* Simulates a one-body system and returns a copy of its labels (freed by the caller). */
static double *simulate_labelled(const char *system, const imp_sim_opts *o, imp_trajset *ts)
{
    CHECK_OK(imp_simulate(system, o, ts));
    size_t n = (size_t)ts->n_traj * ts->n_steps;
    double *c = malloc(n * sizeof *c);
    memcpy(c, ts->contact, n * sizeof *c);
    return c;
}

static void test_labels(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball", &o));
    o.restitution = 0.7, o.noise = 0.2, o.n_traj = 3, o.seed = 4;
    imp_trajset ts;
    double *orig = simulate_labelled("compliant-ball", &o, &ts);
    int before = count_labels(&ts), T = ts.n_steps;
    size_t NT = (size_t)ts.n_traj * T;
    imp_label_report r;
    CHECK_OK(imp_contact_labels_apply(&ts, IMP_LABELS_AS_GIVEN, &r));
    CHECK(count_labels(&ts) == before && r.kept == before && r.labels == before);
    int marked = 0;
    for (size_t i = 0; i < NT; i++) marked += ts.interior[i] != 0.0;
    CHECK(marked == 0 && r.interior > 0); /* as-given reports them, marks nothing */
    printf("compliant ball labels: %d in %d intervals, %d impacts, %d with several labels (%d extra), %d resting\n",
           r.labels, r.intervals, r.impacts, r.multi, r.extra, r.resting);
    CHECK(r.multi > 0 && r.extra > 0);
    CHECK_OK(imp_contact_labels_apply(&ts, IMP_LABELS_AUTO, &r)); /* touch labels: auto is onset */
    CHECK(r.mode == IMP_LABELS_ONSET && count_labels(&ts) == before - r.extra - r.no_change);
    CHECK(!strcmp(ts.labels, "onset"));
    /* each kept label of a fast impact sits at the first sample of the
     * sensor's interval, and the clean normal velocity turns there or at the
     * next sample; every interior sample is one where the ball penetrates
     * (still touching), and every sample of an impact before its interval's
     * last one is interior */
    int bad = 0, interior = 0, spans = 0;
    for (int n = 0; n < ts.n_traj; n++)
        for (int t = 1; t + 1 < T; t++) {
            size_t i = (size_t)n * T + t;
            const double *v = ts.qdot_clean;
            if (ts.contact[i] > 0 && fabs(v[i - 1]) > 2.0 &&
                !(orig[i] > 0 && orig[i - 1] == 0 && v[i - 1] < 0 && (v[i] > 0 || v[i + 1] > 0)))
                bad++;
            if (ts.interior[i] != 0.0)
                interior++, bad += (!(ts.q_clean[i] < 0.0) && fabs(v[i]) > 0.5) || !(orig[i] > 0 && orig[i + 1] > 0);
            if (fabs(v[i - 1]) > 2.0 && orig[i] > 0 && orig[i - 1] == 0 && orig[i + 1] > 0)
                spans++, bad += ts.interior[i] == 0.0;
        }
    printf("compliant ball onset: %d interior samples (report %d), %d fast impacts spanning samples\n", interior,
           r.interior, spans);
    CHECK(bad == 0 && interior == r.interior && spans > 0);
    /* a second pass finds nothing left to drop and keeps the marks */
    imp_label_report r2;
    CHECK_OK(imp_contact_labels_apply(&ts, IMP_LABELS_ONSET, &r2));
    CHECK(r2.multi == 0 && r2.extra == 0 && r2.no_change == 0 && r2.labels == r.kept && r2.kept == r.kept);
    int still = 0;
    for (size_t i = 0; i < NT; i++) still += ts.interior[i] != 0.0;
    CHECK(still == interior);
    /* written and read back with the file */
    CHECK_OK(imp_trajset_save(&ts, "labels_onset.npz"));
    imp_trajset back;
    CHECK_OK(imp_trajset_load(&back, "labels_onset.npz"));
    CHECK(!memcmp(back.interior, ts.interior, NT * sizeof(double)) && !strcmp(back.labels, "onset"));
    imp_label_report r3;
    CHECK_OK(imp_contact_labels_apply(&back, IMP_LABELS_AUTO, &r3)); /* handled labels: as given */
    CHECK(r3.mode == IMP_LABELS_AS_GIVEN && r3.kept == r.kept);
    imp_trajset_free(&back);
    free(orig);
    imp_trajset_free(&ts);

    /* labels with no velocity change (in free flight) are found and dropped */
    CHECK_OK(imp_simulate("compliant-ball", &o, &ts));
    for (int t = 10; t < 13; t++) ts.contact[t] = 1.0; /* the ball is falling, far above the floor */
    CHECK_OK(imp_contact_labels_apply(&ts, IMP_LABELS_ONSET, &r));
    CHECK(r.no_change == 3 && ts.contact[10] == 0 && ts.contact[12] == 0);
    imp_trajset_free(&ts);

    const char *rigid[] = {"bouncing-ball", "newtons-cradle"};
    for (int s = 0; s < 2; s++) {
        CHECK_OK(imp_sim_defaults(rigid[s], &o));
        o.noise = s ? 0.02 : 0.2, o.restitution = 0.7;
        CHECK_OK(imp_simulate(rigid[s], &o, &ts));
        before = count_labels(&ts);
        CHECK_OK(imp_contact_labels_apply(&ts, IMP_LABELS_AUTO, &r));
        CHECK(r.mode == IMP_LABELS_AS_GIVEN && count_labels(&ts) == before);
        CHECK_MSG(r.multi == 0 && r.no_change == 0, "%s: %d multi, %d no change", rigid[s], r.multi, r.no_change);
        imp_trajset_free(&ts);
    }
    imp_label_mode m;
    CHECK_FAILS(imp_label_mode_from_name("first", &m), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "--contact-labels") != NULL);
}

/* Labels derived from the motion and the geometry (--contact-labels
 * geometry) for the ball in a box without its touch labels: every fast
 * impact on the floor and on each wall is labelled at the sensor's first
 * sample or the next, and nothing is labelled far from every surface; a
 * given label is set aside. */
static void test_labels_from_geometry(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball-box", &o));
    o.n_traj = 8, o.noise = 0.05, o.randomize = 1, o.seed = 100;
    imp_trajset ts;
    double *orig = simulate_labelled("compliant-ball-box", &o, &ts);
    const int T = ts.n_steps, D = 2, P = ts.geom.n_pairs;
    const size_t NT = (size_t)ts.n_traj * T;
    memset(ts.contact, 0, NT * sizeof *ts.contact); /* a file without labels */
    ts.has_contact = 0;
    ts.contact[5] = 1.0; /* except one, in free fall: set aside */
    imp_label_report r;
    CHECK_OK(imp_contact_labels_apply(&ts, IMP_LABELS_GEOMETRY, &r));
    CHECK(ts.has_contact && r.mode == IMP_LABELS_GEOMETRY && !strcmp(ts.labels, "onset") && ts.contact[5] == 0.0);
    int fast[3] = {0}, found[3] = {0}, far = 0;
    for (int n = 0; n < ts.n_traj; n++)
        for (int t = 1; t + 1 < T; t++) {
            size_t i = (size_t)n * T + t;
            const double *qc = ts.q_clean + i * D;
            double gmin = INFINITY;
            for (int p = 0; p < P; p++) gmin = fmin(gmin, imp_contact_gap(&ts.geom, p, qc));
            far += ts.contact[i] > 0 && gmin > 0.5;
            if (!(orig[i] > 0 && orig[i - 1] == 0)) continue;
            for (int p = 0; p < P; p++) /* the pair the sensor's interval starts on, approaching fast */
                if (imp_contact_gap(&ts.geom, p, qc) < 0.05 &&
                    imp_contact_normal_velocity(&ts.geom, p, ts.qdot_clean + (i - 1) * D) < -1.0) {
                    fast[p]++;
                    found[p] += ts.contact[i] > 0 || ts.contact[i + 1] > 0;
                }
        }
    printf("labels from geometry: %d kept, %d impacts, %d resting; fast impacts found: floor %d/%d, left %d/%d, "
           "right %d/%d; %d labels more than 0.5 m from every surface\n",
           r.kept, r.impacts, r.resting, found[0], fast[0], found[1], fast[1], found[2], fast[2], far);
    for (int p = 0; p < P; p++)
        CHECK_MSG(fast[p] > 0 && found[p] == fast[p], "pair %d: %d of %d", p, found[p], fast[p]);
    CHECK(far == 0);
    imp_label_mode m;
    CHECK_OK(imp_label_mode_from_name("geometry", &m));
    CHECK(m == IMP_LABELS_GEOMETRY && !strcmp(imp_label_mode_name(m), "geometry"));
    free(orig);
    imp_trajset_free(&ts);
}

/* Save a trajectory file's arrays with some changed: float32 copies, or
 * members and meta keys left out. */
static void save_variant(const imp_trajset *ts, const char *path, int f32, const char *skip, const char *meta)
{
    imp_npz *z = imp_npz_new();
    int K = ts->geom.n_bodies, d = ts->geom.dim;
    size_t n = (size_t)ts->n_traj * ts->n_steps;
    size_t shq[3] = {(size_t)ts->n_traj, (size_t)ts->n_steps, (size_t)(K * d)};
    size_t shc[3] = {(size_t)ts->n_traj, (size_t)ts->n_steps, (size_t)K};
    const char *names[] = {"q", "qdot"};
    const double *arrs[] = {ts->q, ts->qdot};
    for (int a = 0; a < 2; a++) {
        if (!strcmp(skip, names[a])) continue;
        if (f32) {
            float *f = malloc(n * K * d * sizeof *f);
            for (size_t i = 0; i < n * K * d; i++) f[i] = (float)arrs[a][i];
            imp_npy_array arr = {.dtype = IMP_F32, .item_size = 4, .ndim = 3, .count = n * K * d, .data = f};
            memcpy(arr.shape, shq, sizeof shq);
            CHECK_OK(imp_npz_add_array(z, names[a], &arr));
            free(f);
        } else {
            CHECK_OK(imp_npz_add_f64(z, names[a], 3, shq, arrs[a]));
        }
    }
    if (strcmp(skip, "contact")) {
        /* labels as bool, as a sensor log has them */
        unsigned char *b = malloc(n * K);
        for (size_t i = 0; i < n * K; i++) b[i] = ts->contact[i] > 0;
        imp_npy_array arr = {.dtype = IMP_BOOL, .item_size = 1, .ndim = 3, .count = n * K, .data = b};
        memcpy(arr.shape, shc, sizeof shc);
        CHECK_OK(imp_npz_add_array(z, "contact", &arr));
        free(b);
    }
    if (strcmp(skip, "masses")) CHECK_OK(imp_npz_add_f64(z, "masses", 1, (size_t[]){(size_t)K}, ts->geom.mass));
    if (strcmp(skip, "contact_pairs")) {
        double pairs[2] = {-1, 0}; /* floats, as np.array([[-1, 0.]]) gives */
        CHECK_OK(imp_npz_add_f64(z, "contact_pairs", 2, (size_t[]){1, 2}, pairs));
        CHECK_OK(imp_npz_add_f64(z, "contact_normals", 2, (size_t[]){1, 1}, (double[]){1}));
        CHECK_OK(imp_npz_add_f64(z, "contact_offsets", 1, (size_t[]){1}, (double[]){0}));
    }
    if (meta) CHECK_OK(imp_npz_set_meta(z, meta));
    CHECK_OK(imp_npz_save(z, path));
    imp_npz_free(z);
}

static void test_user_files(void)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball", &o));
    o.restitution = 0.7, o.noise = 0.2, o.n_steps = 60;
    imp_trajset ts, b;
    CHECK_OK(imp_simulate("compliant-ball", &o, &ts));
    const char *full = "{\"dt\": 0.02, \"dim\": 1, \"restitution\": 0.7, \"gravity\": 9.81, \"system\": \"compliant-ball\"}";
    save_variant(&ts, "user_f32.npz", 1, "", full);
    CHECK_OK(imp_trajset_load(&b, "user_f32.npz"));
    double err = 0;
    for (int t = 0; t < ts.n_steps; t++) err = fmax(err, fabs(b.q[t] - ts.q[t]) / fmax(1, fabs(ts.q[t])));
    CHECK(err < 1e-6 && err > 0); /* widened float32: rounded, not rejected */
    CHECK(b.has_contact && b.contact[0] == ts.contact[0] && b.geom.pairs[0].body_i == IMP_WALL);
    CHECK(!b.labels[0]); /* no "labels" key: unknown, auto handling is onset */
    imp_trajset_free(&b);

    /* no labels: loads, has_contact = 0 */
    save_variant(&ts, "user_nolabels.npz", 0, "contact", full);
    CHECK_OK(imp_trajset_load(&b, "user_nolabels.npz"));
    CHECK(!b.has_contact && count_labels(&b) == 0);
    imp_trajset_free(&b);

    /* no gravity: the energy says why it cannot be computed; no system (data
     * from elsewhere, issue 27): point masses, as the bouncing ball's */
    save_variant(&ts, "user_nogravity.npz", 0, "", "{\"dt\": 0.02, \"dim\": 1, \"restitution\": 0.7, \"system\": \"compliant-ball\"}");
    CHECK_OK(imp_trajset_load(&b, "user_nogravity.npz"));
    double e;
    CHECK_FAILS(imp_system_energy(b.system, &b.geom, b.gravity, b.length, b.q, b.qdot, &e), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "gravity") != NULL);
    imp_trajset_free(&b);
    save_variant(&ts, "user_nosystem.npz", 0, "", "{\"dt\": 0.02, \"dim\": 1, \"restitution\": 0.7, \"gravity\": 9.81}");
    CHECK_OK(imp_trajset_load(&b, "user_nosystem.npz"));
    double e_ball;
    CHECK_OK(imp_system_energy(b.system, &b.geom, b.gravity, b.length, b.q, b.qdot, &e));
    CHECK_OK(imp_system_energy("bouncing-ball", &b.geom, b.gravity, b.length, b.q, b.qdot, &e_ball));
    CHECK(e == e_ball && !imp_system_energy_known(b.system, b.geom.dim));
    /* a disk's coordinates are (x, y, k theta): 3 of them, not 1 */
    CHECK_FAILS(imp_system_energy("bouncing-disk", &b.geom, b.gravity, b.length, b.q, b.qdot, &e), IMP_ERR_UNSUPPORTED);
    CHECK(strstr(imp_last_error(), "bouncing-disk") != NULL);
    imp_trajset_free(&b);

    /* every missing key: one message naming it and how to supply it */
    struct {
        const char *skip, *meta, *needle;
    } cases[] = {
        {"q", full, "'q'"},
        {"qdot", full, "finite differences"},
        {"masses", full, "--masses"},
        {"contact_pairs", full, "--wall"},
        {"", NULL, "'meta'"},
        {"", "{\"dim\": 1, \"restitution\": 0.7}", "'dt'"},
        {"", "{\"dt\": 0.02, \"restitution\": 0.7}", "\"dim\": 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        save_variant(&ts, "user_bad.npz", 0, cases[i].skip, cases[i].meta);
        imp_clear_error();
        int st = imp_trajset_load(&b, "user_bad.npz");
        CHECK_MSG(st != IMP_OK && strstr(imp_last_error(), cases[i].needle), "case %zu: '%s' (want '%s')", i,
                  imp_last_error(), cases[i].needle);
        if (!st) imp_trajset_free(&b);
    }
    imp_trajset_free(&ts);
}

/* The compliant ball (e = 0.7, from 10 m, noise-free), labels handled by onset. */
static void onset_ball(imp_trajset *ts)
{
    imp_sim_opts o;
    CHECK_OK(imp_sim_defaults("compliant-ball", &o));
    o.restitution = 0.7;
    CHECK_OK(imp_simulate("compliant-ball", &o, ts));
    CHECK_OK(imp_contact_labels_apply(ts, IMP_LABELS_ONSET, NULL));
}

/* The data estimate of e that starts a learned restitution: across the
 * whole impact (from the sample before it to the first one after its
 * interior samples) it is close to the contact's restitution (low by the
 * slow impacts, where gravity during the contact takes a larger share);
 * from the mid-impact sample it is far off. */
static void test_estimate(void)
{
    imp_trajset ts;
    onset_ball(&ts);
    double e = NAN, e_mid = NAN;
    int n = 0, n_mid = 0;
    CHECK_OK(imp_cdl_estimate_contact_law(&ts, &e, NULL, &n));
    memset(ts.interior, 0, (size_t)ts.n_traj * ts.n_steps * sizeof(double));
    CHECK_OK(imp_cdl_estimate_contact_law(&ts, &e_mid, NULL, &n_mid));
    printf("compliant ball e = 0.7: estimate %.4f over %d impacts (from the mid-impact sample %.4f)\n", e, n, e_mid);
    CHECK(fabs(e - 0.7) < 0.05 && fabs(e_mid - 0.7) > 0.2 && n == n_mid && n >= 8);
    imp_trajset_free(&ts);
}

/* Training treats a multi-sample impact as one event: with the interior
 * samples marked, CD-Lagrange (Newton's law) learns e close to the
 * contact's and gravity at the floor; with the marks cleared (the same
 * labels, mid-impact samples as targets and window starts) the mid-impact
 * deceleration pulls e down and flattens the potential at the floor. */
static void test_train_interior(void)
{
    imp_trajset ts;
    onset_ball(&ts);
    double e[2], force[2];
    for (int marked = 1; marked >= 0; marked--) {
        if (!marked) memset(ts.interior, 0, (size_t)ts.n_traj * ts.n_steps * sizeof(double));
        imp_cdl_config cfg;
        imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
        cfg.hidden = 32, cfg.contact_hidden = 16, cfg.act = IMP_ACT_SOFTPLUS;
        cfg.learn_restitution = 1, cfg.impact_law = imp_cdl_default_impact_law(&ts);
        CHECK(cfg.impact_law == IMP_CDL_IMPACT_NEWTON);
        imp_train_opts to;
        imp_train_opts_default(&to, 1);
        to.epochs = 40;
        imp_model *m = NULL;
        CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 3));
        CHECK_OK(imp_model_init_contact_law(m, &ts, IMP_LAW_INIT_VALUE, 0.5, IMP_LAW_INIT_DEFAULT, 0, NULL));
        CHECK_OK(imp_model_train(m, &ts, &to, NULL));
        imp_model_get_contact_law(m, &e[marked], NULL);
        double q0 = 0.0;
        CHECK_OK(imp_model_potential_grad(m, &q0, 1, &force[marked]));
        force[marked] /= ts.gravity;
        imp_model_free(m);
    }
    printf("compliant ball, CDL 40 epochs: learned e %.4f, dU/dq at the floor %.3f g (interior marks cleared: e %.4f, "
           "%.3f g)\n", e[1], force[1], e[0], force[0]);
    CHECK(fabs(e[1] - 0.7) < 0.03 && fabs(force[1] - 1.0) < 0.15);
    CHECK(e[0] < e[1] - 0.03 && force[0] < force[1] - 0.1);
    imp_trajset_free(&ts);
}

/* A resting contact (the ball lying on the floor: its label and the
 * previous one on, after the onset handling) is left out of the state loss:
 * the last sample (a target only, never a window start) moved by 0.5 m
 * changes nothing the model learns when it rests, and changes it with the
 * rule off (the labels named as given). */
static void test_train_resting(void)
{
    imp_trajset ts;
    onset_ball(&ts);
    const int T = ts.n_steps;
    CHECK(ts.contact[T - 1] != 0.0 && ts.contact[T - 2] != 0.0 && ts.interior[T - 1] == 0.0);
    for (int onset = 1; onset >= 0; onset--) {
        if (!onset) snprintf(ts.labels, sizeof ts.labels, "as-given");
        double *p[2];
        size_t np = 0;
        for (int moved = 0; moved < 2; moved++) {
            ts.q[T - 1] += moved ? 0.5 : 0.0;
            imp_cdl_config cfg;
            imp_cdl_config_default(&cfg, IMP_MODEL_CDL);
            cfg.hidden = 8, cfg.contact_hidden = 8, cfg.act = IMP_ACT_SOFTPLUS;
            cfg.learn_restitution = 1, cfg.impact_law = IMP_CDL_IMPACT_NEWTON;
            imp_train_opts to;
            imp_train_opts_default(&to, 1);
            to.epochs = 2;
            imp_model *m = NULL;
            CHECK_OK(imp_model_create(&m, &cfg, &ts.geom, ts.dt, 3));
            CHECK_OK(imp_model_train(m, &ts, &to, NULL));
            np = m->n_params;
            p[moved] = malloc(np * sizeof(double));
            memcpy(p[moved], m->params, np * sizeof(double));
            imp_model_free(m);
            ts.q[T - 1] -= moved ? 0.5 : 0.0;
        }
        int same = !memcmp(p[0], p[1], np * sizeof(double));
        CHECK_MSG(same == onset, "resting target moved: parameters %s with labels '%s'", same ? "unchanged" : "changed",
                  ts.labels);
        free(p[0]), free(p[1]);
    }
    imp_trajset_free(&ts);
}

int main(void)
{
    imp_blas_init();
    test_train_resting();
    test_energy("compliant-ball");
    test_energy("compliant-cradle");
    test_restitution(0.7);
    test_restitution(1.0);
    test_labels();
    test_labels_from_geometry();
    test_estimate();
    test_train_interior();
    test_user_files();
    TEST_MAIN_END();
}
