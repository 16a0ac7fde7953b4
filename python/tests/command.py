"""The `ullsim` command the Python tests compare the package with (built by `python/run-tests` before pytest)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# python/run-tests names the binary it built (the `quick` profile's); by hand, the release build's.
BINARY = Path(os.environ.get("ULLSIM_BINARY", ROOT / "target" / "release" / "ullsim"))


def ullsim_command(*args, timeout=120):
    """Run `ullsim ARGS...` and return its standard output; a missing binary or a failed run fails the test
    with the command's error."""
    if not BINARY.exists():
        pytest.fail(f"{BINARY} is missing: build the command first (python/run-tests builds it; or cargo build --release)")
    done = subprocess.run([str(BINARY), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"ullsim {' '.join(map(str, args))} failed:\n{done.stderr}"
    return done.stdout
