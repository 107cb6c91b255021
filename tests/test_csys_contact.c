/* Contacts of constrained systems (issue #25): the constrained inverse mass
 * as the contact module's M^-1 callback (docs/derivations/contact.md eqs
 * 16-19): joints kept through impacts, the contact law, energy, and the
 * reverse pass through the callback by finite differences. */
#define _GNU_SOURCE
#include "test.h"
#include "impulse/chnn_systems.h"
#include "impulse/constrained_contact.h"
#include "impulse/contact.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NMAX (3 * IMP_CSYS_MAX_POINTS)

static double max_abs_dphi_v(const imp_csys *s, const double *x, const double *v)
{
    double J[IMP_CSYS_MAX_ROWS * 24], m = 0;
    int N = imp_csys_ndof(s);
    imp_csys_jacobian(s, x, J);
    for (int r = 0; r < s->n_rows; r++) {
        double a = 0;
        for (int q = 0; q < N; q++) a += J[(size_t)r * N + q] * v[q];
        m = fmax(m, fabs(a));
    }
    return m;
}

/* P is symmetric, DPhi P = 0 and P M P = P (eq 17). */
static void test_projected_inverse(const char *name)
{
    imp_csys s;
    CHECK_OK(imp_chnn_system(&s, name));
    int N = imp_csys_ndof(&s);
    imp_csys_work *w = imp_csys_work_new(&s);
    imp_rng rng;
    imp_rng_seed(&rng, 5);
    double xv[2 * NMAX];
    CHECK_OK(imp_chnn_sample_state(&s, &rng, 0.5, xv, w));
    double *I = calloc((size_t)N * N, sizeof(double)), *P = malloc((size_t)N * N * sizeof(double));
    double *MP = malloc((size_t)N * N * sizeof(double)), *PMP = malloc((size_t)N * N * sizeof(double));
    for (int i = 0; i < N; i++) I[i * N + i] = 1;
    imp_csys_minv_ctx ctx = {&s, xv, w};
    CHECK_OK(imp_csys_contact_minv(P, I, N, N, &ctx));
    for (int k = 0; k < N; k++) imp_csys_mass_mul(&s, P + (size_t)k * N, MP + (size_t)k * N);
    CHECK_OK(imp_csys_constrained_minv(&s, xv, MP, N, PMP, w));
    double asym = 0, idem = 0, pmax = 0, dphi = 0;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            asym = fmax(asym, fabs(P[i * N + j] - P[j * N + i]));
            idem = fmax(idem, fabs(PMP[i * N + j] - P[i * N + j]));
            pmax = fmax(pmax, fabs(P[i * N + j]));
        }
        dphi = fmax(dphi, max_abs_dphi_v(&s, xv, P + (size_t)i * N));
    }
    CHECK_MSG(asym < 1e-12 * pmax && idem < 1e-10 * pmax && dphi < 1e-10 * pmax,
              "%s: P asym %g, PMP - P %g, DPhi P %g (|P| %g)", name, asym, idem, dphi, pmax);
    CHECK_FAILS(imp_csys_contact_minv(P, I, N - 1, 1, &ctx), IMP_ERR_INVALID);
    free(I), free(P), free(MP), free(PMP);
    imp_csys_work_free(w);
}

/* A system with one contact placed touching at a sampled state and closing. */
static void touching(imp_csys *s, const char *name, int body, int disk, double e, double mu, double *xv,
                     uint64_t seed, imp_csys_work **w)
{
    CHECK_OK(imp_chnn_system(s, name));
    int d = s->d, N = imp_csys_ndof(s);
    *w = imp_csys_work_new(s);
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    CHECK_OK(imp_chnn_sample_state(s, &rng, 0.5, xv, *w));
    double n[3] = {0.3, 1, 0.2};
    int pl;
    CHECK_OK(imp_csys_add_plane(s, "ground", n, 0.0, &pl));
    double axis[3] = {0, 0, 1};
    if (disk) CHECK_OK(imp_csys_add_disk_contact(s, body, NULL, axis, 0.3, pl, e, mu, 0));
    else CHECK_OK(imp_csys_add_contact(s, body, NULL, 0.1, pl, e, mu, 0));
    double J[3 * NMAX];
    double phi = imp_csys_contact_frame(s, xv, 0, NULL, NULL, J);
    s->planes[pl].offset += phi; /* touching now */
    double un = 0;
    for (int q = 0; q < N; q++) un += J[q] * xv[N + q];
    if (un > 0)
        for (int q = 0; q < N; q++) xv[N + q] = -xv[N + q];
    (void)d;
}

/* Post-impact: DPhi v+ = 0, frictionless normal velocity -e u-, energy not
 * gained (kept for e = 1 frictionless), friction: the Coulomb cone. */
static void test_impact_physics(const char *name, int body, int disk, double mu_fric)
{
    const double es[3] = {0, 0.6, 1}, mus[3] = {0, mu_fric, 0};
    for (int k = 0; k < 3; k++) {
        imp_csys s;
        imp_csys_work *w = NULL;
        double xv[2 * NMAX], J[3 * NMAX];
        touching(&s, name, body, disk, es[k], mus[k], xv, 11 + (uint64_t)k, &w);
        int N = imp_csys_ndof(&s), d = s.d;
        double *x = xv, *v = xv + N, vm[NMAX];
        memcpy(vm, v, (size_t)N * sizeof(double));
        imp_csys_contact_frame(&s, x, 0, NULL, NULL, J);
        double um = 0;
        for (int q = 0; q < N; q++) um += J[q] * vm[q];
        int act[1];
        CHECK(imp_csys_contact_active(&s, x, vm, 1e-9, 0, act) == 1);
        imp_contact_solution sol;
        CHECK_OK(imp_csys_contact_impulse(&s, x, v, act, 1, &sol, w));
        double up[3] = {0, 0, 0};
        for (int r = 0; r < d; r++)
            for (int q = 0; q < N; q++) up[r] += J[(size_t)r * N + q] * v[q];
        double T0 = imp_csys_energy(&s, x, vm), T1 = imp_csys_energy(&s, x, v);
        double dphi = max_abs_dphi_v(&s, x, v);
        CHECK_MSG(dphi < 1e-10 * fabs(um), "%s e %g mu %g: DPhi v+ %g", name, es[k], mus[k], dphi);
        CHECK_MSG(up[0] >= -1e-8 * fabs(um), "%s: post-impact normal velocity %g closes", name, up[0]);
        if (mus[k] == 0) {
            /* the law holds up to the solver's regularization eps lambda */
            CHECK_MSG(fabs(up[0] + es[k] * um) <= 2 * sol.eps * fabs(sol.lambda[0]) + 1e-12 * fabs(um),
                      "%s e %g: u+ %.12g, -e u- %.12g (eps %g)", name, es[k], up[0], -es[k] * um, sol.eps);
            if (es[k] == 1) CHECK_CLOSE(T1, T0, 1e-8, 1e-12);
        } else {
            double lt = 0;
            for (int r = 1; r < d; r++) lt += sol.lambda[r] * sol.lambda[r];
            CHECK_MSG(sqrt(lt) <= mus[k] * sol.lambda[0] * (1 + 1e-8), "%s: friction outside the cone", name);
        }
        CHECK_MSG(T1 <= T0 + 1e-10 * fabs(T0), "%s e %g mu %g: energy gained %g -> %g", name, es[k], mus[k], T0, T1);
        CHECK_MSG(sol.lambda[0] > 0, "%s: no normal impulse", name);
        imp_csys_work_free(w);
    }
}

