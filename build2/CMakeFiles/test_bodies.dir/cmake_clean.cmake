file(REMOVE_RECURSE
  "CMakeFiles/test_bodies.dir/tests/test_bodies.c.o"
  "CMakeFiles/test_bodies.dir/tests/test_bodies.c.o.d"
  "test_bodies"
  "test_bodies.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_bodies.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
