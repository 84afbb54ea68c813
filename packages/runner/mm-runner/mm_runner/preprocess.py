"""A decoded frame (BGR, uint8) → the DPU's input tensor: resize (stretch or letterbox), the
model's channel order, then (pixel − mean) × scale, quantized as VART requires: multiplied by
2^fix_point of the input tensor, rounded and saturated to int8. Mean, scale and quantization
act on each 0–255 value of each channel alone, so they fold into one 256-entry table per
channel applied in a single pass (one OpenCV LUT), whatever the frame size."""

import numpy as np

from . import imaging
from .errors import ParameterProblem

LETTERBOX_GREY = 114  # the YOLO family's padding value


class Geometry:
    """How a point of the model's input maps back onto the frame: x_frame = (x − pad_x) / sx."""

    def __init__(self, sx, sy, pad_x, pad_y, frame_w, frame_h):
        self.sx, self.sy, self.pad_x, self.pad_y = sx, sy, pad_x, pad_y
        self.frame_w, self.frame_h = frame_w, frame_h

    def to_frame(self, x, y):
        return (x - self.pad_x) / self.sx, (y - self.pad_y) / self.sy


def quantization_table(mean, scale, fix_point, dtype):
    """(256, 3): value v of channel c → (v − mean[c]) · scale[c] · 2^fix_point, as `dtype`."""
    v = np.arange(256, dtype=np.float64)[:, None]
    real = (v - np.asarray(mean, np.float64)[None, :]) * np.asarray(scale, np.float64)[None, :]
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.round(real * (2.0 ** fix_point)), info.min, info.max).astype(dtype)
    return real.astype(dtype)


def tensor_dtype(dtype_name):
    """A VART tensor's dtype ("xint8", "int8", "float32", …) → numpy's."""
    name = str(dtype_name).lower()
    for prefix, table in (("xint", np.int8), ("int", np.int8), ("xuint", np.uint8), ("uint", np.uint8)):
        if name.startswith(prefix):
            bits = int(name[len(prefix) :] or 8)
            return {8: table, 16: np.int16 if table is np.int8 else np.uint16, 32: np.int32 if table is np.int8 else np.uint32}.get(bits, table)
    if name.startswith("float") or name.startswith("bfloat"):
        return np.float32
    return np.int8


class Preprocessor:
    def __init__(self, params, dims, fix_point, dtype_name, frame_w, frame_h):
        if len(dims) != 4 or dims[3] != 3:
            raise ParameterProblem("the model's input tensor is %s: mm-runner feeds images, NHWC with 3 channels" % (list(dims),))
        self.dims = list(dims)
        model_h, model_w = int(dims[1]), int(dims[2])
        size = params.get("size")
        if size and (size[0] != model_w or size[1] != model_h):
            raise ParameterProblem(
                "$.preprocess.size: [%d, %d] is not the model's input size [%d, %d] (width, height)" % (size[0], size[1], model_w, model_h)
            )
        self.width, self.height = model_w, model_h
        self.rgb = params["channels"] == "rgb"
        self.letterbox = params["resize"] == "letterbox"
        self.dtype = tensor_dtype(dtype_name)
        self.table = quantization_table(params["mean"], params["scale"], fix_point or 0, self.dtype)
        self.geometry = self._geometry(frame_w, frame_h)

    def _geometry(self, fw, fh):
        if not self.letterbox:
            return Geometry(self.width / fw, self.height / fh, 0.0, 0.0, fw, fh)
        r = min(self.width / fw, self.height / fh)
        nw, nh = max(1, int(round(fw * r))), max(1, int(round(fh * r)))
        return Geometry(r, r, (self.width - nw) // 2, (self.height - nh) // 2, fw, fh)

    def __call__(self, frame):
        """The input tensor's data for one frame (batch item 0; other items zero)."""
        g = self.geometry
        if self.letterbox:
            nw = int(round(g.frame_w * g.sx))
            nh = int(round(g.frame_h * g.sy))
            canvas = np.full((self.height, self.width, 3), LETTERBOX_GREY, np.uint8)
            canvas[int(g.pad_y) : int(g.pad_y) + nh, int(g.pad_x) : int(g.pad_x) + nw] = imaging.resize(frame, nw, nh)
            image = canvas
        else:
            image = imaging.resize(frame, self.width, self.height)
        if self.rgb:
            image = imaging.bgr_to_rgb(image)
        values = imaging.apply_lut(np.ascontiguousarray(image), self.table)
        if self.dims[0] == 1:
            return values.reshape(self.dims)
        batch = np.zeros(self.dims, self.dtype)
        batch[0] = values
        return batch
