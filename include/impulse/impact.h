/* impulse planar impact: the impact-set data structure, its loaders and
 * exporters, and the contact-space machinery of Fazeli et al. 2017
 * ([ISRR] eqs 2-6, [CoRL] eqs 2-5, 10; /work/shared/reference/planar-impact.md).
 *
 * One impact is a planar rigid body (x, y, theta; vx, vy, omega) hitting a
 * fixed plane at a single point. Its contact Jacobian has two rows, the
 * tangent d = (1, 0, d3) and the normal n = (0, 1, n3); J = [d; n] (tangent
 * row first, everywhere in this header). M = diag(m, m, I), I = m k_g^2.
 *
 * Tangent-sign convention: the published data set stores d3 with the wrong
 * sign relative to its theta/omega convention (reference, sections 0.3 and 4).
 * An imp_impact_set always records which convention its `d` rows follow;
 * imp_impact_set_convention() switches between them (d3 -> -d3, n and states
 * untouched) so that everything derived afterwards (features, impulses,
 * wrenches, model predictions) is recomputed from states and geometry.
 */
#ifndef IMPULSE_IMPACT_H
#define IMPULSE_IMPACT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Conventions and object constants                                        */

typedef enum imp_tangent_sign {
    IMP_TANGENT_STORED = 0,    /* d = (1, 0, d3) exactly as in the .mat files */
    IMP_TANGENT_CORRECTED = 1  /* d = (1, 0, -d3): consistent with theta, omega */
} imp_tangent_sign;

/* "stored" / "corrected"; NULL for an unknown value. */
const char *imp_tangent_sign_name(imp_tangent_sign c);
/* Parse "stored" / "corrected" (fails naming `what`). */
int imp_tangent_sign_parse(const char *text, imp_tangent_sign *out, const char *what);

typedef struct imp_impact_object {
    double mass;   /* kg (data set: 0.0364) */
    double kg;     /* radius of gyration, m (data set: sqrt((a^2+b^2)/5) = 0.019235); I = mass kg^2 */
    double g;      /* gravity, m/s^2 (9.81) */
    double h;      /* frame period, s (1/250) */
} imp_impact_object;

/* The constants of the MIT planar-impact ellipse (data README). */
imp_impact_object imp_impact_object_ellipse(void);

/* ---------------------------------------------------------------------- */
/* The impact set                                                          */

/* Row-major arrays with `count` rows. All are owned by the set. */
typedef struct imp_impact_set {
    size_t count;
    double *pre;    /* count x 6: x, y, theta, vx, vy, omega just before impact */
    double *post;   /* count x 6: the same just after impact */
    double *n;      /* count x 3: normal Jacobian row (0, 1, n3) */
    double *d;      /* count x 3: tangent Jacobian row (1, 0, +-d3), per `convention` */
    unsigned char *valid; /* count flags: 1 = usable (pre-impact u_n < 0, all finite) */
    imp_impact_object object;
    imp_tangent_sign convention;
} imp_impact_set;

/* Allocate a zero-filled set of `count` impacts (valid = 1, convention
 * stored, object = ellipse constants). Free with imp_impact_set_free. */
int imp_impact_set_alloc(imp_impact_set *s, size_t count);
void imp_impact_set_free(imp_impact_set *s);
/* Deep copy (dst must be uninitialised or freed). */
int imp_impact_set_copy(imp_impact_set *dst, const imp_impact_set *src);

/* Switch the tangent-sign convention in place (flips d3 if it differs). */
void imp_impact_set_convention(imp_impact_set *s, imp_tangent_sign c);

/* Check shapes/values and recompute `valid`: non-finite entries fail with
 * IMP_ERR_NUMERIC naming the array and row; an impact whose pre-impact
 * normal contact velocity is >= 0 is marked invalid (returned count in
 * *n_invalid, may be NULL). Fails if the object constants are impossible. */
int imp_impact_set_validate(imp_impact_set *s, size_t *n_invalid);

/* Load the processed data set: data_ellipse.mat (struct `data` with
 * states_i, states_f, n, d) via libmatio. The result is in the stored
 * convention. Missing variables/fields, wrong shapes or types, NaN ->
 * clear error naming the field. */
int imp_impact_load_mat(imp_impact_set *s, const char *path);

/* Load the raw 2000-drop file (ellipse_uniform_raw2000.mat, [CODE2]):
 * struct array `bounce_array` with .states (1x12: pre then post), .n, .d
 * (1x3) and the validity flags (.flags 1x6, or flag_sb/en/cl/mc/de/ld);
 * valid = all flags 0 and pre-impact un < 0. Its post-impact vy is the
 * fitted value before the 3-frame back-propagation of data_ellipse.mat. */
int imp_impact_load_raw_mat(imp_impact_set *s, const char *path);

/* Load a single named 2-D double matrix (e.g. "p_models" from
 * p_models.mat) into a malloc'd row-major buffer; expect_rows/expect_cols
 * 0 = any. The caller frees *data. */
int imp_impact_load_mat_matrix(const char *path, const char *name, size_t expect_rows,
                               size_t expect_cols, double **data, size_t *rows, size_t *cols);

