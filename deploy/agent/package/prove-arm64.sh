#!/usr/bin/env bash
# prove-arm64.sh: the arm64 package, proven under emulation (docs/packages.md). Too heavy for
# CI (minutes of debootstrap and emulated Node); run it before a release and report it.
#
#  1. builds mm-agent_<version>_arm64.deb (deploy/agent/package/build-debs.mjs);
#  2. makes an arm64 Debian root with debootstrap (cached as a tarball for the next run);
#  3. installs the package into it with the root's own dpkg, under qemu-user-static;
#  4. starts the control plane on loopback (this machine's Node) and runs the packaged agent
#     in the root (its own arm64 Node, through the package's start script, --simulate) with a
#     provisioning key: it enrolls, comes online, and the script checks that the agent's Node
#     is arm64, runs a transfer and an execute with a 32 MiB weights file, and a PAC query;
#  5. opens a terminal on the board through the control plane (prove-terminal.ts): the shell
#     runs in the root as MM_TERMINAL_USER (a login user made there, as a board has one), in a
#     pseudo-terminal made by the agent's Python helper; it says aarch64, follows a resize,
#     exits with a status, and the session is recorded. The package holds no native module
#     (no *.node file): nothing of it is compiled on the board.
#
# Needs root and Debian's qemu-user-static binfmt-support debootstrap (apt-get install them).
# Timings are emulation figures, not a real board's.
#
# Usage: sudo deploy/agent/package/prove-arm64.sh [--work DIR] [--keep]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO="$(cd "$HERE/../../.." && pwd -P)"
WORK=""
KEEP=0
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
CACHE="${MM_PACKAGE_CACHE:-$HOME/.cache/mm-agent-package}"
while [ $# -gt 0 ]; do
  case "$1" in
    --work) WORK="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "prove-arm64: run as root (chroot, debootstrap)" >&2; exit 1; }
for bin in debootstrap qemu-aarch64-static update-binfmts curl; do
  command -v "$bin" >/dev/null || { echo "prove-arm64: $bin is missing (apt-get install qemu-user-static binfmt-support debootstrap curl)" >&2; exit 1; }
