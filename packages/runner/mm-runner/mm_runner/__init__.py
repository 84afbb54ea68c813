"""mm-runner: runs a Vitis AI model (.xmodel) over a video on the board's DPU and leaves an
annotated video, per-frame results and comparable figures in MM_OUTPUT_DIR (docs/runner.md)."""

VERSION = "1.0.0"
