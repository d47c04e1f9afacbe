#!/bin/sh
# Fails unless the SASS of KERNEL in CUBIN contains the given opcode (e.g.
# HGMMA: the wgmmas were not lowered to a slower path).
#   check_sass.sh CUOBJDUMP CUBIN KERNEL OPCODE
cuobjdump="$1"
cubin="$2"
kernel="$3"
opcode="$4"
sass=$("$cuobjdump" -sass -fun "$kernel" "$cubin") || { echo "FAIL: cuobjdump failed"; exit 1; }
count=$(echo "$sass" | grep -c "$opcode")
if [ "$count" -eq 0 ]; then
  echo "FAIL: no $opcode in the SASS of $kernel"
  exit 1
fi
echo "PASS $count $opcode instructions in $kernel"
