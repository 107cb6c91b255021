file(REMOVE_RECURSE
  "CMakeFiles/test_learned.dir/tests/test_learned.c.o"
  "CMakeFiles/test_learned.dir/tests/test_learned.c.o.d"
  "test_learned"
  "test_learned.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_learned.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
