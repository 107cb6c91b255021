# Empty dependencies file for test_chnn_train.
# This may be replaced when dependencies are built.
