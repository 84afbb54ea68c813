"""Pixels: resize, channel order, look-up tables and drawing, with OpenCV where it is
installed (fast, and it draws text) and plain numpy otherwise (nearest-neighbour resize,
boxes without text)."""

import numpy as np

try:  # python3-opencv
    import cv2
except ImportError:  # pragma: no cover - depends on the board
    cv2 = None

HAVE_CV2 = cv2 is not None


def resize(image, width, height, nearest=False):
    if image.shape[1] == width and image.shape[0] == height:
        return image
    if cv2 is not None:
        interp = cv2.INTER_NEAREST if nearest else cv2.INTER_LINEAR
        return cv2.resize(image, (width, height), interpolation=interp)
    ys = (np.arange(height) * image.shape[0] / height).astype(np.intp)
    xs = (np.arange(width) * image.shape[1] / width).astype(np.intp)
    return image[ys][:, xs]


def bgr_to_rgb(image):
    if cv2 is not None:
        return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    return np.ascontiguousarray(image[..., ::-1])


def apply_lut(image, lut):
    """`lut` is (256, 3) of any dtype: channel c of each pixel p becomes lut[p, c]."""
    if cv2 is not None and lut.dtype in (np.int8, np.uint8):
        return cv2.LUT(image, lut.reshape(1, 256, 3))
    out = np.empty(image.shape, lut.dtype)
    for c in range(3):
        out[..., c] = lut[image[..., c], c]
    return out


def draw_box(image, x0, y0, x1, y1, colour, thickness=2):
    h, w = image.shape[:2]
    x0, y0 = max(0, int(round(x0))), max(0, int(round(y0)))
    x1, y1 = min(w - 1, int(round(x1))), min(h - 1, int(round(y1)))
    if x1 < x0 or y1 < y0:
        return
    if cv2 is not None:
        cv2.rectangle(image, (x0, y0), (x1, y1), colour, thickness)
        return
    t = thickness
    image[y0 : y0 + t, x0 : x1 + 1] = colour
    image[max(y0, y1 - t + 1) : y1 + 1, x0 : x1 + 1] = colour
    image[y0 : y1 + 1, x0 : x0 + t] = colour
    image[y0 : y1 + 1, max(x0, x1 - t + 1) : x1 + 1] = colour


def draw_label(image, text, x, y, colour, scale=0.5):
    """`text` on a filled box of `colour` whose top-left corner is (x, y), kept inside the image."""
    if cv2 is None:
        return
    font = cv2.FONT_HERSHEY_SIMPLEX
    (tw, th), base = cv2.getTextSize(text, font, scale, 1)
    h, w = image.shape[:2]
    x = int(min(max(0, x), max(0, w - tw - 4)))
    y = int(min(max(0, y), max(0, h - th - base - 4)))
    cv2.rectangle(image, (x, y), (x + tw + 4, y + th + base + 4), colour, -1)
    ink = (0, 0, 0) if sum(colour) > 380 else (255, 255, 255)
    cv2.putText(image, text, (x + 2, y + th + 2), font, scale, ink, 1, cv2.LINE_AA)


def blend(image, overlay, alpha):
    """image ← image·(1 − alpha) + overlay·alpha, in place."""
    if cv2 is not None:
        cv2.addWeighted(overlay, alpha, image, 1 - alpha, 0, dst=image)
        return
    image[...] = (image.astype(np.float32) * (1 - alpha) + overlay.astype(np.float32) * alpha).astype(np.uint8)


def class_colour(index):
    """A distinct, stable BGR colour per class index."""
    # Golden-ratio hues, bright and saturated.
    hue = (index * 0.618033988749895) % 1.0
    i = int(hue * 6)
    f = hue * 6 - i
    v, s = 1.0, 0.85
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    r, g, b = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)][i % 6]
    return (int(b * 255), int(g * 255), int(r * 255))
