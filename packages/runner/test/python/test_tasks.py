import unittest

import numpy as np

from mm_dpu_sim import functions as fn
from mm_runner.errors import ParameterProblem
from mm_runner.preprocess import Preprocessor, quantization_table
from mm_runner.tasks import Classification, Detection, Segmentation, nms


class T:
    """A DPU tensor as mm_runner.dpu.TensorInfo describes it."""

    def __init__(self, name, dims, fix_point):
        self.name, self.dims, self.fix_point = name, dims, fix_point
        self.scale = 2.0 ** -fix_point


class Model:
    def __init__(self, outputs):
        self.final_outputs = outputs


PARAMS = {"resize": "letterbox", "mean": [0, 0, 0], "scale": [1 / 255.0] * 3, "channels": "rgb"}


class DetectionTest(unittest.TestCase):
    def round_trip(self, family, frame_w, frame_h, resize):
        """Rectangles drawn on a frame → pre-processing → the stand-in's YOLO tensors → decode
        and NMS → boxes on the frame where the rectangles are."""
        w, h, classes = 416, 416, 8
        frame = np.zeros((frame_h, frame_w, 3), np.uint8)
        want = {"red": (40, 30, 200, 120), "lime": (300, 200, 90, 60), "blue": (500, 40, 60, 250)}
        bgr = {"red": (0, 0, 255), "lime": (0, 255, 0), "blue": (255, 0, 0)}
        for name, (x, y, bw, bh) in want.items():
            frame[y : y + bh, x : x + bw] = bgr[name]
        pre = Preprocessor(dict(PARAMS, resize=resize), [1, h, w, 3], 7, "xint8", frame_w, frame_h)
        data = pre(frame)
        a = 1 if family == "yolox" else 3
        heads = [T("s%d" % s, [1, h // s, w // s, a * (5 + classes)], 4) for s in (32, 8, 16)]  # any order
        image = fn.dequantize(data[0], 7)
        order = sorted(heads, key=lambda t: -t.dims[1])
        raws = fn.encode_yolo(fn.find_boxes(image), [(t.dims[1], t.dims[2], t.dims[3], h // t.dims[1]) for t in order], family, fn.DEFAULT_ANCHORS, classes)
        outputs = {t.name: fn.quantize(raw, 4)[None] for t, raw in zip(order, raws)}
        task = Detection({"family": family, "classes": fn.PALETTE_NAMES, "conf": 0.5, "nms": 0.45}, Model(heads), pre.geometry, w, h)
        boxes = task.post(outputs)["boxes"]
        got = {b["label"]: (b["x"], b["y"], b["w"], b["h"]) for b in boxes}
        self.assertEqual(sorted(got), ["blue", "green", "red"])
        for name, label in (("red", "red"), ("lime", "green"), ("blue", "blue")):
            # Off by the quantization of the outputs (1/16 of a logit) at most, and a pixel or two.
            for g, e, size in zip(got[label], want[name], want[name][2:] * 2):
                self.assertLess(abs(g - e), 3 + 0.04 * size, "%s %s: %s against %s" % (family, label, got[label], want[name]))

    def test_yolov3(self):
        self.round_trip("yolov3", 640, 360, "letterbox")

    def test_yolov5(self):
        self.round_trip("yolov5", 640, 360, "stretch")

    def test_yolox(self):
        self.round_trip("yolox", 640, 480, "letterbox")

    def test_the_classes_must_match_the_model(self):
        heads = [T("a", [1, 52, 52, 39], 3), T("b", [1, 26, 26, 39], 3), T("c", [1, 13, 13, 39], 3)]
        with self.assertRaises(ParameterProblem) as got:
            Detection({"family": "yolov3", "classes": ["a", "b"]}, Model(heads), None, 416, 416)
        self.assertIn("8 classes", str(got.exception))
        with self.assertRaises(ParameterProblem):
            Detection({"family": "yolov3", "anchors": [[1, 2]]}, Model(heads), None, 416, 416)

    def test_nms_keeps_the_best_of_overlapping_boxes_per_class(self):
        boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [0, 0, 10, 10], [50, 50, 60, 60]], np.float32)
        scores = np.array([0.8, 0.9, 0.7, 0.5], np.float32)
        classes = np.array([0, 0, 1, 0])
        self.assertEqual(nms(boxes, scores, classes, 0.45), [1, 2, 3])


class ClassificationTest(unittest.TestCase):
    def test_top_k_with_labels(self):
        t = T("fc", [1, 4], 2)
        task = Classification({"labels": ["a", "b", "c", "d"], "top_k": 2}, Model([t]))
        out = task.post({"fc": np.array([[0, 12, 4, -8]], np.int8)})
        self.assertEqual([c["label"] for c in out["classes"]], ["b", "c"])
        self.assertAlmostEqual(sum(c["score"] for c in task.post({"fc": np.zeros((1, 4), np.int8)})["classes"]), 0.5, places=3)
        with self.assertRaises(ParameterProblem):
            Classification({"labels": ["a"]}, Model([t]))


class PreprocessTest(unittest.TestCase):
    def test_the_table_is_mean_scale_and_fix_point(self):
        table = quantization_table([104, 117, 123], [1, 1, 1], 1, np.int8)
        self.assertEqual(table[104, 0], 0)
        self.assertEqual(table[0, 2], -128)  # (0 - 123) · 2 saturates
        self.assertEqual(table[110, 1], -14)

    def test_letterbox_pads_and_maps_back(self):
        pre = Preprocessor(PARAMS, [1, 416, 416, 3], 7, "xint8", 640, 320)
        g = pre.geometry
        self.assertAlmostEqual(g.sx, 0.65)
        self.assertEqual((g.pad_x, g.pad_y), (0, 104))
        x, y = g.to_frame(208, 208)
        self.assertAlmostEqual(x, 320)
        self.assertAlmostEqual(y, 160)
        frame = np.full((320, 640, 3), 255, np.uint8)
        data = pre(frame)
        self.assertEqual(data.shape, (1, 416, 416, 3))
        self.assertEqual(int(data[0, 0, 0, 0]), round(114 / 255 * 128))  # grey padding
        self.assertEqual(int(data[0, 208, 208, 0]), 127)  # white, saturated

    def test_channel_order(self):
        frame = np.zeros((4, 4, 3), np.uint8)
        frame[..., 2] = 255  # red, in OpenCV's BGR
        rgb = Preprocessor(dict(PARAMS, resize="stretch"), [1, 4, 4, 3], 7, "xint8", 4, 4)(frame)
        bgr = Preprocessor(dict(PARAMS, resize="stretch", channels="bgr"), [1, 4, 4, 3], 7, "xint8", 4, 4)(frame)
        self.assertEqual(list(rgb[0, 0, 0]), [127, 0, 0])
        self.assertEqual(list(bgr[0, 0, 0]), [0, 0, 127])

    def test_size_must_be_the_models(self):
        with self.assertRaises(ParameterProblem):
            Preprocessor(dict(PARAMS, size=[300, 300]), [1, 416, 416, 3], 7, "xint8", 640, 360)


class SegmentationTest(unittest.TestCase):
    def test_the_class_map_covers_the_frame(self):
        pre = Preprocessor(PARAMS, [1, 192, 320, 3], 7, "xint8", 640, 480)
        t = T("seg", [1, 48, 80, 8], 2)
        task = Segmentation({"classes": fn.PALETTE_NAMES}, Model([t]), pre.geometry, 320, 192)
        frame = np.zeros((480, 640, 3), np.uint8)
        frame[:, 320:] = (0, 0, 255)
        image = fn.dequantize(pre(frame)[0], 7)
        out = {"seg": fn.quantize(fn.segment(image, 48, 80, 8), 2)[None]}
        result = task.post(out)
        self.assertEqual({c["label"] for c in result["classes"]}, {"black", "red"})
        self.assertAlmostEqual(result["classes"][0]["score"], 0.5, delta=0.05)
        task.draw(frame, result)
        self.assertEqual(tuple(frame[240, 100]), (0, 0, 0))
        self.assertNotEqual(tuple(frame[240, 500]), (0, 0, 255))  # blended with red's colour


if __name__ == "__main__":
    unittest.main()
