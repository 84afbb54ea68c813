#!/usr/bin/env bash
# Installs the Model Manager board agent on a board (Ubuntu with systemd):
#   the bundle           → /opt/mm-agent/          (root-owned: the agent cannot rewrite itself)
#                          + /opt/mm-agent/bin/xlnx-config (runs `sudo -n <xlnx-config> "$@"`)
#   settings             → /etc/mm-agent/mm-agent.env (0600 root; written once, never overwritten)
#   the unit             → /etc/systemd/system/mm-agent.service
#   sudo rights          → /etc/sudoers.d/mm-agent (xlnx-config -q / -a, systemctl reboot; visudo-checked)
#   local sudo rights    → /etc/sudoers.d/mm-agent-local (a commented template, created once and
#                          never touched again: the place for the admin's own additions)
#   the account          → system user mm-agent (joins video/render if they exist, for FPGA/DRM devices)
#   its folders          → /var/lib/mm-agent (cache, journal), the PAC folder (default /usr/local/share/xlnx-config)
# then `systemctl daemon-reload`, `enable` and (re)start — unless told not to, or while the
# env file still has no board token. Safe to run again (upgrades the bundle, keeps settings).
#
# Usage: sudo deploy/agent/install.sh [options]
#   --bundle DIR        the built bundle (default: packages/agent/dist next to this script's repo)
#   --root DIR          install into DIR instead of / (also: DESTDIR=DIR); no user, chown or systemctl
#   --no-systemd        do not run systemctl (files are still installed)
#   --no-start          daemon-reload and enable, but do not (re)start
#   --server-url URL    MM_SERVER_URL for a new env file
#   --token TOKEN       MM_BOARD_TOKEN for a new env file (or set MM_BOARD_TOKEN in the environment)
#   --runner CMD        MM_RUNNER for a new env file
#   --xlnx-config PATH  xlnx-config to allow and use (default: found in PATH, else /snap/bin/xlnx-config)
#   --pac-dir DIR       MM_PAC_DIR for a new env file (default /usr/local/share/xlnx-config)
#   --node PATH         the node (>= 20) to run the agent with (default: found in PATH)
set -euo pipefail

PROG=mm-agent-install
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../lib/install-common.sh
. "$HERE/../lib/install-common.sh"

BUNDLE="$HERE/../../packages/agent/dist"
START=1
SERVER_URL="http://127.0.0.1:8000"
TOKEN="${MM_BOARD_TOKEN:-}"
RUNNER=""
XLNX_CONFIG=""
PAC_DIR="/usr/local/share/xlnx-config"
NODE=""

while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE="${2:?--bundle needs a folder}"; shift 2 ;;
    --root) ROOT="${2:?--root needs a folder}"; shift 2 ;;
    --no-systemd) SYSTEMD=0; shift ;;
    --no-start) START=0; shift ;;
    --server-url) SERVER_URL="${2:?--server-url needs a URL}"; shift 2 ;;
    --token) TOKEN="${2:?--token needs a value}"; shift 2 ;;
    --runner) RUNNER="${2:?--runner needs a command line}"; shift 2 ;;
    --xlnx-config) XLNX_CONFIG="${2:?--xlnx-config needs a path}"; shift 2 ;;
    --pac-dir) PAC_DIR="${2:?--pac-dir needs a folder}"; shift 2 ;;
    --node) NODE="${2:?--node needs a path}"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
finish_root

