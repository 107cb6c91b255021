# Empty compiler generated dependencies file for test_num.
# This may be replaced when dependencies are built.
