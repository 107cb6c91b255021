/* The six impact laws: first-principles properties and the authors'
 * stored predictions (p_models.mat; skipped if ../shared is absent). */
#include "impulse/core.h"
#include "impulse/impact.h"
#include "impulse/impact_models.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA IMPULSE_SOURCE_DIR "/../shared/data/planar-impact"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A contact of the data set's ellipse with offset (rx, ry) and velocity v. */
static void make_contact(imp_contact *c, double rx, double ry, const double v[3])
{
    double m = 0.0364, kg = 0.0192, d[3] = {1, 0, -ry}, n[3] = {0, 1, rx};
    imp_contact_make(c, d, n, m, m * kg * kg, v, NULL);
}

static void test_p_models(void)
{
    imp_impact_set s;
    double *pm = NULL;
    size_t r, c;
    CHECK_OK(imp_impact_load_mat(&s, DATA "/data_ellipse.mat"));
    CHECK_OK(imp_impact_load_mat_matrix(DATA "/p_models.mat", "p_models", 1718, 12, &pm, &r, &c));
    if (!pm || s.count != 1718) return;
    double *rel = malloc(s.count * sizeof(double));
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        imp_impact_law law = {(imp_impact_model)m, IMP_VARIANT_AUTHORS, 0, 0};
        imp_impact_table1(law.model, &law.mu, &law.eps);
        int fails = 0;
        for (size_t i = 0; i < s.count; i++) {
            imp_contact ct;
            double P[2];
            if (imp_impact_contact(&s, i, &ct) || imp_impact_predict(&law, ct.W, ct.u, P)) { fails++; rel[i] = 1; continue; }
            const double *q = pm + 12 * i + 2 * m;
            rel[i] = hypot(P[0] - q[0], P[1] - q[1]) / hypot(q[0], q[1]);
        }
        qsort(rel, s.count, sizeof(double), cmp_double);
        printf("%-17s median rel diff %.4f%%, 90%% %.4f%%, max %.3f%% (stored convention, Table 1, authors)\n",
               imp_impact_model_title(law.model), 100 * rel[s.count / 2], 100 * rel[s.count * 9 / 10],
               100 * rel[s.count - 1]);
        CHECK(fails == 0);
        CHECK_MSG(rel[s.count / 2] <= 0.01, "%s", imp_impact_model_title(law.model));
    }
    free(rel);
    free(pm);
    imp_impact_set_free(&s);
}

static const imp_impact_variant variants[2] = {IMP_VARIANT_TEXTBOOK, IMP_VARIANT_AUTHORS};

/* Frictionless impacts: every law but Whittaker reduces to
 * P = (0, -(1+eps) un / Wnn). Whittaker keeps the normal impulse of the
 * Newton stick solution, -(Mc_nt ut + Mc_nn (1+eps) un), even at mu = 0. */
static void test_frictionless(void)
{
    imp_contact c;
    double v[3] = {0.6, -2.5, 7.0};
    make_contact(&c, 0.008, -0.03, v);
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++)
        for (int k = 0; k < 2; k++)
            for (double e = 0; e <= 1.0; e += 0.25) {
                imp_impact_law law = {(imp_impact_model)m, variants[k], 0.0, e};
                double P[2] = {9, 9};
                CHECK_OK(imp_impact_predict(&law, c.W, c.u, P));
                CHECK_CLOSE(P[0], 0.0, 0, 1e-14);
                if (m == IMP_IMPACT_WHITTAKER)
                    CHECK_CLOSE(P[1], -(c.Mc[2] * c.u[0] + c.Mc[3] * (1 + e) * c.u[1]), 1e-9, 0);
                else
                    CHECK_CLOSE(P[1], -(1 + e) * c.u[1] / c.W[3], 1e-9, 0);
            }
}

/* Random contacts spanning the data set (|rx| <= 10 mm, -ry in 25..35 mm)
 * and beyond (|rx| up to 30 mm): cone, non-penetration, energy. */
