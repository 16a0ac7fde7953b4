"""ullsim from Python: run a scenario and read its results as pandas DataFrames.

    import ullsim
    r = ullsim.run("scenarios/examples/mixed-znand.toml", seed=2, set={"run.duration": "200ms"})
    r.flows[["flow", "direction", "iops", "mean_us", "p99_us"]]

The simulation itself is the Rust library (the same as the `ullsim` command's); it runs with the GIL
released. Errors raise :class:`UllsimError` with the command's message (file, key, line).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from . import _ullsim
from ._ullsim import UllsimError

__all__ = [
    "run",
    "Result",
    "UllsimError",
    "reproduce",
    "reproductions",
    "report",
    "presets",
    "stacks",
    "default_scenario",
    "__version__",
]
__version__ = _ullsim.__version__

#: The breakdown's parts, in the order a request passes them (docs/output.md).
LAYERS = (
    "syscall",
    "page_cache",
    "file_system",
    "block",
    "driver",
    "device_queued",
    "device_service",
    "completion",
    "cpu_wait",
)


@dataclass
class Result:
    """One run's results: the JSON the command writes with ``--json``, and views of it."""

    raw: dict[str, Any]
    flows: pd.DataFrame = field(init=False)
    timeseries: pd.DataFrame | None = field(init=False)

    def __post_init__(self) -> None:
        self.flows = _flows_frame(self.raw["flows"])
        self.timeseries = _timeseries_frame(self.raw.get("timeseries"))

    @property
    def device(self) -> dict[str, Any]:
        return self.raw["device"]

    @property
    def host(self) -> dict[str, Any]:
        return self.raw["host"]

    @property
    def scenario(self) -> dict[str, Any]:
        return self.raw["scenario"]

    def report(self, path: str | os.PathLike[str]) -> Path:
        """Write this run's self-contained HTML report (as ``ullsim report``) to ``path``."""
        return report(self, path)


