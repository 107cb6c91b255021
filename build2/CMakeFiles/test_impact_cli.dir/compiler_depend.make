# Empty compiler generated dependencies file for test_impact_cli.
# This may be replaced when dependencies are built.
