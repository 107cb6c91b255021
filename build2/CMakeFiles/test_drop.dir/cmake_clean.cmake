file(REMOVE_RECURSE
  "CMakeFiles/test_drop.dir/tests/test_drop.c.o"
  "CMakeFiles/test_drop.dir/tests/test_drop.c.o.d"
  "test_drop"
  "test_drop.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_drop.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