/* Forward of the contact module with the constrained M^-1 (no v in place). */
static int impulse_with(const imp_csys *s, const double *x, const double *v, const double *J, double e, double mu,
                        double *vp, imp_contact_solution *sol, imp_csys_work *w, double *work, int *iw)
{
    imp_contact_solve_opts o;
    imp_contact_solve_opts_default(&o);
    imp_csys_minv_ctx ctx = {s, x, w};
    return imp_contact_impulse_forward(vp, sol, v, J, 1, s->d, imp_csys_ndof(s), imp_csys_contact_minv, &ctx, &e,
                                       &mu, &o, work, iw);
}

/* The reverse pass through the callback (v-, J, e, mu) against central
 * differences, for separation-free sliding, sticking and frictionless. */
static void test_backward_fd(const char *name, double e, double mu, uint64_t seed)
{
    imp_csys s;
    imp_csys_work *w = NULL;
    double xv[2 * NMAX], J[3 * NMAX];
    touching(&s, name, s.n_bodies > 0 ? 0 : 0, 0, e, mu, xv, seed, &w);
    /* put the contact on the last body instead */
    s.contacts[0].body = s.n_bodies - 1;
    double phi = imp_csys_contact_frame(&s, xv, 0, NULL, NULL, J);
    s.planes[0].offset += phi;
    int N = imp_csys_ndof(&s), d = s.d;
    double *x = xv, *v = xv + N;
    double un = 0;
    imp_csys_contact_frame(&s, x, 0, NULL, NULL, J);
    for (int q = 0; q < N; q++) un += J[q] * v[q];
    if (un > 0) for (int q = 0; q < N; q++) v[q] = -v[q];
    size_t nwork = imp_contact_impulse_work_doubles(1, d, N) + 2 * (size_t)N * N;
    double *work = malloc(nwork * sizeof(double));
    int iw[64];
    double vp[NMAX], wv[NMAX], vb[NMAX] = {0}, Jb[3 * NMAX] = {0}, eb = 0, mub = 0;
    imp_contact_solution sol;
    CHECK_OK(impulse_with(&s, x, v, J, e, mu, vp, &sol, w, work, iw));
    for (int q = 0; q < N; q++) wv[q] = sin(1.0 + 3.0 * q);
    imp_csys_minv_ctx ctx = {&s, x, w};
    CHECK_OK(imp_contact_impulse_backward(vb, Jb, NULL, &eb, &mub, wv, NULL, &sol, v, J, N, imp_csys_contact_minv,
                                          &ctx, &e, &mu, work, iw));
    const double h = 1e-6;
    double worst = 0;
    for (int i = 0; i < N + d * N + 2; i++) {
        double *p = i < N ? &v[i] : (i < N + d * N ? &J[i - N] : NULL);
        if (i == N + d * N && e == 0) continue;   /* e at its bound */
        if (i == N + d * N + 1 && mu == 0) continue; /* mu at its bound */
        double ee = e, mm = mu, f[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            double dd = sgn ? -h : h, save = p ? *p : 0;
            if (p) *p += dd;
            else if (i == N + d * N) ee += dd;
            else mm += dd;
            double vq[NMAX];
            imp_contact_solution s2;
            CHECK_OK(impulse_with(&s, x, v, J, ee, mm, vq, &s2, w, work, iw));
            f[sgn] = 0;
            for (int q = 0; q < N; q++) f[sgn] += wv[q] * vq[q];
            if (p) *p = save;
            ee = e, mm = mu;
        }
        double fd = (f[0] - f[1]) / (2 * h);
        double an = i < N ? vb[i] : (i < N + d * N ? Jb[i - N] : (i == N + d * N ? eb : mub));
        double err = fabs(an - fd) / fmax(1.0, fabs(fd));
        if (err > worst) worst = err;
    }
    CHECK_MSG(worst < 1e-6, "%s e %g mu %g (branch %d): backward vs FD %g", name, e, mu, sol.branch[0], worst);
    free(work);
    imp_csys_work_free(w);
}

