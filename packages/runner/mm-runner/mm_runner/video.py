"""Video in and out through ffmpeg as child processes: the input decoded to raw BGR frames on a
pipe, the output encoded from raw frames to H.264 in an MP4 a browser plays (yuv420p, the
index at the front: `-movflags +faststart`), or Motion JPEG in an AVI."""

import json
import os
import shutil
import subprocess
import threading

import numpy as np

from .errors import InputProblem, RunnerError, RuntimeMissing

FFMPEG = os.environ.get("MM_FFMPEG", "ffmpeg")
FFPROBE = os.environ.get("MM_FFPROBE", "ffprobe")
X264_PRESET = os.environ.get("MM_RUNNER_X264_PRESET", "veryfast")


def require_ffmpeg():
    for tool in (FFMPEG, FFPROBE):
        if shutil.which(tool) is None:
            raise RuntimeMissing("%s is not installed: mm-runner decodes and encodes video with ffmpeg (apt install ffmpeg)" % tool)


class StderrTail:
    """Keeps the last few KiB a child writes on stderr (read on a thread so it never blocks)."""

    def __init__(self, stream, limit=4096):
        self.data = b""
        self.limit = limit
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for chunk in iter(lambda: stream.read(1024), b""):
            self.data = (self.data + chunk)[-self.limit :]

    def text(self):
        self.thread.join(timeout=2)
        lines = [l.strip() for l in self.data.decode("utf-8", "replace").splitlines() if l.strip()]
        return "; ".join(lines[-3:]) or "(nothing on stderr)"


def _rate(text):
    try:
        num, _, den = str(text).partition("/")
        value = float(num) / float(den or 1)
        return value if 0 < value < 1000 else None
    except (ValueError, ZeroDivisionError):
        return None


class VideoInfo:
    def __init__(self, width, height, fps, frames, codec):
        self.width, self.height, self.fps, self.frames, self.codec = width, height, fps, frames, codec

    def __repr__(self):
        n = "%d frames" % self.frames if self.frames else "frame count unknown"
        return "%dx%d %s at %.3g fps, %s" % (self.width, self.height, self.codec, self.fps, n)


def probe(path):
    """The first video stream's size, rate and frame count; InputProblem if there is none."""
    if not os.path.isfile(path):
        raise InputProblem("the input video %s does not exist" % path)
    if os.path.getsize(path) == 0:
        raise InputProblem("the input video is empty (0 bytes)")
    cmd = [FFPROBE, "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height,avg_frame_rate,r_frame_rate,nb_frames,codec_name", "-of", "json", path]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = "; ".join(l.strip() for l in r.stderr.decode("utf-8", "replace").splitlines() if l.strip())[-300:]
    if r.returncode != 0:
        raise InputProblem("the input video cannot be read: %s" % (err or "ffprobe failed with status %d" % r.returncode))
    try:
        streams = json.loads(r.stdout.decode("utf-8") or "{}").get("streams") or []
    except ValueError:
        streams = []
    if not streams or not streams[0].get("width"):
        raise InputProblem("the input video has no video stream%s" % (": " + err if err else ""))
    s = streams[0]
    fps = _rate(s.get("avg_frame_rate")) or _rate(s.get("r_frame_rate")) or 30.0
    try:
        frames = int(s.get("nb_frames") or 0)
    except ValueError:
        frames = 0
    return VideoInfo(int(s["width"]), int(s["height"]), fps, frames, s.get("codec_name", "?"))


class Decoder:
    """Frames of the input video, in order, as (height, width, 3) BGR uint8 arrays."""

    def __init__(self, path, info, limit=None):
        self.info = info
        self.size = info.width * info.height * 3
        cmd = [FFMPEG, "-v", "error", "-nostdin", "-noautorotate", "-i", path, "-map", "0:v:0", "-an"]
        if limit:
            cmd += ["-frames:v", str(limit)]
        cmd += ["-f", "rawvideo", "-pix_fmt", "bgr24", "-"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        self.stderr = StderrTail(self.proc.stderr)
        self.count = 0

    def read(self):
        """The next frame, or None at the end (InputProblem if ffmpeg failed)."""
        buf = bytearray(self.size)
        view = memoryview(buf)
        got = 0
        while got < self.size:
            n = self.proc.stdout.readinto(view[got:])
            if not n:
                break
            got += n
        if got < self.size:
            self._finish(partial=got > 0)
            return None
        self.count += 1
        return np.frombuffer(buf, np.uint8).reshape(self.info.height, self.info.width, 3)

    def _finish(self, partial):
        code = self.proc.wait()
        if code != 0:
            raise InputProblem("decoding the input video failed after %d frames: %s" % (self.count, self.stderr.text()))
        if self.count == 0:
            raise InputProblem("no frame of the input video could be decoded: %s" % self.stderr.text())

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Encoder:
    """Raw BGR frames in, the output video out (written under a temporary name, renamed by
    `finish` so a half-written file never looks like the output)."""

    def __init__(self, out_dir, width, height, fps, codec):
        self.ext = ".mp4" if codec == "h264" else ".avi"
        self.final = os.path.join(out_dir, "output" + self.ext)
        self.partial = os.path.join(out_dir, ".output" + self.ext + ".part")
        self.frame_bytes = width * height * 3
        cmd = [FFMPEG, "-v", "error", "-nostdin", "-y", "-f", "rawvideo", "-pix_fmt", "bgr24", "-s", "%dx%d" % (width, height), "-r", "%.6g" % fps, "-i", "-", "-an"]
        if codec == "h264":
            # yuv420p needs even sides: pad by one pixel where they are odd.
            cmd += ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-preset", X264_PRESET, "-pix_fmt", "yuv420p", "-movflags", "+faststart", "-f", "mp4"]
        else:
            cmd += ["-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p", "-f", "avi"]
        cmd.append(self.partial)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0)
        self.stderr = StderrTail(self.proc.stderr)
        self.frames = 0

    def write(self, frame):
        try:
            self.proc.stdin.write(memoryview(np.ascontiguousarray(frame)).cast("B"))
        except (BrokenPipeError, OSError):
            self.proc.wait()
            raise RunnerError("the video encoder (ffmpeg) stopped: %s" % self.stderr.text())
        self.frames += 1

    def finish(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        code = self.proc.wait()
        if code != 0:
            raise RunnerError("the video encoder (ffmpeg) failed with status %d: %s" % (code, self.stderr.text()))
        os.replace(self.partial, self.final)
        return self.final

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        try:
            os.unlink(self.partial)
        except OSError:
            pass