/* Export / import as .npz (include/impulse/io.h): arrays "pre", "post",
 * "n", "d" (count x 3, in the set's convention), "valid" (int64), and the
 * meta JSON {"kind": "impact_set", "convention", "mass", "kg", "g", "h"}. */
int imp_impact_save_npz(const imp_impact_set *s, const char *path);
int imp_impact_load_npz(imp_impact_set *s, const char *path);

/* ---------------------------------------------------------------------- */
/* Contact space of one impact                                             */

typedef struct imp_contact {
    double J[6];    /* 2x3 row-major: row 0 = d (tangent), row 1 = n (normal) */
    double minv[3]; /* diagonal of M^-1: 1/m, 1/m, 1/I */
    double W[4];    /* compliance J M^-1 J^T, row-major [Wtt Wtn; Wnt Wnn] */
    double Mc[4];   /* contact inertia W^-1 */
    double u[2];    /* pre-impact contact velocity J v- = (ut, un) */
    double u_post[2]; /* post-impact contact velocity J v+ (measured) */
    double v_pre[3];  /* (vx, vy, omega) before */
    double v_post[3]; /* (vx, vy, omega) after (measured) */
} imp_contact;

/* Contact space from explicit rows, object constants and velocities
 * (v_post may be NULL -> zeros). Fails on non-finite input or a singular W. */
int imp_contact_make(imp_contact *c, const double d[3], const double n[3], double mass,
                     double inertia, const double v_pre[3], const double v_post[3]);
/* Contact space of impact i of a set (uses the set's convention). */
int imp_impact_contact(const imp_impact_set *s, size_t i, imp_contact *c);

/* Post-impact generalised velocity for an impulse P = (Pt, Pn):
 * v+ = v- + M^-1 J^T P ([ISRR] eq 5). */
void imp_contact_velocity_after(const imp_contact *c, const double P[2], double v_out[3]);
/* Post-impact contact velocity u+ = u + W P. */
void imp_contact_u_after(const imp_contact *c, const double P[2], double u_out[2]);
/* Contact kinetic energy 1/2 u^T Mc u before, and after impulse P
 * (1/2 u+^T Mc u+ = 1/2 u^T Mc u + u^T P + 1/2 P^T W P). */
double imp_contact_energy_before(const imp_contact *c);
double imp_contact_energy_after(const imp_contact *c, const double P[2]);
/* Energy-ellipse level alpha of an impulse: (P + Mc u)^T W (P + Mc u) /
 * (u^T Mc u); alpha <= 1 means no energy gain. */
double imp_contact_ellipse_alpha(const imp_contact *c, const double P[2]);
/* Residuals of the lines of the impulse plane, zero on the line:
 * sticking      ut + Wtt Pt + Wtn Pn  (tangent post velocity),
 * max compression un + Wnt Pt + Wnn Pn (normal post velocity, >= 0 admissible). */
double imp_contact_sticking_line(const imp_contact *c, const double P[2]);
double imp_contact_compression_line(const imp_contact *c, const double P[2]);
/* 1 if P is admissible: alpha <= 1 + tol and u_n+ >= -tol*|un|. */
int imp_contact_admissible(const imp_contact *c, const double P[2], double tol);
/* The plastic full-stick impulse P* = -Mc u (centre of the energy ellipse,
 * where the two lines meet). */
void imp_contact_plastic_stick(const imp_contact *c, double P[2]);

/* ---------------------------------------------------------------------- */
/* Features, measured impulses and wrenches of a whole set                 */

/* X1 ([CoRL] sec 4, gpFeature5.mat layout): count x 5 rows
 * [Mc11, Mc12, Mc22, ut, un]. */
int imp_impact_features_x1(const imp_impact_set *s, double *X);
/* X2 (gpFeature2.mat layout, polar): count x 2 rows
 * [atan2((Mc u)_n, (Mc u)_t), |Mc u|]. */
int imp_impact_features_x2(const imp_impact_set *s, double *X);

typedef enum imp_impulse_measure {
    IMP_PMEAS_CONTACT = 0,  /* P = Mc J (v+ - v-): contact-space projection ([CODE2]) */
    IMP_PMEAS_MOMENTUM = 1  /* P = (m dvx, m dvy): linear momentum change */
} imp_impulse_measure;

/* Measured impulses, count x 2 rows (Pt, Pn). */
int imp_impact_measured_impulses(const imp_impact_set *s, imp_impulse_measure how, double *P);
/* Measured wrench impulses (w_true_data.mat layout), count x 3 rows
 * (m dvx, m dvy, tau) with tau = I domega - (J^T P)_3, P = (m dvx, m dvy):
 * the torque impulse a point contact with this J cannot explain. */
int imp_impact_wrenches(const imp_impact_set *s, double *Wr);

/* Error metric ([ISRR] sec 3.2.1): || (dvx, dvy, kg domega) ||_2 between a
 * predicted and a measured post-impact velocity (vx, vy, omega). */
double imp_impact_velocity_error(const double v_pred[3], const double v_true[3], double kg);

#ifdef __cplusplus
}
#endif
#endif