done
[ -n "$WORK" ] || WORK="$(mktemp -d /tmp/mm-prove-arm64.XXXXXX)"
mkdir -p "$WORK" "$CACHE"
WORK="$(cd "$WORK" && pwd -P)"
ROOT="$WORK/root"
SERVER_PID=""
AGENT_PID=""
cleanup() {
  [ -z "$AGENT_PID" ] || kill "$AGENT_PID" 2>/dev/null || true
  [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  # The agent's Node is the start script's child: it may outlive the script for a moment, and
  # holds the root's /dev until it is gone. Wait for every process inside the root, then end it.
  if [ -d "$ROOT" ]; then
    for i in $(seq 1 20); do
      inside=""
      for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && inside="$inside ${p#/proc/}"; done
      [ -n "$inside" ] || break
      [ "$i" -lt 20 ] && sleep 0.5 || kill -9 $inside 2>/dev/null || true
    done
  fi
  for m in dev/pts proc dev; do umount "$ROOT/$m" 2>/dev/null || true; done
  # Never delete through a mount that is still there (the bind of /dev above all).
  if mountpoint -q "$ROOT/dev/pts" || mountpoint -q "$ROOT/dev" || mountpoint -q "$ROOT/proc"; then
    echo "prove-arm64: $ROOT still has mounts; left in place" >&2
  elif [ "$KEEP" -ne 1 ]; then
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
t0=$(date +%s.%N)
stamp() { printf 'prove-arm64: [%6.1f s] %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$*"; }

# binfmt: arm64 programs (and what they spawn) run through qemu.
mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true

stamp "building the arm64 package"
node "$HERE/build-debs.mjs" --arch arm64 --out "$WORK/packages" >"$WORK/build.log"
DEB="$(ls "$WORK"/packages/mm-agent_*_arm64.deb)"
stamp "built $(basename "$DEB") ($(du -h "$DEB" | cut -f1))"

# python3: the package recommends it (apt installs it with the package; dpkg -i here does not)
# and the terminal's pty helper needs it. The cache's name says which root it holds.
ROOT_TAR="$CACHE/debian-$SUITE-arm64-minbase-python3.tar"
if [ -f "$ROOT_TAR" ]; then
  mkdir -p "$ROOT" && tar -xf "$ROOT_TAR" -C "$ROOT"
  stamp "arm64 root from the cache ($ROOT_TAR)"
else
  stamp "debootstrap --arch=arm64 $SUITE (first run: downloads and runs the second stage emulated)"
  debootstrap --arch=arm64 --variant=minbase --include=adduser,init-system-helpers,sudo,python3 "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1
  tar -cf "$ROOT_TAR.partial" -C "$ROOT" . && mv "$ROOT_TAR.partial" "$ROOT_TAR"
  stamp "arm64 root made and cached"
fi
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
# A terminal's pty: /dev/ptmx finds its devpts instance at the pts folder beside it, which the
# (non-recursive) bind of /dev leaves empty.
mount --bind /dev/pts "$ROOT/dev/pts"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true

stamp "installing the package with the root's dpkg (emulated)"
cp "$DEB" "$ROOT/tmp/mm-agent.deb"
chroot "$ROOT" dpkg -i /tmp/mm-agent.deb >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log"; exit 1; }
stamp "installed; its node says: $(chroot "$ROOT" /opt/mm-agent/node/bin/node -p 'process.arch + " " + process.version')"
[ "$(chroot "$ROOT" /opt/mm-agent/node/bin/node -p process.arch)" = arm64 ] || { echo "prove-arm64: the packaged node is not arm64" >&2; exit 1; }
NATIVE="$(dpkg-deb -c "$DEB" | grep -c '\.node$' || true)"
[ "$NATIVE" = 0 ] || { echo "prove-arm64: the package holds native modules:" >&2; dpkg-deb -c "$DEB" | grep '\.node$' >&2; exit 1; }
stamp "no native module in the package (no *.node file among $(dpkg-deb -c "$DEB" | wc -l) entries)"
# The terminal's user: a login user of the board's own (a Kria image has ubuntu); the agent
# runs as root here (no systemd), so MM_TERMINAL_USER must name one (docs/terminal.md).
TERM_USER=ubuntu
chroot "$ROOT" /bin/sh -c "getent passwd $TERM_USER >/dev/null || useradd --create-home --shell /bin/bash $TERM_USER"
printf 'MM_TERMINAL=on\nMM_TERMINAL_USER=%s\n' "$TERM_USER" >>"$ROOT/etc/mm-agent/mm-agent.env"

PORT="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
URL="http://127.0.0.1:$PORT"
TOKEN="prove-arm64-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
(cd "$REPO" && PORT=$PORT MM_DATA_DIR="$WORK/server-data" MM_API_TOKEN="$TOKEN" LOG_LEVEL=warn exec node packages/server/bin/mm-server.mjs >"$WORK/server.log" 2>&1) &
SERVER_PID=$!
api() { curl -fsS -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' "$@"; }
for _ in $(seq 1 120); do curl -fsS "$URL/api/health/" >/dev/null 2>&1 && break; sleep 1; done
stamp "control plane up on $URL"

KEY="$(api -X POST "$URL/api/provisioning-keys/" -d '{"name":"arm64 proof","labels":{"proof":"arm64"}}' | node -p 'JSON.parse(require("fs").readFileSync(0)).key')"
sed -i -e "s|^MM_SERVER_URL=.*|MM_SERVER_URL=$URL|" -e "s|^MM_PROVISIONING_KEY=.*|MM_PROVISIONING_KEY=$KEY|" "$ROOT/etc/mm-agent/mm-agent.env"
# The unit's way, without systemd: the settings file's values, then the start script (the
# simulated board brings its own xlnx-config, reboot and PAC folder: the file's are left out).
chroot "$ROOT" /bin/sh -c 'export $(grep -E "^(MM_SERVER_URL|MM_PROVISIONING_KEY|MM_BOARD_TOKEN_FILE|MM_AGENT_DIR|LOG_LEVEL|MM_TERMINAL|MM_TERMINAL_USER)=" /etc/mm-agent/mm-agent.env); export MM_SIM_GPIO_PORT=0; exec /opt/mm-agent/bin/mm-agent-start --simulate' >"$WORK/agent.log" 2>&1 &
AGENT_PID=$!
stamp "agent started in the arm64 root (enrolling with a provisioning key)"
BOARD=""
for _ in $(seq 1 600); do
  BOARD="$(api "$URL/api/boards/" | node -p 'const b=JSON.parse(require("fs").readFileSync(0)).boards.find(x=>x.status==="online"&&x.labels.proof==="arm64"); b?b.id:""')"
  [ -n "$BOARD" ] && break
  sleep 1
done
[ -n "$BOARD" ] || { echo "prove-arm64: the board did not come online"; tail -n 40 "$WORK/agent.log"; exit 1; }
stamp "board $BOARD online: $(api "$URL/api/boards/$BOARD/" | node -p 'const b=JSON.parse(require("fs").readFileSync(0)); `agent ${b.agent_version}, labels ${JSON.stringify(b.labels)}`')"
[ -s "$ROOT/var/lib/mm-agent/token" ] && stamp "token kept in /var/lib/mm-agent/token ($(stat -c %a "$ROOT/var/lib/mm-agent/token"))"

INV="$(api -X POST "$URL/api/invocations/create/" -d '{"name":"arm64 proof","description":""}' | node -p 'JSON.parse(require("fs").readFileSync(0)).id')"
head -c $((32 * 1024 * 1024)) /dev/urandom >"$WORK/weights.bin"
echo '{"duration_s":1}' >"$WORK/params.json"
curl -fsS -H "authorization: Bearer $TOKEN" -F file_type=weights -F "file=@$WORK/weights.bin" "$URL/api/invocations/$INV/upload/" >/dev/null
curl -fsS -H "authorization: Bearer $TOKEN" -F file_type=parameter -F "file=@$WORK/params.json" "$URL/api/invocations/$INV/upload/" >/dev/null
s=$(date +%s.%N)
api -X POST "$URL/api/invocations/$INV/transfer/" -d '{}' | node -e 'const o=JSON.parse(require("fs").readFileSync(0));if(o.status!=="succeeded")throw new Error(JSON.stringify(o))'
stamp "transfer of 32 MiB succeeded in $(echo "$(date +%s.%N) - $s" | bc | cut -c1-5) s"
s=$(date +%s.%N)
api -X POST "$URL/api/invocations/$INV/execute/" -d '{}' | node -e 'const o=JSON.parse(require("fs").readFileSync(0));if(o.status!=="succeeded")throw new Error(JSON.stringify(o))'
stamp "execute succeeded in $(echo "$(date +%s.%N) - $s" | bc | cut -c1-5) s; output video: $(curl -fsS -o /dev/null -w '%{size_download} bytes, %{content_type}' -H "authorization: Bearer $TOKEN" "$URL/api/invocations/$INV/video/")"
s=$(date +%s.%N)
PACS="$(api -X POST "$URL/api/pacs/query/" -d "{\"board_id\":\"$BOARD\"}")"
stamp "PAC query answered in $(echo "$(date +%s.%N) - $s" | bc | cut -c1-5) s: $(echo "$PACS" | node -p 'const a=JSON.parse(require("fs").readFileSync(0)); `${a.pacs.length} PACs, active ${a.active}`')"
stamp "opening a terminal on the board (as the admin, through the control plane)"
(cd "$REPO" && node_modules/.bin/tsx deploy/agent/package/prove-terminal.ts --url "$URL" --token "$TOKEN" --board "$BOARD" --user "$TERM_USER") \
  || { echo "prove-arm64: the terminal failed"; tail -n 40 "$WORK/agent.log"; exit 1; }
stamp "terminal proven: a shell in the arm64 root through the control plane, recorded"
stamp "proven: the arm64 package runs on arm64 (under qemu-user-static; emulation timings)"
