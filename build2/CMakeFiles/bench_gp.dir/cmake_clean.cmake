file(REMOVE_RECURSE
  "CMakeFiles/bench_gp.dir/bench/bench_gp.c.o"
  "CMakeFiles/bench_gp.dir/bench/bench_gp.c.o.d"
  "bench_gp"
  "bench_gp.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_gp.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
