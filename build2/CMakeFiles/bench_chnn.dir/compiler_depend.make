# Empty compiler generated dependencies file for bench_chnn.
# This may be replaced when dependencies are built.
