# Empty compiler generated dependencies file for test_io.
# This may be replaced when dependencies are built.
