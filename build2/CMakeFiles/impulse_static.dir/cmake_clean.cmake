file(REMOVE_RECURSE
  "libimpulse.a"
  "libimpulse.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/impulse_static.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
