"""The simulated board's DPU (docs/runner.md, "On the simulated board"): stand-ins for the
Vitis AI runtime's `xir` and `vart` Python modules that read the real xmodel and compute a
known function of the real input in a time that follows the board's `sim/speed` label."""