static void test_errors(void)
{
    imp_csys s;
    CHECK_OK(imp_chnn_system(&s, "pendulum-chain:2"));
    double n0[2] = {0, 0}, n[2] = {0, 2};
    CHECK_FAILS(imp_csys_add_plane(&s, "g", n0, 0, NULL), IMP_ERR_INVALID);
    int p;
    CHECK_OK(imp_csys_add_plane(&s, "g", n, -1, &p));
    CHECK(s.planes[p].normal[1] == 1.0);
    CHECK_FAILS(imp_csys_add_plane(&s, "g", n, 0, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_contact(&s, 5, NULL, 0.1, p, 0.5, 0.1, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_contact(&s, 0, NULL, 0.1, 3, 0.5, 0.1, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_contact(&s, 0, NULL, -0.1, p, 0.5, 0.1, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_contact(&s, 0, NULL, 0.1, p, 1.5, 0.1, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_contact(&s, 0, NULL, 0.1, p, 0.5, -1, 0), IMP_ERR_INVALID);
    double ax[3] = {0, 0, 1};
    CHECK_FAILS(imp_csys_add_disk_contact(&s, 0, NULL, ax, 0.1, p, 0.5, 0.1, 0), IMP_ERR_INVALID);
}

static const char *CHAIN_TEXT =
    "name chain-file\n"
    "dim 2\n"
    "body b1 mass 0.2 position 0.35 0\n"
    "body b2 mass 0.13 position 0.75 0\n"
    "tether b1 length 0.35\n"
    "link b1 b2 length 0.4\n"
    "gravity 9.81 axis y\n";

/* Contact lines: planes and contacts parsed into the description; errors
 * name the line; adding contacts leaves everything else as it was. */
static void test_parse(void)
{
    char text[2048];
    imp_csys a, b;
    CHECK_OK(imp_csys_parse(&a, CHAIN_TEXT, "chain.txt"));
    snprintf(text, sizeof text,
             "%splane ground normal 0 2 offset -1\nplane wall normal -1 0 offset -2\n"
             "contact b1 radius 0.15 plane ground e 0 mu 0.5\ncontact b2 plane wall e 1 mu 0\n",
             CHAIN_TEXT);
    CHECK_OK(imp_csys_parse(&b, text, "chain.txt"));
    CHECK(b.n_planes == 2 && b.n_contacts == 2);
    CHECK(b.planes[0].normal[1] == 1 && b.planes[0].offset == -1 && b.planes[1].normal[0] == -1);
    CHECK(b.contacts[0].body == 0 && b.contacts[0].plane == 0 && b.contacts[0].radius == 0.15 &&
          b.contacts[0].e == 0 && b.contacts[0].mu == 0.5 && b.contacts[0].line == 10);
    CHECK(b.contacts[1].body == 1 && b.contacts[1].plane == 1 && b.contacts[1].radius == 0 &&
          b.contacts[1].e == 1 && b.contacts[1].mu == 0);
    /* everything before the contact fields is as without them */
    CHECK(memcmp(&a, &b, offsetof(imp_csys, n_planes)) == 0);
    const char *bad[][2] = {
        {"contact b1 radius 0.1 plane floor e 0 mu 0\n", "unknown plane 'floor'"},
        {"plane g normal 0 1 offset 0\ncontact b9 plane g e 0 mu 0\n", "unknown body 'b9'"},
        {"plane g normal 0 1 offset 0\ncontact b1 plane g e 1.5 mu 0\n", "e 1.5"},
        {"plane g normal 0 1 offset 0\ncontact b1 plane g e 0.5 mu -1\n", "mu -1"},
        {"plane g normal 0 1 offset 0\ncontact b1 radius -1 plane g e 0.5 mu 0\n", "radius -1"},
        {"plane g normal 0 0 offset 0\n", "zero normal"},
        {"plane g normal 0 1\n", "expected 'offset'"},
        {"plane g normal 0 1 offset 0\ncontact b1 at 0.1 0 plane g e 0 mu 0\n", "point mass"},
        {"plane g normal 0 1 offset 0\ncontact b1 disk 0.1 axis 0 0 1 plane g e 0 mu 0\n", "disk"},
        {"plane g normal 0 1 offset 0\ncontact b1 plane g e 0\n", "expected 'mu'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", CHAIN_TEXT, bad[i][0]);
        CHECK_FAILS(imp_csys_parse(&b, text, "bad.txt"), IMP_ERR_FORMAT);
        CHECK_MSG(strstr(imp_last_error(), bad[i][1]) && strstr(imp_last_error(), "bad.txt:"),
                  "case %zu: '%s' lacks '%s'", i, imp_last_error(), bad[i][1]);
    }
    /* the shipped files (no contacts) parse as before: no planes, no contacts,
     * and adding a plane and a contact to each changes nothing else */
    const char *files[] = {"double-pendulum", "hinged-arm", "spinning-top", "spring-chain"};
    for (int f = 0; f < 4; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/systems/%s.txt", IMPULSE_SOURCE_DIR, files[f]);
        CHECK_OK(imp_csys_load(&a, path));
        CHECK(a.n_planes == 0 && a.n_contacts == 0);
        FILE *fp = fopen(path, "rb");
        size_t n = fp ? fread(text, 1, sizeof text - 200, fp) : 0;
        if (fp) fclose(fp);
        text[n] = 0;
        snprintf(text + n, sizeof text - n, "\nplane g normal %s offset -5\ncontact %s plane g e 0.5 mu 0.1\n",
                 a.d == 2 ? "0 1" : "0 0 1", a.bodies[0].name);
        CHECK_OK(imp_csys_parse(&b, text, path));
        CHECK_MSG(b.n_contacts == 1 && memcmp(&a, &b, offsetof(imp_csys, n_planes)) == 0, "%s", files[f]);
    }
}

/* Ground truth with contacts: joints kept, no penetration beyond the
 * tolerance, energy changes only at the impulses (and, for sustained
 * contact, the projections), energy kept by e = 1 frictionless, lost at
 * e = 0 impacts. */
static void test_simulate_sys(const imp_csys *sys, int n_traj)
{
    imp_csys s = *sys;
    const char *name = s.name;
    CHECK(s.n_contacts > 0 && s.dt > 0 && s.n_steps == 99);
    int N = imp_csys_ndof(&s), T = s.n_steps + 1;
    imp_csys_work *w = imp_csys_work_new(&s);
    double *traj = malloc((size_t)T * 2 * N * sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, 7);
    int total_impacts = 0;
    double total_loss = 0;
    for (int i = 0; i < n_traj; i++) {
        double xv[2 * NMAX];
        CHECK_OK(imp_chnn_sample_state(&s, &rng, 0, xv, w));
        for (int c = 0; c < s.n_contacts; c++) CHECK(imp_csys_contact_frame(&s, xv, c, NULL, NULL, NULL) >= 0);
        imp_chnn_contact_stats cs;
        CHECK_OK(imp_chnn_simulate_contact(&s, xv, s.dt, s.n_steps, NULL, traj, &cs));
        double viol = 0, pen = 0, H0 = imp_csys_energy(&s, traj, traj + N);
        for (int t = 0; t < T; t++) {
            const double *z = traj + (size_t)t * 2 * N;
            viol = fmax(viol, imp_csys_violation(&s, z, z + N));
            for (int c = 0; c < s.n_contacts; c++) pen = fmax(pen, -imp_csys_contact_frame(&s, z, c, NULL, NULL, NULL));
        }
        const double *zT = traj + (size_t)(T - 1) * 2 * N;
        double H1 = imp_csys_energy(&s, zT, zT + N);
        double smooth = H1 - H0 - cs.impact_energy - cs.projection_energy;
        CHECK_MSG(viol < 1e-8, "%s #%d: constraint violation %g", name, i, viol);
        CHECK_MSG(pen < 1e-5 && cs.max_penetration < 1e-5, "%s #%d: penetration %g (%g)", name, i, pen,
                  cs.max_penetration);
        CHECK_MSG(fabs(smooth) < 1e-7 * fmax(1, fabs(H0)), "%s #%d: energy off the impulses %g", name, i, smooth);
        CHECK_MSG(cs.impact_energy <= 1e-9, "%s #%d: impulses gained energy %g", name, i, cs.impact_energy);
        /* DPhi v+ = 0 right after every impulse */
        double vmax = 0;
        for (int t = 0; t < T; t++)
            for (int q = 0; q < N; q++) vmax = fmax(vmax, fabs(traj[(size_t)t * 2 * N + N + q]));
        CHECK_MSG(cs.impacts == 0 || cs.max_joint_velocity < 1e-10 * fmax(1, vmax), "%s #%d: DPhi v+ %g after an impulse",
                  name, i, cs.max_joint_velocity);
        if (s.contacts[0].e == 1 && s.contacts[0].mu == 0) {
            CHECK_MSG(fabs(H1 - H0) < 1e-6 * fmax(1, fabs(H0)) && cs.resting == 0 && cs.max_penetration < 1e-8,
                      "%s #%d: H %g -> %g, %d resting, penetration %g", name, i, H0, H1, cs.resting,
                      cs.max_penetration);
        }
        total_impacts += cs.impacts;
        total_loss -= cs.impact_energy;
    }
    CHECK_MSG(total_impacts > 0, "%s: no impact in %d trajectories", name, n_traj);
    if (s.contacts[0].e < 1) CHECK_MSG(total_loss > 1e-3, "%s: energy lost at impacts %g", name, total_loss);
    /* imp_chnn_simulate takes the same path */
    double *t2 = malloc((size_t)T * 2 * N * sizeof(double));
    CHECK_OK(imp_chnn_simulate(&s, traj, s.dt, 10, NULL, t2, NULL));
    imp_chnn_contact_stats cs;
    double *t3 = malloc((size_t)T * 2 * N * sizeof(double));
    CHECK_OK(imp_chnn_simulate_contact(&s, traj, s.dt, 10, NULL, t3, &cs));
    CHECK(memcmp(t2, t3, (size_t)11 * 2 * N * sizeof(double)) == 0);
    /* a start inside a plane is refused */
    double bad[2 * NMAX];
    memcpy(bad, traj, 2 * (size_t)N * sizeof(double));
    if (s.n_planes > 0) {
        for (int p = 0; p < s.n_points; p++) for (int k = 0; k < s.d; k++) bad[p * s.d + k] -= 5 * s.planes[0].normal[k];
        CHECK_FAILS(imp_chnn_simulate(&s, bad, s.dt, 3, NULL, t2, NULL), IMP_ERR_INVALID);
    }
    free(t2), free(t3), free(traj);
    imp_csys_work_free(w);
}

static void test_simulate(const char *name, int n_traj)
{
    imp_csys s;
    CHECK_OK(imp_chnn_system(&s, name));
    test_simulate_sys(&s, n_traj);
}

/* The systems through the CLI: simulate writes the constrained strand's
 * files and train chnn accepts them (2 epochs; the model has no contact). */
static void test_cli_pipeline(void)
{
    const char *systems[] = {"chain-ground:3", "chain-ground-elastic:3", "gyroscope-wall", "colliding-pendulums"};
    for (int i = 0; i < 4; i++) {
        char cmd[1024], out[8192], data[64], model[64];
        snprintf(data, sizeof data, "csc_data_%d_%d.npz", i, (int)getpid());
        snprintf(model, sizeof model, "csc_model_%d_%d.npz", i, (int)getpid());
        snprintf(cmd, sizeof cmd, "%s simulate %s --trajectories 4 -o %s", IMPULSE_CLI_PATH, systems[i], data);
        int rc = test_run_command(cmd, out, sizeof out);
        CHECK_MSG(rc == 0 && strstr(out, systems[i]), "%s -> %d: %s", cmd, rc, out);
        snprintf(cmd, sizeof cmd, "%s train chnn --data %s -o %s --epochs 2 --threads 1 --chunks 4 --batch 4",
                 IMPULSE_CLI_PATH, data, model);
        rc = test_run_command(cmd, out, sizeof out);
        CHECK_MSG(rc == 0 && strstr(out, "trained chnn"), "%s -> %d: %s", cmd, rc, out);
        remove(data);
        remove(model);
    }
    char out[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "%s simulate chain-ground:4 -o x.npz", IMPULSE_CLI_PATH);
    CHECK(test_run_command(cmd, out, sizeof out) != 0 && strstr(out, "N = 3"));
}

/* ---- contacts between two constrained bodies (issue #25) ---- */

/* Two pendulums of masses m1, m2 from anchors 2r apart: bobs of radius r
 * touching at the bottom, head-on (the normal horizontal, along which the
 * tethers give no impulse). */
static void two_pendulums(imp_csys *s, double m1, double m2, double e, double mu)
{
    CHECK_OK(imp_csys_init(s, "two-pendulums", 2));
    CHECK_OK(imp_csys_add_body(s, "a", m1, 0, NULL, NULL));
    CHECK_OK(imp_csys_add_body(s, "b", m2, 0, NULL, NULL));
    double anchor[2] = {0.3, 0};
    CHECK_OK(imp_csys_add_tether(s, 0, NULL, 1.0, 0));
    CHECK_OK(imp_csys_add_tether(s, 1, anchor, 1.0, 0));
    CHECK_OK(imp_csys_add_gravity(s, 9.81, 1));
    CHECK_OK(imp_csys_add_body_contact(s, 0, NULL, 0.15, 1, NULL, 0.15, e, mu, 0));
}

/* Head-on impact: the one-dimensional collision law. v+ of each bob, the
 * energy lost (1 - e^2) m1 m2 / (m1 + m2) (u1 - u2)^2 / 2, momentum kept,
 * DPhi v+ = 0; the gap's gradient is the normal Jacobian row. */
static void test_head_on(void)
{
    const double es[4] = {1, 0.8, 0.3, 0}, mus[4] = {0, 0, 0.5, 0.2};
    for (int k = 0; k < 4; k++) {
        imp_csys s;
        two_pendulums(&s, 0.3, 0.2, es[k], mus[k]);
        imp_csys_work *w = imp_csys_work_new(&s);
        double x[4] = {0, -1, 0.3, -1}, u1 = 1.3, u2 = -0.4, v[4] = {u1, 0, u2, 0}, vm[4];
        memcpy(vm, v, sizeof v);
        double J[2 * 4], pc[2], dirs[3][3];
        double phi = imp_csys_contact_frame(&s, x, 0, pc, dirs, J);
        /* normal from b's centre to a's: -x; a's touching point 0.15 to its right */
        CHECK(fabs(phi) < 1e-15 && dirs[0][0] == -1 && fabs(pc[0] - 0.15) < 1e-15 && fabs(pc[1] + 1) < 1e-15);
        CHECK(J[0] == -1 && J[2] == 1 && J[1] == 0 && J[3] == 0);
        int act[1];
        CHECK(imp_csys_contact_active(&s, x, v, 1e-9, 0, act) == 1 && act[0] == 0);
        imp_contact_solution sol;
        CHECK_OK(imp_csys_contact_impulse(&s, x, v, act, 1, &sol, w));
        double m1 = 0.3, m2 = 0.2, M = m1 + m2, e = es[k];
        double v1 = (m1 * u1 + m2 * u2 - m2 * e * (u1 - u2)) / M, v2 = (m1 * u1 + m2 * u2 + m1 * e * (u1 - u2)) / M;
        double tol = 2 * sol.eps * fabs(sol.lambda[0]) / fmin(m1, m2) + 1e-12;
        CHECK_MSG(fabs(v[0] - v1) <= tol && fabs(v[2] - v2) <= tol && fabs(v[1]) < 1e-12 && fabs(v[3]) < 1e-12,
                  "head-on e %g mu %g: v+ (%.15g, %.15g) want (%.15g, %.15g)", e, mus[k], v[0], v[2], v1, v2);
        CHECK_MSG(fabs(m1 * v[0] + m2 * v[2] - (m1 * u1 + m2 * u2)) < 1e-12, "head-on: momentum %g -> %g",
                  m1 * u1 + m2 * u2, m1 * v[0] + m2 * v[2]);
        double lost = imp_csys_energy(&s, x, vm) - imp_csys_energy(&s, x, v);
        double want = 0.5 * (1 - e * e) * m1 * m2 / M * (u1 - u2) * (u1 - u2);
        CHECK_MSG(fabs(lost - want) <= 1e-9 * (u1 - u2) * (u1 - u2), "head-on e %g: lost %.15g, analytic %.15g", e,
                  lost, want);
        CHECK(max_abs_dphi_v(&s, x, v) < 1e-10);
        imp_csys_work_free(w);
    }
}

/* Two spheres have one gap and normal in both strands: a constrained
 * system's body-body contact (imp_csys_contact_frame) and the contact
 * module's sphere candidate between the same centres (imp_contact_detect)
 * agree to the last bit, at separated, touching and overlapping states. */
static void test_sphere_gap_as_detect(void)
{
    imp_csys s;
    two_pendulums(&s, 0.3, 0.2, 0.5, 0.1);
    imp_contact_model m;
    memset(&m, 0, sizeof m);
    m.dim = 2, m.n_bodies = 2, m.n_candidates = 1, m.gap_tol = 1e-9;
    for (int k = 0; k < 2; k++) m.bodies[k].kind = IMP_BODY_POINT, m.bodies[k].mass = 1.0;
    /* the module's normal points from body_a to body_b; the system's from its
       contact's other body to its body */
    m.cand[0] = (imp_contact_candidate){.kind = IMP_CONTACT_SPHERES, .body_a = 1, .body_b = 0, .radius_a = 0.15,
                                        .radius_b = 0.15, .e = 0.5, .mu = 0.1};
    CHECK_OK(imp_contact_model_init(&m));
    for (int t = 0; t < 40; t++) {
        double a = 0.37 * t, r = 0.05 + 0.01 * t;
        double x[4] = {0.11 - 0.02 * t, -0.9 + 0.013 * t, 0.11 - 0.02 * t + r * cos(a), -0.9 + 0.013 * t + r * sin(a)};
        double dirs[3][3];
        imp_contact_frame f;
        double phi = imp_csys_contact_frame(&s, x, 0, NULL, dirs, NULL);
        CHECK_OK(imp_contact_detect(&m, x, &f));
        CHECK_MSG(phi == f.phi && dirs[0][0] == f.n[0] && dirs[0][1] == f.n[1],
                  "spheres %.17g apart: gap %.17g (system) vs %.17g (module)", r, phi, f.phi);
        CHECK(fabs(imp_csys_contact_centre_distance(&s, x, 0) - r) < 1e-14);
    }
}

/* colliding-pendulums at touching states off the bottom (q3 found by
 * bisection so that bob3 touches bob2 or bob1): the gap's gradient is J's
 * normal row (finite differences), DPhi v+ = 0 to 1e-10, frictionless
 * u+ = -e u-, the loss (1 - e^2) u-^2 / (2 Jn P Jn^T) (eq 19's single
 * contact), friction inside the cone, energy never gained. */
static void test_two_body_impacts(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 21);
    int n_done = 0;
    for (int trial = 0; trial < 48; trial++) {
        imp_csys s;
        CHECK_OK(imp_chnn_system(&s, "colliding-pendulums"));
        int c = trial % 2, N = imp_csys_ndof(&s);
        const double es[3] = {0.5, 1.0, 0.0};
        double e = es[trial % 3], mu = trial % 12 < 6 ? 0.0 : 0.3;
        for (int i = 0; i < s.n_contacts; i++) s.contacts[i].e = e, s.contacts[i].mu = mu;
        double qv[6] = {imp_rng_uniform_range(&rng, 0.2, 1.2), imp_rng_uniform_range(&rng, 0.2, 1.5), 0,
                        imp_rng_normal(&rng), imp_rng_normal(&rng), imp_rng_normal(&rng)};
        double xv[12];
        /* scan q3 from the right (apart) to the left for the first overlap,
         * then bisect for the gap's zero */
        double lo = 0.6, hi = 0.6;
        int found = 0;
        for (double q3 = 0.6; q3 > -2.5 && !found; q3 -= 0.01) {
            qv[2] = q3;
            CHECK_OK(imp_chnn_from_generalized(&s, qv, xv));
            if (imp_csys_contact_frame(&s, xv, c, NULL, NULL, NULL) < 0) found = 1, hi = q3;
            else lo = q3;
        }
        if (!found) continue;
        for (int it = 0; it < 200; it++) {
            qv[2] = 0.5 * (lo + hi);
            CHECK_OK(imp_chnn_from_generalized(&s, qv, xv));
            if (imp_csys_contact_frame(&s, xv, c, NULL, NULL, NULL) > 0) lo = qv[2];
            else hi = qv[2];
            if (lo - hi < 1e-15) break;
        }
        CHECK_OK(imp_chnn_from_generalized(&s, qv, xv));
        if (imp_csys_contact_frame(&s, xv, 1 - c, NULL, NULL, NULL) < 0.01) continue; /* the other one too */
        double *x = xv, *v = xv + N, J[2 * 6], vm[6];
        double phi = imp_csys_contact_frame(&s, x, c, NULL, NULL, J);
        CHECK(fabs(phi) < 1e-12);
        /* the gap's gradient against central differences */
        double worst = 0;
        for (int q = 0; q < N; q++) {
            double xp[6], xm[6], h = 1e-6;
            memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
            xp[q] += h, xm[q] -= h;
            double fd = (imp_csys_contact_frame(&s, xp, c, NULL, NULL, NULL) -
                         imp_csys_contact_frame(&s, xm, c, NULL, NULL, NULL)) / (2 * h);
            worst = fmax(worst, fabs(fd - J[q]));
        }
        CHECK_MSG(worst < 1e-8, "two-body gap gradient vs FD %g", worst);
        double un = 0;
        for (int q = 0; q < N; q++) un += J[q] * v[q];
        if (un > 0) for (int q = 0; q < N; q++) v[q] = -v[q], un = -un;
        if (un > -1e-3) continue;
        memcpy(vm, v, sizeof vm);
        imp_csys_work *w = imp_csys_work_new(&s);
        double PJ[6], A = 0;
        CHECK_OK(imp_csys_constrained_minv(&s, x, J, 1, PJ, w));
        for (int q = 0; q < N; q++) A += J[q] * PJ[q];
        int act[2];
        CHECK(imp_csys_contact_active(&s, x, v, 1e-9, 0, act) == 1 && act[0] == c);
        imp_contact_solution sol;
        CHECK_OK(imp_csys_contact_impulse(&s, x, v, act, 1, &sol, w));
        double up[2] = {0, 0};
        for (int r = 0; r < 2; r++)
            for (int q = 0; q < N; q++) up[r] += J[(size_t)r * N + q] * v[q];
        double T0 = imp_csys_energy(&s, x, vm), T1 = imp_csys_energy(&s, x, v);
        CHECK_MSG(max_abs_dphi_v(&s, x, v) < 1e-10 * fmax(1, fabs(un)), "two-body: DPhi v+ %g",
                  max_abs_dphi_v(&s, x, v));
        CHECK_MSG(up[0] >= -1e-8 * fabs(un), "two-body: u+ %g still closing", up[0]);
        /* no gain frictionless or inelastic (with e > 0 and mu > 0 Newton's
         * law can add energy on coupled bodies: Kane's double pendulum,
         * docs/derivations/contact.md sec 5) */
        if (mu == 0 || e == 0)
            CHECK_MSG(T1 <= T0 + 4 * sol.eps * sol.lambda[0] * sol.lambda[0] + 1e-12 * fabs(T0),
                      "two-body e %g mu %g: energy gained %g", e, mu, T1 - T0);
        if (mu == 0) {
            CHECK_MSG(fabs(up[0] + e * un) <= 2 * sol.eps * fabs(sol.lambda[0]) + 1e-12 * fabs(un),
                      "two-body e %g: u+ %.12g, -e u- %.12g", e, up[0], -e * un);
            double want = 0.5 * (1 - e * e) * un * un / A;
            CHECK_MSG(fabs((T0 - T1) - want) <= 1e-8 * want + 4 * sol.eps * sol.lambda[0] * sol.lambda[0] + 1e-12 * T0,
                      "two-body e %g: lost %.15g, (1 - e^2) u^2 / (2 Jn P Jn^T) %.15g", e, T0 - T1, want);
        } else {
            CHECK_MSG(fabs(sol.lambda[1]) <= mu * sol.lambda[0] * (1 + 1e-8), "two-body: friction outside the cone");
        }
        /* the impulse acts on both chains, equal and opposite on the bobs
         * before the joints' reaction: M dv - Jn^T lambda_n - Jt^T lambda_t
         * lies in the joints' row space (DPhi^T nu), i.e. P M dv = P J^T lambda */
        double dv[6], Mdv[6], r1[6], r2[6], JTl[6];
        for (int q = 0; q < N; q++) {
            dv[q] = v[q] - vm[q];
            JTl[q] = J[q] * sol.lambda[0] + J[N + q] * sol.lambda[1];
        }
        imp_csys_mass_mul(&s, dv, Mdv);
        CHECK_OK(imp_csys_constrained_minv(&s, x, Mdv, 1, r1, w));
        CHECK_OK(imp_csys_constrained_minv(&s, x, JTl, 1, r2, w));
        double dmax = 0, vmax = 0;
        for (int q = 0; q < N; q++) dmax = fmax(dmax, fabs(r1[q] - r2[q])), vmax = fmax(vmax, fabs(dv[q]));
        CHECK_MSG(dmax < 1e-10 * fmax(1, vmax), "two-body: P M dv - P J^T lambda %g", dmax);
        CHECK(sol.lambda[0] > 0);
        imp_csys_work_free(w);
        n_done++;
    }
    CHECK_MSG(n_done >= 10, "only %d touching states built", n_done);
}

/* The system file's body-body contact lines, and their bad input: each a
 * single line naming the file, the line and the fault. */
static void test_parse_two_body(void)
{
    imp_csys a, b;
    char path[1024];
    snprintf(path, sizeof path, "%s/systems/colliding-pendulums.txt", IMPULSE_SOURCE_DIR);
    CHECK_OK(imp_csys_load(&a, path));
    CHECK_OK(imp_chnn_system(&b, "colliding-pendulums"));
    CHECK(a.n_contacts == 2 && a.n_planes == 0);
    for (int c = 0; c < 2; c++) {
        const imp_ccontact *p = &a.contacts[c], *q = &b.contacts[c];
        CHECK_MSG(p->body == q->body && p->other == q->other && p->plane == -1 && p->radius == q->radius &&
                      p->radius2 == q->radius2 && p->e == q->e && p->mu == q->mu && p->line == 14 + c,
                  "contact %d of the file differs from the built-in", c);
    }
    for (int r = 0; r < a.n_rows; r++) CHECK(a.rows[r].length == b.rows[r].length);
    char name[80];
    imp_csys_contact_name(&a, 0, name, sizeof name);
    CHECK(strcmp(name, "bob3-bob2") == 0);
    static const char *TWO =
        "dim 2\nbody a mass 1 position 0 -1\nbody b mass 1 position 0.5 -1\nbody c mass 1\n"
        "tether a length 1\ntether b length 1 anchor 0.5 0\n";
    const char *bad[][2] = {
        {"contact a radius 0.1 body z radius 0.1 e 1 mu 0\n", "unknown body 'z'"},
        {"contact a radius 0.1 body b radius 0 e 1 mu 0\n", "radius 0 of b must be > 0"},
        {"contact a radius -0.1 body b radius 0.1 e 1 mu 0\n", "radius -0.1 of a must be > 0"},
        {"contact a body b radius 0.1 e 1 mu 0\n", "radius 0 of a must be > 0"},
        {"contact a radius 0.1 body b e 1 mu 0\n", "expected 'radius'"},
        {"contact a radius 0.1 body a radius 0.1 e 1 mu 0\n", "cannot touch itself"},
        {"contact a radius 0.1 body b radius 0.1 e 2 mu 0\n", "e 2"},
        {"contact a radius 0.1 body b radius 0.1 e 1 mu -1\n", "mu -1"},
        {"contact a radius 0.1 wall b\n", "expected 'plane' or 'body', found 'wall'"},
        {"link a b length 0.15\ncontact a radius 0.1 body b radius 0.1 e 1 mu 0\n", "overlap in every configuration"},
        {"contact a radius 0.1 body c radius 0.1 e 1 mu 0\n", "normal is undefined"},
    };
    char text[1024];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", TWO, bad[i][0]);
        /* c sits at the origin, a's start too: move a for every case but the last */
        if (i + 1 < sizeof bad / sizeof bad[0]) {
            CHECK_FAILS(imp_csys_parse(&b, text, "two.txt"), IMP_ERR_FORMAT);
        } else {
            char t2[1024];
            snprintf(t2, sizeof t2, "dim 2\nbody a mass 1\nbody c mass 1\nlink a c length 1\n%s", bad[i][0]);
            memcpy(text, t2, sizeof t2);
            CHECK_FAILS(imp_csys_parse(&b, text, "two.txt"), IMP_ERR_FORMAT);
        }
        const char *m = imp_last_error();
        CHECK_MSG(strstr(m, bad[i][1]) && strstr(m, "two.txt") && !strchr(m, '\n'), "case %zu: '%s' lacks '%s'", i, m,
                  bad[i][1]);
    }
    /* the library's checks */
    imp_csys s;
    two_pendulums(&s, 1, 1, 1, 0);
    CHECK_FAILS(imp_csys_add_body_contact(&s, 0, NULL, 0.1, 5, NULL, 0.1, 1, 0, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_body_contact(&s, -1, NULL, 0.1, 1, NULL, 0.1, 1, 0, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_body_contact(&s, 0, NULL, NAN, 1, NULL, 0.1, 1, 0, 0), IMP_ERR_INVALID);
    /* coincident centres refused at the start of a simulation, named */
    double xv[8] = {0, -1, 0, -1, 0, 0, 0, 0}, traj[8 * 3];
    CHECK_FAILS(imp_chnn_simulate(&s, xv, 0.01, 2, NULL, traj, NULL), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "a-b") && strstr(imp_last_error(), "normal is undefined"), "%s",
              imp_last_error());
    /* an overlapping start too */
    double xo[8] = {0, -1, 0.2, -0.98, 0, 0, 0, 0};
    CHECK_FAILS(imp_chnn_simulate(&s, xo, 0.01, 2, NULL, traj, NULL), IMP_ERR_INVALID);
    CHECK_MSG(strstr(imp_last_error(), "contact a-b overlaps"), "%s", imp_last_error());
}

static void test_two_body_simulate(void)
{
    imp_csys s;
    CHECK_OK(imp_chnn_system(&s, "colliding-pendulums"));
    test_simulate_sys(&s, 6);
    /* elastic and frictionless: energy kept through every impact */
    snprintf(s.name, sizeof s.name, "colliding-pendulums(e 1, mu 0)");
    for (int c = 0; c < s.n_contacts; c++) s.contacts[c].e = 1, s.contacts[c].mu = 0;
    test_simulate_sys(&s, 6);
    /* the CLI on the system file */
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, "%s simulate --system-file %s/systems/colliding-pendulums.txt --trajectories 3 --spread 0.1 "
             "--steps 50 -o cp_file_%d.npz", IMPULSE_CLI_PATH, IMPULSE_SOURCE_DIR, (int)getpid());
    int rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "%s -> %d: %s", cmd, rc, out);
    snprintf(cmd, sizeof cmd, "cp_file_%d.npz", (int)getpid());
    remove(cmd);
    /* a bad file: one error line */
    char bad[64];
    snprintf(bad, sizeof bad, "cp_bad_%d.txt", (int)getpid());
    FILE *f = fopen(bad, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("dim 2\nbody a mass 1 position 0 -1\nbody b mass 1 position 0.5 -1\ntether a length 1\n"
          "contact a radius 0.1 body q radius 0.1 e 1 mu 0\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s simulate --system-file %s -o cp_x.npz", IMPULSE_CLI_PATH, bad);
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc != 0 && strstr(out, "impulse simulate: error:") && strstr(out, ":5: contact: unknown body 'q'"),
              "%s -> %d: %s", cmd, rc, out);
    char *nl = strchr(out, '\n');
    CHECK_MSG(nl && nl[1] == '\0', "more than one line: %s", out);
    remove(bad);
}

/* Energy lost at impacts, truth against a model (imp_csys_impact_energy):
 * the truth against itself matches exactly; one-step predictions of a
 * frictionless model with e' = 1.02 e lose (1 - e'^2)/(1 - e^2) of the
 * truth's energy at each single impact; bad input is named. */
static void test_impact_energy(void)
{
    imp_csys s, s2;
    CHECK_OK(imp_chnn_system(&s, "colliding-pendulums"));
    for (int c = 0; c < s.n_contacts; c++) s.contacts[c].e = 0.6, s.contacts[c].mu = 0;
    s2 = s;
    for (int c = 0; c < s.n_contacts; c++) s2.contacts[c].e = 0.612;
    const int n = 4, T = 60, N = imp_csys_ndof(&s);
    size_t row = 2 * (size_t)N, len = (size_t)n * T * row;
    double *truth = malloc(len * sizeof(double)), *model = malloc(len * sizeof(double)), two[2 * 12];
    imp_csys_work *w = imp_csys_work_new(&s);
    imp_rng rng;
    imp_rng_seed(&rng, 3);
    for (int i = 0; i < n; i++) {
        double xv[12];
        CHECK_OK(imp_chnn_sample_state(&s, &rng, 0, xv, w));
        CHECK_OK(imp_chnn_simulate(&s, xv, s.dt, T - 1, NULL, truth + (size_t)i * T * row, NULL));
        /* one-step predictions of the model from every truth state */
        memcpy(model + (size_t)i * T * row, xv, row * sizeof(double));
        for (int k = 0; k + 1 < T; k++) {
            CHECK_OK(imp_chnn_simulate(&s2, truth + ((size_t)i * T + k) * row, s.dt, 1, NULL, two, NULL));
            memcpy(model + ((size_t)i * T + k + 1) * row, two + row, row * sizeof(double));
        }
    }
    imp_impact_energy r;
    CHECK_OK(imp_csys_impact_energy(&s, truth, truth, n, T, NULL, &r, NULL, NULL, 0));
    CHECK_MSG(r.impacts >= n && r.truth_lost > 0 && r.rel_error == 0 && r.max_rel_error == 0 &&
                  r.within_5pct == r.impacts,
              "truth vs truth: %d impacts, lost %g, error %g", r.impacts, r.truth_lost, r.rel_error);
    imp_impact_energy_opts o;
    imp_impact_energy_opts_default(&o);
    o.one_step = 1;
    double lt[64], lm[64];
    CHECK_OK(imp_csys_impact_energy(&s, truth, model, n, T, &o, &r, lt, lm, 64));
    const double ratio = (1 - 0.612 * 0.612) / (1 - 0.6 * 0.6);
    int single = 0;
    for (int k = 0; k < r.impacts && k < 64; k++) single += fabs(lm[k] / lt[k] - ratio) < 1e-6;
    CHECK_MSG(r.impacts > 0 && single >= r.impacts / 2 && fabs(r.rel_error - (1 - ratio)) < 0.01 &&
                  r.within_5pct == r.impacts,
              "one-step e' = 0.612: %d impacts (%d at the single-impact ratio %g), error %g, %d within 5 %%",
              r.impacts, single, ratio, r.rel_error, r.within_5pct);
    /* the model's true energy is what counts: a model that keeps the energy
     * (no impact loss) is 100 % off */
    for (int i = 0; i < n; i++)
        for (int k = 1; k < T; k++) {
            const double *a = truth + ((size_t)i * T + k - 1) * row;
            memcpy(model + ((size_t)i * T + k) * row, a, row * sizeof(double));
        }
    CHECK_OK(imp_csys_impact_energy(&s, truth, model, n, T, &o, &r, NULL, NULL, 0));
    CHECK_MSG(fabs(r.rel_error - 1) < 1e-12 && r.within_5pct == 0, "no-loss model: error %g", r.rel_error);
    /* rollouts with a window */
    o.one_step = 0;
    o.window = 1;
    CHECK_OK(imp_csys_impact_energy(&s, truth, truth, n, T, &o, &r, NULL, NULL, 0));
    CHECK(r.impacts > 0 && r.rel_error == 0);
    /* bad input */
    CHECK_FAILS(imp_csys_impact_energy(&s, truth, model, n, 1, NULL, &r, NULL, NULL, 0), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "T 1") != NULL);
    o.threshold = 0;
    CHECK_FAILS(imp_csys_impact_energy(&s, truth, model, n, T, &o, &r, NULL, NULL, 0), IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "threshold") != NULL);
    model[5] = NAN;
    CHECK_FAILS(imp_csys_impact_energy(&s, truth, model, n, T, NULL, &r, NULL, NULL, 0), IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "model") != NULL);
    free(truth), free(model);
    imp_csys_work_free(w);
}

