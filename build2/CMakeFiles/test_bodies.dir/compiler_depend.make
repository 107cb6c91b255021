# Empty compiler generated dependencies file for test_bodies.
# This may be replaced when dependencies are built.
