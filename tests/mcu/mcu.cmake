# The core on 32-bit microcontrollers (included from tests/CMakeLists.txt): tests/mcu is
# cross-compiled for a Cortex-M3 (ARMv7-M) and a Cortex-M0 (ARMv6-M: no LDREX/STREX, so the
# core's read-modify-writes go through the embedder's critical section, fxtrace/port.h) as
# part of the build, and the tests mcu_cortex_m3 / mcu_cortex_m0 run the ring and writer unit
# tests on each under qemu-system-arm. Both are skipped (77), saying why, where
# arm-none-eabi-gcc or qemu-system-arm is absent. Once, in the plain build: the sanitizers
# have nothing to say about code that runs in QEMU.
if(NOT FXT_SANITIZE)
  include(ExternalProject)
  find_program(FXT_ARM_NONE_EABI_GCC arm-none-eabi-gcc)
  # Cortex-M3: the MPS2 AN385 board. Cortex-M0: QEMU's one ARMv6-M board, the micro:bit
  # (nRF51822; tests/mcu/CMakeLists.txt says how much RAM each test gets).
  foreach(cpu cortex-m3 cortex-m0)
    string(REPLACE "-" "_" name mcu_${cpu})
    set(board mps2-an385)
    if(cpu STREQUAL cortex-m0)
      set(board microbit)
    endif()
    set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name})
    if(FXT_ARM_NONE_EABI_GCC)
      ExternalProject_Add(${name}
        SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/mcu
        BINARY_DIR ${dir}
        CMAKE_ARGS -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/arm-none-eabi.cmake
                   -DFXT_MCU_CPU=${cpu} -DFXT_MCU_BOARD=${board}
        INSTALL_COMMAND ""
        BUILD_ALWAYS ON)
    endif()
    add_test(NAME ${name}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mcu/run.sh ${cpu} ${board} ${dir}
                     test_ring test_writer test_small_table)
    set_tests_properties(${name} PROPERTIES LABELS mcu TIMEOUT 300 SKIP_RETURN_CODE 77)
  endforeach()
endif()
