"""The HTML report as a browser draws it: headless Chromium renders `ullsim run --html`, `ullsim compare --html`
and `ullsim reproduce --html` pages, the screenshot must not be blank (ink, and the charts' colours), and the DOM
Chromium parsed must hold one drawn <svg> per chart the results call for.

Chromium is looked up as $CHROMIUM, else `chromium` or `chromium-browser` on PATH. Without it the tests are
skipped (the reason says how to install it), unless ULLSIM_REQUIRE_CHROMIUM=1 (as in .ci/run): then they fail.
"""

import json
import os
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from html.parser import HTMLParser

import pytest

from command import ROOT, ullsim_command as ullsim

EXAMPLE = ROOT / "scenarios" / "examples" / "mixed-znand.toml"

# crates/ullsim-report/src/svg.rs: the series colours (PALETTE) and the reproduction's paper bars.
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]
PAPER_COLOUR = "#9c9c9c"
# A legend swatch is 12 x 12 px; anti-aliasing leaves about 130 of its pixels exactly the colour.
SWATCH_PIXELS = 100
WIDTH, HEIGHT = 1200, 4000
TIMEOUT_S = 120
# Elements that put ink in a chart.
MARKS = {"path", "rect", "polyline", "line", "circle", "polygon"}

INSTALL_HINT = (
    "headless Chromium is needed to render the HTML report: install Debian's package "
    "(apt-get install chromium), or point $CHROMIUM at a Chromium binary"
)


def find_chromium():
    """The Chromium binary, or None: $CHROMIUM when set (a path or a name on PATH), else `chromium` or
    `chromium-browser` on PATH."""
    override = os.environ.get("CHROMIUM")
    if override:
        return shutil.which(override)
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium():
    path = find_chromium()
    if path is None:
        where = f"$CHROMIUM={os.environ['CHROMIUM']!r} is not an executable" if os.environ.get("CHROMIUM") else (
            "neither `chromium` nor `chromium-browser` is on PATH"
        )
        message = f"{where}; {INSTALL_HINT}"
        if os.environ.get("ULLSIM_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"ULLSIM_REQUIRE_CHROMIUM=1 but {message}", pytrace=False)
        pytest.skip(message)
    return path


def run_chromium(chromium, work, html, *mode):
    """Chromium headless on file://`html` with `mode` (--screenshot=... or --dump-dom); its stdout. Its
    profile is a fresh directory under `work`. A non-zero exit is a failure showing its stderr (the D-Bus
    warnings it prints on a machine without a session bus are harmless and ignored otherwise)."""
    profile = work / "chromium-profile"
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        *mode,
        html.resolve().as_uri(),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"Chromium did not finish in {TIMEOUT_S} s: {command}\nstderr:\n{e.stderr}")
    if done.returncode != 0:
        pytest.fail(f"Chromium exited with {done.returncode}: {command}\nstderr:\n{done.stderr}")
    return done.stdout, done.stderr


def screenshot(chromium, work, html):
    png = work / (html.stem + ".png")
    _, stderr = run_chromium(chromium, work, html, f"--screenshot={png}")
    if not png.exists() or png.stat().st_size == 0:
        pytest.fail(f"Chromium wrote no screenshot {png}\nstderr:\n{stderr}")
    return decode_png(png.read_bytes())


def dump_dom(chromium, work, html):
    dom, stderr = run_chromium(chromium, work, html, "--dump-dom")
    if "</html>" not in dom:
        pytest.fail(f"Chromium dumped no document for {html}\nstdout:\n{dom[:2000]}\nstderr:\n{stderr}")
    return dom


# ---- PNG, with the standard library only -------------------------------------------------------------------


