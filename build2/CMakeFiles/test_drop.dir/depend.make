# Empty dependencies file for test_drop.
# This may be replaced when dependencies are built.
