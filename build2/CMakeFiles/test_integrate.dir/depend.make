# Empty dependencies file for test_integrate.
# This may be replaced when dependencies are built.
