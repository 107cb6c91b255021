file(REMOVE_RECURSE
  "CMakeFiles/bench_mlp.dir/bench/bench_mlp.c.o"
  "CMakeFiles/bench_mlp.dir/bench/bench_mlp.c.o.d"
  "bench_mlp"
  "bench_mlp.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_mlp.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
