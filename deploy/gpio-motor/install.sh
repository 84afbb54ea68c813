#!/usr/bin/env bash
# Installs the Model Manager GPIO motor/servo script on a board (Ubuntu with systemd), where
# the device-script catalogue entry says it lives:
#   the bundle      → /opt/model-manager/device-scripts/gpio-motor/mm-gpio-motor.mjs (+ gpio-lines.sh)
#   settings        → /etc/mm-gpio-motor/mm-gpio-motor.env (written once, never overwritten)
#   the unit        → /etc/systemd/system/mm-gpio-motor.service
#   the account     → system user mm-gpio (drives the lines gpio-lines.sh hands to its group)
# then `systemctl daemon-reload`, `enable` and (re)start unless told not to.
#
# Usage: sudo deploy/gpio-motor/install.sh [options]
#   --bundle DIR   the built bundle (default: packages/gpio-motor/dist next to this script's repo)
#   --root DIR     install into DIR instead of / (also: DESTDIR=DIR); no user, chown or systemctl
#   --no-systemd   do not run systemctl
#   --no-start     daemon-reload and enable, but do not (re)start
#   --port N       MM_GPIO_PORT for a new env file (default 8765, the catalogue entry's port)
#   --node PATH    the node (>= 20) to run it with (default: found in PATH)
set -euo pipefail

PROG=mm-gpio-motor-install
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../lib/install-common.sh
. "$HERE/../lib/install-common.sh"

BUNDLE="$HERE/../../packages/gpio-motor/dist"
START=1
PORT=8765
NODE=""
DIR=/opt/model-manager/device-scripts/gpio-motor

while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE="${2:?--bundle needs a folder}"; shift 2 ;;
    --root) ROOT="${2:?--root needs a folder}"; shift 2 ;;
    --no-systemd) SYSTEMD=0; shift ;;
    --no-start) START=0; shift ;;
    --port) PORT="${2:?--port needs a number}"; shift 2 ;;
    --node) NODE="${2:?--node needs a path}"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
finish_root

[ -f "$BUNDLE/mm-gpio-motor.mjs" ] || die "no bundle at $BUNDLE (build it: npx -y pnpm@10 -r run bundle)"
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then die "--port must be 1-65535"; fi
NODE="$(node_path "$NODE")"

ensure_system_user mm-gpio /nonexistent
ensure_dir "$DIR" 0755
install_file "$BUNDLE/mm-gpio-motor.mjs" "$DIR/mm-gpio-motor.mjs" 0755
install_file "$HERE/gpio-lines.sh" "$DIR/gpio-lines.sh" 0755
log "installed the script into $DIR"

ensure_dir /etc/mm-gpio-motor 0755
install_env_once "$HERE/mm-gpio-motor.env" /etc/mm-gpio-motor/mm-gpio-motor.env 0644 PORT="$PORT"

install_unit "$HERE/mm-gpio-motor.service" mm-gpio-motor.service "$NODE"

systemctl_live daemon-reload
systemctl_live enable mm-gpio-motor.service
if [ "$START" -eq 1 ] && [ "$SYSTEMD" -eq 1 ]; then
  systemctl restart mm-gpio-motor.service
  log "started mm-gpio-motor (journalctl -u mm-gpio-motor -f to follow it)"
fi
