/* impulse train MODEL --data data.npz ... -o model.npz */
#include "cli.h"
#include "impulse/cdl.h"
#include "impulse/io.h"
#include "impulse/contact_systems.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse train MODEL --data data.npz [options] -o model.npz\n"
            "  MODEL: cdl | vin | resnet | resnet-contact   (CD-Lagrange strand)\n"
            "         chnn | clnn | hnn | delan | node      (constrained strand; see their --help)\n"
            "         resnet on a constrained system's data is the constrained strand's ResNet\n"
            "  --data FILE          trajectories from impulse simulate (or your own, same layout)\n"
            "  --settings S         code (reference code: lr 1e-2, softplus, l2 5e-3; default)\n"
            "                       or paper (lr 1e-3, tanh, l2 0.05)\n"
            "  --epochs E           passes over all windows (default 2000; 0 checks the data and options and\n"
            "                       writes nothing)\n"
            "  --horizon H          window length (default 10)\n"
            "  --batch B            windows per mini-batch (default 32)\n"
            "  --lr X  --l2 X       learning rate, L2 weight on the potential's kernels\n"
            "  --lr-schedule S      auto (default): constant for impulse's event-driven simulators\n"
            "                       (meta labels \"impact\"), cosine for other data; constant (the\n"
            "                       reference code's) or cosine (lr (1 + cos(pi (e-1)/E))/2 in epoch\n"
            "                       e of E: annealed to 0, lets a fit to noisy data settle)\n"
            "  --activation A       tanh | softplus | relu\n"
            "  --hidden N --layers L  width and hidden layers of the potential / ResNet (500, 1)\n"
            "  --touch | --no-touch contact labels observed in training (default --touch; data\n"
            "                       without labels train with --no-touch, saying so)\n"
            "  --contact-labels M   auto (default) | as-given | onset: onset keeps one label per\n"
            "                       impact, at the first sample of its contact interval, leaves\n"
            "                       the impact's samples where the bodies still touch out of\n"
            "                       the loss, and keeps resting contact; auto is as-given for\n"
            "                       impulse's event-driven simulators (meta labels \"impact\") and\n"
            "                       handled files (\"onset\", \"as-given\"), onset otherwise;\n"
            "                       geometry: no labels needed (any given are set aside): a body is\n"
            "                       labelled where the motion shows an impact within 3 x noise of\n"
            "                       one of its contact pairs (approaching, then the normal velocity\n"
            "                       jumps) or a rest on it, then handled as onset (cdl, resnet-contact)\n"
            "  --projection         closest-point projection at impacts (cdl)\n"
            "  --damping            learn a diagonal damping (cdl, vin)\n"
            "  --learn-mass         learn the diagonal mass matrix (cdl, vin)\n"
            "  --restitution M      learn (default for cdl): e per contact pair learned with the\n"
            "                       networks, kept in (0, 1) by a sigmoid; fixed: the data's\n"
            "                       meta restitution, as in the paper\n"
            "  --restitution-init X starting value of a learned e: meta (the data's, the default\n"
            "                       when it has one), data (estimated from the velocities around\n"
            "                       labelled contacts, the default otherwise) or a number in (0, 1)\n"
            "  --friction           Coulomb friction at contact pairs with a tangent\n"
            "                       (contact_tangents), through the AP-Newton impact law, mu\n"
            "                       learned per pair (cdl)\n"
            "  --friction-init X    starting mu: data (estimated from the impulses around\n"
            "                       labelled contacts; the default) or a positive number\n"
            "  --impact-law L       auto (default): paper for impulse's event-driven simulators\n"
            "                       (meta labels \"impact\"), newton for other data; paper ([A]\n"
            "                       eq 49: the impulse also cancels the force over the impact\n"
            "                       step; a learned e comes out lower than the instantaneous one\n"
            "                       by ~ g h / |u|) or newton (Newton's law on the half-step\n"
            "                       velocity, force kept, or rest) (cdl)\n"
            "  --impact-timing T    step (default: the impulse at the sample step, as the paper)\n"
            "                       or event: each impact at its time inside the step (from the\n"
            "                       gap along the free flight), Newton's law there, the rest of\n"
            "                       the step flown with the post-impact velocity; e is then the\n"
            "                       instantaneous coefficient (no g h / |u| bias); replaces\n"
            "                       --impact-law; not with --projection (cdl)\n"
            "  --contact-tol X      cdl: how far above a contact pair (gap units) a gated step's drifted\n"
            "                       position may be for that pair to take the impulse (events per pair:\n"
            "                       the label or contact network says when, the gap and the closing\n"
            "                       velocity say which of a body's pairs); default 3 x the data's noise\n"
            "                       (meta \"noise\"; 0 when unknown)\n"
            "  --geometry-gates     cdl without labels: each step's impulses go to the closing contact\n"
            "                       pairs the step penetrates (geometry alone; implies --no-touch,\n"
            "                       the contact network is not used)\n"
            "  --law-refit          cdl: after the last epoch, each contact pair's mu searched on the\n"
            "                       training loss with everything else fixed (a grid, then golden\n"
            "                       section) and kept where it lowers the loss: brings back a mu that\n"
            "                       ran into the sticking region, where the loss is flat in mu;\n"
            "                       only a mu on that plateau (its gradient exactly 0: every impact\n"
            "                       of the pair sticks) is searched, others keep training's value;\n"
            "                       --law-refit-all: every pair's (the refit's first version);\n"
            "                       --law-refit-e: e too, after mu; pairs active in fewer than\n"
            "                       --law-refit-min-steps N steps (5) are left alone;\n"
            "                       --law-refit-grid N (16) points, mu up to --law-refit-mu-max X (2);\n"
            "                       --json reports every pair's change\n"
            "  --law-identify       cdl: after the last epoch, every contact pair's e and mu read\n"
            "                       from its impacts with the networks fixed: the same search on\n"
            "                       one-step windows from the data's states (no drift of the\n"
            "                       learned flight into them), each window's RMS error summed (a\n"
            "                       step the model cannot represent, as two impacts at once, does\n"
            "                       not pull a law); kept where that loss falls; takes the\n"
            "                       --law-refit-grid, -mu-max and -min-steps settings\n"
            "  --seed K             initialisation and shuffling seed (default 0)\n"
            "  --contact-precision P  single (default) or double: precision of the contact\n"
            "                       network in training (evaluation is double)\n"
            "  --potential-precision P  single (default) or double: precision of the potential's\n"
            "                       force and its gradient in training (cdl, vin; evaluation is double)\n"
            "  --threads N          threads per mini-batch (default 1): each takes a contiguous\n"
            "                       slice of the windows; the same N and seed give bit-identical\n"
            "                       results, another N agrees to rounding\n"
            "  --quiet              no progress lines\n"
            "  -o, --output FILE    checkpoint .npz (written atomically)\n"
            CLI_RUN_USAGE);
}