def decode_png(data):
    """(width, height, rows) of an 8-bit RGB or RGBA, non-interlaced PNG; each row as bytes of RGB triples."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, header, idat = 8, None, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    assert header is not None, "no IHDR"
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, f"unsupported PNG {header}"
    bpp = 3 if colour_type == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    assert len(raw) == height * (stride + 1), "truncated image data"
    # For the Up filter: bytewise addition modulo 256 of whole rows as integers (carries kept in each byte).
    low = int.from_bytes(b"\x7f" * stride, "big")
    high = int.from_bytes(b"\x80" * stride, "big")
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:  # Up
            x, p = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            line = bytearray((((x & low) + (p & low)) ^ ((x ^ p) & high)).to_bytes(stride, "big"))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                b = prev[i]
                if i >= bpp:
                    a, c = line[i - bpp], prev[i - bpp]
                else:
                    a = c = 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        else:
            assert kind == 0, f"unknown PNG filter {kind} in row {y}"
        prev = line
        rows.append(bytes(line) if bpp == 3 else bytes(v for i, v in enumerate(line) if i % 4 != 3))
    return width, height, rows


def colour_counts(rows):
    """Pixels of each exact colour, keyed "#rrggbb"."""
    counts = Counter()
    for row, times in Counter(rows).items():  # a page has many identical rows (margins, blank lines)
        for pixel, n in Counter(row[i : i + 3] for i in range(0, len(row), 3)).items():
            counts[pixel] += n * times
    return {"#" + pixel.hex(): n for pixel, n in counts.items()}


def assert_drawn(width, height, rows, colours):
    """The screenshot is the page drawn: ink on a meaningful share of it, many colours, and each of `colours`
    on at least a legend swatch's worth of pixels."""
    assert (width, height) == (WIDTH, HEIGHT)
    counts = colour_counts(rows)
    total = width * height
    ink = total - counts.get("#ffffff", 0)
    assert ink > total // 100, f"the page is nearly blank: {ink} of {total} pixels are not white"
    assert len(counts) >= 20, f"only {len(counts)} distinct colours: {sorted(counts)[:20]}"
    missing = {c: counts.get(c, 0) for c in colours if counts.get(c, 0) < SWATCH_PIXELS}
    assert not missing, f"chart colours (nearly) absent from the screenshot, pixels of each: {missing}"


# ---- The DOM Chromium parsed --------------------------------------------------------------------------------


class SvgCounter(HTMLParser):
    """Per top-level <svg> of a document: how many marks (paths, rects, lines ...) it holds."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.marks = []

    def handle_starttag(self, tag, attrs):
        if tag == "svg":
            if self.depth == 0:
                self.marks.append(0)
            self.depth += 1
        elif self.depth and tag in MARKS:
            self.marks[-1] += 1

    def handle_startendtag(self, tag, attrs):
        if tag == "svg":
            self.marks.append(0)
        elif self.depth and tag in MARKS:
            self.marks[-1] += 1

    def handle_endtag(self, tag):
        if tag == "svg" and self.depth:
            self.depth -= 1


def charts_in(dom):
    counter = SvgCounter()
    counter.feed(dom)
    counter.close()
    assert counter.depth == 0, "an <svg> is not closed in the parsed DOM"
    return counter.marks


# ---- The reports --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def results_report(tmp_path_factory):
    """`ullsim run --html` of two flows with fairness and a time series: every chart kind of a results page."""
    work = tmp_path_factory.mktemp("results-report")
    html, results = work / "results.html", work / "results.json"
    ullsim(
        "run", EXAMPLE, "--fairness",
        "--set", "run.duration=20ms", "--set", "run.warmup=2ms", "--set", "metrics.timeseries_interval=2ms",
        "--html", html, "--json", results, "-q",
    )  # fmt: skip
    return work, html, json.loads(results.read_text())


@pytest.fixture(scope="module")
def reproduction_report(tmp_path_factory):
    """`ullsim reproduce aios19 --html`, the cheapest reproduction (well under a second at 20 ms a run)."""
    work = tmp_path_factory.mktemp("reproduction-report")
    html, results = work / "aios19.html", work / "aios19.json"
    ullsim("reproduce", "aios19", "--duration", "20ms", "--html", html, "--json", results, "-q")
    return work, html, json.loads(results.read_text())


@pytest.fixture(scope="module")
def comparison_report(tmp_path_factory):
    """`ullsim compare --html` of the example's two flows at three depths of the reader."""
    work = tmp_path_factory.mktemp("comparison-report")
    html, results = work / "compare.html", work / "compare.json"
    ullsim(
        "compare", EXAMPLE, "--vary", "flow.reader.iodepth=1,4,16",
        "--set", "run.duration=20ms", "--set", "run.warmup=2ms", "--html", html, "--json", results, "-q",
    )  # fmt: skip
    return work, html, json.loads(results.read_text())


def expected_results_charts(results):
    """crates/ullsim-report/src/results.rs: the latency CDF and the breakdown always, the slowdown chart with
    `fairness`, three time-series charts (IOPS, latency, queue depth) with a non-empty `timeseries`."""
    charts = 2
    if isinstance(results.get("fairness"), dict):
        charts += 1
    if isinstance(results.get("timeseries"), dict) and results["timeseries"].get("start_ns"):
        charts += 3
    return charts


