file(REMOVE_RECURSE
  "libimpulse.pdb"
  "libimpulse.so"
  "libimpulse.so.0"
  "libimpulse.so.0.1.0"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/impulse_shared.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
