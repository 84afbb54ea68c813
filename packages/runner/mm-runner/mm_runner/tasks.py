"""What the model's outputs mean, per task: `post` turns the raw output tensors of one frame
into its result (what results.jsonl says about it), `draw` puts that result on the frame."""

import math

import numpy as np

from . import imaging
from .errors import ParameterProblem

# The YOLO family's COCO anchors (w, h pairs in input pixels) for strides 8, 16 and 32: the
# same numbers in darknet's yolov3.cfg and ultralytics' yolov5 models.
DEFAULT_ANCHORS = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]]
MAX_CANDIDATES = 2000
MAX_BOXES = 300


def _names(given, count, what):
    """Names for `count` classes: the given ones (exactly that many), or `class <i>`."""
    if given is None:
        return ["class %d" % i for i in range(count)]
    if len(given) != count:
        raise ParameterProblem("%s has %d names but the model's output holds %d classes" % (what, len(given), count))
    return list(given)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class Passthrough:
    """Runs the model and nothing else: for timing. The frames go out as they came."""

    name = "passthrough"

    def post(self, outputs):
        return {}

    def draw(self, frame, result):
        pass


class Classification:
    name = "classification"

    def __init__(self, params, model):
        out = max(model.final_outputs, key=lambda t: int(np.prod(t.dims)))
        self.tensor = out
        batch = out.dims[0] if out.dims else 1
        self.count = int(np.prod(out.dims)) // max(1, batch)
        self.labels = _names(params.get("labels"), self.count, "$.classification.labels")
        self.top_k = min(params.get("top_k", 5), self.count)

    def post(self, outputs):
        raw = outputs[self.tensor.name].reshape(-1)[: self.count]
        logits = raw.astype(np.float32) * self.tensor.scale
        e = np.exp(logits - logits.max())
        p = e / e.sum()
        top = np.argsort(-p, kind="stable")[: self.top_k]
        return {"classes": [{"label": self.labels[i], "score": round(float(p[i]), 4)} for i in top]}

    def draw(self, frame, result):
        y = 6
        for i, c in enumerate(result.get("classes", [])):
            colour = (40, 40, 40) if i else (0, 160, 255)
            imaging.draw_label(frame, "%s %.2f" % (c["label"], c["score"]), 6, y, colour, scale=0.6 if i == 0 else 0.5)
            y += 24 if i == 0 else 20


