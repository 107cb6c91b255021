file(REMOVE_RECURSE
  "CMakeFiles/bench_cdl.dir/bench/bench_cdl.c.o"
  "CMakeFiles/bench_cdl.dir/bench/bench_cdl.c.o.d"
  "bench_cdl"
  "bench_cdl.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_cdl.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
