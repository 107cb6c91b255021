file(REMOVE_RECURSE
  "CMakeFiles/bench_chnn.dir/bench/bench_chnn.c.o"
  "CMakeFiles/bench_chnn.dir/bench/bench_chnn.c.o.d"
  "bench_chnn"
  "bench_chnn.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_chnn.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
