#include "cli.h"

#include <string.h>

int cli_reproduce(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: impulse reproduce cdl|chnn|impact|your-data|cube|contact [--quick] [options]\n"
                   "  cdl     Hochlehnert et al. 2021: pendulum, bouncing ball, Newton's cradle\n"
                   "  chnn    Finzi et al. 2020: CHNN/CLNN against HNN, DeLaN, Neural ODE\n"
                   "  impact  Fazeli et al. 2017: Tables 1-2, error densities, learning curves\n"
                   "  your-data  CD-Lagrange on compliant-contact data with a touch sensor (docs/your-data.md)\n"
                   "  cube    real cube tosses (ContactNets data): end-to-end, MuJoCo fitted (docs/cube.md)\n"
                   "  contact contact where it happens: ball in a box, several bodies, constrained systems,\n"
                   "          box tosses (docs/contact.md)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "cdl")) return cli_reproduce_cdl(argc - 1, argv + 1);
    if (!strcmp(argv[1], "chnn")) return cli_reproduce_chnn(argc - 1, argv + 1);
    if (!strcmp(argv[1], "impact")) return cli_reproduce_impact(argc - 1, argv + 1);
    if (!strcmp(argv[1], "your-data")) return cli_reproduce_your_data(argc - 1, argv + 1);
    if (!strcmp(argv[1], "cube")) return cli_reproduce_cube(argc - 1, argv + 1);
    if (!strcmp(argv[1], "contact")) return cli_reproduce_contact(argc - 1, argv + 1);
    return cli_failf("reproduce", "unknown experiment '%s' (cdl, chnn, impact, your-data, cube or contact)", argv[1]);
}
