/* The contact module's cost per step (one core): detection + Jacobian +
 * the impulse solve (imp_contact_impulse_forward) and its reverse pass
 * (imp_contact_impulse_backward with imp_contact_jacobian_backward), on
 *   ball: a point mass bouncing on a floor (one contact, 2-D);
 *   corner: a ball in a 2-D corner, floor and wall (two contacts, A singular);
 *   box: a tilted, spinning box landing on four corners (3-D, friction cone).
 * Built with the project (IMPULSE_BENCH); run build/bench_contact. Times are
 * this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that other programs
 * sharing the machine do not inflate them. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "impulse/contact.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double work[1 << 16];
static int iwork[1024];

typedef struct scene {
    const char *name;
    imp_contact_model m;
    double q[IMP_CONTACT_MAX_NQ], v[IMP_CONTACT_MAX_NV];
    int act[IMP_MAX_CONTACTS], na;
} scene;

static void plane(imp_contact_model *m, int body, const double *p, double r, double nx, double ny, double nz,
                  double e, double mu)
{
    imp_contact_candidate *c = &m->cand[m->n_candidates++];
    memset(c, 0, sizeof *c);
    c->kind = IMP_CONTACT_PLANE, c->body_a = IMP_WALL, c->body_b = body;
    if (p) memcpy(c->point_b, p, sizeof c->point_b);
    c->radius_b = r, c->normal[0] = nx, c->normal[1] = ny, c->normal[2] = nz, c->e = e, c->mu = mu;
}

/* Returns the seconds per call of the forward and of forward + backward. */
static int run(scene *s, double *t_fwd, double *t_both)
{
    imp_contact_model *m = &s->m;
    int d = m->dim, nv = m->nv, R = s->na * d;
    static double J[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV], Jb[IMP_CONTACT_MAX_ROWS * IMP_CONTACT_MAX_NV];
    double vp[IMP_CONTACT_MAX_NV], vb[IMP_CONTACT_MAX_NV], wv[IMP_CONTACT_MAX_NV], e[IMP_MAX_CONTACTS],
        mu[IMP_MAX_CONTACTS], eb[IMP_MAX_CONTACTS], mub[IMP_MAX_CONTACTS], qb[IMP_CONTACT_MAX_NQ];
    imp_contact_frame f[IMP_MAX_CONTACTS];
    imp_contact_solution sol;
    for (int i = 0; i < nv; i++) wv[i] = 1.0 + 0.1 * i;
    for (int k = 0; k < s->na; k++) e[k] = m->cand[s->act[k]].e, mu[k] = m->cand[s->act[k]].mu;
    for (int pass = 0; pass < 2; pass++) {
        long n = 0;
        double t0 = cpu_now(), el;
        do {
            for (int rep = 0; rep < 100; rep++) {
                if (imp_contact_detect(m, s->q, f)) return -1;
                imp_contact_assemble_jacobian(m, s->q, f, s->act, s->na, J);
                if (imp_contact_impulse_forward(vp, &sol, s->v, J, s->na, d, nv, imp_contact_minv_bodies, m, e, mu,
                                                NULL, work, iwork))
                    return -1;
                if (pass == 1) {
                    memset(Jb, 0, (size_t)R * nv * sizeof(double));
                    memset(vb, 0, sizeof vb);
                    memset(qb, 0, sizeof qb);
                    if (imp_contact_impulse_backward(vb, Jb, NULL, eb, mub, wv, NULL, &sol, s->v, J, nv,
                                                     imp_contact_minv_bodies, m, e, mu, work, iwork))
                        return -1;
                    for (int k = 0; k < s->na; k++)
                        imp_contact_jacobian_backward(qb, NULL, 0.0, Jb + (size_t)k * d * nv, m, s->q, &f[s->act[k]],
                                                      s->act[k]);
                }
            }
            n += 100;
            el = cpu_now() - t0;
        } while (el < 0.5);
        *(pass ? t_both : t_fwd) = el / n;
    }
    return 0;
}

int main(void)
{
    static scene sc[3];
    scene *s = &sc[0];
    s->name = "ball (1 contact, 2-D)";
    s->m.dim = 2, s->m.n_bodies = 1, s->m.bodies[0].kind = IMP_BODY_POINT, s->m.bodies[0].mass = 1;
    plane(&s->m, 0, NULL, 0.1, 0, 1, 0, 0.8, 0.2);
    s->q[0] = 0.5, s->q[1] = 0.1, s->v[0] = 1, s->v[1] = -2, s->na = 1;
    s = &sc[1];
    s->name = "ball in a corner (2 contacts, 2-D)";
    s->m.dim = 2, s->m.n_bodies = 1, s->m.bodies[0].kind = IMP_BODY_POINT, s->m.bodies[0].mass = 1;
    plane(&s->m, 0, NULL, 0.1, 0, 1, 0, 0.8, 0.2);
    plane(&s->m, 0, NULL, 0.1, 1, 0, 0, 0.6, 0.3);
    s->q[0] = 0.1, s->q[1] = 0.1, s->v[0] = -1, s->v[1] = -2, s->na = 2, s->act[1] = 1;
    s = &sc[2];
    s->name = "box on four corners (4 contacts, 3-D)";
    s->m.dim = 3, s->m.n_bodies = 1, s->m.bodies[0].kind = IMP_BODY_SPATIAL, s->m.bodies[0].mass = 1.2;
    s->m.bodies[0].inertia[0] = 0.013, s->m.bodies[0].inertia[4] = 0.02, s->m.bodies[0].inertia[8] = 0.025;
    for (int k = 0; k < 4; k++) {
        double p[3] = {k & 1 ? 0.2 : -0.2, k & 2 ? 0.15 : -0.15, -0.1};
        plane(&s->m, 0, p, 0.0, 0, 0, 1, 0.3 + 0.1 * k, 0.3);
        s->act[k] = k;
    }
    s->na = 4;
    double an = 0.05, ax[3] = {0.2, -0.1, 0.05}, axn = sqrt(0.2 * 0.2 + 0.1 * 0.1 + 0.05 * 0.05);
    s->q[2] = 0.1, s->q[3] = cos(an / 2);
    for (int i = 0; i < 3; i++) s->q[4 + i] = sin(an / 2) * ax[i] / axn;
    double v[6] = {0.8, -0.3, -2.0, 0.5, -0.4, 1.5};
    memcpy(s->v, v, sizeof v);
    printf("%-40s %14s %22s\n", "scene", "forward (us)", "forward+backward (us)");
    for (int i = 0; i < 3; i++) {
        double tf, tb;
        if (imp_contact_model_init(&sc[i].m) || run(&sc[i], &tf, &tb)) {
            printf("%s: failed: %s\n", sc[i].name, imp_last_error());
            return 1;
        }
        printf("%-40s %14.3f %22.3f\n", sc[i].name, tf * 1e6, tb * 1e6);
    }
    return 0;
}
