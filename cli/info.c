#include "cli.h"
#include "impulse/nn.h"

#include <stdlib.h>
#include <string.h>

int cli_info(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: impulse info\n  Print version, BLAS core and build facts.\n");
        return 0;
    }
    const char *env = getenv("OPENBLAS_CORETYPE");
    printf("impulse %s\n", IMP_VERSION_STRING);
    printf("blas core: %s (OPENBLAS_CORETYPE=%s)\n", imp_blas_corename(), env ? env : "unset");
    const char *s = imp_blas_suggested_coretype();
    printf("suggested core type: %s\n", s ? s : "none");
    const char *isa = getenv("IMPULSE_ISA");
    printf("network kernels: %s (IMPULSE_ISA=%s)\n", imp_nn_isa(), isa ? isa : "unset");
#ifdef IMPULSE_HAVE_MPI
    printf("sweep runner: MPI (mpirun -np N impulse sweep run ...)\n");
#else
    printf("sweep runner: no MPI (built without it; several processes may still share a sweep folder)\n");
#endif
    return 0;
}
