file(REMOVE_RECURSE
  "CMakeFiles/test_contact_sim.dir/tests/test_contact_sim.c.o"
  "CMakeFiles/test_contact_sim.dir/tests/test_contact_sim.c.o.d"
  "test_contact_sim"
  "test_contact_sim.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_contact_sim.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
