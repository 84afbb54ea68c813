#!/bin/sh
# install-agent.sh: installs the Model Manager board agent from the control plane that serves
# this script (docs/packages.md). Detects the board's architecture, downloads the newest
# mm-agent package for it (checked against the server's SHA256SUMS), installs it, writes the
# settings from the arguments and starts the service. Usually run as the one line the
# dashboard shows:
#   curl -fsSL https://mm.example.org/api/downloads/install-agent.sh | sudo sh -s -- \
#     --server-url https://mm.example.org --provisioning-key mmk_...
#
# Options:
#   --server-url URL         the control plane (required)
#   --token TOKEN            a board token (kept in /var/lib/mm-agent/token, 0600)
#   --provisioning-key KEY   or a provisioning key: the agent enrolls by itself
#   --runner CMD             MM_RUNNER (the command that runs an invocation)
#   --arch ARCH              amd64 or arm64 instead of detecting it
#   --root DIR               unpack into DIR instead of installing (no dpkg database, no
#                            users, no systemctl): for images and tests
#   --no-start               install and configure, but do not start the service
set -eu

PROG=install-agent
SERVER_URL=""
TOKEN=""
KEY=""
RUNNER=""
ARCH=""
ROOT=""
START=1

say() { printf '%s: %s\n' "$PROG" "$*"; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --server-url) SERVER_URL="${2:?--server-url needs a URL}"; shift 2 ;;
    --token) TOKEN="${2:?--token needs a value}"; shift 2 ;;
    --provisioning-key) KEY="${2:?--provisioning-key needs a value}"; shift 2 ;;
    --runner) RUNNER="${2:?--runner needs a command line}"; shift 2 ;;
    --arch) ARCH="${2:?--arch needs amd64 or arm64}"; shift 2 ;;
    --root) ROOT="${2:?--root needs a folder}"; shift 2 ;;
    --no-start) START=0; shift ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[ -n "$SERVER_URL" ] || die "--server-url is required"
SERVER_URL="${SERVER_URL%/}"
[ -z "$TOKEN" ] || [ -z "$KEY" ] || die "give --token or --provisioning-key, not both"
if [ -z "$ROOT" ] && [ "$(id -u)" -ne 0 ]; then die "run as root (sudo), or give --root DIR"; fi

# 1. The architecture, as Debian names it.
if [ -z "$ARCH" ]; then
  ARCH="$(dpkg --print-architecture 2>/dev/null || true)"
  if [ -z "$ARCH" ]; then
    case "$(uname -m)" in
      aarch64 | arm64) ARCH=arm64 ;;
      x86_64 | amd64) ARCH=amd64 ;;
      *) ARCH="$(uname -m)" ;;
    esac
  fi
fi
case "$ARCH" in amd64 | arm64) ;; *) die "no agent package for the architecture $ARCH (there are amd64 and arm64)" ;; esac

fetch() { # URL FILE
  if command -v curl >/dev/null; then curl -fsSL -o "$2" "$1"
  elif command -v wget >/dev/null; then wget -q -O "$2" "$1"
  else die "curl or wget is needed"; fi
}

# 2. The newest package for it, checked against the server's checksums.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fetch "$SERVER_URL/api/downloads/SHA256SUMS" "$tmp/SHA256SUMS" || die "cannot reach $SERVER_URL/api/downloads/"
name="$(sed -n "s/^[0-9a-f]\{64\}  \(mm-agent_[^ ]*_${ARCH}\.deb\)$/\1/p" "$tmp/SHA256SUMS" | sort -V | tail -n 1)"
[ -n "$name" ] || die "the control plane serves no $ARCH agent package (see $SERVER_URL/api/downloads/)"
say "downloading $name"
fetch "$SERVER_URL/api/downloads/$name" "$tmp/$name"
want="$(grep "  $name\$" "$tmp/SHA256SUMS" | cut -d' ' -f1)"
got="$(sha256sum "$tmp/$name" | cut -d' ' -f1)"
[ "$want" = "$got" ] || die "$name does not match its sha256 ($got, expected $want)"

# 3. Install it.
if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT"
  dpkg-deb -x "$tmp/$name" "$ROOT"
  mkdir -p "$ROOT/var/lib/mm-agent"
  say "unpacked $name into $ROOT"
else
  # apt resolves the few dependencies (adduser, libc, init-system-helpers); the postinst
  # creates the account and folders. Not started yet: the settings come first.
  if command -v apt-get >/dev/null; then DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$tmp/$name" >/dev/null
  else dpkg -i "$tmp/$name" >/dev/null; fi
  say "installed $name"
fi

# 4. The settings.
env_file="$ROOT/etc/mm-agent/mm-agent.env"
set_value() { # KEY VALUE: replaces the KEY= line (the file keeps its mode)
  awk -v k="$1" -v v="$2" 'BEGIN { done = 0 } index($0, k "=") == 1 && !done { print k "=" v; done = 1; next } { print } END { if (!done) print k "=" v }' "$env_file" >"$env_file.tmp"
  cat "$env_file.tmp" >"$env_file"
  rm -f "$env_file.tmp"
}
set_value MM_SERVER_URL "$SERVER_URL"
[ -z "$KEY" ] || set_value MM_PROVISIONING_KEY "$KEY"
[ -z "$RUNNER" ] || set_value MM_RUNNER "$RUNNER"
if [ -n "$TOKEN" ]; then
  token_file="$ROOT/var/lib/mm-agent/token"
  (umask 077 && printf '%s\n' "$TOKEN" >"$token_file")
  [ -n "$ROOT" ] || chown mm-agent:mm-agent "$token_file"
fi
chmod 0600 "$env_file"
say "wrote the settings into /etc/mm-agent/mm-agent.env"

# 5. Start it.
if [ -n "$ROOT" ] || [ "$START" -eq 0 ]; then
  say "not started (start it with: systemctl restart mm-agent)"
elif [ -d /run/systemd/system ]; then
  systemctl enable mm-agent.service >/dev/null 2>&1 || true
  systemctl restart mm-agent.service
  say "started mm-agent (journalctl -u mm-agent -f to follow it)"
else
  say "no systemd here: start it with /opt/mm-agent/bin/mm-agent-start (settings in /etc/mm-agent/mm-agent.env)"
fi
