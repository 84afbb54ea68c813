#!/usr/bin/env bash
# Removes what deploy/gpio-motor/install.sh added: stops and disables the service, removes
# the unit and the script. Keeps /etc/mm-gpio-motor and the mm-gpio account unless --purge.
# Exported GPIO lines stay exported (unexporting could glitch whatever else drives them).
#
# Usage: sudo deploy/gpio-motor/uninstall.sh [--purge] [--root DIR] [--no-systemd]
set -euo pipefail

PROG=mm-gpio-motor-uninstall
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../lib/install-common.sh
. "$HERE/../lib/install-common.sh"

parse_uninstall_args "$@"

remove_unit mm-gpio-motor.service

dir="$(in_root /opt/model-manager/device-scripts/gpio-motor)"
rm -f "$dir/mm-gpio-motor.mjs" "$dir/gpio-lines.sh"
# The folders only if nothing else lives in them.
rmdir "$dir" "$(dirname "$dir")" "$(dirname "$(dirname "$dir")")" 2>/dev/null || true
log "removed the script"

if [ "$PURGE" -eq 1 ]; then
  rm -rf "$(in_root /etc/mm-gpio-motor)"
  if [ "$LIVE" -eq 1 ] && id -u mm-gpio >/dev/null 2>&1; then userdel mm-gpio; fi
  log "purged the settings and the account"
else
  log "kept /etc/mm-gpio-motor; --purge removes it"
fi
