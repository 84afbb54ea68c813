"""Builds small, real .xmodel files (XIR `serial_v2` protobuf) for tests and benchmarks: the
graph of a compiled model's shape — an input op in a USER subgraph, a DPU subgraph (`device`
"DPU", `dpu_fingerprint`, `dpu_name`) of fix ops ending in the model's output tensors with
their `fix_point` — and graph attributes telling the simulated DPU what to compute
(`mm_sim_model`) and how long a frame takes (`mm_sim_dpu_ms`).

  python3 -m mm_dpu_sim.build classifier out.xmodel --input 224x224 --classes 8
  python3 -m mm_dpu_sim.build yolov3 out.xmodel --input 416x416 --classes 8 --dpu-ms 20
  python3 -m mm_dpu_sim.build segmenter out.xmodel --input 320x192 --classes 8
  python3 -m mm_dpu_sim.build identity out.xmodel --input 224x224
"""

import argparse
import json
import sys

from .functions import DEFAULT_ANCHORS
from .xmodel import Graph, Op, Subgraph, Tensor, serialize

XINT = 2
DEFAULT_FINGERPRINT = 0x101000016010407  # a DPUCZDX8G B4096's, as xdputil prints it
DEFAULT_DPU_NAME = "DPUCZDX8G_ISA1_B4096"


def _fix_tensor(name, dims, fix_point):
    return Tensor(name, dims, XINT, 8, {"fix_point": fix_point, "if_signed": True, "round_mode": "DPU_ROUND"})


def model(name, width, height, outputs, sim_model, dpu_ms=None, fingerprint=DEFAULT_FINGERPRINT, dpu_name=DEFAULT_DPU_NAME, input_fix=7, extra_attrs=None):
    """A Graph: `outputs` is [(tensor name, dims, fix_point)]."""
    ops = [Op("input", "data-fix", _fix_tensor("input", [1, height, width, 3], input_fix), attrs={"fix_point": input_fix})]
    body = Op("body", "conv2d-fix", _fix_tensor("body", [1, max(1, height // 2), max(1, width // 2), 16], 4), {"input": ["input"]}, {"kernel": [3, 3], "weights": b"\0" * 432})
    ops.append(body)
    for out_name, dims, fix in outputs:
        ops.append(Op(out_name, "conv2d-fix", _fix_tensor(out_name, dims, fix), {"input": ["body"]}, {"kernel": [1, 1]}))
    dpu_ops = [op.name for op in ops[1:]]
    dpu = Subgraph(
        "subgraph_body",
        dpu_ops,
        {"device": "DPU", "dpu_fingerprint": fingerprint, "dpu_name": dpu_name, "mc_code": b"\0" * 64},
    )
    user = Subgraph("subgraph_input", ["input"], {"device": "USER"})
    root = Subgraph("root", [], {}, [user, dpu])
    attrs = {"origin": "mm-runner test model (mm_dpu_sim.build)", "mm_sim_model": sim_model}
    if dpu_ms is not None:
        attrs["mm_sim_dpu_ms"] = float(dpu_ms)
    attrs.update(extra_attrs or {})
    return Graph(name, ops, root, attrs)


def classifier(width=224, height=224, classes=8, **kw):
    return model("classifier", width, height, [("fc", [1, classes], 2)], "classifier", **kw)


def yolo(family="yolov3", width=416, height=416, classes=8, strides=(8, 16, 32), anchors=None, **kw):
    a = 1 if family == "yolox" else 3
    outs = [("head_s%02d" % s, [1, height // s, width // s, a * (5 + classes)], 4) for s in strides]
    extra = {}
    if anchors is not None:
        extra["mm_sim_anchors"] = json.dumps(anchors)
    elif family != "yolox" and len(strides) != len(DEFAULT_ANCHORS):
        raise ValueError("give anchors for %d scales" % len(strides))
    return model(family, width, height, outs, family, extra_attrs=extra, **kw)


def segmenter(width=320, height=192, classes=8, factor=4, **kw):
    return model("segmenter", width, height, [("seg", [1, height // factor, width // factor, classes], 2)], "segmenter", **kw)


def identity(width=224, height=224, **kw):
    return model("identity", width, height, [("out", [1, height // 32 or 1, width // 32 or 1, 64], 3)], "identity", **kw)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m mm_dpu_sim.build", description="writes a small test .xmodel")
    p.add_argument("kind", choices=["classifier", "yolov3", "yolov5", "yolox", "segmenter", "identity"])
    p.add_argument("out")
    p.add_argument("--input", default=None, help="WIDTHxHEIGHT")
    p.add_argument("--classes", type=int, default=8)
    p.add_argument("--dpu-ms", type=float, default=None)
    p.add_argument("--fingerprint", type=lambda s: int(s, 0), default=DEFAULT_FINGERPRINT)
    p.add_argument("--dpu-name", default=DEFAULT_DPU_NAME)
    a = p.parse_args(argv)
    kw = {"dpu_ms": a.dpu_ms, "fingerprint": a.fingerprint, "dpu_name": a.dpu_name}
    if a.input:
        w, _, h = a.input.partition("x")
        kw["width"], kw["height"] = int(w), int(h)
    if a.kind == "classifier":
        g = classifier(classes=a.classes, **kw)
    elif a.kind in ("yolov3", "yolov5", "yolox"):
        g = yolo(a.kind, classes=a.classes, **kw)
    elif a.kind == "segmenter":
        g = segmenter(classes=a.classes, **kw)
    else:
        g = identity(**kw)
    data = serialize(g)
    with open(a.out, "wb") as f:
        f.write(data)
    sys.stdout.write("%s: %s model, %d bytes\n" % (a.out, a.kind, len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