/* "law_refit" of --json: the training loss before and after, and each
 * contact pair's steps, windows, whether it was searched, whether its mu
 * was on the plateau and the loss's gradients in mu and e (null where not
 * looked at), and its e and mu before and after (null where the pair has
 * no learned mu). */
static void refit_json(imp_json *j, const imp_law_refit_report *r, const imp_train_opts *o)
{
    imp_json_key(j, "law_refit");
    imp_json_begin_object(j);
    imp_json_kv_number(j, "loss_before", r->loss_before);
    imp_json_kv_number(j, "loss_after", r->loss_after);
    imp_json_kv_number(j, "seconds", r->seconds);
    imp_json_kv_string(j, "mode", imp_law_refit_mode_name(&o->refit));
    imp_json_kv_int(j, "horizon", o->refit.horizon > 0 ? o->refit.horizon : o->horizon);
    imp_json_key(j, "robust");
    imp_json_bool(j, o->refit.robust);
    imp_json_key(j, "pairs");
    imp_json_begin_array(j);
    for (int p = 0; p < r->n_pairs; p++) {
        const imp_law_refit_pair *q = &r->pairs[p];
        imp_json_begin_object(j);
        imp_json_kv_int(j, "pair", p);
        imp_json_kv_int(j, "steps", q->steps);
        imp_json_kv_int(j, "windows", q->windows);
        imp_json_key(j, "searched");
        imp_json_bool(j, q->searched);
        imp_json_key(j, "plateau");
        if (q->plateau < 0) imp_json_null(j);
        else imp_json_bool(j, q->plateau);
        /* NAN (not looked at, no learned mu) is written as null */
        imp_json_kv_number(j, "mu_grad", q->mu_grad);
        imp_json_kv_number(j, "e_grad", q->e_grad);
        imp_json_kv_number(j, "e_before", q->e_before);
        imp_json_kv_number(j, "e_after", q->e_after);
        imp_json_kv_number(j, "mu_before", q->mu_before);
        imp_json_kv_number(j, "mu_after", q->mu_after);
        imp_json_end_object(j);
    }
    imp_json_end_array(j);
    imp_json_end_object(j);
}