def test_a_results_report_draws_in_chromium(chromium, results_report):
    work, html, results = results_report
    assert "fairness" in results and "timeseries" in results, "the scenario should give every chart kind"
    flows = len(results["flows"])
    # The breakdown's legend has a swatch for each of its nine parts, in the palette's first nine colours;
    # they include the flows' series colours.
    assert flows <= 9
    assert_drawn(*screenshot(chromium, work, html), PALETTE)


def test_a_results_report_has_one_drawn_svg_per_chart_in_chromiums_dom(chromium, results_report):
    work, html, results = results_report
    marks = charts_in(dump_dom(chromium, work, html))
    assert len(marks) == expected_results_charts(results) == 6, f"charts in the DOM: {len(marks)}"
    assert all(m > 0 for m in marks), f"an <svg> without a mark; marks per chart: {marks}"
    # The CDF: a step line and 8 markers (min, six percentiles, max) per flow, besides its axes.
    assert marks[0] >= 9 * len(results["flows"])


def test_a_reproduction_report_draws_in_chromium(chromium, reproduction_report):
    work, html, reproduction = reproduction_report
    figures = {row["figure"] for row in reproduction["rows"]}
    assert len(figures) >= 2
    # Simulated bars in the first series colour; paper bars in grey where the paper gives a value.
    assert any(row["paper"] is not None for row in reproduction["rows"])
    assert_drawn(*screenshot(chromium, work, html), [PALETTE[0], PAPER_COLOUR])
    marks = charts_in(dump_dom(chromium, work, html))
    assert len(marks) == len(figures), f"{len(marks)} charts for {len(figures)} figures"
    assert all(m > 0 for m in marks), f"an <svg> without a mark; marks per chart: {marks}"


def test_a_comparison_report_draws_in_chromium(chromium, comparison_report):
    work, html, comparison = comparison_report
    flows = {flow["name"] for variant in comparison["variants"] for flow in variant["results"]["flows"]}
    assert len(comparison["variants"]) == 3 and len(flows) == 2
    # The breakdowns' legends hold the palette's first nine colours; bars and CDF lines use the first three.
    assert_drawn(*screenshot(chromium, work, html), PALETTE)
    marks = charts_in(dump_dom(chromium, work, html))
    # crates/ullsim-report/src/comparison.rs: IOPS and latency bars, then per flow a CDF chart (three variants
    # fit one) and a breakdown.
    assert len(marks) == 2 + 2 * len(flows), f"charts in the DOM: {len(marks)}"
    assert all(m > 0 for m in marks), f"an <svg> without a mark; marks per chart: {marks}"
    # Each CDF chart: a step line and 8 markers per variant, besides its axes.
    assert all(m >= 9 * 3 for m in marks[2:4])


@pytest.fixture(scope="module")
def calibration_report(tmp_path_factory):
    """`ullsim calibrate --html` from a short simulated probe (two files, few I/Os per simulated job)."""
    work = tmp_path_factory.mktemp("calibration-report")
    probe = work / "probe"
    ullsim("probe", "-o", probe, "--simulate", "optane-ull", "--qd", "1,16", "--numjobs", "1")
    html, results = work / "calibration.html", work / "calibration.json"
    ullsim(
        "calibrate", probe / "randread-4k-qd.json", probe / "randread-large.json", "--base", "optane-900p",
        "--ios", "300", "-o", work / "fit.toml", "--json", results, "--html", html,
    )  # fmt: skip
    return work, html, json.loads(results.read_text())


def test_a_calibration_report_draws_in_chromium(chromium, calibration_report):
    work, html, calibration = calibration_report
    # crates/ullsim-report/src/calibration.rs: a chart per job family (rw, block size, direction); measured in
    # the first series colour, simulated in the second.
    families = {(row["rw"], row["shape"]["block_size"], row["direction"]) for row in calibration["rows"]}
    assert len(families) >= 2
    assert_drawn(*screenshot(chromium, work, html), PALETTE[:2])
    marks = charts_in(dump_dom(chromium, work, html))
    assert len(marks) == len(families), f"{len(marks)} charts for {len(families)} families"
    # Each chart: a measured and a simulated mean marker per job at least, besides its axes and legend.
    assert all(m > 0 for m in marks), f"an <svg> without a mark; marks per chart: {marks}"
