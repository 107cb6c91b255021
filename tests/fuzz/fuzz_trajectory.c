/* libFuzzer harness for the trajectory and data-set readers: contact
 * trajectories (imp_trajset_load), constrained trajectories
 * (imp_ctraj_load_cartesian), impact sets (imp_impact_load_npz) and drop
 * files (imp_drop_load_impact_set), rigid-body trajectory files and the raw
 * ContactNets cube file (imp_rigid_traj_load, imp_rigid_traj_load_any), and
 * contact trajectories with disk geometry (contact_kinds, radii: disks.npz).
 * Structured inputs as in
 * fuzz_checkpoint.c. Seeds: tests/fuzz/corpus/trajectory. See scripts/fuzz.sh. */
#include "fuzz_util.h"
#include "impulse/chnn_models.h"
#include "impulse/contact_systems.h"
#include "impulse/drop.h"
#include "impulse/impact.h"
#include "impulse/rigid_traj.h"

/* Appended only: a seed's first byte picks its template (tests/fuzz/corpus/trajectory). */
static const char *const templates[] = {"ball.npz",  "chain.npz",    "impact_set.npz", "drops.npz",
                                        "rigid.npz", "cube_raw.npz", "disks.npz"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch(".npz");
    if (fuzz_build_npz(templates, (int)(sizeof templates / sizeof templates[0]), data, size, path)) return 0;
    imp_trajset ts;
    if (imp_trajset_load(&ts, path) == IMP_OK) imp_trajset_free(&ts);
    imp_ctraj ct;
    char sys[64];
    if (imp_ctraj_load_cartesian(path, &ct, sys) == IMP_OK) imp_ctraj_free(&ct);
    imp_impact_set s;
    if (imp_impact_load_npz(&s, path) == IMP_OK) imp_impact_set_free(&s);
    if (imp_drop_load_impact_set(&s, path) == IMP_OK) imp_impact_set_free(&s);
    imp_rigid_traj rt;
    if (imp_rigid_traj_load(&rt, path) == IMP_OK) imp_rigid_traj_free(&rt);
    int nominal = 0;
    if (imp_rigid_traj_load_any(&rt, path, &nominal) == IMP_OK) imp_rigid_traj_free(&rt);
    return 0;
}
