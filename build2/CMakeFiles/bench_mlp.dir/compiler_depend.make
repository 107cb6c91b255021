# Empty compiler generated dependencies file for bench_mlp.
# This may be replaced when dependencies are built.
