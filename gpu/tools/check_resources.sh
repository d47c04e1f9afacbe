#!/bin/sh
# Fails when ptxas reported spills or a stack frame for any function in the
# log, or ignored setmaxnreg (warning C7508); with a cuobjdump, also checks the
# CUBIN's resource usage for STACK and LOCAL.
#   check_resources.sh PTXAS_LOG CUBIN [CUOBJDUMP]
log="$1"
cubin="$2"
cuobjdump="$3"
[ -s "$log" ] || { echo "FAIL: empty ptxas log $log"; exit 1; }
grep -q "spill stores" "$log" || { echo "FAIL: no ptxas -v report in $log"; exit 1; }
if grep -E "bytes stack frame|spill" "$log" | grep -Ev "^ *0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads$"; then
  echo "FAIL: ptxas reports stack or spills (lines above)"
  exit 1
fi
if grep -q "C7508" "$log"; then
  echo "FAIL: ptxas ignored setmaxnreg (C7508)"
  exit 1
fi
if [ -n "$cuobjdump" ] && [ -x "$cuobjdump" ]; then
  usage=$("$cuobjdump" -res-usage "$cubin") || { echo "FAIL: cuobjdump failed"; exit 1; }
  echo "$usage"
  if echo "$usage" | grep -E "STACK:[1-9]|LOCAL:[1-9]"; then
    echo "FAIL: stack or local memory in use"
    exit 1
  fi
fi
grep -E "registers|stack frame" "$log"
echo "PASS no spills, no stack"
