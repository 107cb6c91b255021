#include "cli.h"
#include "impulse/nn.h"

#include <stdlib.h>
#include <string.h>

int cli_info(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: impulse info [--json]\n  Print version, BLAS core and build facts.\n"
                   "  --json: one JSON object (docs/json.md).\n");
            return 0;
        }
        if (strcmp(argv[i], "--json")) return cli_failf("info", "unknown option '%s' (see --help)", argv[i]);
        json = 1;
    }
    const char *env = getenv("OPENBLAS_CORETYPE"), *s = imp_blas_suggested_coretype(), *isa = getenv("IMPULSE_ISA");
#ifdef IMPULSE_HAVE_MPI
    const int mpi = 1;
#else
    const int mpi = 0;
#endif
    if (json) {
        imp_json j;
        cli_json_begin(&j, "info");
        imp_json_kv_string(&j, "version", IMP_VERSION_STRING);
        imp_json_kv_string(&j, "blas_core", imp_blas_corename());
        imp_json_kv_string(&j, "suggested_core", s ? s : "");
        imp_json_kv_string(&j, "network_kernels", imp_nn_isa());
        imp_json_key(&j, "mpi");
        imp_json_bool(&j, mpi);
        return cli_json_print(&j, "info");
    }
    printf("impulse %s\n", IMP_VERSION_STRING);
    printf("blas core: %s (OPENBLAS_CORETYPE=%s)\n", imp_blas_corename(), env ? env : "unset");
    printf("suggested core type: %s\n", s ? s : "none");
    printf("network kernels: %s (IMPULSE_ISA=%s)\n", imp_nn_isa(), isa ? isa : "unset");
    if (mpi) printf("sweep runner: MPI (mpirun -np N impulse sweep run ...)\n");
    else printf("sweep runner: no MPI (built without it; several processes may still share a sweep folder)\n");
    return 0;
}
