#!/usr/bin/env bash
# ctest: install the build into a temporary prefix, then build and run a
# program outside the tree through pkg-config (shared and static) and through
# find_package(impulse) (imported targets impulse::impulse and
# impulse::impulse_static).
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
libdir=$(realpath "$(dirname "$(find "$tmp/prefix" -name impulse.pc)")/..")
export PKG_CONFIG_PATH="$libdir/pkgconfig"
test "$(pkg-config --modversion impulse)" = "$(sed -n 's/^project(impulse VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")"
cc=${CC:-cc}
# shared, through pkg-config
$cc -std=c11 -Wall -Wextra -Werror "$src/tests/install/main.c" $(pkg-config --cflags --libs impulse) \
    -Wl,-rpath,"$libdir" -o "$tmp/pc_shared"
# static, through pkg-config --static (Libs.private lists the dependencies)
$cc -std=c11 -Wall -Wextra -Werror "$src/tests/install/main.c" $(pkg-config --cflags impulse) \
    "$libdir/libimpulse.a" $(pkg-config --static --libs impulse | sed 's/-limpulse\b//') -o "$tmp/pc_static"
"$tmp/pc_shared" && "$tmp/pc_static"
ldd "$tmp/pc_shared" | grep -q "libimpulse.so.0 => $tmp" || { echo "pc_shared does not load the installed libimpulse.so.0"; exit 1; }
if ldd "$tmp/pc_static" | grep -q libimpulse; then echo "pc_static is linked dynamically"; exit 1; fi
# find_package
cmake -S "$src/tests/install" -B "$tmp/ext" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_BUILD_RPATH="$libdir" >/dev/null
cmake --build "$tmp/ext" >/dev/null
"$tmp/ext/consumer_shared" && "$tmp/ext/consumer_static"
echo "install: pkg-config and find_package consumers built and ran"