static void test_properties(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 7);
    int n_cone = 0, n_neg_whit = 0, n_pen = 0, n_gain = 0, trials = 0, n_pen_whit = 0;
    for (int t = 0; t < 3000; t++) {
        double rx = imp_rng_uniform_range(&rng, -0.03, 0.03), ry = imp_rng_uniform_range(&rng, -0.035, -0.02);
        double v[3] = {imp_rng_uniform_range(&rng, -1.5, 1.5), imp_rng_uniform_range(&rng, -3, -0.5),
                       imp_rng_uniform_range(&rng, -30, 30)};
        imp_contact c;
        make_contact(&c, rx, ry, v);
        if (!(c.u[1] < 0)) continue;
        double mu = imp_rng_uniform_range(&rng, 0, 0.6), e = imp_rng_uniform(&rng);
        for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++)
            for (int k = 0; k < 2; k++) {
                imp_impact_law law = {(imp_impact_model)m, variants[k], mu, e};
                double P[2], up[2];
                if (imp_impact_predict(&law, c.W, c.u, P)) { CHECK_MSG(0, "%s: %s", imp_impact_model_name(law.model), imp_last_error()); continue; }
                trials++;
                imp_contact_u_after(&c, P, up);
                double tolP = 1e-9 * hypot(P[0], P[1]), tolu = 1e-9 * fabs(c.u[1]);
                int coulomb = !(m == IMP_IMPACT_MIRTICH && variants[k] == IMP_VARIANT_AUTHORS);
                /* Coulomb laws keep the impulse in the friction cone */
                if (coulomb && (P[1] < -tolP || fabs(P[0]) > mu * P[1] + tolP)) {
                    if (m == IMP_IMPACT_WHITTAKER && P[1] < 0) n_neg_whit++;
                    else {
                        n_cone++;
                        fprintf(stderr, "cone violation: %s/%s P = (%g, %g) mu %g\n", imp_impact_model_name(law.model),
                                imp_impact_variant_name(law.variant), P[0], P[1], mu);
                    }
                }
                /* every law but Whittaker guarantees un+ >= 0 */
                if (m != IMP_IMPACT_WHITTAKER && up[1] < -tolu) n_pen++;
                if (m == IMP_IMPACT_WHITTAKER && up[1] < -tolu) n_pen_whit++;
                /* Newton laws gain energy at times (Kane); Poisson with Routh
                 * modes and Stronge never do */
                double gain = imp_contact_energy_after(&c, P) - imp_contact_energy_before(&c);
                if ((m == IMP_IMPACT_WANG_MASON || (m == IMP_IMPACT_MIRTICH && variants[k] == IMP_VARIANT_TEXTBOOK)) &&
                    gain > 1e-9 * imp_contact_energy_before(&c))
                    n_gain++;
                if (m == IMP_IMPACT_AP_NEWTON) CHECK_CLOSE(up[1], -e * c.u[1], 1e-9, 1e-12);
            }
    }
    printf("random contacts: %d predictions; cone violations %d, penetrations %d, energy gains (WM, Stronge) %d; "
           "Whittaker: pulling (Pn < 0) %d, penetrations %d\n", trials, n_cone, n_pen, n_gain, n_neg_whit, n_pen_whit);
    CHECK(trials > 20000);
    CHECK(n_cone == 0);
    CHECK(n_pen == 0);
    CHECK(n_gain == 0);
}

/* Kane's paradox: with enough friction to stick, Newton's law gives
 * u+ = (0, -eps un); for ut = -(Mc_tn/Mc_tt) un the pre-impact contact energy
 * is un^2/(2 Wnn) and the impact gains energy iff
 * eps^2 > 1 - Wtn^2/(Wtt Wnn). */
