file(REMOVE_RECURSE
  "CMakeFiles/test_integrate.dir/tests/test_integrate.c.o"
  "CMakeFiles/test_integrate.dir/tests/test_integrate.c.o.d"
  "test_integrate"
  "test_integrate.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_integrate.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
