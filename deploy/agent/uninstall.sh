#!/usr/bin/env bash
# Removes what deploy/agent/install.sh added: stops and disables the service, removes the
# unit, the sudoers drop-in and the bundle. Keeps the settings (/etc/mm-agent), the local
# sudo rights (/etc/sudoers.d/mm-agent-local), the data (/var/lib/mm-agent) and the mm-agent
# account unless --purge is given. Never touches the
# PAC folder: PACs are boot assets and one of them may be the active configuration.
#
# Usage: sudo deploy/agent/uninstall.sh [--purge] [--root DIR] [--no-systemd]
set -euo pipefail

PROG=mm-agent-uninstall
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../lib/install-common.sh
. "$HERE/../lib/install-common.sh"

parse_uninstall_args "$@"

remove_unit mm-agent.service

rm -f "$(in_root /etc/sudoers.d/mm-agent)"
rm -rf "$(in_root /opt/mm-agent)" "$(in_root /opt/.mm-agent.new)" "$(in_root /opt/mm-agent.old)"
log "removed the bundle and the sudoers drop-in"

if [ "$PURGE" -eq 1 ]; then
  rm -rf "$(in_root /etc/mm-agent)" "$(in_root /var/lib/mm-agent)"
  rm -f "$(in_root /etc/sudoers.d/mm-agent-local)"
  if [ "$LIVE" -eq 1 ] && id -u mm-agent >/dev/null 2>&1; then
    userdel mm-agent
    log "removed the mm-agent account"
  fi
  log "purged the settings and data (PACs stay where they are)"
else
  log "kept /etc/mm-agent (settings, token), /etc/sudoers.d/mm-agent-local (local sudo rights) and /var/lib/mm-agent (cache, journal); --purge removes them"
fi
