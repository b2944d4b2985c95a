# Toolchain for aarch64 Linux (glibc): Debian's gcc-aarch64-linux-gnu with
# libc6-dev-arm64-cross, whose sysroot is /usr/aarch64-linux-gnu. Programs built with it run
# here under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR: `qemu-aarch64 -L` that sysroot); the
# aarch64 test (tests/check/aarch64.sh) builds the library and a few test programs with it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(FXT_AARCH64_PREFIX aarch64-linux-gnu CACHE STRING "Prefix of the cross tools")
set(CMAKE_C_COMPILER ${FXT_AARCH64_PREFIX}-gcc)
set(CMAKE_CXX_COMPILER ${FXT_AARCH64_PREFIX}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${FXT_AARCH64_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config must not find the build machine's libraries (libfuse3 for `fxtrace mount`).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${FXT_AARCH64_PREFIX}/pkgconfig)
set(ENV{PKG_CONFIG_SYSROOT_DIR} /)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/${FXT_AARCH64_PREFIX})
