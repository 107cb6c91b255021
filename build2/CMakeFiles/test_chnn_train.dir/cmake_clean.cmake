file(REMOVE_RECURSE
  "CMakeFiles/test_chnn_train.dir/tests/test_chnn_train.c.o"
  "CMakeFiles/test_chnn_train.dir/tests/test_chnn_train.c.o.d"
  "test_chnn_train"
  "test_chnn_train.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_chnn_train.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