/* The reverse of a body-body contact's gap and rows (imp_csys_body_contact_vjp)
 * against central differences: point masses in 2-D, extended bodies with
 * off-centre spheres in 2-D and 3-D (any x: the map is defined off the
 * rigid manifold too). */
static double frame_objective(const imp_csys *s, const double *x, int c, double phib, const double *Jb)
{
    double J[3 * NMAX];
    int N = imp_csys_ndof(s);
    double f = phib * imp_csys_contact_frame(s, x, c, NULL, NULL, J);
    for (int i = 0; i < s->d * N; i++) f += Jb[i] * J[i];
    return f;
}

static void test_body_contact_vjp(void)
{
    for (int kind = 0; kind < 3; kind++) {
        imp_csys s;
        int d = kind == 2 ? 3 : 2;
        if (kind == 0) {
            CHECK_OK(imp_chnn_system(&s, "colliding-pendulums"));
        } else {
            CHECK_OK(imp_csys_init(&s, "two-bodies", d));
            double I[3] = {0.1, 0.2, 0.15}, at_a[3] = {0.2, -0.1, 0.05}, at_b[3] = {-0.1, 0.3, 0.1};
            CHECK_OK(imp_csys_add_body(&s, "a", 1.0, d, I, NULL));
            CHECK_OK(imp_csys_add_body(&s, "b", 2.0, d, I, NULL));
            CHECK_OK(imp_csys_add_body_contact(&s, 0, at_a, 0.2, 1, at_b, 0.3, 0.5, 0.2, 0));
        }
        int N = imp_csys_ndof(&s);
        imp_rng rng;
        imp_rng_seed(&rng, 40 + (uint64_t)kind);
        double worst = 0;
        for (int trial = 0; trial < 4; trial++) {
            double x[NMAX], Jb[3 * NMAX], xb[NMAX] = {0};
            for (int q = 0; q < N; q++) x[q] = imp_rng_normal(&rng);
            for (int i = 0; i < d * N; i++) Jb[i] = imp_rng_normal(&rng);
            double phib = imp_rng_normal(&rng);
            int c = trial % s.n_contacts;
            CHECK_OK(imp_csys_body_contact_vjp(&s, x, c, phib, Jb, xb));
            for (int q = 0; q < N; q++) {
                double xp[NMAX], xm[NMAX], h = 1e-6;
                memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
                xp[q] += h, xm[q] -= h;
                double fd = (frame_objective(&s, xp, c, phib, Jb) - frame_objective(&s, xm, c, phib, Jb)) / (2 * h);
                worst = fmax(worst, fabs(fd - xb[q]) / fmax(1, fabs(fd)));
            }
        }
        CHECK_MSG(worst < 1e-7, "body contact vjp (kind %d) vs FD: %g", kind, worst);
    }
    imp_csys s;
    CHECK_OK(imp_chnn_system(&s, "chain-ground:3"));
    double x[6] = {0}, xb[6] = {0};
    CHECK_FAILS(imp_csys_body_contact_vjp(&s, x, 0, 1, NULL, xb), IMP_ERR_INVALID);
}

