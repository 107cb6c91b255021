file(REMOVE_RECURSE
  "CMakeFiles/test_chnn_models.dir/tests/test_chnn_models.c.o"
  "CMakeFiles/test_chnn_models.dir/tests/test_chnn_models.c.o.d"
  "test_chnn_models"
  "test_chnn_models.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_chnn_models.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
