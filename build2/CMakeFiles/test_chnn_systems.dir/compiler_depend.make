# Empty compiler generated dependencies file for test_chnn_systems.
# This may be replaced when dependencies are built.
