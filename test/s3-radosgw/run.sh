#!/usr/bin/env bash
# The blob store against a real S3 implementation: Ceph's radosgw from Debian, one memstore
# OSD on loopback, no auth (issue 27). By hand, as root, from the repository root:
#
#   test/s3-radosgw/run.sh            # installs the packages if missing (minutes), then runs
#   KEEP=1 test/s3-radosgw/run.sh     # leaves the cluster running (prints how to stop it)
#
# It starts a monitor, one OSD (memstore, 2 GiB, in memory) and radosgw (beast on
# 127.0.0.1:$RGW_PORT), creates an S3 user, then runs with MM_TEST_S3_* pointing at it
# (test/support/s3-server.ts then uses it instead of s3rver; each test gets its own bucket):
#   - packages/server/test/blob-store-contract.test.ts (the BlobStore contract)
#   - test/e2e/s3-blob-store.test.ts (server and simulated board on the store: multipart and
#     tus uploads, transfer, execute, Range reads, presigned redirects, an aborted upload)
#   - packages/server/test/s3-downloads.test.ts
# The fast suite keeps s3rver.
set -euo pipefail

RGW_PORT=${RGW_PORT:-7480}
MON_PORT=${MON_PORT:-6789}
ACCESS_KEY=${ACCESS_KEY:-MMRADOSGWKEY}
SECRET_KEY=${SECRET_KEY:-mm-radosgw-secret}
REPO=$(cd "$(dirname "$0")/../.." && pwd)

if ! command -v radosgw >/dev/null || ! command -v ceph-mon >/dev/null || ! command -v ceph-osd >/dev/null; then
  echo "installing ceph-mon ceph-osd radosgw ceph-common (takes minutes)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common uuid-runtime
fi

DIR=$(mktemp -d /tmp/mm-radosgw.XXXXXX)
CONF=$DIR/ceph.conf
FSID=$(uuidgen)
mkdir -p "$DIR/mon" "$DIR/osd0" "$DIR/rgw" "$DIR/run" "$DIR/log"
cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon host = v1:127.0.0.1:$MON_PORT
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 2147483648
run dir = $DIR/run
log file = $DIR/log/\$name.log
[mon.a]
mon data = $DIR/mon
[osd.0]
osd data = $DIR/osd0
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $DIR/rgw
EOF

PIDS=()
cleanup() {
  if [[ "${KEEP:-}" == 1 ]]; then
    echo "left running (pids ${PIDS[*]}); stop with: kill ${PIDS[*]}; rm -rf $DIR"
    return
  fi
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

echo "monitor"
monmaptool --create --add a "127.0.0.1:$MON_PORT" --fsid "$FSID" "$DIR/monmap" >/dev/null
ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap"
ceph-mon -c "$CONF" -i a -f &
PIDS+=($!)
for _ in $(seq 60); do ceph -c "$CONF" mon stat >/dev/null 2>&1 && break; sleep 1; done

echo "one memstore OSD"
OSD_UUID=$(uuidgen)
OSD_ID=$(ceph -c "$CONF" osd new "$OSD_UUID")
ceph-osd -c "$CONF" -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID"
ceph-osd -c "$CONF" -i "$OSD_ID" -f &
PIDS+=($!)
for _ in $(seq 60); do ceph -c "$CONF" osd stat 2>/dev/null | grep -q '1 up' && break; sleep 1; done

echo "radosgw on 127.0.0.1:$RGW_PORT"
radosgw -c "$CONF" -n client.rgw.a -f &
PIDS+=($!)
for _ in $(seq 120); do curl -fsS "http://127.0.0.1:$RGW_PORT/" >/dev/null 2>&1 && break; sleep 1; done
radosgw-admin -c "$CONF" user create --uid=mm --display-name="Model Manager tests" --access-key="$ACCESS_KEY" --secret="$SECRET_KEY" >/dev/null

export MM_TEST_S3_ENDPOINT="http://127.0.0.1:$RGW_PORT"
export MM_TEST_S3_ACCESS_KEY_ID="$ACCESS_KEY"
export MM_TEST_S3_SECRET_ACCESS_KEY="$SECRET_KEY"
cd "$REPO"
npx vitest run packages/server/test/blob-store-contract.test.ts test/e2e/s3-blob-store.test.ts packages/server/test/s3-downloads.test.ts
