/* Synthetic drops: parameter checks, exact free flight, energy never
 * increasing (and conserved without dissipation), impulse/torque
 * consistency, post-impact separation, noise-free processing recovering the
 * truth, seeded reproducibility, bad input. */
#include "impulse/core.h"
#include "impulse/drop.h"
#include "impulse/impact.h"
#include "impulse/io.h"
#include "test.h"

#include <stdlib.h>

static void test_params(void)
{
    imp_drop_params p, q;
    imp_drop_params_default(&p);
    CHECK_OK(imp_drop_params_check(&p));
    CHECK_CLOSE(p.a, 0.035, 0, 0);
    CHECK_CLOSE(p.b, 0.025, 0, 0);
    CHECK_CLOSE(p.mass, 0.0364, 0, 0);
    CHECK_CLOSE(p.kg, 0.0192, 0, 0);
#define BAD(field, value)                                           \
    q = p;                                                          \
    q.field = value;                                                \
    CHECK_FAILS(imp_drop_params_check(&q), IMP_ERR_INVALID);        \
    CHECK(strstr(imp_last_error(), #field) != NULL)
    BAD(a, 0.0);
    BAD(b, -1.0);
    BAD(mass, NAN);
    BAD(k_n, 0.0);
    BAD(c_n, -0.1);
    BAD(mu, -0.2);
    BAD(k_t, INFINITY);
    BAD(dt, 1e-3);
    BAD(dt_free, 1e-7);
    BAD(frame_rate, 0.0);
    BAD(noise_pos, -1e-4);
    BAD(vy_mean, 1.0);
    BAD(pre_last, 0);
    BAD(rho_patch, -1e-4);
    BAD(rho_patch, 0.02);
    BAD(post_count, 2);
#undef BAD
    CHECK_FAILS(imp_drop_params_check(NULL), IMP_ERR_INVALID);
    imp_drop_sample s;
    q = p;
    q.mu = -1;
    imp_rng rng;
    imp_rng_seed(&rng, 1);
    CHECK_FAILS(imp_drop_run(&q, &rng, &s, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_drop_generate(&p, 1, 0, &s, NULL), IMP_ERR_SHAPE);
}

static void test_free_flight_exact(void)
{
    imp_drop_params p;
    imp_drop_params_default(&p);
    double s0[7] = {0.1, 0.5, 0.3, 0.7, 1.2, -4.0, 0.0};
    double t[5] = {0.01, 0.05, 0.1, 0.17, 0.2}, S[5 * 7];
    unsigned char touched[5];
    double gain = -1;
    CHECK_OK(imp_drop_simulate(&p, s0, 0.0, t, 5, S, &gain, touched));
    double maxerr = 0.0;
    for (int k = 0; k < 5; k++) {
        double tk = t[k];
        double ref[6] = {s0[0] + s0[3] * tk, s0[1] + s0[4] * tk - 0.5 * p.g * tk * tk,
                         s0[2] + s0[5] * tk, s0[3], s0[4] - p.g * tk, s0[5]};
        for (int i = 0; i < 6; i++) maxerr = fmax(maxerr, fabs(S[k * 7 + i] - ref[i]));
        CHECK(touched[k] == 0);
    }
    CHECK_MSG(maxerr < 1e-12, "free flight error %.3g", maxerr);
    CHECK(gain < 1e-12);
}

/* energy along a drop onto the plane: sampled densely */
static double energy_run(const imp_drop_params *p, double *e_first, double *e_last, double *max_rise)
{
    double s0[7] = {0.0, 0.08, 0.4, 0.6, -2.5, 5.0, 0.0};
    enum { K = 400 };
    double t[K], S[K * 7];
    for (int k = 0; k < K; k++) t[k] = 0.015 + 0.02 * k / K; /* covers the impact */
    double gain = 0;
    unsigned char touched[K];
    if (imp_drop_simulate(p, s0, 0.0, t, K, S, &gain, touched) != IMP_OK) return NAN;
    *e_first = imp_drop_energy(p, S);
    *e_last = imp_drop_energy(p, S + (K - 1) * 7);
    *max_rise = 0.0;
    int any = 0;
    for (int k = 1; k < K; k++) {
        *max_rise = fmax(*max_rise, imp_drop_energy(p, S + k * 7) - imp_drop_energy(p, S + (k - 1) * 7));
        any |= touched[k];
    }
    CHECK(any);
    return gain;
}

static void test_energy(void)
{
    imp_drop_params p;
    imp_drop_params_default(&p);
    double e0, e1, rise;
    double gain = energy_run(&p, &e0, &e1, &rise);
    CHECK(isfinite(gain));
    CHECK_MSG(gain < 1e-7 * e0, "largest energy rise per step %.3g J of %.3g J", gain, e0);
    CHECK_MSG(rise < 1e-7 * e0, "largest energy rise between samples %.3g J", rise);
    CHECK_MSG(e1 < e0 - 0.05 * e0, "dissipative impact lost only %.3g of %.3g J", e0 - e1, e0);

    /* a contact patch resisting rotation only dissipates */
    imp_drop_params q = p;
    q.rho_patch = 1e-3;
    double e0q, e1q;
    gain = energy_run(&q, &e0q, &e1q, &rise);
    CHECK_MSG(gain < 1e-7 * e0q && rise < 1e-7 * e0q, "patch torque energy rise %.3g J", gain);
    CHECK(e1q < e0q);

    /* no dissipation at all: energy is conserved through the contact */
    imp_drop_params c = p;
    c.c_n = 0.0;
    c.mu = 0.0;
    c.c_t = 0.0;
    gain = energy_run(&c, &e0, &e1, &rise);
    CHECK_MSG(fabs(e1 - e0) < 1e-6 * e0, "conservative contact energy drift %.3g J of %.3g J",
              e1 - e0, e0);
}

static void test_drops(void)
{
    imp_drop_params p;
    imp_drop_params_default(&p);
    p.noise_pos = 0.0;
    p.noise_theta = 0.0;
    enum { N = 30 };
    imp_drop_sample s[N], s2[N];
    size_t rej = 0;
    CHECK_OK(imp_drop_generate(&p, 77, N, s, &rej));
    double max_pre = 0.0, max_post = 0.0, max_tref = 0.0, max_torque = 0.0;
    int separating = 1;
    const double inertia = p.mass * p.kg * p.kg;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < 6; j++) {
            max_pre = fmax(max_pre, fabs(s[i].pre[j] - s[i].true_pre[j]));
            max_post = fmax(max_post, fabs(s[i].post[j] - s[i].true_post[j]));
        }
        max_tref = fmax(max_tref, fabs(s[i].t_ref - s[i].t_contact));
        /* normal contact velocity: approaching before, separating after */
        double un = s[i].true_pre[4] + s[i].true_pre[5] * s[i].n[2];
        double un_post = s[i].true_post[4] + s[i].true_post[5] * s[i].n[2];
        separating &= un < 0.0 && un_post > 0.0;
        /* angular impulse of a point contact at the touch-down point:
         * I dw = r_x Pn - r_y Pt, P = m dv (the point rolls slightly) */
        double Pt = p.mass * (s[i].true_post[3] - s[i].true_pre[3]);
        double Pn = p.mass * (s[i].true_post[4] - s[i].true_pre[4]);
        double dL = inertia * (s[i].true_post[5] - s[i].true_pre[5]);
        double pred = s[i].n[2] * Pn + s[i].d[2] * Pt;
        max_torque = fmax(max_torque, fabs(dL - pred) / (fabs(s[i].n[2] * Pn) + fabs(s[i].d[2] * Pt)));
        CHECK(s[i].duration > 0.0 && s[i].duration < 2e-3);
        CHECK(s[i].energy_gain < 1e-7);
    }
    CHECK_MSG(max_pre < 1e-9, "noise-free pre fit error %.3g", max_pre);
    CHECK_MSG(max_post < 1e-9, "noise-free post fit error %.3g", max_post);
    CHECK_MSG(max_tref < 1e-5, "touch-down time error %.3g s", max_tref);
    CHECK_MSG(max_torque < 0.05, "torque-impulse mismatch %.3g", max_torque);
    {
        /* with a patch torque the angular impulse is no longer explained by
         * the point contact: the mismatch test above must then fail */
        imp_drop_params q = p;
        q.rho_patch = 1e-3;
        imp_drop_sample sq[5];
        CHECK_OK(imp_drop_generate(&q, 77, 5, sq, NULL));
        double worst = 0.0;
        for (int i = 0; i < 5; i++) {
            double Pt = q.mass * (sq[i].true_post[3] - sq[i].true_pre[3]);
            double Pn = q.mass * (sq[i].true_post[4] - sq[i].true_pre[4]);
            double dL = inertia * (sq[i].true_post[5] - sq[i].true_pre[5]);
            double pred = sq[i].n[2] * Pn + sq[i].d[2] * Pt;
            worst = fmax(worst, fabs(dL - pred) / (fabs(sq[i].n[2] * Pn) + fabs(sq[i].d[2] * Pt)));
        }
        CHECK_MSG(worst > 0.05, "patch torque left no unexplained angular impulse (%.3g)", worst);
    }
    CHECK(separating);

    /* reproducible with the seed, different with another */
    CHECK_OK(imp_drop_generate(&p, 77, N, s2, NULL));
    CHECK(memcmp(s, s2, sizeof s) == 0);
    CHECK_OK(imp_drop_generate(&p, 78, N, s2, NULL));
    CHECK(memcmp(s, s2, sizeof s) != 0);

    /* with Vicon-like noise, fitted velocities stay close to the truth */
    imp_drop_params_default(&p);
    CHECK_OK(imp_drop_generate(&p, 5, N, s, NULL));
    double err = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 3; j < 6; j++) {
            double sc = j == 5 ? p.kg : 1.0;
            err += fabs(s[i].post[j] - s[i].true_post[j]) * sc / (3 * N);
        }
    CHECK_MSG(err > 0.0 && err < 0.05, "noisy velocity error %.3g m/s", err);
}

