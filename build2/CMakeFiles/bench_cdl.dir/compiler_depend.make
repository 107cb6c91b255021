# Empty compiler generated dependencies file for bench_cdl.
# This may be replaced when dependencies are built.
