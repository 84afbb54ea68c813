# shellcheck shell=bash
# Shared by deploy/agent/{install,uninstall}.sh and deploy/gpio-motor/{install,uninstall}.sh.
# Sourced, not run. Every function is idempotent.
#
# Target root: ROOT is "/" for a real install, or a scratch folder (--root DIR, or DESTDIR)
# for packaging and tests. Acting on the system itself — creating users, chown to them,
# systemctl — happens only when ROOT is "/" (LIVE=1); everything else (files, modes,
# templating, sudoers validation) runs the same either way, so a test against a scratch
# root exercises it.

ROOT="${DESTDIR:-/}"
SYSTEMD=1
LIVE=0

log() { printf '%s: %s\n' "${PROG:-install}" "$*"; }
die() {
  printf '%s: error: %s\n' "${PROG:-install}" "$*" >&2
  exit 1
}

# Call after parsing --root: normalises ROOT and decides LIVE.
finish_root() {
  [ -n "$ROOT" ] || die "--root needs a folder"
  if [ "$ROOT" != "/" ]; then
    mkdir -p "$ROOT"
    ROOT="$(cd "$ROOT" && pwd -P)"
  fi
  if [ "$ROOT" = "/" ]; then
    LIVE=1
    [ "$(id -u)" -eq 0 ] || die "run as root (sudo), or give --root DIR to install into a folder"
  else
    LIVE=0
    SYSTEMD=0
  fi
}

# Path inside the target root: at /opt/x → $ROOT/opt/x (or /opt/x itself when ROOT is /).
in_root() {
  if [ "$ROOT" = "/" ]; then printf '%s' "$1"; else printf '%s%s' "$ROOT" "$1"; fi
}

# ensure_dir PATH MODE [OWNER:GROUP] — creates it (and parents) and sets its mode; the owner
# only on a live install (the account does not exist in a scratch root).
ensure_dir() {
  local dir owner
  dir="$(in_root "$1")"
  mkdir -p "$dir"
  chmod "$2" "$dir"
  owner="${3:-}"
  if [ -n "$owner" ] && [ "$LIVE" -eq 1 ]; then chown "$owner" "$dir"; fi
}

# install_file SRC DEST MODE — copies through a temporary file and renames, so a reader never
# sees a half-written file.
install_file() {
  local dest tmp
  dest="$(in_root "$2")"
  mkdir -p "$(dirname "$dest")"
  tmp="$(mktemp "$dest.XXXXXX")"
  cat "$1" >"$tmp"
  chmod "$3" "$tmp"
  mv -f "$tmp" "$dest"
}

# render_template SRC KEY=VALUE... — prints SRC with every @KEY@ replaced by VALUE (plain
# string replacement: no sed, so values may hold any character).
render_template() {
  local src="$1" line pair key value
  shift
  while IFS= read -r line || [ -n "$line" ]; do
    for pair in "$@"; do
      key="${pair%%=*}"
      value="${pair#*=}"
      line="${line//@"$key"@/$value}"
    done
    printf '%s\n' "$line"
  done <"$src"
}

# set_env_value FILE KEY VALUE — sets KEY=VALUE on the first `KEY=` line of an env file.
set_env_value() {
  local file="$1" key="$2" value="$3" tmp line done=0
  tmp="$(mktemp "$file.XXXXXX")"
  while IFS= read -r line || [ -n "$line" ]; do
    if [ "$done" -eq 0 ] && [ "${line%%=*}" = "$key" ]; then
      printf '%s=%s\n' "$key" "$value"
      done=1
    else
      printf '%s\n' "$line"
    fi
  done <"$file" >"$tmp"
  [ "$done" -eq 1 ] || printf '%s=%s\n' "$key" "$value" >>"$tmp"
  chmod --reference="$file" "$tmp"
  mv -f "$tmp" "$file"
}

# env_value FILE KEY — prints the value of KEY in an env file (empty when unset).
env_value() {
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    if [ "${line%%=*}" = "$2" ]; then
      printf '%s' "${line#*=}"
      return 0
    fi
  done <"$1"
}

# ensure_system_user NAME HOME [EXTRA_GROUP...] — a locked system account with its own group;
# extra groups are joined only if they exist on this system.
ensure_system_user() {
  local name="$1" home="$2" group
  shift 2
  [ "$LIVE" -eq 1 ] || {
    log "would create system user $name (not on a scratch root)"
    return 0
  }
  if ! id -u "$name" >/dev/null 2>&1; then
    useradd --system --user-group --home-dir "$home" --no-create-home --shell /usr/sbin/nologin \
      --comment "Model Manager $name" "$name"
    log "created system user $name"
  fi
  for group in "$@"; do
    if getent group "$group" >/dev/null; then usermod --append --groups "$group" "$name"; fi
  done
}

# node_path [PATH] — the Node.js >= 20 to run the bundle with.
node_path() {
  local node="${1:-}" major
  [ -n "$node" ] || node="$(command -v node || true)"
  [ -n "$node" ] || die "Node.js >= 20 is needed: install it (e.g. from NodeSource) or pass --node PATH"
  major="$("$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  [ "$major" -ge 20 ] || die "$node is Node.js $major; the bundle needs Node.js >= 20"
  (cd "$(dirname "$node")" && printf '%s/%s' "$(pwd -P)" "$(basename "$node")")
}

systemctl_live() {
  if [ "$SYSTEMD" -eq 1 ]; then
    systemctl "$@"
  else
    log "skipped: systemctl $*"
  fi
}

# usage — prints the calling script's header comment (from line 2 to `set -euo`) as its help.
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

# install_env_once TEMPLATE DEST MODE KEY=VALUE... — writes the settings file DEST from
# TEMPLATE once; an existing one (and any token in it) is never touched.
install_env_once() {
  local src="$1" dest="$2" mode="$3" tmp
  shift 3
  if [ -e "$(in_root "$dest")" ]; then
    log "kept the existing $dest"
    return 0
  fi
  tmp="$(mktemp)"
  render_template "$src" "$@" >"$tmp"
  install_file "$tmp" "$dest" "$mode"
  rm -f "$tmp"
  log "wrote $dest"
}

# install_unit TEMPLATE NAME NODE — installs /etc/systemd/system/NAME from TEMPLATE, run by NODE.
install_unit() {
  local tmp
  tmp="$(mktemp)"
  render_template "$1" NODE="$3" >"$tmp"
  install_file "$tmp" "/etc/systemd/system/$2" 0644
  rm -f "$tmp"
  log "installed $2 (node: $3)"
}

# parse_uninstall_args "$@" — the options every uninstall script takes: --purge (sets
# PURGE=1), --root DIR, --no-systemd, --help; then finish_root.
# shellcheck disable=SC2034 # PURGE is read by the uninstall script
parse_uninstall_args() {
  PURGE=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --purge) PURGE=1; shift ;;
      --root) ROOT="${2:?--root needs a folder}"; shift 2 ;;
      --no-systemd) SYSTEMD=0; shift ;;
      -h | --help) usage; exit 0 ;;
      *) die "unknown option $1 (see --help)" ;;
    esac
  done
  finish_root
}

# remove_unit NAME — stops, disables and removes /etc/systemd/system/NAME if it is there.
remove_unit() {
  local unit
  unit="$(in_root "/etc/systemd/system/$1")"
  [ -e "$unit" ] || return 0
  if [ "$SYSTEMD" -eq 1 ]; then systemctl disable --now "$1" || true; fi
  rm -f "$unit"
  systemctl_live daemon-reload
  log "removed $1"
}