/* RK4 order inside a contact phase (smooth while delta > 0 and the friction
 * cone is not reached): halving the step divides the error by ~16. */
static void test_convergence_order(void)
{
    imp_drop_params p;
    imp_drop_params_default(&p);
    p.mu = 50.0; /* keep the tangential force off the cone: a smooth right-hand side */
    double r[2];
    double h = imp_drop_lowest_point(&p, 0.3, r);
    double s0[7] = {0.0, h - 2e-5, 0.3, 0.3, -1.0, 2.0, 0.0};
    double T = 1e-4, ref[7], out[7], err[3];
    p.dt = p.dt_free = 2.5e-8;
    CHECK_OK(imp_drop_simulate(&p, s0, 0.0, &T, 1, ref, NULL, NULL));
    double steps[3] = {1e-5, 5e-6, 2.5e-6};
    for (int k = 0; k < 3; k++) {
        p.dt = p.dt_free = steps[k];
        CHECK_OK(imp_drop_simulate(&p, s0, 0.0, &T, 1, out, NULL, NULL));
        err[k] = 0.0;
        for (int i = 3; i < 6; i++) err[k] = fmax(err[k], fabs(out[i] - ref[i]));
    }
    CHECK(ref[1] < h); /* still in contact at T */
    double o1 = log2(err[0] / err[1]), o2 = log2(err[1] / err[2]);
    CHECK_MSG(o1 > 3.5 && o2 > 3.5, "observed orders %.2f %.2f (errors %.3g %.3g %.3g)", o1, o2, err[0],
              err[1], err[2]);
}

