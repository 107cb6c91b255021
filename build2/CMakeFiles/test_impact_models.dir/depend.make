# Empty dependencies file for test_impact_models.
# This may be replaced when dependencies are built.
