# Empty dependencies file for test_chnn_models.
# This may be replaced when dependencies are built.