static void test_kane(void)
{
    imp_contact c;
    double v[3] = {0, -2.0, 0};
    make_contact(&c, 0.03, -0.03, v); /* large offsets: strong coupling Wtn */
    double un = -2.0, ut = -(c.Mc[1] / c.Mc[0]) * un;
    double u[2] = {ut, un};
    double thr = sqrt(1 - c.W[1] * c.W[1] / (c.W[0] * c.W[3]));
    imp_contact cu = c;
    cu.u[0] = ut;
    cu.u[1] = un;
    CHECK_CLOSE(imp_contact_energy_before(&cu), un * un / (2 * c.W[3]), 1e-9, 0);
    for (int m = 0; m < 2; m++) {
        imp_impact_model mod = m ? IMP_IMPACT_WHITTAKER : IMP_IMPACT_AP_NEWTON;
        double P[2];
        imp_impact_law hi = {mod, IMP_VARIANT_AUTHORS, 5.0, thr + 0.05};
        CHECK_OK(imp_impact_predict(&hi, c.W, u, P));
        double gain = imp_contact_energy_after(&cu, P) - imp_contact_energy_before(&cu);
        printf("Kane (%s): eps %.3f > threshold %.3f, energy change %+.4g J\n", imp_impact_model_title(mod),
               hi.eps, thr, gain);
        CHECK(gain > 0);
        imp_impact_law lo = {mod, IMP_VARIANT_AUTHORS, 5.0, thr - 0.05};
        CHECK_OK(imp_impact_predict(&lo, c.W, u, P));
        CHECK(imp_contact_energy_after(&cu, P) < imp_contact_energy_before(&cu));
        /* the Poisson/Routh law never gains here */
        imp_impact_law wm = {IMP_IMPACT_WANG_MASON, IMP_VARIANT_TEXTBOOK, 5.0, thr + 0.05};
        CHECK_OK(imp_impact_predict(&wm, c.W, u, P));
        CHECK(imp_contact_energy_after(&cu, P) <= imp_contact_energy_before(&cu) * (1 + 1e-12));
    }
}

/* Whittaker keeps the Newton stick normal impulse, which is negative
 * (pulling) when the stick solution demands it; Whittaker tests the cone with
 * |Pn| so it returns that pulling impulse. AP Newton does not. */
static void test_whittaker_negative(void)
{
    imp_contact c;
    double v[3] = {0, -1.0, 0};
    make_contact(&c, 0.03, -0.03, v);
    /* choose ut so that -(Mc_nt ut + Mc_nn (1+e) un) < 0 */
    double e = 0.5, un = -0.1;
    double ut = -2.0 * c.Mc[3] * (1 + e) * un / c.Mc[2];
    double u[2] = {ut, un}, P[2];
    imp_impact_law w = {IMP_IMPACT_WHITTAKER, IMP_VARIANT_AUTHORS, 10.0, e};
    CHECK_OK(imp_impact_predict(&w, c.W, u, P));
    printf("Whittaker stick normal impulse %.4g N s (negative: reproduced)\n", P[1]);
    CHECK(P[1] < 0);
    imp_impact_law a = {IMP_IMPACT_AP_NEWTON, IMP_VARIANT_AUTHORS, 10.0, e};
    CHECK_OK(imp_impact_predict(&a, c.W, u, P));
    CHECK(P[1] >= 0);
}

/* Exact Routh segments against fixed-step integration of the same process
 * (the authors' dp-stepping): the difference shrinks ~ linearly with dp.
 * friction: 0 Coulomb (sign of ut), 1 proportional to ut (authors' Mirtich);
 * stop: 0 Poisson, 1 energetic (Stronge). */
static void stepped_law(const double W[4], const double u0[2], double mu, double eps, int prop, int energetic,
                        double dp, double P[2])
{
    double ut = u0[0], un = u0[1], pt = 0, pn = 0, wc = 0, wr = 0, pc = -1;
    for (long it = 0; it < 100000000L; it++) {
        if (energetic) {
            if (un >= 0 && wr >= -eps * eps * wc) break;
        } else if (pc >= 0 && pn >= (1 + eps) * pc) break;
        double dpt = prop ? -mu * ut * dp : -(ut > 0 ? 1 : -1) * mu * dp;
        if (un < 0) wc += un * dp;
        else wr += un * dp;
        pt += dpt;
        pn += dp;
        ut += W[0] * dpt + W[1] * dp;
        un += W[2] * dpt + W[3] * dp;
        if (pc < 0 && un >= 0) pc = pn;
    }
    P[0] = pt;
    P[1] = pn;
}

static double stepped(const double W[4], const double u0[2], double mu, double eps, int mirtich_prop, double dp, double P[2])
{
    stepped_law(W, u0, mu, eps, mirtich_prop, mirtich_prop, dp, P);
    return 0;
}

/* Slip stops while the normal compliance along the friction direction is
 * negative (kn = Wnn - sigma mu Wtn < 0): compression has not ended yet,
 * the contact then sticks and compression ends. Wang-Mason and the textbook
 * Mirtich rejected this ("Painleve-type configuration"); against stepping. */
