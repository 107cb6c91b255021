file(REMOVE_RECURSE
  "CMakeFiles/test_cdl_models.dir/tests/test_cdl_models.c.o"
  "CMakeFiles/test_cdl_models.dir/tests/test_cdl_models.c.o.d"
  "test_cdl_models"
  "test_cdl_models.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_cdl_models.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
