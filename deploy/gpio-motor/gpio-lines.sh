#!/usr/bin/env bash
# ExecStartPre=+ of mm-gpio-motor.service, run as root: exports the script's GPIO lines
# (MM_GPIO_LINES under MM_GPIO_ROOT) and lets GROUP read and write their direction and value,
# so that the script runs without root. Idempotent: exported lines are left exported.
# Usage: gpio-lines.sh GROUP
set -euo pipefail

group="${1:?usage: gpio-lines.sh GROUP}"
root="${MM_GPIO_ROOT:-/sys/class/gpio}"
lines="${MM_GPIO_LINES:-516 517 518 519 520 521 522 523 524 525 526 527 528 529 530 531}"

for n in $lines; do
  [[ "$n" =~ ^[0-9]+$ ]] || {
    echo "gpio-lines: '$n' is not a GPIO number" >&2
    exit 1
  }
  if [ ! -d "$root/gpio$n" ]; then
    # EBUSY when it got exported meanwhile: fine, the check below decides.
    echo "$n" >"$root/export" 2>/dev/null || true
  fi
  # The kernel creates gpioN/ at once; udev may still be fixing it up for a moment.
  for _ in $(seq 1 40); do
    [ -e "$root/gpio$n/value" ] && break
    sleep 0.05
  done
  [ -e "$root/gpio$n/value" ] || {
    echo "gpio-lines: cannot export GPIO $n under $root" >&2
    exit 1
  }
  chgrp "$group" "$root/gpio$n/direction" "$root/gpio$n/value"
  chmod g+rw "$root/gpio$n/direction" "$root/gpio$n/value"
done
