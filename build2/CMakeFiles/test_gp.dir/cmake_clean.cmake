file(REMOVE_RECURSE
  "CMakeFiles/test_gp.dir/tests/test_gp.c.o"
  "CMakeFiles/test_gp.dir/tests/test_gp.c.o.d"
  "test_gp"
  "test_gp.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_gp.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
