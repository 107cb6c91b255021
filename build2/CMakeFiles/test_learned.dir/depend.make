# Empty dependencies file for test_learned.
# This may be replaced when dependencies are built.