/* Sustained contact between two bodies: two pendulums whose bobs cannot both
 * hang straight down (anchors 0.2 apart, radii 0.15) swing together and come
 * to rest pressed against each other (e 0): no penetration, joints kept,
 * energy never gained, the spheres touching at the end. */
static void test_two_body_resting(void)
{
    static const char *TEXT = "name resting-pair\ndim 2\nbody a mass 1 position -0.4 -0.9\nbody b mass 1 position 0.5 -0.9\n"
                              "tether a length 1\ntether b length 1 anchor 0.2 0\ngravity 9.81 axis y\n"
                              "contact a radius 0.15 body b radius 0.15 e 0 mu 0.3\n";
    imp_csys s;
    CHECK_OK(imp_csys_parse(&s, TEXT, "rest.txt"));
    int N = imp_csys_ndof(&s), T = 401;
    imp_csys_work *w = imp_csys_work_new(&s);
    double xv[8];
    imp_csys_nominal_state(&s, xv);
    CHECK_OK(imp_csys_project(&s, xv, xv + N, NULL, w));
    double *traj = malloc((size_t)T * 2 * N * sizeof(double));
    imp_chnn_contact_stats cs;
    CHECK_OK(imp_chnn_simulate_contact(&s, xv, 0.01, T - 1, NULL, traj, &cs));
    double gmin = INFINITY, viol = 0, H0 = imp_csys_energy(&s, traj, traj + N), Hmax = H0;
    for (int t = 0; t < T; t++) {
        const double *z = traj + (size_t)t * 2 * N;
        gmin = fmin(gmin, imp_csys_contact_frame(&s, z, 0, NULL, NULL, NULL));
        viol = fmax(viol, imp_csys_violation(&s, z, z + N));
        Hmax = fmax(Hmax, imp_csys_energy(&s, z, z + N));
    }
    const double *zT = traj + (size_t)(T - 1) * 2 * N;
    double gT = imp_csys_contact_frame(&s, zT, 0, NULL, NULL, NULL);
    CHECK_MSG(gmin > -1e-5 && viol < 1e-8 && Hmax <= H0 + 1e-9 && cs.resting > 0 && gT < 1e-6,
              "resting pair: min gap %g, violation %g, H %g -> max %g, %d resting impulses, final gap %g", gmin, viol,
              H0, Hmax, cs.resting, gT);
    free(traj);
    imp_csys_work_free(w);
}