typedef struct save_ctx {
    const imp_model *m;
    const char *extra;
} save_ctx;

static int save_model(const char *path, void *ctx)
{
    save_ctx *c = ctx;
    return imp_model_save(c->m, path, c->extra);
}

/* Starting values of the learned contact law (--restitution-init data |
 * meta | E, --friction-init data | MU; NULL: the default), set by the
 * library; prints them unless quiet. */
static int init_contact_law(imp_model *m, const imp_trajset *data, const char *e_init, const char *mu_init, int quiet)
{
    imp_law_init e_from = IMP_LAW_INIT_DEFAULT, mu_from = IMP_LAW_INIT_DATA;
    double e_value = NAN, mu_value = NAN;
    int st = IMP_OK;
    if (e_init && !strcmp(e_init, "meta")) e_from = IMP_LAW_INIT_META;
    else if (e_init && !strcmp(e_init, "data")) e_from = IMP_LAW_INIT_DATA;
    else if (e_init) {
        e_from = IMP_LAW_INIT_VALUE;
        st = cli_parse_double("--restitution-init", e_init, 1e-3, 1 - 1e-3, &e_value);
    }
    if (!st && strcmp(mu_init, "data")) {
        mu_from = IMP_LAW_INIT_VALUE;
        st = cli_parse_double("--friction-init", mu_init, 1e-4, 10, &mu_value);
    }
    imp_contact_law_start s;
    if (!st) st = imp_model_init_contact_law(m, data, e_from, e_value, mu_from, mu_value, &s);
    if (st || quiet || (!m->cfg.learn_restitution && !m->cfg.friction)) return st;
    static const char *const source[] = {"default", "data estimate", "the data's meta", "given"};
    for (int p = 0; p < m->geom.n_pairs; p++) {
        fprintf(stderr, "impulse train: contact pair %d:", p);
        if (m->cfg.learn_restitution) fprintf(stderr, " restitution starts at %.4g (%s)", s.e[p], source[s.e_from]);
        if (m->cfg.friction && imp_contact_pair_has_tangent(&m->geom, p))
            fprintf(stderr, " friction starts at %.4g (%s)", s.mu[p], source[s.mu_from]);
        fprintf(stderr, "; %d labelled impacts in the data\n", s.n_events[p]);
    }
    return IMP_OK;
}

