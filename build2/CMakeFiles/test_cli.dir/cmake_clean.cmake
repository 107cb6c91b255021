file(REMOVE_RECURSE
  "CMakeFiles/test_cli.dir/tests/test_cli.c.o"
  "CMakeFiles/test_cli.dir/tests/test_cli.c.o.d"
  "test_cli"
  "test_cli.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_cli.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
