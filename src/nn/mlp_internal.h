/* Internals of the nn module shared by its .c files and tests/test_nn.c:
 * the work-space layout, the activation kernels, and the switch that routes
 * every matrix product through plain reference loops instead of BLAS (so the
 * tests can check that both paths agree). Not a public header. */
#ifndef IMPULSE_NN_MLP_INTERNAL_H
#define IMPULSE_NN_MLP_INTERNAL_H

#include "impulse/nn.h"

/* Vectorised versions of the elementwise kernels: AVX-512, AVX2 and a
 * baseline, picked at run time from the CPU features, without a global
 * -march flag. */
#define IMP_UNPAREN_(...) __VA_ARGS__
#define IMP_UNPAREN IMP_UNPAREN_
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(IMPULSE_NO_CLONES)
#define IMP_HAVE_ISA_VERSIONS 1
/* no-trapping-math lets GCC evaluate both arms of the selects (we never
 * read floating-point exception flags); the dynamic cost model lets -O2
 * vectorise loops of unknown trip count. These attributes do not reach the
 * always-inline bodies' if-conversion (GCC 12: the selects of the float
 * sweeps stayed scalar in the AVX2 and base versions), so CMakeLists.txt
 * also compiles src/nn with -fno-trapping-math. */
#define IMP_VEC_OPTS \
    __attribute__((optimize("no-trapping-math", "vect-cost-model=dynamic", "fp-contract=fast", \
                             "no-math-errno")))
/* hand-dispatched versions (imp_act_isa) also use fused multiply-adds */
#define IMP_TARGET_AVX512 __attribute__((target("avx512f,fma")))
#define IMP_TARGET_AVX2 __attribute__((target("avx2,fma")))
/* name##_body, an always-inline function, compiled three times and
 * dispatched by imp_act_isa(): IMP_ISA_VERSIONS(name, (params), (args)).
 * The versions call the body with the argument lists a512, a2, abase. */
#define IMP_ISA_VERSIONS_(name, params, args, a512, a2, abase)                                 \
    IMP_VEC_OPTS IMP_TARGET_AVX512 static void name##_avx512 params { name##_body a512; }      \
    IMP_VEC_OPTS IMP_TARGET_AVX2 static void name##_avx2 params { name##_body a2; }            \
    IMP_VEC_OPTS static void name##_base params { name##_body abase; }                         \
    static void name params                                                                    \
    {                                                                                          \
        switch (imp_act_isa()) {                                                               \
        case IMP_ISA_AVX512: name##_avx512 args; break;                                        \
        case IMP_ISA_AVX2: name##_avx2 args; break;                                            \
        default: name##_base args; break;                                                      \
        }                                                                                      \
    }
#define IMP_ISA_VERSIONS(name, params, args) IMP_ISA_VERSIONS_(name, params, args, args, args, args)
/* name##_body compiled into name##_avx512, name##_avx2 and name##_base
 * without a dispatcher, for the kernel tables a work picks when it is made
 * (imp_mlp_kernels); the body takes first the version's vector width in
 * bytes (64, 32, 16). */
#define IMP_ISA_TABLE(name, params, args)                                                      \
    IMP_VEC_OPTS IMP_TARGET_AVX512 static void name##_avx512 params { name##_body(64, IMP_UNPAREN args); } \
    IMP_VEC_OPTS IMP_TARGET_AVX2 static void name##_avx2 params { name##_body(32, IMP_UNPAREN args); }     \
    IMP_VEC_OPTS static void name##_base params { name##_body(16, IMP_UNPAREN args); }
/* The same, the body taking first the version's vector width in floats
 * (16, 8, 4): for kernels written with GCC's vector extension, whose
 * vectors wider than the instruction set's are lowered through memory. */
#define IMP_ISA_VERSIONS_WIDTH(name, params, args)                                             \
    IMP_ISA_VERSIONS_(name, params, args, (16, IMP_UNPAREN args), (8, IMP_UNPAREN args),       \
                      (4, IMP_UNPAREN args))
