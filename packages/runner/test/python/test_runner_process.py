"""mm-runner as the agent runs it: a process with the MM_* variables, on synthetic videos made
with ffmpeg, the simulated DPU on PYTHONPATH; the output video decoded and looked at."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from mm_dpu_sim import build
from mm_dpu_sim.xmodel import serialize

HOME = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "mm-runner"))
LAUNCHER = os.path.join(HOME, "bin", "mm-runner")
SIM = os.path.join(HOME, "sim")
COLOURS = ["black", "white", "red", "green", "blue", "yellow", "cyan", "magenta"]
RGB01 = {"channels": "rgb", "scale": [1 / 255.0] * 3}


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def decode(path, w, h):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "bgr24", "-"], check=True, stdout=subprocess.PIPE).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


class RunnerProcessTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mm-runner-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.out = os.path.join(self.dir, "out")
        os.mkdir(self.out)

    def file(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return path

    def run_runner(self, params, weights=None, video=None, env=None, sim=True):
        e = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
        e.update({"MM_OUTPUT_DIR": self.out, "MM_PYTHON": sys.executable, "MM_PARAMETER": self.file("params.json", json.dumps(params)), "MM_RUNNER_IDLE_S": "0.2"})
        e["PYTHONPATH"] = SIM if sim else ""
        if weights:
            e["MM_WEIGHTS"] = weights
        if video:
            e["MM_INPUT_VIDEO"] = video
        e.update(env or {})
        return subprocess.run([LAUNCHER], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)

    def results(self):
        with open(os.path.join(self.out, "results.jsonl")) as f:
            return [json.loads(line) for line in f]

    def metrics(self):
        with open(os.path.join(self.out, "metrics.json")) as f:
            return json.load(f)

    def test_classification_labels_each_frame_and_draws_them(self):
        video = os.path.join(self.dir, "in.mp4")
        ffmpeg("-f", "lavfi", "-i", "color=c=red:s=320x240:d=0.5:r=20", "-f", "lavfi", "-i", "color=c=yellow:s=320x240:d=0.5:r=20", "-filter_complex", "[0][1]concat=n=2:v=1", "-pix_fmt", "yuv420p", video)
        model = self.file("cls.xmodel", serialize(build.classifier(224, 224, classes=8, dpu_ms=2)))
        r = self.run_runner({"schema": "mm-runner/1", "task": "classification", "preprocess": RGB01, "classification": {"labels": COLOURS, "top_k": 2}, "run": {"threads": 2, "warmup": 2}}, model, video)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = self.results()
        self.assertEqual([l["frame"] for l in lines], list(range(20)))
        self.assertEqual({l["classes"][0]["label"] for l in lines[:10]}, {"red"})
        self.assertEqual({l["classes"][0]["label"] for l in lines[10:]}, {"yellow"})
        self.assertEqual(len(lines[0]["classes"]), 2)
        self.assertAlmostEqual(lines[15]["t_ms"], 750.0)
        frames = decode(os.path.join(self.out, "output.mp4"), 320, 240)
        self.assertEqual(len(frames), 20)
        # The top label's box (orange in BGR (0, 160, 255)) in the corner; the frame's colour elsewhere.
        self.assertLess(np.abs(frames[5, 10, 8].astype(int) - (0, 160, 255)).max(), 40)
        self.assertLess(np.abs(frames[5, 200, 200].astype(int) - (0, 0, 255)).max(), 30)
        m = self.metrics()
        self.assertEqual(m["frames"], 20)
        for name in ("e2e_fps", "dpu_fps", "latency_ms_p50", "latency_ms_p95", "latency_ms_p99", "dpu_ms", "dpu_ms_subgraph_body"):
            self.assertGreater(m[name], 0, name)
        self.assertGreaterEqual(m["dpu_ms"], 2.0)

    def test_detection_boxes_drawn_where_the_rectangles_are(self):
        video = os.path.join(self.dir, "rects.mp4")
        ffmpeg("-f", "lavfi", "-i", "color=c=black:s=640x360:d=0.4:r=10,drawbox=x=80:y=60:w=160:h=100:color=red:t=fill,drawbox=x=420:y=180:w=90:h=120:color=blue:t=fill", "-pix_fmt", "yuv420p", video)
        model = self.file("y5.xmodel", serialize(build.yolo("yolov5", 416, 416, classes=8, dpu_ms=2)))
        params = {"schema": "mm-runner/1", "task": "detection", "preprocess": dict(RGB01, resize="letterbox"), "detection": {"family": "yolov5", "classes": COLOURS, "conf": 0.5}, "run": {"threads": 3}}
        r = self.run_runner(params, model, video)
        self.assertEqual(r.returncode, 0, r.stderr)
        for line in self.results():
            boxes = {b["label"]: b for b in line["boxes"]}
            self.assertEqual(sorted(boxes), ["blue", "red"])
            for label, (x, y, w, h) in (("red", (80, 60, 160, 100)), ("blue", (420, 180, 90, 120))):
                b = boxes[label]
                for got, want, size in zip((b["x"], b["y"], b["w"], b["h"]), (x, y, w, h), (w, h, w, h)):
                    self.assertLess(abs(got - want), 3 + 0.05 * size, (label, b))
                self.assertGreater(b["score"], 0.9)
        frames = decode(os.path.join(self.out, "output.mp4"), 640, 360)
        self.assertEqual(len(frames), 4)
        f = frames[2].astype(int)
        # The box outline just outside the red rectangle: not black (the background), not red.
        b = {b["label"]: b for b in self.results()[2]["boxes"]}["red"]
        edge = f[int(b["y"] + b["h"] / 2), int(round(b["x"]))]
        self.assertGreater(edge.sum(), 150)
        self.assertLess(f[300, 20].max(), 20)  # far from any box: black

    def test_passthrough_repeat_frames_and_mjpeg(self):
        video = os.path.join(self.dir, "in.mp4")
        ffmpeg("-f", "lavfi", "-i", "testsrc=s=160x120:d=1:r=25", "-pix_fmt", "yuv420p", video)
        model = self.file("id.xmodel", serialize(build.identity(224, 224, dpu_ms=1)))
        params = {"schema": "mm-runner/1", "task": "passthrough", "run": {"frames": 10, "repeat": 3, "warmup": 0, "threads": 1}, "output": {"codec": "mjpeg", "fps": 5}}
        r = self.run_runner(params, model, video)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.results()), 30)
        self.assertNotIn("classes", self.results()[0])
        self.assertEqual(self.metrics()["frames"], 30)
        self.assertTrue(os.path.exists(os.path.join(self.out, "output.avi")))
        probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,r_frame_rate,nb_frames", "-of", "json", os.path.join(self.out, "output.avi")], stdout=subprocess.PIPE, text=True).stdout
        s = json.loads(probe)["streams"][0]
        self.assertEqual((s["codec_name"], s["r_frame_rate"]), ("mjpeg", "5/1"))

    def test_power_and_energy_from_the_simulated_ina260(self):
        hwmon = os.path.join(self.dir, "hwmon")
        for name, files in (("hwmon0", {"name": "ina260\n", "power1_input": "6400000\n"}), ("hwmon1", {"name": "ams\n", "temp1_input": "47000\n", "temp2_input": "51000\n"})):
            os.makedirs(os.path.join(hwmon, name))
            for f, text in files.items():
                self.file(os.path.join("hwmon", name, f), text)
        self.file(os.path.join("hwmon", "mm-simulated"), "")
        video = os.path.join(self.dir, "in.mp4")
        ffmpeg("-f", "lavfi", "-i", "color=c=white:s=160x120:d=2:r=25", "-pix_fmt", "yuv420p", video)
        model = self.file("cls.xmodel", serialize(build.classifier(224, 224, classes=8, dpu_ms=20)))
        log = os.path.join(self.dir, "power.json")
        params = {"schema": "mm-runner/1", "task": "classification", "preprocess": RGB01, "run": {"threads": 2, "warmup": 1}}
        r = self.run_runner(params, model, video, env={"MM_HWMON_ROOT": hwmon, "MM_RUNNER_POWER_LOG": log, "MM_RUNNER_IDLE_S": "0.5"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("power: INA260 ina260 at hwmon0", r.stdout)
        m = self.metrics()
        self.assertAlmostEqual(m["idle_power_w"], 6.4, delta=0.05)
        # Between idle and one simulated core busy all the time (6.4 + 4.8 W).
        self.assertGreater(m["mean_power_w"], 7.0)
        self.assertLessEqual(m["mean_power_w"], 11.25)
        # The simulated INA260 draws 4.8 W above idle while the DPU is busy: the energy per frame
        # is 4.8 W times the DPU's busy time per frame (1 / dpu_fps), however loaded the machine.
        self.assertAlmostEqual(m["energy_mj_per_frame"], 4.8 * 1000 / m["dpu_fps"], delta=0.2 * 4.8 * 1000 / m["dpu_fps"])
        self.assertGreaterEqual(m["max_temperature_c"], 51)
        with open(log) as f:
            p = json.load(f)
        start, end = p["window_s"]
        inside = [s for s in p["samples"] if start <= s[0] <= end]
        self.assertEqual(m["power_samples"], len(inside))
        mean = sum(w for _t, w in inside) / len(inside)
        self.assertAlmostEqual(m["mean_power_w"], mean, places=2)
        self.assertAlmostEqual(m["energy_mj_per_frame"], (mean - p["idle_power_w"]) * (end - start) / m["frames"] * 1000, places=1)
        self.assertTrue(any(t < start for t, _w in p["samples"]), "idle samples come before the window")

    def test_a_corrupt_video_fails_with_its_reason(self):
        video = self.file("broken.mp4", b"\x00\x00\x00\x18ftypmp42" + os.urandom(4000))
        model = self.file("cls.xmodel", serialize(build.classifier()))
        r = self.run_runner({"schema": "mm-runner/1", "task": "classification"}, model, video)
        self.assertEqual(r.returncode, 3)
        self.assertIn("the input video cannot be read", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "output.mp4")))

    def test_a_corrupt_model_fails_with_its_reason(self):
        video = os.path.join(self.dir, "in.mp4")
        ffmpeg("-f", "lavfi", "-i", "color=c=red:s=64x64:d=0.2:r=10", "-pix_fmt", "yuv420p", video)
        model = self.file("bad.xmodel", serialize(build.classifier())[:-9])
        r = self.run_runner({"schema": "mm-runner/1", "task": "classification"}, model, video)
        self.assertEqual(r.returncode, 3)
        self.assertIn("not an xmodel the runtime can read", r.stderr)

    def test_problems_before_the_run(self):
        r = self.run_runner({"schema": "mm-runner/1", "task": "detection", "detection": {"family": "yolov3", "conf": 2}})
        self.assertEqual(r.returncode, 2)
        self.assertIn("$.detection.conf: must be at most 1", r.stderr)
        r = self.run_runner({"schema": "mm-runner/1", "task": "passthrough"})
        self.assertEqual(r.returncode, 3)
        self.assertIn("there is no weights file", r.stderr)
        r = self.run_runner({"schema": "mm-runner/1", "task": "passthrough"}, self.file("m.xmodel", b"x"), self.file("v.mp4", b"x"), sim=False)
        self.assertIn(r.returncode, (3, 4))
        video = os.path.join(self.dir, "in.mp4")
        ffmpeg("-f", "lavfi", "-i", "color=c=red:s=64x64:d=0.2:r=10", "-pix_fmt", "yuv420p", video)
        r = self.run_runner({"schema": "mm-runner/1", "task": "passthrough"}, self.file("m2.xmodel", serialize(build.classifier())), video, sim=False)
        self.assertEqual(r.returncode, 4)
        self.assertIn("xir, vart", r.stderr)

    def test_command_runs_the_users_program(self):
        script = "echo started $MM_INVOCATION_NAME; printf x > \"$MM_OUTPUT_DIR/out.mp4\"; echo '{\"fps\": 12}' > \"$MM_OUTPUT_DIR/metrics.json\""
        r = self.run_runner({"schema": "mm-runner/1", "task": "command", "command": ["sh", "-c", script]}, env={"MM_INVOCATION_NAME": "mine"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("started mine", r.stdout)
        self.assertEqual(self.metrics(), {"fps": 12})
        r = self.run_runner({"schema": "mm-runner/1", "task": "command", "command": ["sh", "-c", "exit 7"]})
        self.assertEqual(r.returncode, 7)
        self.assertIn("the command exited with status 7", r.stderr)
        r = self.run_runner({"schema": "mm-runner/1", "task": "command", "command": ["/no/such/program"]})
        self.assertEqual(r.returncode, 127)


if __name__ == "__main__":
    unittest.main()