static void test_bad_simulate(void)
{
    imp_drop_params p;
    imp_drop_params_default(&p);
    double s0[7] = {0, 0.5, 0, 0, 0, 0, 0}, S[14], t[2] = {0.1, 0.05};
    CHECK_FAILS(imp_drop_simulate(&p, s0, 0.0, t, 2, S, NULL, NULL), IMP_ERR_INVALID);
    t[1] = 0.2;
    s0[3] = NAN;
    CHECK_FAILS(imp_drop_simulate(&p, s0, 0.0, t, 2, S, NULL, NULL), IMP_ERR_NUMERIC);
    s0[3] = 0;
    CHECK_FAILS(imp_drop_simulate(&p, NULL, 0.0, t, 2, S, NULL, NULL), IMP_ERR_INVALID);
    CHECK_OK(imp_drop_simulate(&p, s0, 0.0, t, 2, S, NULL, NULL));
}

/* .npz in the real data's layout, loaded back as an impact set */
static void test_files(void)
{
    imp_drop_params p;
    imp_drop_params_default(&p);
    enum { N = 12 };
    imp_drop_sample s[N];
    CHECK_OK(imp_drop_generate(&p, 3, N, s, NULL));
    const char *path = "test_drop_set.npz";
    CHECK_OK(imp_drop_save_npz(s, N, &p, 3, path));
    imp_impact_set a, b;
    CHECK_OK(imp_drop_to_impact_set(s, N, &p, &a));
    CHECK_OK(imp_drop_load_impact_set(&b, path));
    if (a.count == N && b.count == N) {
        CHECK(memcmp(a.pre, b.pre, N * 6 * sizeof(double)) == 0);
        CHECK(memcmp(a.post, b.post, N * 6 * sizeof(double)) == 0);
        CHECK(memcmp(a.d, b.d, N * 3 * sizeof(double)) == 0);
        CHECK(b.convention == IMP_TANGENT_CORRECTED);
        CHECK_CLOSE(b.object.mass, p.mass, 0, 0);
        CHECK_CLOSE(b.object.kg, p.kg, 0, 0);
        size_t bad = 0;
        CHECK_OK(imp_impact_set_validate(&b, &bad));
        CHECK(bad == 0);
    }
    imp_impact_set_free(&a);
    imp_impact_set_free(&b);
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, path));
    const double *x;
    size_t sh[2] = {N, 6};
    CHECK_OK(imp_npz_get_f64(z, "states_i", 2, sh, &x, NULL));
    CHECK_OK(imp_npz_get_f64(z, "states_f_true", 2, sh, &x, NULL));
    CHECK(imp_npz_meta(z) && strstr(imp_npz_meta(z), "\"drop_set\""));
    imp_npz_free(z);
    remove(path);
    /* bad input */
    CHECK_FAILS(imp_drop_load_impact_set(&b, "no/such/file.npz"), IMP_ERR_IO);
    CHECK_FAILS(imp_drop_save_npz(s, 0, &p, 3, path), IMP_ERR_SHAPE);
    z = imp_npz_new();
    double one[6] = {0};
    size_t sh1[2] = {1, 6};
    imp_npz_add_f64(z, "states_i", 2, sh1, one);
    CHECK_OK(imp_npz_save(z, path));
    imp_npz_free(z);
    CHECK_FAILS(imp_drop_load_impact_set(&b, path), IMP_ERR_NOT_FOUND);
    remove(path);
}

int main(void)
{
    test_files();
    test_params();
    test_free_flight_exact();
    test_energy();
    test_drops();
    test_convergence_order();
    test_bad_simulate();
    TEST_MAIN_END();
}
