"""A device fitted to fio results (:func:`calibrate`, as ``ullsim calibrate``) and the calibration's HTML report
(:func:`calibration_report`, as ``ullsim calibrate --html``)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from . import _ullsim
from ._report import _raw_json
from ._run import _overrides, _whole_number
from ._ullsim import UllsimError

#: The fit table's columns: the job (its file and name, its shape) and direction, each figure measured
#: beside simulated with the fitted values, and the keys the job decided.
FIT_COLUMNS = (
    "source",
    "rw",
    "block_size",
    "iodepth",
    "numjobs",
    "direction",
    "measured_iops",
    "simulated_iops",
    "measured_mean_ns",
    "simulated_mean_ns",
    "measured_p99_ns",
    "simulated_p99_ns",
    "decides",
)

_FIGURES = ("iops", "mean_ns", "p99_ns")


def _fit_frame(raw: Mapping[str, Any]) -> pd.DataFrame:
    """The fit table of a calibration's JSON: one row per job and direction."""
    rows = []
    for row in raw["rows"]:
        shape, simulated = row["shape"], row.get("simulated") or {}
        out: dict[str, Any] = {"source": row["source"], "rw": row["rw"]}
        out.update({k: shape[k] for k in ("block_size", "iodepth", "numjobs")})
        out["direction"] = row["direction"]
        for figure in _FIGURES:
            out[f"measured_{figure}"] = row["measured"].get(figure)
            out[f"simulated_{figure}"] = simulated.get(figure)
        out["decides"] = list(row["decides"])
        rows.append(out)
    frame = pd.DataFrame(rows, columns=list(FIT_COLUMNS))
    for figure in _FIGURES:  # a figure the source lacks (no percentiles) is NaN, the column stays numeric
        for side in ("measured", "simulated"):
            frame[f"{side}_{figure}"] = frame[f"{side}_{figure}"].astype(float)
    frame.attrs["parameters"] = [dict(p) for p in raw["outcome"]["parameters"]]
    frame.attrs["warnings"] = list(raw["warnings"])
    frame.attrs["raw"] = raw
    return frame


def _paths(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    if isinstance(paths, (bytes, Mapping)) or not isinstance(paths, Sequence):
        raise UllsimError(f"calibrate: expected fio JSON paths (a path or a list of them), found {type(paths).__name__}")
    for path in paths:
        if not isinstance(path, (str, os.PathLike)):
            raise UllsimError(f"calibrate: expected fio JSON paths in the list, found {path!r}")
    return [os.fspath(p) for p in paths]


def calibrate(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    base: str | os.PathLike[str] = "tlc-enterprise",
    set: Mapping[str, Any] | list[str] | None = None,
    ios: int | None = None,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Fit the device ``base`` (a built-in preset, a preset file or a scenario file) to the fio JSON results at
    ``paths``, as ``ullsim calibrate`` does (``set`` as its ``--set``, e.g. the host fio ran on; ``ios`` as its
    ``--ios``: fewer I/Os per simulated job, a faster and rougher fit).

    Returns ``(preset, fit)``: ``preset`` the preset file as a dict (``base`` and the fitted values under their
    tables; write it as TOML, or see ``fit.attrs["raw"]["preset"]`` for the file's text with its sources);
    ``fit`` the fit table, one row per job and direction (:data:`FIT_COLUMNS`), with ``fit.attrs["parameters"]``
    (each knob's key, base, value, verdict and the jobs it was fitted from), ``fit.attrs["warnings"]`` and
    ``fit.attrs["raw"]`` (the JSON of ``ullsim calibrate --json``)."""
    if not isinstance(base, (str, os.PathLike)):
        raise UllsimError(f"calibrate: base: expected a preset name or a file's path, found {base!r}")
    if ios is not None:
        ios = _whole_number(ios, "calibrate: ios", low=100)
    raw = json.loads(_ullsim.calibrate_json(_paths(paths), os.fspath(base), _overrides(set), ios, "calibrated"))
    return tomllib.loads(raw["preset"]), _fit_frame(raw)


def calibration_report(
    source: Mapping[str, Any] | pd.DataFrame | tuple[dict[str, Any], pd.DataFrame] | str | os.PathLike[str],
) -> str:
    """The self-contained HTML report (inline SVG, no JavaScript; as ``ullsim calibrate --html``) of a
    calibration: :func:`calibrate`'s result or its ``fit`` DataFrame, the JSON of ``ullsim calibrate --json`` as
    a dict, or that JSON file's path. Per job family (rw and block size) and direction, latency against IOPS
    measured beside simulated; the parameters; the warnings; the preset file."""
    if isinstance(source, tuple) and len(source) == 2:
        source = source[1]
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            raw = json.loads(path.read_text())
        except OSError as e:
            raise UllsimError(f"{path}: cannot read the calibration: {e.strerror}") from None
        except json.JSONDecodeError as e:
            raise UllsimError(f"{path}: not JSON ({e.msg}); expected `ullsim calibrate --json`'s") from None
    else:
        expected = "calibrate()'s result, its DataFrame, the calibration JSON as a dict or its path"
        raw = _raw_json(source, "calibration_report", "calibrate", expected)
    if not (isinstance(raw, Mapping) and "outcome" in raw and "preset" in raw):
        raise UllsimError("calibration_report: not a calibration (`ullsim calibrate --json`: `outcome`, `rows`, `preset`)")
    return _ullsim.report_html(json.dumps(raw, allow_nan=False))