static void test_routh_slip_stop_before_compression(void)
{
    double W[4] = {1, 0.9, 0.9, 1}, u[2] = {1, -0.1};
    for (int k = 0; k < 2; k++) {
        imp_impact_law law = {k ? IMP_IMPACT_MIRTICH : IMP_IMPACT_WANG_MASON, IMP_VARIANT_TEXTBOOK, 1.2, 0.5};
        double P[2], Q1[2], Q2[2];
        CHECK_OK(imp_impact_predict(&law, W, u, P));
        stepped_law(W, u, law.mu, law.eps, 0, k, 1e-5, Q1);
        stepped_law(W, u, law.mu, law.eps, 0, k, 1e-6, Q2);
        double e1 = hypot(P[0] - Q1[0], P[1] - Q1[1]), e2 = hypot(P[0] - Q2[0], P[1] - Q2[1]);
        printf("%s, slip stops with kn < 0: P = (%.4f, %.4f); |exact - stepped| = %.3g (dp 1e-5), %.3g (dp 1e-6)\n",
               imp_impact_model_title(law.model), P[0], P[1], e1, e2);
        CHECK(e2 < 0.3 * e1 + 1e-12);
        CHECK(e2 < 1e-4 * hypot(P[0], P[1]));
    }
    /* a true Painleve configuration (needs Wtn^2 > Wtt Wnn, so W is not
     * positive definite: only the unchecked fast path reaches it): sliding
     * with kn < 0 and slip that never stops has no solution, and says so */
    double Wp[4] = {1, 2, 2, 1}, P[2];
    imp_impact_law wm = {IMP_IMPACT_WANG_MASON, IMP_VARIANT_TEXTBOOK, 1.0, 0.5};
    imp_clear_error();
    CHECK(imp_impact_predict_fast(&wm, Wp, u, P) == IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "Painleve configuration") && strstr(imp_last_error(), "no solution"));
}

static void test_routh_convergence(void)
{
    imp_contact c;
    double v[3] = {0.9, -2.6, 3.0};
    make_contact(&c, -0.006, -0.03, v);
    struct { imp_impact_model m; imp_impact_variant var; int prop; double mu; } cases[3] = {
        {IMP_IMPACT_WANG_MASON, IMP_VARIANT_TEXTBOOK, 0, 0.4}, /* slides, halts, sticks */
        {IMP_IMPACT_WANG_MASON, IMP_VARIANT_TEXTBOOK, 0, 0.05}, /* slides throughout */
        {IMP_IMPACT_MIRTICH, IMP_VARIANT_AUTHORS, 1, 0.1}};
    for (int k = 0; k < 3; k++) {
        imp_impact_law law = {cases[k].m, cases[k].var, cases[k].mu, 0.55};
        double P[2], Q1[2], Q2[2];
        CHECK_OK(imp_impact_predict(&law, c.W, c.u, P));
        stepped(c.W, c.u, law.mu, law.eps, cases[k].prop, 1e-5, Q1);
        stepped(c.W, c.u, law.mu, law.eps, cases[k].prop, 1e-6, Q2);
        double e1 = hypot(P[0] - Q1[0], P[1] - Q1[1]), e2 = hypot(P[0] - Q2[0], P[1] - Q2[1]);
        printf("%s mu=%.2f: |exact - stepped| = %.3g (dp 1e-5), %.3g (dp 1e-6)\n",
               imp_impact_model_title(law.model), law.mu, e1, e2);
        CHECK(e2 < 0.3 * e1 + 1e-12);
        CHECK(e2 < 1e-4 * hypot(P[0], P[1]));
    }
}

/* mu_s: above it the prediction no longer depends on mu (closed-form laws)
 * or the impact ends sticking (Routh laws); below it, it does not. */
