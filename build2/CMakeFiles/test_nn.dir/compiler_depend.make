# Empty compiler generated dependencies file for test_nn.
# This may be replaced when dependencies are built.
