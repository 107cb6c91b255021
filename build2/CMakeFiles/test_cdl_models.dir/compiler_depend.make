# Empty compiler generated dependencies file for test_cdl_models.
# This may be replaced when dependencies are built.
