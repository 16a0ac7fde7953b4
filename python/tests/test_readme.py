"""The README's notebook example, run as written (from a scratch directory): run, sweep, plot, reproduce,
report."""

import re
import tomllib
from pathlib import Path

import matplotlib

import ullsim

matplotlib.use("Agg")  # no display: the figure is only saved

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## From Python") :]
    start = section.index("```python") + len("```python")
    return section[start : section.index("```", start)]


def test_the_readmes_example_runs_and_makes_what_it_says(monkeypatch, tmp_path):
    code = readme_example()
    assert "ullsim.sweep(" in code and ".plot(" in code and "ullsim.run(" in code
    # The example names files relative to the repository; what it writes goes to the scratch directory.
    code = code.replace('"scenarios/', f'"{ROOT}/scenarios/')
    monkeypatch.chdir(tmp_path)
    names: dict = {}
    exec(compile(code, "README.md", "exec"), names)

    assert isinstance(names["r"], ullsim.Result)
    assert set(names["r"].flows["flow"]) == {"reader", "writer"}
    # 2 x 3 variants, 3 seeds, 2 flows with one direction each: 4 rows per run.
    df = names["df"]
    assert len(df) == 2 * 3 * 3 * 4
    assert list(df.columns[:3]) == ["device.flash.program_suspend", "flow.writer.iodepth", "seed"]
    p99 = names["p99"]
    assert p99.shape == (3, 2) and p99.notna().all().all() and (p99 > 0).all().all()
    png = tmp_path / "reader-p99.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    for page in ("run.html", "hotstorage23.html"):
        assert (tmp_path / page).read_text().count("<svg") >= 2
    assert (names["hs"]["figure"] == "table1").sum() > 0


def test_the_readme_names_the_extra_that_installs_what_its_example_needs():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## From Python") :]
    install = section[: section.index("```python")]
    extras = tomllib.loads((ROOT / "python/pyproject.toml").read_text())["project"]["optional-dependencies"]
    named = {e for group in re.findall(r"\./python\[([a-z,]+)\]", install) for e in group.split(",")}
    assert named <= set(extras), f"the README names extras pyproject.toml lacks: {named - set(extras)}"
    installed = {re.split(r"[<>=\[ ]", dep)[0] for extra in named for dep in extras[extra]}
    # pandas' DataFrame.plot needs matplotlib, which `pip install ./python` alone does not bring.
    assert ".plot(" in readme_example()
    assert "matplotlib" in installed, f"no extra the README names installs matplotlib: {named}"
