"""Runs of one scenario: :func:`run`, its :class:`Result` and the DataFrames made of it; checks, presets."""

from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from . import _ullsim
from ._ullsim import UllsimError

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
    #: One row per job (fio's numjobs task) and direction of the flows recorded per job (``[metrics] per_job``),
    #: with the flow's columns (no per-layer ones) and ``job``; None when no flow was.
    jobs: pd.DataFrame | None = field(init=False)
    timeseries: pd.DataFrame | None = field(init=False)

    def __post_init__(self) -> None:
        self.flows = _flows_frame(self.raw["flows"])
        self.jobs = _jobs_frame(self.raw["flows"])
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
        from ._report import report  # _report imports this module

        return report(self, path)


def _latency_columns(summary: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for key, value in summary.items():
        if isinstance(value, (int, float)):
            out[f"{key}_us"] = value / 1e3
    return out


def _direction_rows(base: dict[str, Any], result: Mapping[str, Any], total: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of one flow's (or job's) ``result``: "total", with ``total``'s extra columns, then "read",
    "write", "flush" where it has them."""
    rows = []
    directions = [("total", result)] + [(d, result[d]) for d in ("read", "write", "flush") if result.get(d)]
    for direction, part in directions:
        row = dict(base, direction=direction)
        row["completed"] = part["completed"]
        row["iops"] = part["iops"]
        row["mb_per_s"] = part["bandwidth_bytes_per_s"] / 1e6
        row.update(_latency_columns(part["latency_ns"]))
        if direction == "total":
            row.update(total)
        rows.append(row)
    return rows


def _flows_frame(flows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per flow and direction ("total", then "read", "write", "flush" where the flow has them)."""
    rows = []
    for f in flows:
        total = {f"{layer}_us": f["breakdown_ns"][layer]["mean"] / 1e3 for layer in LAYERS}
        total["cpu_cores"] = f.get("cpu_cores")
        rows += _direction_rows({"flow": f["name"], "class": f["class"]}, f, total)
    return pd.DataFrame(rows)


def _jobs_frame(flows: list[dict[str, Any]]) -> pd.DataFrame | None:
    """One row per job and direction of the flows with ``jobs``; None when there are none."""
    rows = []
    for f in flows:
        for job in f.get("jobs") or []:
            base = {"flow": f["name"], "class": f["class"], "job": job["job"]}
            total = {"cpu_cores": job["cpu_cores"], "context_switches": job["context_switches"]}
            rows += _direction_rows(base, job, total)
    return pd.DataFrame(rows) if rows else None


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


#: The largest seed: seeds are 64-bit.
MAX_SEED = 2**64 - 1
#: TOML's integers are 64-bit signed.
_TOML_INTEGERS = (-(2**63), 2**63 - 1)


def _whole_number(value: Any, name: str, low: int = 0, high: int = MAX_SEED) -> int:
    """``value`` as an int from ``low`` to ``high``, or :class:`UllsimError` naming ``name`` and the range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= int(value) <= high:
        raise UllsimError(f"{name}: expected a whole number from {low} to {high}, found {value!r}")
    return int(value)


def _overrides(set: Mapping[str, Any] | list[str] | None) -> list[str]:
    """``{"run.duration": "200ms"}`` or ``["run.duration=200ms"]`` as the command's ``--set`` strings."""
    if set is None:
        return []
    if isinstance(set, Mapping):
        out = []
        for key, value in set.items():
            if not isinstance(key, str):
                raise UllsimError(f"set: expected keys like \"run.duration\" (strings), found {key!r}")
            try:
                out.append(f"{key}={_toml_value(value)}")
            except UllsimError:
                raise UllsimError(f"--set {key}: cannot write {value!r} as a TOML value") from None
        return out
    if isinstance(set, (str, bytes)) or not isinstance(set, (list, tuple)):
        raise UllsimError(
            f"set: expected a dict of key -> value (or a list of \"key=value\" strings), found {type(set).__name__}"
        )
    for s in set:
        if not isinstance(s, str):
            raise UllsimError(f"set: expected \"key=value\" strings in the list, found {s!r}")
    return list(set)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):  # int, or numpy's integers
        return repr(int(value))
    if isinstance(value, numbers.Real):  # float, or numpy's floats (whose repr is "np.float64(...)")
        return repr(float(value))
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):  # an inline table
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise UllsimError(f"--set: cannot write {value!r} as a TOML value")


def _json_value(value: Any, key: str, source: str, toml: bool = True) -> Any:
    """``value`` of the key ``key`` (``flow[0].rate_iops``, "" at the top) as JSON holds it, for a scenario given
    as a dict (``toml``: only what TOML can hold, no None) or results given as a dict; a value that cannot be
    written raises :class:`UllsimError` naming its key."""

    def bad(what: str) -> UllsimError:
        return UllsimError(f"{source}: key `{key}`: {what}" if key else f"{source}: {what}")

    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise bad(f"expected string keys (TOML's), found the key {k!r}")
            out[k] = _json_value(v, f"{key}.{k}" if key else k, source, toml)
        return out
    if isinstance(value, (list, tuple)):
        return [_json_value(v, f"{key}[{i}]", source, toml) for i, v in enumerate(value)]
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        low, high = _TOML_INTEGERS
        if toml and not low <= int(value) <= high:
            raise bad(f"expected an integer from {low} to {high} (TOML's), found {value!r}")
        return int(value)
    if isinstance(value, numbers.Real):
        if not math.isfinite(value):
            raise bad(f"expected a finite number, found {value!r}")
        return float(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if value is None:
        if not toml:
            return None
        raise bad("found None: TOML has no null; leave the key out for its default")
    raise bad(f"cannot write {type(value).__name__} {value!r} as a TOML value")


def _source(scenario: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[str, str, str, bool]:
    """(text, source name, base directory, is_json) of a path, a TOML string or a dict."""
    if isinstance(scenario, Mapping):
        return json.dumps(_json_value(scenario, "", "<dict>"), allow_nan=False), "<dict>", ".", True
    if not isinstance(scenario, (str, os.PathLike)):
        raise UllsimError(
            f"scenario: expected a path, a TOML string or a dict in the scenario schema, "
            f"found {type(scenario).__name__} {scenario!r}"
        )
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
    if seed is not None:
        seed = _whole_number(seed, "seed")
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
