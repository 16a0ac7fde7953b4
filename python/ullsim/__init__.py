"""ullsim from Python: run a scenario and read its results as pandas DataFrames.

    import ullsim
    r = ullsim.run("scenarios/examples/mixed-znand.toml", seed=2, set={"run.duration": "200ms"})
    r.flows[["flow", "direction", "iops", "mean_us", "p99_us"]]

    # Every combination of the varied keys, several seeds, one DataFrame (on a Dask cluster with client=...).
    df = ullsim.sweep("scenarios/examples/mixed-znand.toml",
                      vary={"host.stack": ["vanilla", "flashshare-xler"], "flow.reader.iodepth": [1, 4]},
                      seeds=[1, 2, 3], set={"run.duration": "200ms"})

    # A device fitted to fio results (as `ullsim calibrate`): the preset as a dict, the fit table as a DataFrame.
    preset, fit = ullsim.calibrate(["fio/randread-4k-qd.json", "fio/read-seq.json"], base="tlc-enterprise")

The simulation itself is the Rust library (the same as the `ullsim` command's); it runs with the GIL
released. Errors raise :class:`UllsimError` with the command's message (file, key, line).
"""

from __future__ import annotations

from . import _ullsim
from ._calibrate import FIT_COLUMNS, calibrate, calibration_report
from ._report import report
from ._reproduce import reproduce, reproductions
from ._run import LAYERS, Result, default_scenario, presets, run, stacks, validate
from ._sweep import sweep
from ._ullsim import UllsimError

__all__ = [
    "run",
    "sweep",
    "Result",
    "UllsimError",
    "reproduce",
    "reproductions",
    "report",
    "calibrate",
    "calibration_report",
    "FIT_COLUMNS",
    "validate",
    "presets",
    "stacks",
    "default_scenario",
    "LAYERS",
    "__version__",
]
__version__ = _ullsim.__version__
