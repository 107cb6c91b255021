file(REMOVE_RECURSE
  "CMakeFiles/test_impact_analysis.dir/tests/test_impact_analysis.c.o"
  "CMakeFiles/test_impact_analysis.dir/tests/test_impact_analysis.c.o.d"
  "test_impact_analysis"
  "test_impact_analysis.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_impact_analysis.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
