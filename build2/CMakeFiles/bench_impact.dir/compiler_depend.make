# Empty compiler generated dependencies file for bench_impact.
# This may be replaced when dependencies are built.
