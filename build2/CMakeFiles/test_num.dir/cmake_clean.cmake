file(REMOVE_RECURSE
  "CMakeFiles/test_num.dir/tests/test_num.c.o"
  "CMakeFiles/test_num.dir/tests/test_num.c.o.d"
  "test_num"
  "test_num.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_num.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