#else
#define IMP_ISA_VERSIONS(name, params, args) \
    static void name params { name##_body args; }
/* other architectures: 16-byte vectors (NEON) */
#define IMP_ISA_VERSIONS_WIDTH(name, params, args) \
    static void name params { name##_body(4, IMP_UNPAREN args); }
#define IMP_ISA_TABLE(name, params, args) \
    static void name##_base params { name##_body(16, IMP_UNPAREN args); }
#define IMP_HAVE_ISA_VERSIONS 0
#define IMP_VEC_OPTS
#endif


#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

/* Flush subnormal results and inputs to zero inside a kernel; the caller's
 * MXCSR comes back with imp_flush_subnormals_end. Every operation on a
 * subnormal number takes a microcode assist (~100x slower), and two of our
 * loops meet them in long trainings while the values involved are
 * negligible (measured on the ball):
 *  - the single-precision potential sweeps (mlp_fused.c): products
 *    such as w1 * s * gbar, with s = sigmoid of a saturated unit, fall below
 *    float's 1.2e-38 as training sharpens the potential; sweep 2 went from
 *    0.24 to 8.8 us per row over 150 epochs, with identical sums (1e-3);
 *  - Adam (optim.c): the first moment of a parameter whose gradient is zero
 *    (a dead ReLU unit) decays as 0.9^t and is subnormal in double after
 *    ~6700 steps; Adam then took 38 % of a training epoch after 1000 epochs.
 *    Its contribution to the step is below 1e-300. */
static inline unsigned imp_flush_subnormals_begin(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned old = _mm_getcsr();
    _mm_setcsr(old | 0x8040u); /* FTZ (bit 15) and DAZ (bit 6) */
    return old;
#else
    return 0;
#endif
}

static inline void imp_flush_subnormals_end(unsigned old)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(old);
#else
    (void)old;
#endif
}

/* Activation phi applied in place to z (n values), writing s = phi'(z).
 * Both come out of one pass so the forward pass caches what backward and
 * the sweeps need, and no pre-activation has to be stored. */
void imp_act_forward(imp_activation act, double *z_to_a, double *s, size_t n);
/* s = act'(z) only, where that is cheaper (softplus, relu): returns 0 and
 * leaves z as the pre-activation; otherwise does imp_act_forward and returns 1. */
int imp_act_deriv_only(imp_activation act, double *z, double *s, size_t n);
/* The same in place (z in, s out) for softplus and relu: returns 0; for
 * the others does nothing and returns 1. */
int imp_act_deriv_inplace(imp_activation act, double *zs, size_t n);

/* Instruction-set versions of the kernels (IMP_ISA_VERSIONS). The version
 * in use is chosen once, at the first kernel call, by imp_isa_choose from
 * the environment variable IMPULSE_ISA ("base", "avx2", "avx512"; unset:
 * the best) and the CPU's features: never one the CPU lacks.
 * imp_act_force_isa pins one (tests run every version the CPU has); -1
 * restores the automatic choice. Not thread-safe: for tests only. Fails
 * with IMP_ERR_UNSUPPORTED if the CPU or the build lacks that version. */
enum { IMP_ISA_BASE = 0, IMP_ISA_AVX2 = 1, IMP_ISA_AVX512 = 2 };
int imp_act_force_isa(int isa);
/* The version in use: the forced one, else the chosen one. */
int imp_act_isa(void);
/* The versions this CPU and build can run: bit (1 << isa) for each
 * (the AVX-512 and AVX2 versions need FMA too). */
unsigned imp_isa_cpu(void);
/* The version picked for a request (IMPULSE_ISA's value, may be NULL) on a
 * CPU that can run the versions in `cpu` (bits as imp_isa_cpu): the one
 * requested, or the best below it that the CPU has. */
int imp_isa_choose(const char *request, unsigned cpu);
const char *imp_isa_name(int isa);

/* Sweep 2 up-pass step (see mlp.c): r = dbar * e * phi''(z) and
 * ebar = dbar * s; e and ebar both NULL for the output layer (e = 1). */
void imp_act_sweep2_up(imp_activation act, size_t n, const double *dbar, const double *e,
                       const double *a, const double *s, double *r, double *ebar);
/* out = x * y;  out += x * y  (elementwise, no aliasing) */
void imp_vec_mul(double *out, const double *x, const double *y, size_t n);
void imp_vec_fma_inplace(double *out, const double *x, const double *y, size_t n);

struct imp_mlp_work {
    int n_layers;
    int sizes[IMP_MLP_MAX_LAYERS + 1];
    int max_batch;
    int n_max;              /* max over sizes[] */
    int use_reference;      /* 1: plain loops instead of cblas_dgemm */
    int fwd_batch;          /* batch of the cached forward pass, 0 = none */
    int sweep1_batch;       /* batch of the cached sweep 1, 0 = none */
    int gradient_only;      /* 1: the cache skips the output layer and last hidden values */
    int no_fused;           /* 1: never take the fused path (tests compare both) */
    int isa;                /* instruction-set version of the kernel tables, fixed when the work is made */
    imp_mlp net;            /* the network the work was made for (its kernels are chosen from it) */
    /* kernel tables (imp_mlp_kernels_choose; NULL: the general path, mlp_pass.inc in double) */
    const struct imp_mlp_kernels *pass_k;  /* forward and backward */
    const struct imp_mlp_kernels *sweep_k; /* sweeps 1 and 2 (V not asked for) */
    const struct imp_mlp_kernels *cache_k; /* the table that made the cached pass (its backward or sweep 2 follows) */
    double *x;              /* (max_batch, sizes[0]) copy of the input */
    double *a[IMP_MLP_MAX_LAYERS];     /* (B, sizes[l+1]) activations */
    double *s[IMP_MLP_MAX_LAYERS];     /* (B, sizes[l+1]) phi'(z_l) */
    double *delta[IMP_MLP_MAX_LAYERS]; /* sweep 1: dV/dz_l */
    double *e[IMP_MLP_MAX_LAYERS];     /* sweep 1: dV/da_l (l < L-1) */
    double *r[IMP_MLP_MAX_LAYERS];     /* sweep 2: adjoint of z_l */
    double *buf[3];                    /* (max_batch, n_max) scratch */
    double *unit;                      /* (max_batch, sizes[0]) seed for Hessians */
    double *fz;                        /* fused paths: (sizes[0], sizes[1]) transposed W0 */
    double *facc;                      /* fused paths: (sizes[0] + 2 + sizes[2], sizes[1]) sums */
    double *slab;                      /* the one allocation behind all of the above */
    /* single-precision path (mlp_single.c), allocated by imp_mlp_work_set_single */
    int single;                        /* 1: forward/backward and the fused sweeps run in float */
    float *fx;                         /* (max_batch, sizes[0]) input */
    float *fa[IMP_MLP_MAX_LAYERS];     /* (B, sizes[l+1]) activations (the output layer's: z) */
    float *fs[IMP_MLP_MAX_LAYERS];     /* (B, sizes[l+1]) phi'(z_l) of hidden layers */
    float *fW[IMP_MLP_MAX_LAYERS];     /* weights, rounded at each forward */
    float *fZ, *fnext;                 /* (max_batch, n_max) backward scratch */
    float *fdW;                        /* weight gradient of one layer */
    float *ffw, *ffacc, *ftr;          /* fused single sweeps: weights, sums, t and r rows */
    struct imp_mlp_work *leader;       /* if set: use its rounded fW (imp_mlp_work_single_follow) */
    float *fslab;
    /* weights rounded once (imp_mlp_work_single_fix): fW stays as rounded
     * then, and small batches take the matrix-vector kernel on the
     * transposed copies fWt[l] (sizes[l] x pad16(sizes[l+1])) and biases fbt[l] */
    int fixed;
    float *fWt[IMP_MLP_MAX_LAYERS], *fbt[IMP_MLP_MAX_LAYERS], *fzrow;
    float *fixslab;
    /* general products in float (imp_mlp_work_set_gemm_single) */
    int gemm_single;
    float *gA, *gB, *gC;               /* operands and result, g_cap floats each (one allocation at gA) */
    size_t g_cap;
};

/* A layer with at most this many inputs or outputs is "thin": its products
 * avoid general GEMM (mlp_pass.inc). */
#define IMP_MLP_THIN 4
/* widest op(B) a thin product copies to contiguous rows (on the stack) */
#define IMP_MLP_THIN_COPY_MAX 1024

/* The kernel family. A table holds the passes of one precision (and, for
 * the fused sweeps and the fused forward/backward, one instruction-set
 * version); a work picks its tables
 * once, when it is made or configured (imp_mlp_work_new, _set_single,
 * _set_fused, _set_reference call imp_mlp_kernels_choose), from the
 * network's shape, the precision asked for and w->isa. mlp.c runs a table's
 * entry where one is set, and its general layer-by-layer path otherwise;
 * that path on its plain reference loops (imp_mlp_work_set_reference) is
 * the reference the tests compare every table with. A cached pass
 * remembers its table (w->cache_k), so a backward or sweep 2 always
 * matches the pass before it. */
typedef struct imp_mlp_kernels {
    const char *name;
    int single; /* 1: float inside */
    int isa;    /* the version compiled in; -1: its kernels follow imp_act_isa() (the float pass) */
    /* sweep 1 (g = dV/dx, V not computed; fills the cache) and sweep 2 */
    void (*sweep1)(const imp_mlp *m, const double *params, int B, double *g, int ldg, imp_mlp_work *w);
    void (*sweep2)(const imp_mlp *m, const double *params, const double *gbar, int ldgbar, int B,
                   double *dparams, double *dx, int ldx, imp_mlp_work *w);
    /* forward from w->x (fills the cache, a[L-1] and s[L-1] in double) and backward */
    void (*forward)(const imp_mlp *m, const double *params, int B, imp_mlp_work *w);
    void (*backward)(const imp_mlp *m, const double *params, const double *dy, int lddy, int B,
                     double *dparams, double *dx, int lddx, imp_mlp_work *w);
} imp_mlp_kernels;

void imp_mlp_kernels_choose(imp_mlp_work *w);
/* the tables (mlp_fused.c, mlp_single.c): the fused ones per instruction-set version */
const imp_mlp_kernels *imp_mlp_fused_sweeps(int single, int isa);
const imp_mlp_kernels *imp_mlp_fused_pass(int isa);
extern const imp_mlp_kernels imp_mlp_single_pass;
/* Round the float fused sweeps' weights of params into w->ffw once
 * (imp_mlp_work_single_fix, when imp_mlp_fused_ok and w->ffw): the sweeps
 * of a work with fixed weights use them instead of rounding per call. */
void imp_mlp_fused_single_fix(imp_mlp_work *w, const double *params);
/* z (np) = Wt^T x + b for one row x (n_in) of a fixed float layer: Wt is
 * the transposed weights (n_in x np, np a multiple of 16, zero padded), b
 * the padded bias; the kernel family's matrix-vector product
 * (mlp_fused_kernels.inc) in the version isa (mlp_fused.c). */
void imp_mlp_matvec_row_f(int isa, int n_in, int np, const float *x, const float *Wt, const float *b, float *z);
/* where they apply: one hidden layer, a few inputs, and a scalar identity
 * output (sweeps: the CD-Lagrange and VIN potentials) or a few outputs
 * (forward/backward: the ResNet baselines) */
int imp_mlp_fused_ok(const imp_mlp *m);
int imp_mlp_fused_vec_ok(const imp_mlp *m);
/* what made the cached pass: fused sweeps, float */
static inline int imp_mlp_cache_fused(const imp_mlp_work *w) { return w->cache_k && w->cache_k->sweep2; }
static inline int imp_mlp_cache_single(const imp_mlp_work *w) { return w->cache_k && w->cache_k->single; }
/* Take the fused path where it applies (on != 0, the default) or never. */
void imp_mlp_work_set_fused(imp_mlp_work *w, int on);

/* Route the matrix products of every pass on w through the reference loops
 * (on != 0) or through cblas_dgemm (on == 0, the default). */
void imp_mlp_work_set_reference(imp_mlp_work *w, int on);

#endif
