# Empty compiler generated dependencies file for impulse_cli.
# This may be replaced when dependencies are built.
