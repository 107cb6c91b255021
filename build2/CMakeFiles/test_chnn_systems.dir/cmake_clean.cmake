file(REMOVE_RECURSE
  "CMakeFiles/test_chnn_systems.dir/tests/test_chnn_systems.c.o"
  "CMakeFiles/test_chnn_systems.dir/tests/test_chnn_systems.c.o.d"
  "test_chnn_systems"
  "test_chnn_systems.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_chnn_systems.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
