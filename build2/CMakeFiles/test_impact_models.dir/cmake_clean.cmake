file(REMOVE_RECURSE
  "CMakeFiles/test_impact_models.dir/tests/test_impact_models.c.o"
  "CMakeFiles/test_impact_models.dir/tests/test_impact_models.c.o.d"
  "test_impact_models"
  "test_impact_models.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_impact_models.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
