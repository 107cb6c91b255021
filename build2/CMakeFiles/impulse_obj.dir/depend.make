# Empty dependencies file for impulse_obj.
# This may be replaced when dependencies are built.
