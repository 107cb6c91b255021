file(REMOVE_RECURSE
  "CMakeFiles/test_impact_data.dir/tests/test_impact_data.c.o"
  "CMakeFiles/test_impact_data.dir/tests/test_impact_data.c.o.d"
  "test_impact_data"
  "test_impact_data.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_impact_data.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
