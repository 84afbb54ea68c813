"""Why a run stops, each with its exit status (docs/runner.md)."""


class RunnerError(Exception):
    """A failure with a reason for the log and an exit status."""

    exit_code = 1


class ParameterProblem(RunnerError):
    exit_code = 2


class InputProblem(RunnerError):
    """The video or the model cannot be used (missing, corrupt, unsupported)."""

    exit_code = 3


class RuntimeMissing(RunnerError):
    """The board lacks what the runner needs (xir/vart, numpy, ffmpeg)."""

    exit_code = 4


class Aborted(Exception):
    """Another stage failed: this one stops quietly."""
