"""What the simulated DPU computes: a known, deterministic function of the real input tensor,
so that everything around it (pre-processing, post-processing, NMS, drawing) can be checked.

The input is read as the model would: its int8 values times 2^-fix_point are the image in
RGB order scaled to 0..1 (a parameter file with `channels: "rgb"`, mean 0 and scale 1/255
feeds exactly that; a wrong one gives the wrong answer, as a real model would).

- classifier: the frame's dominant colour among PALETTE (the logit of each palette colour
  falls with its distance from the mean colour);
- yolov3 / yolov5 / yolox: one box per palette colour (black is the background) around the
  pixels of that colour, written into YOLO-shaped output tensors the family's decode turns
  back into those boxes;
- segmenter: each output cell's nearest palette colour;
- anything else: zeros (timing only)."""

import math

import numpy as np

PALETTE_NAMES = ["black", "white", "red", "green", "blue", "yellow", "cyan", "magenta"]
PALETTE = np.array(
    [[0, 0, 0], [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 1]],
    np.float32,
)
DEFAULT_ANCHORS = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]]
# A pixel belongs to a palette colour when it is this close to it (RGB 0..1, Euclidean).
NEAR = 0.3
MIN_PIXELS = 16


def dequantize(arr, fix_point):
    return arr.astype(np.float32) * (2.0 ** -fix_point)


def quantize(values, fix_point, dtype=np.int8):
    info = np.iinfo(dtype)
    return np.clip(np.round(np.asarray(values, np.float64) * (2.0 ** fix_point)), info.min, info.max).astype(dtype)


# The palette's colours are the corners of the RGB cube: the nearest one rounds each channel.
# Corner code r·4 + g·2 + b → palette index.
_CORNER = np.array([0, 4, 3, 6, 2, 7, 5, 1], np.intp)


def nearest_palette(rgb):
    """Index of the nearest palette colour for each pixel of (..., 3), and its distance."""
    bits = rgb > 0.5
    code = bits[..., 0] * 4 + bits[..., 1] * 2 + bits[..., 2]
    dist = np.sqrt(((rgb - bits) ** 2).sum(-1))
    return _CORNER[code], dist


def classify(image, count):
    """Logits over `count` classes: palette colours by closeness to the mean colour."""
    mean = image.reshape(-1, 3).mean(0)
    d2 = ((PALETTE - mean) ** 2).sum(1)
    logits = np.full(count, -12.0, np.float32)
    n = min(count, len(PALETTE))
    logits[:n] = 8.0 - 16.0 * d2[:n]
    return logits


def find_boxes(image):
    """(class index, x0, y0, x1, y1) in input pixels: the bounding box of each palette
    colour's pixels, black excepted. Found on every 4th pixel, then its edges refined on
    every pixel around them."""
    step = 4
    idx, dist = nearest_palette(image[::step, ::step])
    h, w = image.shape[:2]
    boxes = []
    for k in range(1, len(PALETTE)):
        ys, xs = np.nonzero((idx == k) & (dist < NEAR))
        if len(ys) * step * step < MIN_PIXELS:
            continue
        x0, x1 = max(0, xs.min() * step - step), min(w, xs.max() * step + 2 * step)
        y0, y1 = max(0, ys.min() * step - step), min(h, ys.max() * step + 2 * step)
        fine_idx, fine_dist = nearest_palette(image[y0:y1, x0:x1])
        fy, fx = np.nonzero((fine_idx == k) & (fine_dist < NEAR))
        boxes.append((k, x0 + fx.min(), y0 + fy.min(), x0 + fx.max() + 1, y0 + fy.max() + 1))
    return boxes


def _logit(p):
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _iou_wh(w, h, aw, ah):
    inter = min(w, aw) * min(h, ah)
    return inter / (w * h + aw * ah - inter)


def encode_yolo(boxes, heads, family, anchors, count, background=-10.0):
    """Raw (real-valued) output tensors, one per head (H, W, channels), finest grid first,
    holding `boxes` so the family's decode finds them."""
    outs = [np.full((h, w, c), background, np.float32) for h, w, c, _s in heads]
    for out in outs:
        # Box coordinates of empty cells: the neutral value of each decode.
        out[...] = background
    for k, x0, y0, x1, y1 in boxes:
        if k >= count:
            continue
        cx, cy, bw, bh = (x0 + x1) / 2.0, (y0 + y1) / 2.0, float(x1 - x0), float(y1 - y0)
        if family == "yolox":
            # The head whose stride makes the box about 8 cells wide.
            hi = min(range(len(heads)), key=lambda i: abs(math.log(max(bw, bh) / (8.0 * heads[i][3]))))
            a = 0
        else:
            best = max(
                ((i, j) for i in range(len(heads)) for j in range(len(anchors[i]) // 2)),
                key=lambda ij: _iou_wh(bw, bh, anchors[ij[0]][2 * ij[1]], anchors[ij[0]][2 * ij[1] + 1]),
            )
            hi, a = best
        h, w, c, stride = heads[hi]
        per = c // (1 if family == "yolox" else len(anchors[hi]) // 2)
        gx, gy = min(w - 1, int(cx // stride)), min(h - 1, int(cy // stride))
        fx, fy = cx / stride - gx, cy / stride - gy
        o = a * per
        cell = outs[hi][gy, gx]
        if family == "yolov3":
            aw, ah = anchors[hi][2 * a], anchors[hi][2 * a + 1]
            cell[o : o + 4] = [_logit(fx), _logit(fy), math.log(bw / aw), math.log(bh / ah)]
        elif family == "yolov5":
            aw, ah = anchors[hi][2 * a], anchors[hi][2 * a + 1]
            cell[o : o + 4] = [_logit((fx + 0.5) / 2), _logit((fy + 0.5) / 2), _logit(math.sqrt(bw / aw) / 2), _logit(math.sqrt(bh / ah) / 2)]
        else:
            cell[o : o + 4] = [fx, fy, math.log(bw / stride), math.log(bh / stride)]
        cell[o + 4] = 6.0
        cell[o + 5 : o + per] = -6.0
        cell[o + 5 + k] = 6.0
    return outs


def segment(image, out_h, out_w, count):
    """One-hot logits (out_h, out_w, count) of each cell's nearest palette colour."""
    h, w = image.shape[:2]
    ys = (np.arange(out_h) * h / out_h + h / out_h / 2).astype(np.intp).clip(0, h - 1)
    xs = (np.arange(out_w) * w / out_w + w / out_w / 2).astype(np.intp).clip(0, w - 1)
    idx, _ = nearest_palette(image[ys][:, xs])
    out = np.full((out_h, out_w, count), -4.0, np.float32)
    np.put_along_axis(out, np.minimum(idx, count - 1)[..., None], 4.0, -1)
    return out