def _latency_columns(summary: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for key, value in summary.items():
        if isinstance(value, (int, float)):
            out[f"{key}_us"] = value / 1e3
    return out


def _flows_frame(flows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per flow and direction ("total", then "read", "write", "flush" where the flow has them)."""
    rows = []
    for f in flows:
        parts = {f"{layer}_us": f["breakdown_ns"][layer]["mean"] / 1e3 for layer in LAYERS}
        base = {"flow": f["name"], "class": f["class"]}
        directions = [("total", f)] + [(d, f[d]) for d in ("read", "write", "flush") if f.get(d)]
        for direction, result in directions:
            row = dict(base, direction=direction)
            row["completed"] = result["completed"]
            row["iops"] = result["iops"]
            row["mb_per_s"] = result["bandwidth_bytes_per_s"] / 1e6
            row.update(_latency_columns(result["latency_ns"]))
            if direction == "total":
                row.update(parts)
                row["cpu_cores"] = f.get("cpu_cores")
            rows.append(row)
    return pd.DataFrame(rows)


def _timeseries_frame(series: Mapping[str, Any] | None) -> pd.DataFrame | None:
    """The per-interval series as one long frame, if the run recorded them."""
    if not series:
        return None
    frames = []
    for key, value in series.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            frame = pd.DataFrame(value)
            frame.insert(0, "series", key)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else None


def _overrides(set: Mapping[str, Any] | list[str] | None) -> list[str]:
    """``{"run.duration": "200ms"}`` or ``["run.duration=200ms"]`` as the command's ``--set`` strings."""
    if set is None:
        return []
    if isinstance(set, Mapping):
        return [f"{key}={_toml_value(value)}" for key, value in set.items()]
    return [str(s) for s in set]


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise UllsimError(f"--set: cannot write {value!r} as a TOML value")


def _source(scenario: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[str, str, str, bool]:
    """(text, source name, base directory, is_json) of a path, a TOML string or a dict."""
    if isinstance(scenario, Mapping):
        return json.dumps(scenario), "<dict>", ".", True
    # A str is a path when it names a file, or when it cannot be TOML (no "=" and one line).
    is_path = isinstance(scenario, str) and (os.path.isfile(scenario) or ("=" not in scenario and "\n" not in scenario))
    if isinstance(scenario, os.PathLike) or is_path:
        path = Path(scenario)
        try:
            text = path.read_text()
        except OSError as e:
            raise UllsimError(f"{path}: cannot read the scenario: {e.strerror}") from None
        return text, str(path), str(path.parent), False
    return str(scenario), "<string>", ".", False


def run(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | list[str] | None = None,
) -> Result:
    """Run ``scenario`` — a path, a TOML string or a dict in the scenario schema; the built-in default when
    None — with ``seed`` and ``set`` overrides (``{"key.path": value}``), and return its :class:`Result`."""
    if scenario is None:
        text, source, base, is_json = _ullsim.default_scenario(), "built-in default scenario", ".", False
    else:
        text, source, base, is_json = _source(scenario)
    raw = _ullsim.run_json(text, source, base, _overrides(set), seed, is_json)
    return Result(json.loads(raw))


def validate(scenario: str | os.PathLike[str] | Mapping[str, Any], *, set: Mapping[str, Any] | None = None) -> str:
    """Check a scenario without running it; returns its name or raises :class:`UllsimError`."""
    text, source, base, is_json = _source(scenario)
    return _ullsim.validate(text, source, base, _overrides(set), is_json)


def presets() -> pd.DataFrame:
    """The device presets: name and summary."""
    return pd.DataFrame(_ullsim.presets(), columns=["name", "summary"])


def stacks() -> pd.DataFrame:
    """The named host stacks: name and summary."""
    return pd.DataFrame(_ullsim.stacks(), columns=["name", "summary"])


def default_scenario() -> str:
    """The built-in default scenario's TOML."""
    return _ullsim.default_scenario()


def reproduce(
    name: str,
    *,
    all: bool = False,
    duration: str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | list[str] | None = None,
    mixes: int | None = None,
    classify_duration: str | None = None,
    load: float | None = None,
    classes: str | None = None,
) -> pd.DataFrame:
    """Run the reproduction ``name`` (see :func:`reproductions`) as ``ullsim reproduce NAME`` does, with the
    same options (``all=True`` is ``--all``; ``mixes``, ``classify_duration``, ``load`` and ``classes`` are
    flin18's), and return its rows: one per figure, setting and metric, with columns ``figure``, each
    setting key (e.g. ``stack``; empty where a figure does not vary it), ``setting`` (all of them, as text),
    ``metric``, ``paper`` (NaN where the paper gives no number) and ``simulated``. ``df.attrs`` holds the
    paper's name, title, the options the runs were made with, the notes, and ``raw``, the JSON as the command
    writes it (for :func:`report`). Errors name the command's flags.
    """
    if duration is not None and not isinstance(duration, str):
        raise UllsimError(f"--duration: expected a duration such as \"200ms\", got {duration!r}")
    if classify_duration is not None and not isinstance(classify_duration, str):
        raise UllsimError(f"--classify-duration: expected a duration such as \"50ms\", got {classify_duration!r}")
    raw = json.loads(
        _ullsim.reproduce_json(name, all, _overrides(set), duration, seed, mixes, classify_duration, load, classes)
    )
    return _reproduction_frame(raw)


_REPRODUCTION_COLUMNS = ("figure", "setting", "metric", "paper", "simulated")


def _reproduction_frame(raw: Mapping[str, Any]) -> pd.DataFrame:
    keys: list[str] = []
    for row in raw["rows"]:
        keys.extend(k for k in row["setting"] if k not in keys)
    # A setting key never hides a fixed column: one named like them is prefixed.
    column = {k: f"setting.{k}" if k in _REPRODUCTION_COLUMNS else k for k in keys}
    records = []
    for row in raw["rows"]:
        record: dict[str, Any] = {"figure": row["figure"]}
        record.update({column[k]: row["setting"].get(k, "") for k in keys})
        record["setting"] = ", ".join(f"{k}={v}" for k, v in row["setting"].items())
        record["metric"] = row["metric"]
        record["paper"] = float("nan") if row["paper"] is None else row["paper"]
        record["simulated"] = row["simulated"]
        records.append(record)
    columns = ["figure", *column.values(), "setting", "metric", "paper", "simulated"]
    frame = pd.DataFrame(records, columns=columns)
    frame.attrs.update(paper=raw["paper"], title=raw["title"], options=raw["options"], notes=raw["notes"], raw=raw)
    return frame


def reproductions() -> list[str]:
    """The names :func:`reproduce` takes."""
    return list(_ullsim.reproductions())


def report(source: Result | pd.DataFrame | Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the self-contained HTML report (inline SVG, no JavaScript; as ``ullsim report``) of a run's
    :class:`Result`, a :func:`reproduce` frame or either's JSON as a dict, to ``path``; returns the path."""
    if isinstance(source, Result):
        raw = source.raw
    elif isinstance(source, pd.DataFrame):
        if "raw" not in source.attrs:
            raise UllsimError("report: this DataFrame is not one ullsim.reproduce returned (no attrs['raw'])")
        raw = source.attrs["raw"]
    elif isinstance(source, Mapping):
        raw = source
    else:
        raise UllsimError(f"report: expected a Result, a reproduce() DataFrame or a dict, got {type(source).__name__}")
    html = _ullsim.report_html(json.dumps(raw))
    out = Path(path)
    try:
        out.write_text(html)
    except OSError as e:
        raise UllsimError(f"{out}: cannot write the report: {e.strerror}") from None
    return out
