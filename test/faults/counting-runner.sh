#!/bin/sh
# The runner of replicas-exactly-once.test.ts (MM_RUNNER="/bin/sh <this file>"): the board's
# own record of what it ran. Each run appends `start <op id> <ms since epoch> <pid>` and, once
# its output is written, `end <op id> <ms> <pid>` to MM_E2E_RUN_LOG (one file per board).
# The output video depends on the invocation and on the op id's parity only, so runs of one
# invocation on different boards produce identical bytes (the content race the test is about).
set -eu
work=$(dirname "$MM_OUTPUT_DIR")
name=$(basename "$work")      # op-<id>-<random hex>
op=${name#op-}
op=${op%-*}
echo "start $op $(date +%s%3N) $$" >> "$MM_E2E_RUN_LOG"
sleep "${MM_E2E_RUN_SECONDS:-1}"
variant=$((op % 2))
{
  printf '\000\000\000\030ftypisom\000\000\002\000isomiso2'
  printf 'invocation %s variant %s\n' "$MM_INVOCATION_ID" "$variant"
  head -c 32768 /dev/zero
} > "$MM_OUTPUT_DIR/output.mp4.part"
mv "$MM_OUTPUT_DIR/output.mp4.part" "$MM_OUTPUT_DIR/output.mp4"
echo "end $op $(date +%s%3N) $$" >> "$MM_E2E_RUN_LOG"