class Detection:
    """The YOLO family's heads: per output scale a grid of cells, each with anchors of
    (x, y, w, h, objectness, class scores); decoded, thresholded, then NMS per class."""

    name = "detection"

    def __init__(self, params, model, geometry, input_w, input_h):
        self.family = params["family"]
        self.conf = float(params.get("conf", 0.25))
        self.nms = float(params.get("nms", 0.45))
        self.geometry = geometry
        heads = [t for t in model.final_outputs if len(t.dims) == 4]
        if not heads:
            raise ParameterProblem("$.task: detection needs NHWC output tensors, the model's are %s" % [t.dims for t in model.final_outputs])
        # The largest grid is the finest stride.
        heads.sort(key=lambda t: -(t.dims[1] * t.dims[2]))
        self.heads = heads
        strides = params.get("strides")
        if strides is None:
            strides = [max(1, int(round(input_h / t.dims[1]))) for t in heads]
        elif len(strides) != len(heads):
            raise ParameterProblem("$.detection.strides has %d values but the model has %d output scales" % (len(strides), len(heads)))
        self.strides = strides
        if self.family == "yolox":
            self.anchors = [np.zeros((1, 2), np.float32) for _ in heads]
        else:
            anchors = params.get("anchors")
            if anchors is None:
                if len(heads) != len(DEFAULT_ANCHORS):
                    raise ParameterProblem("$.detection.anchors: the model has %d output scales; give the anchors of each" % len(heads))
                anchors = DEFAULT_ANCHORS
            if len(anchors) != len(heads):
                raise ParameterProblem("$.detection.anchors has %d scales but the model has %d output scales" % (len(anchors), len(heads)))
            self.anchors = [np.asarray(a, np.float32).reshape(-1, 2) for a in anchors]
        counts = set()
        for t, a in zip(heads, self.anchors):
            per = t.dims[3] // len(a)
            if per * len(a) != t.dims[3] or per < 6:
                raise ParameterProblem(
                    "$.detection: an output of %d channels does not hold %d anchors of (x, y, w, h, objectness, classes)" % (t.dims[3], len(a))
                )
            counts.add(per - 5)
        if len(counts) != 1:
            raise ParameterProblem("$.detection: the output scales disagree on the number of classes (%s)" % sorted(counts))
        self.count = counts.pop()
        self.labels = _names(params.get("classes"), self.count, "$.detection.classes")
        # Objectness below conf cannot reach conf (class scores are at most 1): cells are first
        # picked on their raw objectness, before anything is dequantized.
        c = min(max(self.conf, 1e-6), 1 - 1e-6)
        self.obj_logit = math.log(c / (1 - c))

    def post(self, outputs):
        boxes, scores, classes = [], [], []
        for t, stride, anchors in zip(self.heads, self.strides, self.anchors):
            h, w, a = t.dims[1], t.dims[2], len(anchors)
            raw = outputs[t.name][0].reshape(h, w, a, 5 + self.count)
            threshold = self.obj_logit / t.scale
            gy, gx, ai = np.nonzero(raw[..., 4] >= threshold)
            if len(gy) == 0:
                continue
            if len(gy) > MAX_CANDIDATES:
                keep = np.argsort(-raw[gy, gx, ai, 4])[:MAX_CANDIDATES]
                gy, gx, ai = gy[keep], gx[keep], ai[keep]
            v = raw[gy, gx, ai].astype(np.float32) * t.scale
            xy, wh = self._decode(v, gx, gy, ai, stride, anchors)
            obj = _sigmoid(v[:, 4])
            cls = _sigmoid(v[:, 5:])
            best = cls.argmax(1)
            score = obj * cls[np.arange(len(best)), best]
            ok = score >= self.conf
            if not ok.any():
                continue
            xy, wh = xy[ok], wh[ok]
            boxes.append(np.concatenate([xy - wh / 2, xy + wh / 2], 1))
            scores.append(score[ok])
            classes.append(best[ok])
        if not boxes:
            return {"boxes": []}
        boxes, scores, classes = np.concatenate(boxes), np.concatenate(scores), np.concatenate(classes)
        keep = nms(boxes, scores, classes, self.nms)[:MAX_BOXES]
        g = self.geometry
        out = []
        for i in keep:
            x0, y0 = g.to_frame(boxes[i, 0], boxes[i, 1])
            x1, y1 = g.to_frame(boxes[i, 2], boxes[i, 3])
            x0, x1 = max(0.0, x0), min(float(g.frame_w), x1)
            y0, y1 = max(0.0, y0), min(float(g.frame_h), y1)
            if x1 <= x0 or y1 <= y0:
                continue
            out.append(
                {
                    "label": self.labels[int(classes[i])],
                    "score": round(float(scores[i]), 4),
                    "x": round(float(x0), 1),
                    "y": round(float(y0), 1),
                    "w": round(float(x1 - x0), 1),
                    "h": round(float(y1 - y0), 1),
                    "_class": int(classes[i]),
                }
            )
        return {"boxes": out}

    def _decode(self, v, gx, gy, ai, stride, anchors):
        grid = np.stack([gx, gy], 1).astype(np.float32)
        if self.family == "yolov3":
            xy = (_sigmoid(v[:, 0:2]) + grid) * stride
            wh = np.exp(np.minimum(v[:, 2:4], 20.0)) * anchors[ai]
        elif self.family == "yolov5":
            xy = (_sigmoid(v[:, 0:2]) * 2 - 0.5 + grid) * stride
            wh = (_sigmoid(v[:, 2:4]) * 2) ** 2 * anchors[ai]
        else:  # yolox: anchor-free, one prediction per cell
            xy = (v[:, 0:2] + grid) * stride
            wh = np.exp(np.minimum(v[:, 2:4], 20.0)) * stride
        return xy, wh

    def draw(self, frame, result):
        for b in result.get("boxes", []):
            colour = imaging.class_colour(b["_class"])
            imaging.draw_box(frame, b["x"], b["y"], b["x"] + b["w"], b["y"] + b["h"], colour, 2)
            imaging.draw_label(frame, "%s %.2f" % (b["label"], b["score"]), b["x"], b["y"] - 20 if b["y"] >= 20 else b["y"] + 2, colour)