static void test_sticking_threshold(void)
{
    imp_contact c;
    double v[3] = {0.7, -2.6, -4.0};
    make_contact(&c, 0.005, -0.03, v);
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++)
        for (int k = 0; k < 2; k++) {
            imp_impact_law law = {(imp_impact_model)m, variants[k], 0, 0.5};
            double ms;
            CHECK_OK(imp_impact_sticking_threshold(&law, c.W, c.u, 1.0, &ms));
            if (m == IMP_IMPACT_MIRTICH && variants[k] == IMP_VARIANT_AUTHORS) { CHECK(ms == 1.0); continue; }
            CHECK(ms > 0 && ms < 1.0);
            double Pa[2], Pb[2], Pc[2], ua[2], ub[2];
            law.mu = ms * (1 + 1e-6) + 1e-9;
            CHECK_OK(imp_impact_predict(&law, c.W, c.u, Pa));
            law.mu = 0.9;
            CHECK_OK(imp_impact_predict(&law, c.W, c.u, Pb));
            law.mu = ms * 0.98;
            CHECK_OK(imp_impact_predict(&law, c.W, c.u, Pc));
            double scale = hypot(Pb[0], Pb[1]);
            imp_contact_u_after(&c, Pa, ua);
            imp_contact_u_after(&c, Pc, ub);
            if (m == IMP_IMPACT_WANG_MASON || m == IMP_IMPACT_MIRTICH) {
                CHECK_MSG(fabs(ua[0]) < 1e-6, "%s ut+ %g", imp_impact_model_name(law.model), ua[0]);
                CHECK(fabs(ub[0]) > 1e-6);
            } else {
                CHECK_MSG(hypot(Pa[0] - Pb[0], Pa[1] - Pb[1]) < 1e-6 * scale, "%s", imp_impact_model_name(law.model));
                CHECK(hypot(Pc[0] - Pb[0], Pc[1] - Pb[1]) > 1e-5 * scale);
            }
        }
}

static void test_bad_input(void)
{
    imp_contact c;
    double v[3] = {0.6, -2.5, 7.0}, P[2];
    make_contact(&c, 0.008, -0.03, v);
    imp_impact_law law = {IMP_IMPACT_AP_NEWTON, IMP_VARIANT_AUTHORS, 0.1, 0.5};
    double away[2] = {0.1, 0.3}, touching[2] = {0.1, 0.0}, nanu[2] = {NAN, -1};
    CHECK_FAILS(imp_impact_predict(&law, c.W, away, P), IMP_ERR_INVALID);
    CHECK_FAILS(imp_impact_predict(&law, c.W, touching, P), IMP_ERR_INVALID);
    CHECK_FAILS(imp_impact_predict(&law, c.W, nanu, P), IMP_ERR_NUMERIC);
    law.mu = -0.1;
    CHECK_FAILS(imp_impact_predict(&law, c.W, c.u, P), IMP_ERR_INVALID);
    law.mu = NAN;
    CHECK_FAILS(imp_impact_predict(&law, c.W, c.u, P), IMP_ERR_INVALID);
    law.mu = 0.1;
    law.eps = 1.2;
    CHECK_FAILS(imp_impact_predict(&law, c.W, c.u, P), IMP_ERR_INVALID);
    law.eps = -0.01;
    CHECK_FAILS(imp_impact_predict(&law, c.W, c.u, P), IMP_ERR_INVALID);
    law.eps = 0.5;
    law.model = (imp_impact_model)17;
    CHECK_FAILS(imp_impact_predict(&law, c.W, c.u, P), IMP_ERR_INVALID);
    law.model = IMP_IMPACT_WHITTAKER;
    double Wbad[4] = {1, 2, 2, 1};
    CHECK_FAILS(imp_impact_predict(&law, Wbad, c.u, P), IMP_ERR_NUMERIC);
    imp_impact_model m;
    CHECK_FAILS(imp_impact_model_parse("newton", &m, "--model"), IMP_ERR_NOT_FOUND);
    CHECK_OK(imp_impact_model_parse("wang-mason", &m, "--model"));
    CHECK(m == IMP_IMPACT_WANG_MASON);
    double ms;
    CHECK_FAILS(imp_impact_sticking_threshold(&law, c.W, c.u, -1, &ms), IMP_ERR_INVALID);
}

/* Batch API: the same impulses as one call per impact, a status per
 * impact, the first failure named. */
