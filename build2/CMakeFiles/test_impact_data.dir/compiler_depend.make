# Empty compiler generated dependencies file for test_impact_data.
# This may be replaced when dependencies are built.
