/* Impact set: loader, contact space, features against the stored files,
 * convention switch, bad input. Data tests skip if ../shared is absent. */
#include "impulse/core.h"
#include "impulse/impact.h"
#include "impulse/io.h"
#include "test.h"

#include <matio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA IMPULSE_SOURCE_DIR "/../shared/data/planar-impact"

static int have_data(void)
{
    FILE *f = fopen(DATA "/data_ellipse.mat", "rb");
    if (!f) return 0;
    fclose(f);
    return 1;
}

/* Contact space from first principles: r = contact offset, d = (1,0,-ry),
 * n = (0,1,rx) gives W entries in closed form (reference sec 1). */
static void test_contact_space(void)
{
    double m = 0.0364, kg = 0.0192, I = m * kg * kg, rx = 0.004, ry = -0.03;
    double d[3] = {1, 0, -ry}, n[3] = {0, 1, rx}, v[3] = {0.5, -2.5, 3.0}, vp[3] = {0.1, 1.2, -4};
    imp_contact c;
    CHECK_OK(imp_contact_make(&c, d, n, m, I, v, vp));
    CHECK_CLOSE(c.W[0], 1 / m + ry * ry / I, 1e-12, 0);
    CHECK_CLOSE(c.W[3], 1 / m + rx * rx / I, 1e-12, 0);
    CHECK_CLOSE(c.W[1], -rx * ry / I, 1e-12, 0);
    CHECK_CLOSE(c.W[1], c.W[2], 1e-14, 0);
    /* Mc W = identity */
    CHECK_CLOSE(c.Mc[0] * c.W[0] + c.Mc[1] * c.W[2], 1.0, 1e-12, 1e-12);
    CHECK_CLOSE(c.Mc[0] * c.W[1] + c.Mc[1] * c.W[3], 0.0, 0, 1e-9);
    CHECK_CLOSE(c.u[1], v[1] + rx * v[2], 1e-12, 0);
    /* u+ from v+ = v- + M^-1 J^T P equals u + W P */
    double P[2] = {0.01, 0.12}, vout[3], u2[2];
    imp_contact_velocity_after(&c, P, vout);
    imp_contact_u_after(&c, P, u2);
    CHECK_CLOSE(d[0] * vout[0] + d[2] * vout[2], u2[0], 1e-12, 1e-12);
    CHECK_CLOSE(n[1] * vout[1] + n[2] * vout[2], u2[1], 1e-12, 1e-12);
    /* energy identity: contact KE after = full KE change restricted to contact space */
    double ke0 = 0.5 * (m * v[0] * v[0] + m * v[1] * v[1] + I * v[2] * v[2]);
    double ke1 = 0.5 * (m * vout[0] * vout[0] + m * vout[1] * vout[1] + I * vout[2] * vout[2]);
    CHECK_CLOSE(ke1 - ke0, imp_contact_energy_after(&c, P) - imp_contact_energy_before(&c), 1e-9, 1e-12);
    /* plastic stick impulse: both lines through it, alpha = 0; P = 0 has alpha = 1 */
    double ps[2], z[2] = {0, 0};
    imp_contact_plastic_stick(&c, ps);
    CHECK_CLOSE(imp_contact_sticking_line(&c, ps), 0, 0, 1e-12);
    CHECK_CLOSE(imp_contact_compression_line(&c, ps), 0, 0, 1e-12);
    CHECK_CLOSE(imp_contact_ellipse_alpha(&c, ps), 0, 0, 1e-12);
    CHECK_CLOSE(imp_contact_ellipse_alpha(&c, z), 1, 1e-12, 0);
    CHECK(imp_contact_admissible(&c, ps, 1e-9));
    /* bad input */
    double nan3[3] = {NAN, 0, 0};
    CHECK_FAILS(imp_contact_make(&c, d, n, m, I, nan3, NULL), IMP_ERR_NUMERIC);
    CHECK_FAILS(imp_contact_make(&c, d, n, -1, I, v, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_contact_make(&c, d, d, m, I, v, NULL), IMP_ERR_NUMERIC);
}

static void test_set_basics(void)
{
    imp_impact_set s;
    CHECK_OK(imp_impact_set_alloc(&s, 2));
    for (int i = 0; i < 2; i++) {
        double *p = s.pre + 6 * i;
        p[3] = 0.5; p[4] = i ? 1.0 : -2.0; p[5] = 0;  /* impact 1 moves away: u_n > 0 */
        s.n[3 * i + 1] = 1; s.n[3 * i + 2] = 0.003;
        s.d[3 * i] = 1; s.d[3 * i + 2] = 0.03;
    }
    size_t bad = 9;
    CHECK_OK(imp_impact_set_validate(&s, &bad));
    CHECK(bad == 1 && s.valid[0] == 1 && s.valid[1] == 0);
    imp_impact_set_convention(&s, IMP_TANGENT_CORRECTED);
    CHECK(s.d[2] == -0.03 && s.convention == IMP_TANGENT_CORRECTED);
    imp_impact_set_convention(&s, IMP_TANGENT_CORRECTED);
    CHECK(s.d[2] == -0.03);
    imp_impact_set_convention(&s, IMP_TANGENT_STORED);
    CHECK(s.d[2] == 0.03);
    s.post[7] = NAN;
    CHECK_FAILS(imp_impact_set_validate(&s, NULL), IMP_ERR_NUMERIC);
    s.post[7] = 0;
    s.object.mass = 0;
    CHECK_FAILS(imp_impact_set_validate(&s, NULL), IMP_ERR_INVALID);
    imp_impact_set_free(&s);
    imp_tangent_sign c;
    CHECK_FAILS(imp_tangent_sign_parse("flipped", &c, "--convention"), IMP_ERR_INVALID);
    CHECK_OK(imp_tangent_sign_parse("corrected", &c, "--convention"));
    CHECK(c == IMP_TANGENT_CORRECTED);
}

static void test_data(void)
{
    imp_impact_set s;
    CHECK_OK(imp_impact_load_mat(&s, DATA "/data_ellipse.mat"));
    CHECK(s.count == 1718);
    size_t bad = 1;
    CHECK_OK(imp_impact_set_validate(&s, &bad));
    CHECK(bad == 0);
    /* X1 from states and the stored d equals gpFeature5.mat */
    double *f5 = NULL, *f2 = NULL, *w = NULL;
    size_t r, c;
    CHECK_OK(imp_impact_load_mat_matrix(DATA "/gpFeature5.mat", "feature5", 1718, 5, &f5, &r, &c));
    CHECK_OK(imp_impact_load_mat_matrix(DATA "/gpFeature2.mat", "feature2", 1718, 2, &f2, &r, &c));
    CHECK_OK(imp_impact_load_mat_matrix(DATA "/w_true_data.mat", "W", 1718, 3, &w, &r, &c));
    double *X1 = malloc(1718 * 5 * sizeof(double)), *X2 = malloc(1718 * 2 * sizeof(double));
    double *Wr = malloc(1718 * 3 * sizeof(double));
    CHECK_OK(imp_impact_features_x1(&s, X1));
    CHECK_OK(imp_impact_features_x2(&s, X2));
    CHECK_OK(imp_impact_wrenches(&s, Wr));
    double e1 = 0, e2 = 0, e3 = 0;
    for (size_t i = 0; f5 && f2 && w && i < 1718 * 5; i++) {
        double e = fabs(X1[i] - f5[i]) / (fabs(f5[i]) + 1e-6);
        if (e > e1) e1 = e;
        if (i < 1718 * 2) { e = fabs(X2[i] - f2[i]) / (fabs(f2[i]) + 1e-6); if (e > e2) e2 = e; }
        if (i < 1718 * 3) { e = fabs(Wr[i] - w[i]) / (fabs(w[i]) + 1e-5); if (e > e3) e3 = e; }
    }
    printf("max rel diff: feature5 %.3g, feature2 %.3g, W %.3g\n", e1, e2, e3);
    CHECK(e1 < 1e-6);
    CHECK(e2 < 1e-6);
    CHECK(e3 < 1e-9);
    free(f5); free(f2); free(w); free(X1); free(X2); free(Wr);
    /* the raw 2000-drop file: its 1718 valid drops are those of data_ellipse.mat,
     * same pre-impact velocities and Jacobians; post vy lower by 3 frames of g */
    imp_impact_set raw;
    CHECK_OK(imp_impact_load_raw_mat(&raw, DATA "/ellipse_uniform_raw2000.mat"));
    if (raw.count == 2000) {
        size_t j = 0, nvalid = 0;
        double maxdv = 0, maxdvy = 0;
        for (size_t i = 0; i < raw.count && j < s.count; i++) {
            if (!raw.valid[i]) continue;
            nvalid++;
            for (int k = 3; k < 6; k++) maxdv = fmax(maxdv, fabs(raw.pre[6 * i + k] - s.pre[6 * j + k]));
            for (int k = 0; k < 3; k++) maxdv = fmax(maxdv, fabs(raw.d[3 * i + k] - s.d[3 * j + k]));
            maxdvy = fmax(maxdvy, fabs(s.post[6 * j + 4] - raw.post[6 * i + 4] - 3 * s.object.g * s.object.h));
            j++;
        }
        printf("raw file: %zu valid of %zu; max |pre v, d diff| %.3g; max |vy shift - 3 g h| %.3g\n", nvalid, raw.count,
               maxdv, maxdvy);
        CHECK(nvalid == 1718);
        CHECK(maxdv == 0);
        CHECK(maxdvy < 1e-12);
    }
    imp_impact_set_free(&raw);
    imp_impact_set_free(&s);
    /* bad input: missing variable, wrong file */
    double *x = NULL;
    CHECK_FAILS(imp_impact_load_mat_matrix(DATA "/p_models.mat", "nothere", 0, 0, &x, &r, &c), IMP_ERR_NOT_FOUND);
    CHECK_FAILS(imp_impact_load_mat_matrix(DATA "/p_models.mat", "p_models", 1718, 5, &x, &r, &c), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_impact_load_mat(&s, DATA "/p_models.mat"), IMP_ERR_NOT_FOUND);
    CHECK_FAILS(imp_impact_load_mat(&s, DATA "/README.md"), IMP_ERR_FORMAT);
    CHECK_FAILS(imp_impact_load_mat(&s, DATA "/no_such_file.mat"), IMP_ERR_IO);
    CHECK_FAILS(imp_impact_load_raw_mat(&s, DATA "/data_ellipse.mat"), IMP_ERR_NOT_FOUND);
}

/* Write a MAT v5 file holding struct `data` with the fields of the processed
 * data set, each rows x cols (cols per field), optionally dropping one field
 * and planting a NaN. */
static void write_mat(const char *path, size_t rows, const char *drop, size_t n_cols, int nan)
{
    static const char *names[4] = {"states_i", "states_f", "n", "d"};
    size_t cols[4] = {6, 6, n_cols, 3};
    const char *fields[5];
    int nf = 0;
    for (int k = 0; k < 4; k++)
        if (!drop || strcmp(drop, names[k])) fields[nf++] = names[k];
    mat_t *m = Mat_CreateVer(path, NULL, MAT_FT_MAT5);
    size_t one[2] = {1, 1};
    fields[nf] = NULL;
    matvar_t *st = Mat_VarCreateStruct2("data", 2, one, fields);
    for (int k = 0; k < 4; k++) {
        if (drop && !strcmp(drop, names[k])) continue;
        size_t dims[2] = {rows, cols[k]};
        double *buf = calloc(rows * cols[k], sizeof(double));
        for (size_t i = 0; i < rows; i++) {
            if (k == 0) buf[4 * rows + i] = -2.0;           /* vy < 0: impacting */
            if (k == 2) buf[1 * rows + i] = 1.0;            /* n = (0, 1, .) */
            if (k == 3) buf[i] = 1.0;                        /* d = (1, 0, .) */
        }
        if (nan && k == 1) buf[rows + 1] = NAN;
        matvar_t *f = Mat_VarCreate(NULL, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims, buf, 0);
        Mat_VarSetStructFieldByName(st, names[k], 0, f);
        free(buf);
    }
    Mat_VarWrite(m, st, MAT_COMPRESSION_ZLIB);
    Mat_VarFree(st);
    Mat_Close(m);
}

static void test_bad_mat(void)
{
    const char *path = "test_impact_bad.mat";
    imp_impact_set s;
    write_mat(path, 4, NULL, 3, 0);
    CHECK_OK(imp_impact_load_mat(&s, path));
    CHECK(s.count == 4 && s.valid[0] == 1);
    imp_impact_set_free(&s);
    write_mat(path, 4, "d", 3, 0);
    CHECK_FAILS(imp_impact_load_mat(&s, path), IMP_ERR_NOT_FOUND);
    CHECK(strstr(imp_last_error(), "data.d") != NULL);
    write_mat(path, 4, NULL, 2, 0);
    CHECK_FAILS(imp_impact_load_mat(&s, path), IMP_ERR_SHAPE);
    CHECK(strstr(imp_last_error(), "data.n") != NULL);
    write_mat(path, 4, NULL, 3, 1);
    CHECK_FAILS(imp_impact_load_mat(&s, path), IMP_ERR_NUMERIC);
    CHECK(strstr(imp_last_error(), "data.states_f") != NULL);
    remove(path);
}

/* .npz round trip and bad .npz input. */
static void test_npz(void)
{
    imp_impact_set s, r;
    CHECK_OK(imp_impact_set_alloc(&s, 3));
    for (size_t i = 0; i < 18; i++) { s.pre[i] = 0.1 * i - 1; s.post[i] = 0.2 * i; }
    for (size_t i = 0; i < 3; i++) {
        s.n[3 * i + 1] = 1; s.n[3 * i + 2] = 0.001 * i;
        s.d[3 * i] = 1; s.d[3 * i + 2] = 0.03;
    }
    CHECK_OK(imp_impact_set_validate(&s, NULL));
    imp_impact_set_convention(&s, IMP_TANGENT_CORRECTED);
    const char *path = "test_impact_set.npz";
    CHECK_OK(imp_impact_save_npz(&s, path));
    CHECK_OK(imp_impact_load_npz(&r, path));
    CHECK(r.count == 3 && r.convention == IMP_TANGENT_CORRECTED);
    int same = r.count == 3;
    for (size_t i = 0; same && i < 18; i++) same = r.pre[i] == s.pre[i] && r.post[i] == s.post[i];
    for (size_t i = 0; same && i < 9; i++) same = r.n[i] == s.n[i] && r.d[i] == s.d[i];
    for (size_t i = 0; same && i < 3; i++) same = r.valid[i] == s.valid[i];
    CHECK(same);
    CHECK_CLOSE(r.object.kg, s.object.kg, 0, 0);
    imp_impact_set_free(&r);
    /* bad files: missing array, wrong shape, NaN, not an impact set */
    size_t sh[2] = {3, 6}, sh5[2] = {3, 5};
    imp_npz *z = imp_npz_new();
    imp_npz_add_f64(z, "pre", 2, sh, s.pre);
    imp_npz_set_meta(z, "{\"kind\": \"impact_set\"}");
    imp_npz_save(z, path);
    CHECK_FAILS(imp_impact_load_npz(&r, path), IMP_ERR_NOT_FOUND);
    imp_npz_add_f64(z, "post", 2, sh5, s.post);
    imp_npz_save(z, path);
    CHECK_FAILS(imp_impact_load_npz(&r, path), IMP_ERR_SHAPE);
    double bad[18];
    for (int i = 0; i < 18; i++) bad[i] = s.pre[i];
    bad[4] = NAN;
    imp_npz_add_f64(z, "pre", 2, sh, bad);
    imp_npz_save(z, path);
    CHECK_FAILS(imp_impact_load_npz(&r, path), IMP_ERR_NUMERIC);
    imp_npz_free(z);
    CHECK_FAILS(imp_impact_load_npz(&r, "no_such_file.npz"), IMP_ERR_IO);
    remove(path);
    imp_impact_set_free(&s);
}

int main(void)
{
    test_npz();
    test_bad_mat();
    test_contact_space();
    test_set_basics();
    if (have_data()) test_data();
    else printf("SKIP: data set not found at %s\n", DATA);
    TEST_MAIN_END();
}
