/* impulse train MODEL --data data.npz ... -o model.npz */
#include "cli.h"
#include "impulse/cdl.h"
#include "impulse/io.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: impulse train MODEL --data data.npz [options] -o model.npz\n"
            "  MODEL: cdl | vin | resnet | resnet-contact   (CD-Lagrange strand)\n"
            "         chnn | clnn | hnn | delan | node      (constrained strand; see their --help)\n"
            "  --data FILE          trajectories from impulse simulate (or your own, same layout)\n"
            "  --settings S         code (reference code: lr 1e-2, softplus, l2 5e-3; default)\n"
            "                       or paper (lr 1e-3, tanh, l2 0.05)\n"
            "  --epochs E           passes over all windows (default 2000)\n"
            "  --horizon H          window length (default 10)\n"
            "  --batch B            windows per mini-batch (default 32)\n"
            "  --lr X  --l2 X       learning rate, L2 weight on the potential's kernels\n"
            "  --activation A       tanh | softplus | relu\n"
            "  --hidden N --layers L  width and hidden layers of the potential / ResNet (500, 1)\n"
            "  --touch | --no-touch contact labels observed in training (default --touch)\n"
            "  --projection         closest-point projection at impacts (cdl)\n"
            "  --damping            learn a diagonal damping (cdl, vin)\n"
            "  --learn-mass         learn the diagonal mass matrix (cdl, vin)\n"
            "  --seed K             initialisation and shuffling seed (default 0)\n"
            "  --contact-precision P  single (default) or double: precision of the contact\n"
            "                       network in training (evaluation is double)\n"
            "  --potential-precision P  single (default) or double: precision of the potential's\n"
            "                       force and its gradient in training (cdl, vin; evaluation is double)\n"
            "  --threads N          threads per mini-batch (default 1): each takes a contiguous\n"
            "                       slice of the windows; the same N and seed give bit-identical\n"
            "                       results, another N agrees to rounding\n"
            "  --quiet              no progress lines\n"
            "  -o, --output FILE    checkpoint .npz (written atomically)\n");
}

static void progress(void *user, int epoch, const imp_loss_parts *lp)
{
    const int *total = user;
    fprintf(stderr, "  epoch %5d/%d  loss %.5g (state %.5g, contact %.5g, l2 %.5g)\n", epoch, *total, lp->total,
            lp->state, lp->contact, lp->l2);
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
    const char *data_path = NULL, *out = NULL;
    int quiet = 0;
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
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    optind = 2;
    opterr = 0;
    int c;
    long lv;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int st = IMP_OK;
        switch (c) {
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
        case 't': cfg.touch = 1; break;
        case 'T': cfg.touch = 0; break;
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
        case 'h': usage(stdout); return 0;
        default: return cli_failf("train", "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
        if (st) return cli_fail("train");
    }
    if (optind < argc) return cli_failf("train", "unexpected argument '%s'", argv[optind]);
    if (!data_path) return cli_failf("train", "missing --data FILE");
    if (!out) return cli_failf("train", "missing -o FILE");
    if (cfg.kind == IMP_MODEL_RESNET_CONTACT && !cfg.touch)
        return cli_failf("train", "resnet-contact is fed the contact signal: it needs --touch");
    imp_trajset data;
    if (imp_trajset_load(&data, data_path)) return cli_fail("train");
    imp_model *m = NULL;
    int st = imp_model_create(&m, &cfg, &data.geom, data.dt, to.seed);
    if (!st) {
        if (!quiet && cli_progress_enabled()) {
            to.progress = to.epochs >= 10 ? to.epochs / 10 : 1;
            to.on_progress = progress;
            to.user = &to.epochs;
        }
        double t0 = imp_time_now();
        imp_loss_parts lp = {0};
        st = imp_model_train(m, &data, &to, &lp);
        if (!st) {
            imp_json extra;
            imp_json_init(&extra);
            imp_json_begin_object(&extra);
            imp_json_kv_string(&extra, "data", data_path);
            imp_json_kv_int(&extra, "epochs", to.epochs);
            imp_json_kv_int(&extra, "horizon", to.horizon);
            imp_json_kv_int(&extra, "batch", to.batch);
            imp_json_kv_number(&extra, "lr", to.lr);
            imp_json_kv_number(&extra, "l2", to.l2);
            imp_json_kv_int(&extra, "seed", (long long)to.seed);
            imp_json_kv_string(&extra, "contact_precision", to.single_contact ? "single" : "double");
            imp_json_kv_string(&extra, "potential_precision", to.single_potential ? "single" : "double");
            imp_json_kv_number(&extra, "final_loss", lp.total);
            imp_json_kv_number(&extra, "seconds", imp_time_now() - t0);
            imp_json_end_object(&extra);
            st = imp_model_save(m, out, imp_json_text(&extra));
            imp_json_free(&extra);
            if (!st && !quiet)
                fprintf(stderr, "impulse train: %s on %s, %d epochs in %.1f s, final loss %.5g -> %s\n",
                        model_name, data.system, to.epochs, imp_time_now() - t0, lp.total, out);
        }
    }
    imp_model_free(m);
    imp_trajset_free(&data);
    return st ? cli_fail("train") : 0;
}
