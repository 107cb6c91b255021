# Empty compiler generated dependencies file for impulse_shared.
# This may be replaced when dependencies are built.
