file(REMOVE_RECURSE
  "CMakeFiles/bench_impact.dir/bench/bench_impact.c.o"
  "CMakeFiles/bench_impact.dir/bench/bench_impact.c.o.d"
  "bench_impact"
  "bench_impact.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_impact.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