int main(void)
{
    test_parse();
    test_simulate("chain-ground:3", 6);
    test_simulate("chain-ground-elastic:3", 6);
    test_simulate("gyroscope-wall", 4);
    test_cli_pipeline();
    test_projected_inverse("pendulum-chain:3");
    test_projected_inverse("gyroscope");
    test_impact_physics("pendulum-chain:3", 2, 0, 0.5);
    test_impact_physics("pendulum-chain:3", 1, 0, 0.5);
    /* the gyroscope with the wall's mu 0.1: at mu 0.5 these rim impacts jam
     * (docs/derivations/contact.md, after eq 19) */
    test_impact_physics("gyroscope", 0, 1, 0.1);
    test_impact_physics("gyroscope", 0, 0, 0.1);
    test_backward_fd("pendulum-chain:3", 0.7, 0.0, 3);
    test_backward_fd("pendulum-chain:3", 0.4, 0.3, 4);
    test_backward_fd("pendulum-chain:3", 0.0, 2.0, 5);
    test_backward_fd("gyroscope", 0.8, 0.1, 6);
    test_errors();
    test_head_on();
    test_sphere_gap_as_detect();
    test_two_body_impacts();
    test_parse_two_body();
    test_two_body_simulate();
    test_impact_energy();
    test_body_contact_vjp();
    test_two_body_resting();
    TEST_MAIN_END();
}