static void test_batch(void)
{
    enum { N = 64 };
    double W[N * 4], u[N * 2], mu[N], eps[N], P[N * 2], Q[2];
    int32_t status[N];
    imp_rng rng;
    imp_rng_seed(&rng, 3);
    for (int i = 0; i < N; i++) {
        imp_contact c;
        double v[3] = {imp_rng_uniform_range(&rng, -1, 1), imp_rng_uniform_range(&rng, -3, -0.5),
                       imp_rng_uniform_range(&rng, -20, 20)};
        make_contact(&c, imp_rng_uniform_range(&rng, -0.01, 0.01), imp_rng_uniform_range(&rng, -0.035, -0.025), v);
        memcpy(W + 4 * i, c.W, sizeof c.W);
        memcpy(u + 2 * i, c.u, sizeof c.u);
        mu[i] = imp_rng_uniform_range(&rng, 0, 2);
        eps[i] = imp_rng_uniform(&rng);
    }
    u[2 * 5 + 1] = 0.3;              /* impact 5: moving away */
    W[4 * 9 + 1] = NAN;              /* impact 9: non-finite W */
    mu[17] = 11;                     /* impact 17: mu out of range */
    W[4 * 20 + 1] = W[4 * 20 + 2] = 2 * sqrt(W[4 * 20] * W[4 * 20 + 3]); /* impact 20: W not positive definite */
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++)
        for (int k = 0; k < 2; k++) {
            size_t failed = 99;
            CHECK_OK(imp_impact_predict_batch((imp_impact_model)m, variants[k], N, W, u, mu, eps, N, P, status, &failed));
            CHECK(failed == 4);
            CHECK(strstr(imp_last_error(), "impact 5: u: normal contact velocity") != NULL);
            CHECK(status[5] == IMP_IMPACT_NOT_IMPACTING && status[9] == IMP_IMPACT_BAD_INPUT &&
                  status[17] == IMP_IMPACT_BAD_INPUT && status[20] == IMP_IMPACT_BAD_INPUT);
            int same = 1;
            for (int i = 0; i < N; i++) {
                imp_impact_law law = {(imp_impact_model)m, variants[k], mu[i], eps[i]};
                int st = imp_impact_predict(&law, W + 4 * i, u + 2 * i, Q);
                if (st) same &= status[i] != IMP_IMPACT_OK && isnan(P[2 * i]) && isnan(P[2 * i + 1]);
                else same &= status[i] == IMP_IMPACT_OK && P[2 * i] == Q[0] && P[2 * i + 1] == Q[1];
            }
            CHECK_MSG(same, "%s/%s batch differs from single calls", imp_impact_model_name((imp_impact_model)m),
                      imp_impact_variant_name(variants[k]));
            /* one shared (mu, eps) */
            CHECK_OK(imp_impact_predict_batch((imp_impact_model)m, variants[k], N, W, u, mu + 1, eps + 1, 1, P, status,
                                              &failed));
            imp_impact_law law = {(imp_impact_model)m, variants[k], mu[1], eps[1]};
            CHECK_OK(imp_impact_predict(&law, W + 4 * 30, u + 2 * 30, Q));
            CHECK(failed == 3 && status[30] == IMP_IMPACT_OK && P[60] == Q[0] && P[61] == Q[1]);
        }
    size_t failed;
    CHECK_FAILS(imp_impact_predict_batch(IMP_IMPACT_AP_NEWTON, IMP_VARIANT_AUTHORS, N, W, u, mu, eps, 2, P, status, &failed),
                IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "mu, eps: 2 values for 64 impacts") != NULL);
    CHECK_FAILS(imp_impact_predict_batch(IMP_IMPACT_AP_NEWTON, IMP_VARIANT_AUTHORS, N, W, NULL, mu, eps, N, P, status, &failed),
                IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "u: NULL array") != NULL);
    CHECK_FAILS(imp_impact_predict_batch((imp_impact_model)9, IMP_VARIANT_AUTHORS, N, W, u, mu, eps, N, P, status, &failed),
                IMP_ERR_INVALID);
    CHECK(strstr(imp_last_error(), "model: unknown id 9") != NULL);
}

/* AP Newton's reverse pass (imp_ap_newton_backward, shared with the
 * CD-Lagrange integrator) against central differences in every input
 * (W entries independent, u, mu, bn), on random contacts in both the
 * sticking and the sliding branch; the check must be able to fail. */
