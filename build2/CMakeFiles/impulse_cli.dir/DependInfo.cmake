
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-learn/cli/chnn.c" "CMakeFiles/impulse_cli.dir/cli/chnn.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/chnn.c.o.d"
  "/work/wt-learn/cli/chnn_reproduce.c" "CMakeFiles/impulse_cli.dir/cli/chnn_reproduce.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/chnn_reproduce.c.o.d"
  "/work/wt-learn/cli/chnn_simulate.c" "CMakeFiles/impulse_cli.dir/cli/chnn_simulate.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/chnn_simulate.c.o.d"
  "/work/wt-learn/cli/common.c" "CMakeFiles/impulse_cli.dir/cli/common.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/common.c.o.d"
  "/work/wt-learn/cli/eval.c" "CMakeFiles/impulse_cli.dir/cli/eval.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/eval.c.o.d"
  "/work/wt-learn/cli/impact.c" "CMakeFiles/impulse_cli.dir/cli/impact.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/impact.c.o.d"
  "/work/wt-learn/cli/impact_gp.c" "CMakeFiles/impulse_cli.dir/cli/impact_gp.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/impact_gp.c.o.d"
  "/work/wt-learn/cli/info.c" "CMakeFiles/impulse_cli.dir/cli/info.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/info.c.o.d"
  "/work/wt-learn/cli/main.c" "CMakeFiles/impulse_cli.dir/cli/main.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/main.c.o.d"
  "/work/wt-learn/cli/reproduce.c" "CMakeFiles/impulse_cli.dir/cli/reproduce.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/reproduce.c.o.d"
  "/work/wt-learn/cli/reproduce_cdl.c" "CMakeFiles/impulse_cli.dir/cli/reproduce_cdl.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/reproduce_cdl.c.o.d"
  "/work/wt-learn/cli/rollout.c" "CMakeFiles/impulse_cli.dir/cli/rollout.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/rollout.c.o.d"
  "/work/wt-learn/cli/simulate.c" "CMakeFiles/impulse_cli.dir/cli/simulate.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/simulate.c.o.d"
  "/work/wt-learn/cli/sweep.c" "CMakeFiles/impulse_cli.dir/cli/sweep.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/sweep.c.o.d"
  "/work/wt-learn/cli/train.c" "CMakeFiles/impulse_cli.dir/cli/train.c.o" "gcc" "CMakeFiles/impulse_cli.dir/cli/train.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-learn/build2/CMakeFiles/impulse_static.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
