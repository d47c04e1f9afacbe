# Fails when ptxas's log (-Xptxas=-v) reports a "Potential Performance Loss",
# such as a wgmma pipeline serialized because it crosses a function call
# (C7510) or because other instructions touch an accumulator in flight.
#   cmake -DLOG=ptxas.log -P check_no_perf_loss.cmake
if(NOT DEFINED LOG OR NOT EXISTS ${LOG})
  message(FATAL_ERROR "FAIL: no ptxas log '${LOG}'")
endif()
file(STRINGS ${LOG} losses REGEX "Potential Performance Loss")
if(losses)
  string(REPLACE ";" "\n" text "${losses}")
  message(FATAL_ERROR "FAIL: ptxas reports\n${text}")
endif()
file(STRINGS ${LOG} entries REGEX "Compiling entry function")
if(NOT entries)
  message(FATAL_ERROR "FAIL: ${LOG} has no entry function (was -Xptxas=-v given?)")
endif()
message("PASS: no potential performance loss in ${LOG}")