int cli_train(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *model_name = argv[1];
    int r = cli_train_chnn(argc, argv, model_name);
    if (r != CLI_NOT_MINE) return r;
    imp_cdl_config cfg;
    if (imp_model_kind_from_name(model_name, &cfg.kind)) return cli_fail("train");
    imp_cdl_config_default(&cfg, cfg.kind);
    /* first pass: --settings decides the defaults the other options override */
    int code = 1;
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--settings")) {
            if (!strcmp(argv[i + 1], "paper")) code = 0;
            else if (strcmp(argv[i + 1], "code")) return cli_failf("train", "--settings: '%s' is not paper or code", argv[i + 1]);
        }
    imp_train_opts to;
    imp_train_opts_default(&to, code);
    to.epochs = 2000;
    cfg.act = code ? IMP_ACT_SOFTPLUS : IMP_ACT_TANH;
    const char *data_path = NULL, *out = NULL, *labels = "auto", *e_init = NULL, *mu_init = "data";
    int quiet = 0, json = 0, touch_given = 0, e_mode = -1, law_given = 0; /* e_mode -1: default (learn for cdl) */
    int schedule = IMP_LR_AUTO;
    const char *refit_sub = NULL; /* a --law-refit-* setting given */
    int identify = 0;             /* --law-identify */
    imp_law_refit_report refit_rep = {0};
    to.refit_report = &refit_rep;
    static const struct option opts[] = {
        {"data", required_argument, 0, 'D'},    {"settings", required_argument, 0, 'S'},
        {"epochs", required_argument, 0, 'E'},  {"horizon", required_argument, 0, 'H'},
        {"batch", required_argument, 0, 'B'},   {"lr", required_argument, 0, 'l'},
        {"l2", required_argument, 0, 'L'},      {"activation", required_argument, 0, 'a'},
        {"hidden", required_argument, 0, 'n'},  {"layers", required_argument, 0, 'y'},
        {"touch", no_argument, 0, 't'},         {"no-touch", no_argument, 0, 'T'},
        {"projection", no_argument, 0, 'p'},    {"damping", no_argument, 0, 'c'},
        {"learn-mass", no_argument, 0, 'm'},    {"seed", required_argument, 0, 'k'},
        {"quiet", no_argument, 0, 'q'},         {"output", required_argument, 0, 'o'},
        {"contact-precision", required_argument, 0, 'P'},
        {"potential-precision", required_argument, 0, 'Q'},
        {"threads", required_argument, 0, 'j'},
        {"contact-labels", required_argument, 0, 'C'},
        {"restitution", required_argument, 0, 'r'}, {"restitution-init", required_argument, 0, 'R'},
        {"friction", no_argument, 0, 'f'},      {"friction-init", required_argument, 0, 'F'},
        {"log", required_argument, 0, 1},       {"resume", required_argument, 0, 1},
        {"checkpoint-every", required_argument, 0, 1}, {"checkpoint-seconds", required_argument, 0, 1},
        {"diverge-factor", required_argument, 0, 1}, {"keep", required_argument, 0, 1},
        {"impact-law", required_argument, 0, 'I'},  {"json", no_argument, 0, 'J'},
        {"lr-schedule", required_argument, 0, 's'}, {"contact-tol", required_argument, 0, 'G'},
        {"geometry-gates", no_argument, 0, 'g'}, {"impact-timing", required_argument, 0, 'i'},
        {"law-refit", no_argument, 0, 2},       {"law-refit-grid", required_argument, 0, 3},
        {"law-refit-mu-max", required_argument, 0, 4}, {"law-refit-min-steps", required_argument, 0, 5},
        {"law-refit-e", no_argument, 0, 6},     {"law-refit-all", no_argument, 0, 7},
        {"law-identify", no_argument, 0, 8},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    cli_run_opts ro;
    cli_run_opts_default(&ro);
    int li = 0;
    optind = 2;
    opterr = 0;
    int c;
    long lv;
    while ((c = getopt_long(argc, argv, "o:h", opts, &li)) != -1) {
        int st = IMP_OK;
        switch (c) {
        case 1: {
            char name[64];
            snprintf(name, sizeof name, "--%s", opts[li].name);
            if (cli_run_option(&ro, "train", name, optarg) < 0) return 1;
            break;
        }
        case 2: to.law_refit = 1; break;
        case 3: st = cli_parse_long("--law-refit-grid", optarg, -1000000000, 1000000000, &lv), to.refit.grid = (int)lv, refit_sub = "--law-refit-grid"; break;
        case 4: st = cli_parse_double("--law-refit-mu-max", optarg, -1e300, 1e300, &to.refit.mu_max), refit_sub = "--law-refit-mu-max"; break;
        case 5: st = cli_parse_long("--law-refit-min-steps", optarg, -1000000000, 1000000000, &lv), to.refit.min_steps = (int)lv, refit_sub = "--law-refit-min-steps"; break;
        case 6: to.refit.what |= IMP_LAW_REFIT_E, refit_sub = "--law-refit-e"; break;
        case 7: to.refit.all = 1, refit_sub = "--law-refit-all"; break;
        case 8: identify = 1; break;
        case 'D': data_path = optarg; break;
        case 'S': break;
        case 'E': st = cli_parse_long("--epochs", optarg, 0, 10000000, &lv), to.epochs = (int)lv; break;
        case 'H': st = cli_parse_long("--horizon", optarg, 1, 100000, &lv), to.horizon = (int)lv; break;
        case 'B': st = cli_parse_long("--batch", optarg, 1, 1000000, &lv), to.batch = (int)lv; break;
        case 'l': st = cli_parse_double("--lr", optarg, 1e-12, 10, &to.lr); break;
        case 'L': st = cli_parse_double("--l2", optarg, 0, 1e6, &to.l2); break;
        case 'a': st = imp_activation_from_name(optarg, &cfg.act); break;
        case 'n': st = cli_parse_long("--hidden", optarg, 1, 100000, &lv), cfg.hidden = (int)lv; break;
        case 'y': st = cli_parse_long("--layers", optarg, 1, IMP_MLP_MAX_LAYERS - 1, &lv), cfg.hidden_layers = (int)lv; break;
        case 't': cfg.touch = 1, touch_given = 1; break;
        case 'T': cfg.touch = 0, touch_given = 1; break;
        case 'C': labels = optarg; break;
        case 'p': cfg.projection = 1; break;
        case 'c': cfg.learn_damping = 1; break;
        case 'm': cfg.learn_mass = 1; break;
        case 'k': st = cli_parse_long("--seed", optarg, 0, __LONG_MAX__, &lv), to.seed = (unsigned long long)lv; break;
        case 'q': quiet = 1; break;
        case 'j': st = cli_parse_long("--threads", optarg, 1, CLI_MAX_THREADS, &lv), to.threads = (int)lv; break;
        case 'o': out = optarg; break;
        case 'P':
            if (!strcmp(optarg, "single") || !strcmp(optarg, "double")) to.single_contact = !strcmp(optarg, "single");
            else return cli_failf("train", "--contact-precision: '%s' is not single or double", optarg);
            break;
        case 'Q':
            if (!strcmp(optarg, "single") || !strcmp(optarg, "double")) to.single_potential = !strcmp(optarg, "single");
            else return cli_failf("train", "--potential-precision: '%s' is not single or double", optarg);
            break;
        case 'r':
            if (!strcmp(optarg, "learn") || !strcmp(optarg, "fixed")) e_mode = !strcmp(optarg, "learn");
            else return cli_failf("train", "--restitution: '%s' is not learn or fixed", optarg);
            break;
        case 'R': e_init = optarg; break;
        case 'f': cfg.friction = 1; break;
        case 'F': mu_init = optarg; break;
        case 'I':
            if (!strcmp(optarg, "paper") || !strcmp(optarg, "newton"))
                cfg.impact_law = !strcmp(optarg, "newton") ? IMP_CDL_IMPACT_NEWTON : IMP_CDL_IMPACT_PAPER;
            else if (strcmp(optarg, "auto")) return cli_failf("train", "--impact-law: '%s' is not auto, paper or newton", optarg);
            law_given = strcmp(optarg, "auto") != 0;
            break;
        case 'i':
            if (imp_cdl_timing_from_name(optarg, &cfg.impact_timing))
                return cli_failf("train", "--impact-timing: '%s' is not step or event", optarg);
            break;
        case 'J': json = 1; break;
        case 'g': cfg.gate_geometry = 1, cfg.touch = 0, touch_given = 1; break;
        case 'G': st = cli_parse_double("--contact-tol", optarg, 0, 1e12, &cfg.contact_tol); break;
        case 's':
            if (imp_lr_schedule_from_name(optarg, &schedule))
                return cli_failf("train", "--lr-schedule: '%s' is not constant, cosine or auto", optarg);
            break;
        case 'h': usage(stdout); return 0;
        default: return cli_failf("train", "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail("train");
    }
    if (optind < argc) return cli_failf("train", "unexpected argument '%s'", argv[optind]);
    if (!data_path) return cli_failf("train", "missing --data FILE");
    if (!out) return cli_failf("train", "missing -o FILE");
    if (cli_json_check_output("train", json, out)) return 1;
    if (cfg.kind == IMP_MODEL_RESNET_CONTACT && !cfg.touch)
        return cli_failf("train", "resnet-contact is fed the contact signal: it needs --touch");
    if (cfg.kind != IMP_MODEL_CDL && (e_mode == 1 || e_init || cfg.friction || law_given || cfg.impact_timing))
        return cli_failf("train", "--restitution learn, --restitution-init, --friction, --impact-law and --impact-timing "
                                  "apply to cdl only");
    if (identify && to.law_refit)
        return cli_failf("train", "--law-refit and --law-identify: give one (the identification searches every pair)");
    if (identify && (to.refit.all || (to.refit.what & IMP_LAW_REFIT_E)))
        return cli_failf("train", "--law-refit-all, --law-refit-e: --law-identify searches every pair's e and mu "
                                  "already");
    if (refit_sub && !to.law_refit && !identify)
        return cli_failf("train", "%s: applies to --law-refit%s", refit_sub,
                         to.refit.all || (to.refit.what & IMP_LAW_REFIT_E) ? " (not given)"
                                                                           : " or --law-identify (neither given)");
    if (identify) { /* grid, mu_max and min_steps as given */
        imp_law_refit_opts_identify(&to.refit);
        to.law_refit = 1;
    }
    if (to.law_refit && cfg.kind != IMP_MODEL_CDL)
        return cli_failf("train", "%s applies to cdl only (it refits the learned e and mu per contact pair)",
                         identify ? "--law-identify" : "--law-refit");
    if (cfg.impact_timing == IMP_CDL_TIMING_EVENT && law_given)
        return cli_failf("train", "--impact-law applies to --impact-timing step (event applies Newton's law at the contact time)");
    cfg.learn_restitution = cfg.kind == IMP_MODEL_CDL && e_mode != 0;
    if (!cfg.learn_restitution && e_init) return cli_failf("train", "--restitution-init: e is fixed (--restitution fixed)");
    imp_label_mode lm;
    if (imp_label_mode_from_name(labels, &lm)) return cli_fail("train");
    imp_trajset data;
    if (imp_trajset_load(&data, data_path)) return cli_fail("train");
    cli_note_widened("train", data_path, data.widened_f32);
    if (cfg.kind == IMP_MODEL_CDL && !cfg.learn_restitution && isnan(data.geom.restitution)) {
        imp_trajset_free(&data);
        return cli_failf("train", "--restitution fixed: %s has no restitution in its meta (learn it)", data_path);
    }
    if (lm == IMP_LABELS_GEOMETRY && !cfg.touch) {
        imp_trajset_free(&data);
        return cli_failf("train", "--contact-labels geometry: derives the labels to train with; not with --no-touch "
                         "or --geometry-gates");
    }
    if (lm == IMP_LABELS_GEOMETRY) data.has_contact = 1; /* the labels are derived below (cli_handle_labels) */
    if (!data.has_contact && cfg.touch && (touch_given || cfg.kind == IMP_MODEL_RESNET_CONTACT)) {
        imp_trajset_free(&data);
        return cli_failf("train", "%s has no contact labels (array 'contact'): train cdl/vin/resnet with --no-touch, "
                         "or supply labels (impulse import --contact NAME)", data_path);
    }
    if (!data.has_contact && cfg.touch) {
        fprintf(stderr, "impulse train: notice: %s has no contact labels: training without touch feedback "
                "(--no-touch)\n", data_path);
        cfg.touch = 0;
    }
    int law_default = imp_cdl_default_impact_law(&data), lr_default = imp_train_default_lr_schedule(&data);
    char label_note[1024] = "";
    if (cfg.touch && cli_handle_labels("train", &data, labels, quiet, label_note, sizeof label_note)) {
        imp_trajset_free(&data);
        return 1;
    }
    /* the data decide the law unless asked (before the label handling
     * renames touch labels "onset") */
    if (cfg.kind == IMP_MODEL_CDL && !law_given) cfg.impact_law = law_default;
    /* auto resolved by the library's rule, from the data as loaded (as the
     * impact law), so that the checkpoint and the notice name the schedule */
    to.lr_schedule = schedule == IMP_LR_AUTO ? lr_default : schedule;
    if (schedule == IMP_LR_AUTO && to.lr_schedule == IMP_LR_COSINE && !quiet)
        fprintf(stderr, "impulse train: notice: learning rate annealed from %g to 0 over the %d epochs (cosine; "
                "the default for data not made by impulse's event-driven simulators; --lr-schedule constant "
                "keeps it)\n", to.lr, to.epochs);
    imp_model *m = NULL;
    cli_run run;
    if (cli_run_open(&run, "train", out, ro.log, ro.resume, quiet)) {
        imp_trajset_free(&data);
        return 1;
    }
    imp_train_report rep = {0};
    cli_run_hooks(&ro, &run, &to.hooks, &rep, to.epochs);
    int st = imp_model_create(&m, &cfg, &data.geom, data.dt, to.seed), rc = 1;
    if (!st && to.law_refit) st = imp_law_refit_check(m, &data, &to); /* before the notices */
    if (!st) st = init_contact_law(m, &data, e_init, mu_init, quiet);
    if (!st && label_note[0]) fprintf(stderr, "%s\n", label_note);
    if (st) {
        rc = cli_fail("train");
    } else {
        double t0 = imp_time_now();
        imp_loss_parts lp = {0};
        st = imp_model_train(m, &data, &to, &lp);
        imp_json extra;
        imp_json_init(&extra);
        imp_json_begin_object(&extra);
        imp_json_kv_string(&extra, "data", data_path);
        imp_json_kv_int(&extra, "epochs", to.epochs);
        imp_json_kv_int(&extra, "horizon", to.horizon);
        imp_json_kv_int(&extra, "batch", to.batch);
        imp_json_kv_number(&extra, "lr", to.lr);
        /* only when annealed: constant-rate checkpoints stay as they were */
        if (to.lr_schedule != IMP_LR_CONSTANT) imp_json_kv_string(&extra, "lr_schedule", imp_lr_schedule_name(to.lr_schedule));
        imp_json_kv_number(&extra, "l2", to.l2);
        imp_json_kv_int(&extra, "seed", (long long)to.seed);
        imp_json_kv_string(&extra, "contact_precision", to.single_contact ? "single" : "double");
        imp_json_kv_string(&extra, "potential_precision", to.single_potential ? "single" : "double");
        imp_json_kv_string(&extra, "end", imp_train_stop_name(rep.stop));
        imp_json_kv_int(&extra, "epochs_done", rep.epochs_done);
        imp_json_kv_int(&extra, "best_epoch", rep.best_epoch);
        imp_json_kv_number(&extra, "final_loss", rep.final_loss);
        if (cfg.learn_restitution)
            imp_json_kv_string(&extra, "restitution_init", e_init ? e_init : isnan(data.geom.restitution) ? "data" : "meta");
        if (cfg.friction) imp_json_kv_string(&extra, "friction_init", mu_init);
        imp_json_kv_string(&extra, "impact_law", cfg.impact_law ? "newton" : "paper");
        if (cfg.kind == IMP_MODEL_CDL) imp_json_kv_number(&extra, "contact_tol", m->cfg.contact_tol);
        if (to.law_refit) imp_json_kv_int(&extra, identify ? "law_identify" : "law_refit", 1);
        imp_json_end_object(&extra);
        save_ctx sc = {m, imp_json_text(&extra)};
        rc = cli_run_finish(&run, st, &rep, save_model, &sc);
        imp_json_free(&extra);
        if (!rc && json) {
            imp_json j;
            cli_run_json(&j, &run, &rep, model_name, data.system);
            if (cfg.kind == IMP_MODEL_CDL) cli_json_contact_law(&j, m);
            if (to.law_refit && rep.stop == IMP_TRAIN_FINISHED) refit_json(&j, &refit_rep, &to);
            rc = cli_json_print(&j, "train");
        }
        if (!rc && !quiet && !json && run.out)
            fprintf(stderr, "impulse train: %s on %s, %d epochs in %.1f s, final loss %.5g; kept the %s model (epoch "
                    "%d, loss %.5g) -> %s\n", model_name, data.system, to.epochs, imp_time_now() - t0, rep.final_loss,
                    cli_run_kept(&rep), rep.kept_epoch, rep.kept_epoch == rep.best_epoch ? rep.best_loss : rep.final_loss,
                    out);
        if (!rc && !quiet && !json && run.out && (cfg.learn_restitution || cfg.friction)) {
            double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
            imp_model_get_contact_law(m, e, mu);
            for (int p = 0; p < m->geom.n_pairs; p++) {
                fprintf(stderr, "impulse train: contact pair %d: learned", p);
                if (cfg.learn_restitution) fprintf(stderr, " restitution %.4g", e[p]);
                if (cfg.friction && imp_contact_pair_has_tangent(&m->geom, p)) fprintf(stderr, " friction %.4g", mu[p]);
                fprintf(stderr, "\n");
            }
        }
        if (!rc && !quiet && !json && run.out && to.law_refit && rep.stop == IMP_TRAIN_FINISHED) {
            fprintf(stderr, "impulse train: %s in %.1f s: %s %.6g -> %.6g\n",
                    identify ? "law identification" : "law refit", refit_rep.seconds,
                    identify ? "one-step RMS error" : "training loss", refit_rep.loss_before, refit_rep.loss_after);
            for (int p = 0; p < refit_rep.n_pairs; p++) {
                const imp_law_refit_pair *r = &refit_rep.pairs[p];
                if (r->e_after != r->e_before || (r->mu_after != r->mu_before && !isnan(r->mu_before)))
                    fprintf(stderr, "impulse train: %s: contact pair %d: e %.4g -> %.4g, mu %.4g -> %.4g\n",
                            identify ? "law identification" : "law refit", p,
                            r->e_before, r->e_after, r->mu_before, r->mu_after);
            }
        }
    }
    cli_run_close(&run);
    imp_model_free(m);
    imp_trajset_free(&data);
    return rc;
}
