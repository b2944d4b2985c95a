#!/bin/sh
# Installs the library into a scratch prefix, then builds and runs a small consumer twice: once
# with pkg-config and once through CMake's find_package(fxtrace).
set -eu
src=$1
build=$2
work=$3
rm -rf "$work"
mkdir -p "$work/consumer"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cp "$src/tests/check/install_consumer.c" "$work/consumer/main.c"
libdir=$(ls -d "$work"/prefix/lib*/pkgconfig | head -n 1)
PKG_CONFIG_PATH=$libdir cc -std=c11 "$work/consumer/main.c" \
  $(PKG_CONFIG_PATH=$libdir pkg-config --cflags --libs --static fxtrace) -o "$work/pc-consumer" -static-libgcc
# Shared library from the prefix: point the loader at it.
LD_LIBRARY_PATH=$(dirname "$libdir") "$work/pc-consumer"
cat > "$work/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(fxtrace REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE fxtrace::fxtrace_static)
CM
cmake -S "$work/consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer-build" >/dev/null
"$work/consumer-build/consumer"