[ -f "$BUNDLE/mm-agent.mjs" ] || die "no bundle at $BUNDLE (build it: npx -y pnpm@10 -r run bundle)"
BUNDLE="$(cd "$BUNDLE" && pwd -P)"
NODE="$(node_path "$NODE")"
[ -n "$XLNX_CONFIG" ] || XLNX_CONFIG="$(command -v xlnx-config || echo /snap/bin/xlnx-config)"
# It goes into sudoers: a plain absolute path, nothing sudoers could read as syntax.
[[ "$XLNX_CONFIG" =~ ^/[A-Za-z0-9._/+-]+$ ]] || die "--xlnx-config must be a plain absolute path, not '$XLNX_CONFIG'"
SYSTEMCTL="$(command -v systemctl || echo /usr/bin/systemctl)"
case "$PAC_DIR" in /*) ;; *) die "--pac-dir must be an absolute path" ;; esac

# 1. The account and its folders.
ensure_system_user mm-agent /var/lib/mm-agent video render
ensure_dir /var/lib/mm-agent 0750 mm-agent:mm-agent
# PACs: only the folder itself is handed over; PACs already in it keep their owner.
ensure_dir "$PAC_DIR" 0755 mm-agent:mm-agent
ensure_dir /etc/mm-agent 0755

# 2. The bundle: every file of dist/, replaced as a whole (files of an older version go).
prefix="$(in_root /opt/mm-agent)"
staging="$(in_root /opt/.mm-agent.new)"
rm -rf "$staging"
mkdir -p "$staging"
cp -R "$BUNDLE/." "$staging/"
mkdir -p "$staging/bin"
render_template "$HERE/xlnx-config-sudo" XLNX_CONFIG="$XLNX_CONFIG" >"$staging/bin/xlnx-config"
chmod -R u=rwX,go=rX "$staging"
chmod 0755 "$staging/bin/xlnx-config"
[ "$LIVE" -eq 0 ] || chown -R root:root "$staging"
rm -rf "$prefix.old"
if [ -e "$prefix" ]; then mv "$prefix" "$prefix.old"; fi
mv "$staging" "$prefix"
rm -rf "$prefix.old"
log "installed the bundle from $BUNDLE into /opt/mm-agent"

# 3. Settings: written once; an existing file (and the token in it) is never touched.
install_env_once "$HERE/mm-agent.env" /etc/mm-agent/mm-agent.env 0600 SERVER_URL="$SERVER_URL" BOARD_TOKEN="$TOKEN" \
  RUNNER="$RUNNER" XLNX_CONFIG="$XLNX_CONFIG" SYSTEMCTL="$SYSTEMCTL" PAC_DIR="$PAC_DIR"
env_file="$(in_root /etc/mm-agent/mm-agent.env)"

# 4. sudo rights, checked before they go live: a broken drop-in would break sudo itself.
# check_sudoers FILE — dies (removing FILE) unless visudo accepts it.
check_sudoers() {
  if command -v visudo >/dev/null; then
    visudo -cqf "$1" >/dev/null || {
      rm -f "$1"
      die "the sudoers drop-in does not validate (visudo -cf)"
    }
  elif [ "$LIVE" -eq 1 ]; then
    log "warning: visudo not found (is sudo installed?); the drop-in is installed unchecked"
  fi
}
sudoers_tmp="$(mktemp)"
render_template "$HERE/sudoers" XLNX_CONFIG="$XLNX_CONFIG" SYSTEMCTL="$SYSTEMCTL" >"$sudoers_tmp"
chmod 0440 "$sudoers_tmp"
check_sudoers "$sudoers_tmp"
install_file "$sudoers_tmp" /etc/sudoers.d/mm-agent 0440
rm -f "$sudoers_tmp"
# The admin's own additions (e.g. a root runner) live in a second drop-in that an upgrade
# never overwrites: created once from a commented template, then left alone.
if [ -e "$(in_root /etc/sudoers.d/mm-agent-local)" ]; then
  log "kept the existing /etc/sudoers.d/mm-agent-local (local sudo rights)"
else
  sudoers_tmp="$(mktemp)"
  cat "$HERE/sudoers-local" >"$sudoers_tmp"
  chmod 0440 "$sudoers_tmp"
  check_sudoers "$sudoers_tmp"
  install_file "$sudoers_tmp" /etc/sudoers.d/mm-agent-local 0440
  rm -f "$sudoers_tmp"
  log "wrote /etc/sudoers.d/mm-agent-local (for local sudo rights; install never changes it again)"
fi

# 5. The unit.
install_unit "$HERE/mm-agent.service" mm-agent.service "$NODE"
# Device scripts (docs/device-scripts.md): their template unit and folders.
install_unit "$HERE/mm-device-script@.service" mm-device-script@.service "$NODE"
mkdir -p "$(in_root /opt/model-manager/device-scripts)" "$(in_root /var/lib/mm-agent/device-script-units)"
[ "$LIVE" -eq 0 ] || chown mm-agent:mm-agent "$(in_root /opt/model-manager/device-scripts)" "$(in_root /var/lib/mm-agent/device-script-units)"

# 6. Start it (a restart picks up a new bundle), unless there is nothing to connect with yet.
systemctl_live daemon-reload
systemctl_live enable mm-agent.service
if [ -z "$(env_value "$env_file" MM_BOARD_TOKEN)" ] || [ -z "$(env_value "$env_file" MM_RUNNER)" ]; then
  log "not started: set MM_BOARD_TOKEN and MM_RUNNER in /etc/mm-agent/mm-agent.env, then: systemctl restart mm-agent"
elif [ "$START" -eq 1 ] && [ "$SYSTEMD" -eq 1 ]; then
  systemctl restart mm-agent.service
  log "started mm-agent (journalctl -u mm-agent -f to follow it)"
fi
