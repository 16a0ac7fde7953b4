"""The self-contained HTML report of a run, a comparison or a reproduction (:func:`report`), as ``ullsim report``
writes it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from . import _ullsim
from ._run import Result, _json_value
from ._ullsim import UllsimError

def report(source: Result | pd.DataFrame | Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the self-contained HTML report (inline SVG, no JavaScript; as ``ullsim report``) of a run's
    :class:`Result`, a :func:`reproduce` frame, either's JSON as a dict, or the JSON of ``ullsim compare --json``
    as a dict, to ``path``; returns the path."""
    if isinstance(source, Result):
        raw = source.raw
    elif isinstance(source, pd.DataFrame):
        if "raw" not in source.attrs:
            raise UllsimError("report: this DataFrame is not one ullsim.reproduce returned (no attrs['raw'])")
        raw = source.attrs["raw"]
    elif isinstance(source, Mapping):
        # A dict from elsewhere: a value JSON cannot hold (nan) is an error naming its key.
        raw = _json_value(source, "", "report", toml=False)
    else:
        raise UllsimError(f"report: expected a Result, a reproduce() DataFrame or a dict, got {type(source).__name__}")
    html = _ullsim.report_html(json.dumps(raw, allow_nan=False))
    out = Path(path)
    try:
        out.write_text(html)
    except OSError as e:
        raise UllsimError(f"{out}: cannot write the report: {e.strerror}") from None
    return out
