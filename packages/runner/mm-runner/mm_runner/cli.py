"""mm-runner's entry: reads MM_PARAMETER, MM_WEIGHTS, MM_INPUT_VIDEO and MM_OUTPUT_DIR (as the
agent sets them, docs/runner.md), runs the task, leaves the output video, results.jsonl and
metrics.json in MM_OUTPUT_DIR. Exit status: 0 done, 2 the parameter file, 3 the input video or
the model, 4 something the board lacks, 1 anything else; the reason is the last line on stderr."""

import json
import os
import platform
import signal
import subprocess
import sys
import time

from . import VERSION
from .errors import InputProblem, ParameterProblem, RunnerError, RuntimeMissing
from .log import complain, say
from .params import ParameterError, read_parameters

IDLE_S = float(os.environ.get("MM_RUNNER_IDLE_S", "1.0"))


def _on_sigterm(_signum, _frame):
    # SystemExit unwinds the main thread: children are stopped by the `finally` blocks.
    raise SystemExit(143)


def main(argv=None):
    signal.signal(signal.SIGTERM, _on_sigterm)
    out_dir = os.environ.get("MM_OUTPUT_DIR")
    if not out_dir:
        complain("MM_OUTPUT_DIR is not set (the agent sets it; see docs/runner.md)")
        return 2
    say("mm-runner %s (Python %s on %s)" % (VERSION, platform.python_version(), platform.machine()))
    try:
        try:
            params = read_parameters(os.environ.get("MM_PARAMETER"))
        except ParameterError as e:
            raise ParameterProblem("the parameter file: %s" % e)
        except OSError as e:
            raise ParameterProblem("the parameter file cannot be read: %s" % e)
        say("task: %s" % params["task"])
        if params["task"] == "command":
            return run_command(params, out_dir)
        return run_model(params, out_dir)
    except RunnerError as e:
        complain(str(e))
        return e.exit_code
    except KeyboardInterrupt:
        complain("interrupted")
        return 130


def _require_numpy():
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise RuntimeMissing("numpy is not installed: mm-runner needs it (apt install python3-numpy)")


def run_model(params, out_dir):
    _require_numpy()
    from . import imaging
    from .dpu import DpuModel
    from .figures import run_figures, write_metrics
    from .pipeline import run_pipeline
    from .power import PowerMeter, energy_figures
    from .preprocess import Preprocessor
    from .tasks import make_task
    from .video import Decoder, Encoder, probe, require_ffmpeg

    xmodel = os.environ.get("MM_WEIGHTS")
    video = os.environ.get("MM_INPUT_VIDEO")
    if not xmodel:
        raise InputProblem("there is no weights file: mm-runner runs the invocation's .xmodel (upload it as the weights)")
    if not video:
        raise InputProblem("there is no input video: mm-runner runs the model over the invocation's input video")
    require_ffmpeg()
    if not imaging.HAVE_CV2:
        say("OpenCV (cv2) is not installed: resizing nearest-neighbour with numpy, boxes drawn without labels")
    info = probe(video)
    say("input video: %s" % info)
    run = params["run"]
    model = DpuModel(xmodel, run["threads"], say)
    pre = Preprocessor(params["preprocess"], model.input.dims, model.input.fix_point, model.input.dtype_name, info.width, info.height)
    task = make_task(params, model, pre.geometry, pre.width, pre.height)
    fps = params["output"].get("fps") or info.fps
    say(
        "model input %dx%d (%s, fix_point %d), %s, %s; %d DPU thread%s"
        % (pre.width, pre.height, model.input.dtype_name, model.input.fix_point, params["preprocess"]["resize"], params["preprocess"]["channels"], run["threads"], "" if run["threads"] == 1 else "s")
    )

    meter = PowerMeter()
    meter.start()
    encoder = None
    try:
        if meter.has_power:
            say("power: %s, sampled every %d ms" % (meter.rail, round(meter.interval * 1000)))
        else:
            say("power: no INA260 under %s: the power figures are left out" % meter.root)
        idle_w = meter.measure_idle(IDLE_S)
        if idle_w is not None:
            say("idle power before the run: %.3f W" % idle_w)
        _warm_up(model, pre, video, info, run["warmup"], run["threads"], Decoder)

        encoder = Encoder(out_dir, info.width, info.height, fps, params["output"]["codec"])
        say("running %s over %s%s" % (params["task"], "the first %d frames" % run["frames"] if run.get("frames") else "every frame", ", %d passes" % run["repeat"] if run["repeat"] > 1 else ""))
        timings = run_pipeline(
            passes=run["repeat"],
            open_decoder=lambda: Decoder(video, info, run.get("frames")),
            preprocess=pre,
            model=model,
            task=task,
            encoder=encoder,
            results_path=os.path.join(out_dir, "results.jsonl"),
            fps=fps,
            threads=run["threads"],
            overlay=params["output"]["overlay"] and task.name != "passthrough",
            log=say,
        )
        busy = model.busy.total
        meter.stop()
        output = encoder.finish()
        encoder = None
        figures = run_figures(timings, busy, model.metric_names)
        if figures["frames"] == 0:
            raise InputProblem("no frame of the input video came through")
        figures.update(energy_figures(meter, timings.t_first, timings.t_last, figures["frames"], idle_w))
        if meter.max_temperature is not None:
            figures["max_temperature_c"] = round(meter.max_temperature, 2)
        _power_log(meter, timings, idle_w)
        written = write_metrics(out_dir, figures)
        say("wrote %s (%d frames), results.jsonl" % (os.path.basename(output), figures["frames"]))
        say("metrics " + json.dumps(written, separators=(",", ":")))
        return 0
    finally:
        meter.stop()
        if encoder is not None:
            encoder.close()
        model.close()


