#!/bin/sh
# Runs a compiler command, writing its diagnostics (ptxas -v resource report)
# to the log file named first, and still failing when the compiler fails.
log="$1"
shift
"$@" >"$log" 2>&1
status=$?
cat "$log"
exit $status
