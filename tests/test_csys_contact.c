/* Contacts of constrained systems (issue #25): the constrained inverse mass
 * as the contact module's M^-1 callback (docs/derivations/contact.md eqs
 * 16-19): joints kept through impacts, the contact law, energy, and the
 * reverse pass through the callback by finite differences. */
#define _GNU_SOURCE
#include "test.h"
#include "impulse/chnn_systems.h"
#include "impulse/constrained_contact.h"

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
static void test_simulate(const char *name, int n_traj)
{
    imp_csys s;
    CHECK_OK(imp_chnn_system(&s, name));
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
    for (int p = 0; p < s.n_points; p++) for (int k = 0; k < s.d; k++) bad[p * s.d + k] -= 5 * s.planes[0].normal[k];
    CHECK_FAILS(imp_chnn_simulate(&s, bad, s.dt, 3, NULL, t2, NULL), IMP_ERR_INVALID);
    free(t2), free(t3), free(traj);
    imp_csys_work_free(w);
}

/* The systems through the CLI: simulate writes the constrained strand's
 * files and train chnn accepts them (2 epochs; the model has no contact). */
static void test_cli_pipeline(void)
{
    const char *systems[] = {"chain-ground:3", "chain-ground-elastic:3", "gyroscope-wall"};
    for (int i = 0; i < 3; i++) {
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
    TEST_MAIN_END();
}