def _warm_up(model, pre, video, info, count, threads, Decoder):
    """`count` runs of the first frame on the DPU before timing starts (caches, clocks, the
    runtime's first-job costs); not counted and not in the output."""
    if count <= 0:
        return
    decoder = Decoder(video, info, 1)
    try:
        image = decoder.read()
    finally:
        decoder.close()
    if image is None:
        raise InputProblem("no frame of the input video could be decoded")
    data = pre(image)
    t0 = time.perf_counter()
    for i in range(count):
        model.run(i % threads, data)
    say("warm-up: %d frame%s in %.1f ms" % (count, "" if count == 1 else "s", (time.perf_counter() - t0) * 1000))


def _power_log(meter, timings, idle_w):
    """MM_RUNNER_POWER_LOG: every power sample with its time relative to the run's start, and
    the window used (for bench/runner-overhead.ts to check the energy is the window's)."""
    target = os.environ.get("MM_RUNNER_POWER_LOG")
    if not target or timings.t_first is None:
        return
    t0 = timings.t_first
    with open(target, "w", encoding="utf-8") as f:
        json.dump(
            {
                "window_s": [0.0, timings.t_last - t0],
                "idle_power_w": idle_w,
                "samples": [[round(t - t0, 6), w] for t, w in meter.samples],
            },
            f,
        )


def run_command(params, out_dir):
    """task "command": the user's own program with the runner's environment, as MM_RUNNER ran
    it before; mm-runner adds the power and temperature it measured to its metrics.json."""
    from .power import PowerMeter

    argv = params["command"]
    meter = PowerMeter()
    meter.start()
    idle_w = meter.measure_idle(IDLE_S) if meter.has_power else None
    say("running %s" % json.dumps(argv))
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(argv)
    except OSError as e:
        meter.stop()
        err = RunnerError("could not start the command %s: %s" % (json.dumps(argv[0]), e.strerror or e))
        err.exit_code = 127
        raise err
    try:
        code = proc.wait()
    except SystemExit:
        proc.terminate()
        raise
    t1 = time.perf_counter()
    meter.stop()
    if code != 0:
        err = RunnerError("the command %s" % ("exited with status %d" % code if code > 0 else "was killed by signal %d" % -code))
        err.exit_code = code if 0 < code < 256 else 1
        raise err
    _add_measured(out_dir, meter, t0, t1, idle_w)
    return 0


def _add_measured(out_dir, meter, t0, t1, idle_w):
    from .figures import write_metrics

    path = os.path.join(out_dir, "metrics.json")
    figures = {}
    if os.path.isfile(path):
        try:
            with open(path, "r", encoding="utf-8") as f:
                figures = json.load(f)
        except (OSError, ValueError):
            say("the command's metrics.json is not JSON: left as it is")
            return
        if not isinstance(figures, dict):
            return
    mean = meter.mean_between(t0, t1)
    extra = {}
    if mean is not None:
        extra["mean_power_w"] = round(mean, 3)
        if idle_w is not None:
            extra["idle_power_w"] = round(idle_w, 3)
    if meter.max_temperature is not None:
        extra["max_temperature_c"] = round(meter.max_temperature, 2)
    if not extra:
        return
    for k, v in extra.items():
        figures.setdefault(k, v)
    write_metrics(out_dir, figures)


if __name__ == "__main__":
    sys.exit(main())
