# Empty compiler generated dependencies file for impulse_static.
# This may be replaced when dependencies are built.
