# Empty dependencies file for test_contact_sim.
# This may be replaced when dependencies are built.
