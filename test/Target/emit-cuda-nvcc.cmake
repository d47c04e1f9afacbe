# CTest driver (test/CMakeLists.txt): tawac --emit=cuda on each kernel of
# KERNELS ("path|tawac options" entries, '@'-separated, with the options
# comma-separated), then nvcc -cubin for sm_90a with ptxas statistics. Fails
# on any tawac or nvcc error, on any register spill, and on ptxas serializing
# wgmmas (C7515: a non-wgmma write to an accumulator in flight, which the
# one-register-array rule of the emitter exists to prevent; C7513: a
# non-wgmma write to a wgmma's input registers inside a pipeline stage, such
# as a register A operand copied while the product that reads it runs;
# C7512 and C7514: serialized for lack of registers, or for other
# instructions reading an accumulator in flight).
#
#   cmake -DTAWAC=... -DNVCC=... -DINCLUDE=... -DOUT=... -DKERNELS=... -P this
foreach(var TAWAC NVCC INCLUDE OUT KERNELS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "emit-cuda-nvcc: -D${var}= is required")
  endif()
endforeach()
file(MAKE_DIRECTORY ${OUT})
string(REPLACE "@" ";" kernels "${KERNELS}")
set(failures 0)
set(i 0)
foreach(entry IN LISTS kernels)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 ttir)
  set(opts)
  list(LENGTH parts n)
  if(n GREATER 1)
    list(GET parts 1 optstr)
    string(REPLACE "," ";" opts "${optstr}")
  endif()
  if(NOT EXISTS ${ttir})
    message(STATUS "skip (not present): ${ttir}")
    continue()
  endif()
  get_filename_component(stem ${ttir} NAME_WE)
  set(base ${OUT}/${i}_${stem})
  math(EXPR i "${i} + 1")
  execute_process(COMMAND ${TAWAC} ${ttir} --emit=cuda ${opts} -o ${base}.cu
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "tawac failed on ${ttir} ${opts}:\n${out}${err}")
    math(EXPR failures "${failures} + 1")
    continue()
  endif()
  execute_process(
    COMMAND ${NVCC} -gencode=arch=compute_90a,code=sm_90a -cubin -I ${INCLUDE}
            -Xptxas -v ${base}.cu -o ${base}.cubin
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(log "${out}${err}")
  file(WRITE ${base}.ptxas.log "${log}")
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "nvcc failed on ${base}.cu (${ttir} ${opts}):\n${log}")
    math(EXPR failures "${failures} + 1")
  elseif(log MATCHES "[1-9][0-9]* bytes spill" OR log MATCHES "C751[2-5]")
    message(SEND_ERROR "ptxas spills or serializes wgmma in ${base}.cu "
                       "(${ttir} ${opts}):\n${log}")
    math(EXPR failures "${failures} + 1")
  else()
    string(REGEX MATCH "Used [0-9]+ registers" regs "${log}")
    message(STATUS "ok: ${ttir} ${opts}: ${regs}, no spills")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} kernel(s) failed")
endif()
