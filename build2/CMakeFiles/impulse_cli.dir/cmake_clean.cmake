file(REMOVE_RECURSE
  "CMakeFiles/impulse_cli.dir/cli/chnn.c.o"
  "CMakeFiles/impulse_cli.dir/cli/chnn.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/chnn_reproduce.c.o"
  "CMakeFiles/impulse_cli.dir/cli/chnn_reproduce.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/chnn_simulate.c.o"
  "CMakeFiles/impulse_cli.dir/cli/chnn_simulate.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/common.c.o"
  "CMakeFiles/impulse_cli.dir/cli/common.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/eval.c.o"
  "CMakeFiles/impulse_cli.dir/cli/eval.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/impact.c.o"
  "CMakeFiles/impulse_cli.dir/cli/impact.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/impact_gp.c.o"
  "CMakeFiles/impulse_cli.dir/cli/impact_gp.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/info.c.o"
  "CMakeFiles/impulse_cli.dir/cli/info.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/main.c.o"
  "CMakeFiles/impulse_cli.dir/cli/main.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/reproduce.c.o"
  "CMakeFiles/impulse_cli.dir/cli/reproduce.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/reproduce_cdl.c.o"
  "CMakeFiles/impulse_cli.dir/cli/reproduce_cdl.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/rollout.c.o"
  "CMakeFiles/impulse_cli.dir/cli/rollout.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/simulate.c.o"
  "CMakeFiles/impulse_cli.dir/cli/simulate.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/sweep.c.o"
  "CMakeFiles/impulse_cli.dir/cli/sweep.c.o.d"
  "CMakeFiles/impulse_cli.dir/cli/train.c.o"
  "CMakeFiles/impulse_cli.dir/cli/train.c.o.d"
  "impulse"
  "impulse.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/impulse_cli.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
