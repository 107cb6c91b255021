# Empty dependencies file for test_impact_analysis.
# This may be replaced when dependencies are built.
