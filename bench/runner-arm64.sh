#!/bin/sh
# mm-runner on arm64 under qemu (run by hand, as root; docs/runner.md): the runner as the
# agent package carries it, in an arm64 Debian root with Debian's python3-numpy,
# python3-opencv and ffmpeg (what a Kria's Ubuntu has), the simulated DPU standing in for
# the Vitis AI runtime. Runs a classification and a detection over short synthetic videos and
# checks the labels and boxes in results.jsonl.
#
#   sudo sh bench/runner-arm64.sh [ROOT]        (ROOT default /var/tmp/mm-arm64-root)
#
# Needs (STACK-NOTES): apt-get install qemu-user-static binfmt-support debootstrap; binfmt_misc
# mounted (mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc) and
# update-binfmts --enable qemu-aarch64. The first run makes the root with debootstrap (a few
# hundred MB from deb.debian.org; the second stage runs under emulation, which is slow);
# later runs reuse it.
set -eu

here=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
root=${1:-/var/tmp/mm-arm64-root}
runner="$here/packages/runner/mm-runner"
host_python=${MM_TEST_PYTHON:-/usr/bin/python3}

if [ ! -x "$root/usr/bin/python3" ] || ! chroot "$root" python3 -c 'import numpy, cv2' 2>/dev/null; then
  echo "making the arm64 root in $root (debootstrap, then dpkg under qemu)"
  debootstrap --arch=arm64 --variant=minbase --include=python3,python3-numpy,python3-opencv,ffmpeg bookworm "$root" http://deb.debian.org/debian
fi

echo "inside: $(chroot "$root" uname -m), $(chroot "$root" python3 -c 'import platform, numpy, cv2; print("Python", platform.python_version(), "numpy", numpy.__version__, "OpenCV", cv2.__version__)'), $(chroot "$root" ffmpeg -hide_banner -version | head -1)"

# The runner as the agent package lays it out (beside the bundle), byte-code caches left out.
rm -rf "$root/opt/mm-runner"
mkdir -p "$root/opt/mm-runner"
(cd "$runner" && tar --exclude=__pycache__ -cf - .) | (cd "$root/opt/mm-runner" && tar -xf -)
work="$root/tmp/mm-runner-arm64"
rm -rf "$work"
mkdir -p "$work"

# Test models (the builder is plain Python: run on the host) and videos.
PYTHONPATH="$runner/sim" "$host_python" -m mm_dpu_sim.build classifier "$work/classifier.xmodel" --input 224x224 --dpu-ms 5 >/dev/null
PYTHONPATH="$runner/sim" "$host_python" -m mm_dpu_sim.build yolov5 "$work/yolo.xmodel" --input 416x416 --dpu-ms 5 >/dev/null
ffmpeg -v error -y -f lavfi -i color=c=red:s=320x240:d=1:r=10 -f lavfi -i color=c=0x00FF00:s=320x240:d=1:r=10 \
  -filter_complex '[0][1]concat=n=2:v=1' -pix_fmt yuv420p "$work/colours.mp4"
ffmpeg -v error -y -f lavfi -i 'color=c=black:s=640x360:d=1:r=10,drawbox=x=60:y=40:w=160:h=100:color=red:t=fill,drawbox=x=400:y=180:w=100:h=140:color=blue:t=fill' \
  -pix_fmt yuv420p "$work/rects.mp4"
cat > "$work/classify.json" <<'EOF'
{"schema":"mm-runner/1","task":"classification","preprocess":{"channels":"rgb","scale":[0.00392156862745098,0.00392156862745098,0.00392156862745098]},
 "classification":{"labels":["black","white","red","green","blue","yellow","cyan","magenta"],"top_k":2},"run":{"threads":2,"warmup":2}}
EOF
cat > "$work/detect.json" <<'EOF'
{"schema":"mm-runner/1","task":"detection","preprocess":{"resize":"letterbox","channels":"rgb","scale":[0.00392156862745098,0.00392156862745098,0.00392156862745098]},
 "detection":{"family":"yolov5","classes":["black","white","red","green","blue","yellow","cyan","magenta"]},"run":{"threads":2}}
EOF

run() { # name parameter model video
  out="/tmp/mm-runner-arm64/out-$1"
  mkdir -p "$root$out"
  start=$(date +%s.%N)
  chroot "$root" env -i PATH=/usr/bin:/bin PYTHONPATH=/opt/mm-runner/sim MM_PYTHON=python3 MM_RUNNER_IDLE_S=0.2 \
    MM_OUTPUT_DIR="$out" MM_PARAMETER="/tmp/mm-runner-arm64/$2" MM_WEIGHTS="/tmp/mm-runner-arm64/$3" MM_INPUT_VIDEO="/tmp/mm-runner-arm64/$4" \
    /opt/mm-runner/bin/mm-runner
  echo "$1: $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s under qemu; $(ls "$root$out" | tr '\n' ' ')"
}
run classify classify.json classifier.xmodel colours.mp4
run detect detect.json yolo.xmodel rects.mp4

"$host_python" - "$work" <<'EOF'
import json, sys
work = sys.argv[1]
lines = [json.loads(l) for l in open(work + "/out-classify/results.jsonl")]
labels = [l["classes"][0]["label"] for l in lines]
assert labels == ["red"] * 10 + ["green"] * 10, labels
det = [json.loads(l) for l in open(work + "/out-detect/results.jsonl")]
for l in det:
    boxes = {b["label"]: b for b in l["boxes"]}
    assert sorted(boxes) == ["blue", "red"], l
    for label, want in (("red", (60, 40, 160, 100)), ("blue", (400, 180, 100, 140))):
        got = tuple(boxes[label][k] for k in "xywh")
        assert all(abs(g - w) < 3 + 0.05 * max(want[2:]) for g, w in zip(got, want)), (label, got, want)
m = json.load(open(work + "/out-detect/metrics.json"))
print("arm64 OK: 20 frames labelled red then green; 10 frames with both boxes where the rectangles are")
print("detection figures under qemu:", {k: m[k] for k in ("frames", "e2e_fps", "dpu_fps", "latency_ms_p50", "dpu_ms")})
EOF
