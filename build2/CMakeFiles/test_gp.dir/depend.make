# Empty dependencies file for test_gp.
# This may be replaced when dependencies are built.