def nms(boxes, scores, classes, threshold):
    """Indices kept by greedy non-maximum suppression within each class, best score first."""
    order = np.argsort(-scores, kind="stable")
    keep = []
    area = np.maximum(0, boxes[:, 2] - boxes[:, 0]) * np.maximum(0, boxes[:, 3] - boxes[:, 1])
    while order.size:
        i = order[0]
        keep.append(int(i))
        rest = order[1:]
        same = classes[rest] == classes[i]
        xx0 = np.maximum(boxes[i, 0], boxes[rest, 0])
        yy0 = np.maximum(boxes[i, 1], boxes[rest, 1])
        xx1 = np.minimum(boxes[i, 2], boxes[rest, 2])
        yy1 = np.minimum(boxes[i, 3], boxes[rest, 3])
        inter = np.maximum(0, xx1 - xx0) * np.maximum(0, yy1 - yy0)
        iou = inter / np.maximum(area[i] + area[rest] - inter, 1e-9)
        order = rest[~(same & (iou > threshold))]
    return keep


class Segmentation:
    """A class per pixel (argmax over the output's channels), blended over the frame."""

    name = "segmentation"

    def __init__(self, params, model, geometry, input_w, input_h):
        heads = [t for t in model.final_outputs if len(t.dims) == 4]
        if not heads:
            raise ParameterProblem("$.task: segmentation needs an NHWC output tensor, the model's are %s" % [t.dims for t in model.final_outputs])
        self.tensor = max(heads, key=lambda t: t.dims[1] * t.dims[2])
        self.count = self.tensor.dims[3]
        self.labels = _names(params.get("classes"), self.count, "$.segmentation.classes")
        self.alpha = float(params.get("alpha", 0.5))
        # Class 0 (the background, by convention) black; the others bright.
        self.colours = np.array([(0, 0, 0)] + [imaging.class_colour(i) for i in range(1, self.count)], np.uint8)
        g = geometry
        oh, ow = self.tensor.dims[1], self.tensor.dims[2]
        # The part of the output grid that covers the frame (letterbox padding left out).
        kx, ky = ow / input_w, oh / input_h
        self.crop = (
            int(round(g.pad_x * kx)),
            int(round(g.pad_y * ky)),
            max(1, int(round(g.frame_w * g.sx * kx))),
            max(1, int(round(g.frame_h * g.sy * ky))),
        )
        self.frame_size = (g.frame_w, g.frame_h)

    def post(self, outputs):
        raw = outputs[self.tensor.name][0]
        cmap = raw.argmax(2).astype(np.uint8)
        x, y, w, h = self.crop
        cmap = cmap[y : y + h, x : x + w]
        counts = np.bincount(cmap.reshape(-1), minlength=self.count)
        total = max(1, int(counts.sum()))
        top = np.argsort(-counts, kind="stable")[:5]
        classes = [{"label": self.labels[i], "score": round(float(counts[i]) / total, 4)} for i in top if counts[i] > 0]
        return {"classes": classes, "_map": cmap}

    def draw(self, frame, result):
        cmap = result.get("_map")
        if cmap is None or self.alpha <= 0:
            return
        fw, fh = self.frame_size
        coloured = imaging.resize(self.colours[cmap], fw, fh, nearest=True)
        imaging.blend(frame, coloured, self.alpha)


def make_task(params, model, geometry, input_w, input_h):
    task = params["task"]
    if task == "classification":
        return Classification(params.get("classification") or {}, model)
    if task == "detection":
        return Detection(params["detection"], model, geometry, input_w, input_h)
    if task == "segmentation":
        return Segmentation(params.get("segmentation") or {}, model, geometry, input_w, input_h)
    return Passthrough()
