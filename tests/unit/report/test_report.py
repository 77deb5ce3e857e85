from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest
from rich.console import Console

from ctxprobe.analysis.grid import Profile, profile
from ctxprobe.core.rows import ResultRow
from ctxprobe.report import (
    curve_png,
    fmt_depth,
    fmt_tokens,
    heatmap_png,
    profile_to_dict,
    render_outcomes_table,
    render_profile_table,
)

LENGTHS = [1024, 2048, 4096, 8192, 16384]
DEPTHS = [0.0, 0.25, 0.5, 0.75, 1.0]


def synthetic_rows(reps: int = 10) -> list[ResultRow]:
    """Accuracy that decays with length and sags in the middle; a few harness failures."""
    rows: list[ResultRow] = []
    for li, length in enumerate(LENGTHS):
        for depth in DEPTHS:
            p = max(0.0, 1.0 - 0.12 * li - (0.25 * li / 4) * (1 - abs(depth - 0.5) * 2))
            k = round(p * reps)
            for rep in range(reps):
                ok = rep < k
                rows.append(ResultRow("niah", length, depth, rep,
                                      "correct" if ok else "not_found", 1.0 if ok else 0.0))
    rows.append(ResultRow("niah", 16384, 0.5, reps, "input_truncated", None))
    return rows


@pytest.fixture
def niah() -> Profile:
    (p,) = profile(synthetic_rows())
    return p


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_fmt_tokens() -> None:
    assert fmt_tokens(4096) == "4K"
    assert fmt_tokens(12288) == "12K"
    assert fmt_tokens(5000) == "4.9K"
    assert fmt_tokens(900) == "900"
    assert fmt_tokens(1024) == "1K"
    assert fmt_tokens(1024 * 1024) == "1M"


def test_fmt_depth() -> None:
    assert fmt_depth(0.0) == "0%"
    assert fmt_depth(0.25) == "25%"
    assert fmt_depth(1.0) == "100%"
    assert fmt_depth(0.125) == "12.5%"
    assert fmt_depth(0.1) == "10%"


@pytest.mark.parametrize("plot", [heatmap_png, curve_png])
def test_plots_write_reasonable_pngs(plot, niah: Profile, tmp_path: Path) -> None:
    path = plot(niah, tmp_path / "sub" / "out.png", title="sim:decay")
    assert path.exists() and path.stat().st_size > 5_000
    width, height = png_size(path)
    assert 600 <= width <= 1200 and 400 <= height <= 800


def test_plots_handle_none_and_single_length(tmp_path: Path) -> None:
    rows = [ResultRow("niah", 4096, 0.5, r, "wrong", 0.0) for r in range(3)]
    rows.append(ResultRow("niah", 4096, 0.5, 3, "error", None))
    (p,) = profile(rows)
    assert p.effective_length is None
    assert heatmap_png(p, tmp_path / "h.png").stat().st_size > 0
    assert curve_png(p, tmp_path / "c.png").stat().st_size > 0


def test_table_shows_cells_and_effective_length(niah: Profile) -> None:
    console = Console(record=True, width=200, color_system=None)
    render_profile_table(niah, console)
    text = console.export_text()
    assert f"effective length: {fmt_tokens(niah.effective_length)}" in text
    assert "threshold 0.856, mean ≥ threshold" in text
    assert "[" in text and "–" in text  # intervals
    assert "depth 50%" in text and "all depths" in text
    assert "1 excl" in text  # the harness failure at 16K is shown, not hidden


def test_table_when_shortest_fails() -> None:
    rows = [ResultRow("niah", 1024, 0.0, r, "wrong", 0.0) for r in range(4)]
    (p,) = profile(rows)
    console = Console(record=True, width=120, color_system=None)
    render_profile_table(p, console)
    assert "effective length: below 1K (shortest length fails)" in console.export_text()


def test_outcomes_table(niah: Profile) -> None:
    console = Console(record=True, width=160, color_system=None)
    render_outcomes_table(niah, console)
    text = console.export_text()
    assert "correct" in text and "not_found" in text and "input_truncated" in text
    assert "refusal" not in text  # only outcomes that occur get a column


def test_json_round_trip(niah: Profile) -> None:
    data = profile_to_dict(niah)
    back = json.loads(json.dumps(data, allow_nan=False))
    assert back == data
    assert back["rule"] == "mean >= threshold"
    assert back["threshold"] == 0.856
    assert back["effective_length"] == niah.effective_length
    assert len(back["cells"]) == len(LENGTHS) * len(DEPTHS)
    assert [x["length"] for x in back["lengths"]] == LENGTHS
    assert back["lengths"][-1]["n_excluded"] == 1


def test_json_unmeasured_is_null() -> None:
    (p,) = profile([ResultRow("niah", 1024, 0.0, 0, "error", None)])
    data = json.loads(json.dumps(profile_to_dict(p), allow_nan=False))
    assert data["cells"][0]["mean"] is None
    assert data["effective_length"] is None


def test_missing_matplotlib_names_the_extra(
    niah: Profile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxprobe.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    with pytest.raises(MissingExtraError, match=r"ctxprobe\[plot\]"):
        heatmap_png(niah, tmp_path / "h.png")


def test_narrow_console_drops_cell_intervals_not_the_verdict(niah: Profile) -> None:
    console = Console(record=True, width=100, color_system=None)
    render_profile_table(niah, console)
    text = console.export_text()
    assert "per-depth intervals omitted" in text
    assert "…" not in text  # nothing truncated mid-number
    assert "effective length: 1K" in text