static void test_ap_newton_backward(void)
{
    imp_rng r;
    imp_rng_seed(&r, 42);
    int seen[3] = {0, 0, 0}, cases = 0;
    double worst = 0.0;
    for (int trial = 0; trial < 400; trial++) {
        double a = 0.5 + imp_rng_uniform(&r), b = 0.5 + imp_rng_uniform(&r), c = 0.6 * (imp_rng_uniform(&r) - 0.5);
        double x[8] = {a, c, c, b, 0.5 * imp_rng_normal(&r), -0.5 - imp_rng_uniform(&r), 0.05 + 1.5 * imp_rng_uniform(&r), 0};
        x[7] = (1.0 + imp_rng_uniform(&r)) * x[5]; /* bn = (1 + e) un < 0 */
        double P[2], cw[2] = {imp_rng_normal(&r), imp_rng_normal(&r)};
        int br;
        if (imp_ap_newton_forward(P, &br, x, x + 4, x[6], x[7])) continue;
        double g[8] = {0};
        imp_ap_newton_backward(g, g + 4, g + 6, g + 7, cw, P, br, x, x[6], x[7]);
        double num[8], h = 1e-6;
        int same = 1;
        for (int i = 0; i < 8; i++) {
            double keep = x[i], Pp[2], Pm[2];
            int bp, bm;
            x[i] = keep + h;
            imp_ap_newton_forward(Pp, &bp, x, x + 4, x[6], x[7]);
            x[i] = keep - h;
            imp_ap_newton_forward(Pm, &bm, x, x + 4, x[6], x[7]);
            x[i] = keep;
            same &= bp == br && bm == br;
            num[i] = (cw[0] * (Pp[0] - Pm[0]) + cw[1] * (Pp[1] - Pm[1])) / (2 * h);
        }
        if (!same) continue; /* at a branch boundary */
        double err = test_grad_rel_err(g, num, 8, 1e-8);
        if (err > worst) worst = err;
        seen[br + 1]++;
        cases++;
        if (trial == 0 || err > 1e-6) {
            double gw[8];
            memcpy(gw, g, sizeof gw);
            int im = 0;
            for (int i = 0; i < 8; i++) if (fabs(gw[i]) > fabs(gw[im])) im = i;
            gw[im] = -gw[im];
            CHECK(test_grad_rel_err(gw, num, 8, 1e-8) > 1e-2);
        }
    }
    printf("ap-newton backward: %d contacts (stick %d, slide+ %d, slide- %d), worst FD rel err %.2e\n", cases,
           seen[1], seen[2], seen[0], worst);
    CHECK(seen[0] > 20 && seen[1] > 20 && seen[2] > 20);
    CHECK_MSG(worst < 1e-6, "worst %g", worst);
    /* Newton's law through the shared form: un+ = -e un, in the cone */
    double W[4] = {3.0, 0.4, 0.4, 1.2}, u[2] = {0.8, -2.0}, e = 0.6, P[2];
    int br;
    CHECK_OK(imp_ap_newton_forward(P, &br, W, u, 0.2, (1 + e) * u[1]));
    CHECK(br == IMP_AP_SLIDE_POS);
    CHECK_CLOSE(u[1] + W[2] * P[0] + W[3] * P[1], -e * u[1], 1e-12, 1e-12);
    CHECK_CLOSE(P[0], -0.2 * P[1], 1e-12, 0);
}

/* The data set's object: k_g = sqrt((a^2 + b^2)/5) with a = 35 mm, b = 25 mm
 * (I = m (a^2 + b^2)/5, reference sec 4), not the rounded 0.0192 m. */
static void test_object(void)
{
    imp_impact_object o = imp_impact_object_ellipse();
    CHECK_CLOSE(o.kg, sqrt((0.035 * 0.035 + 0.025 * 0.025) / 5.0), 1e-15, 0);
    CHECK_CLOSE(o.mass * o.kg * o.kg, 1.3468e-5, 1e-4, 0); /* the reference's I, given to 5 digits */
    printf("object: m = %g kg, k_g = %.6f m, I = %.5g kg m^2\n", o.mass, o.kg, o.mass * o.kg * o.kg);
}

int main(void)
{
    test_object();
    test_ap_newton_backward();
    test_frictionless();
    test_properties();
    test_kane();
    test_whittaker_negative();
    test_routh_convergence();
    test_routh_slip_stop_before_compression();
    test_sticking_threshold();
    test_bad_input();
    test_batch();
    FILE *f = fopen(DATA "/p_models.mat", "rb");
    if (f) { fclose(f); test_p_models(); }
    else printf("SKIP: data set not found at %s\n", DATA);
    TEST_MAIN_END();
}
