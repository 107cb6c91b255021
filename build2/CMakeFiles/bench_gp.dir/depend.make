# Empty dependencies file for bench_gp.
# This may be replaced when dependencies are built.
