file(REMOVE_RECURSE
  "CMakeFiles/test_impact_cli.dir/tests/test_impact_cli.c.o"
  "CMakeFiles/test_impact_cli.dir/tests/test_impact_cli.c.o.d"
  "test_impact_cli"
  "test_impact_cli.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_impact_cli.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
