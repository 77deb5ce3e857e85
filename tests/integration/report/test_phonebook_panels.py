"""Phone-book plots as the post draws them: a trend of the chosen degree through the bin
means (2 by default, as the post's figures; 0 asks for the metric fit, degree 3), and one
panel per book size M and per N on request (`--all-panels`)."""

from __future__ import annotations

import pytest

from ctxprobe.cli import main
from ctxprobe.families.phonebook.report_plots import _draw, phonebook_report
from ctxprobe.store import open_existing

pytest.importorskip("matplotlib")

GRID = ["phonebook", "--model", "sim:decay?slope=0.6", "--tokenizer", "local", "--entries", "50,100",
        "--needles", "5,10", "--runs", "2", "--no-progress"]


def test_all_panels_draw_every_m_and_n(tmp_path) -> None:
    store = str(tmp_path / "s.sqlite")
    assert main([*GRID, "--store", store, "--out", str(tmp_path / "png"), "--all-panels"]) == 0
    names = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert [n.split("-", 2)[2] for n in names] == ["msweep-N10.png", "msweep-N5.png", "position-M100.png",
                                                   "position-M50.png"]


@pytest.mark.parametrize(("degree", "legend"), [(2, "trend (degree 2)"), (1, "trend (degree 1)"),
                                                (None, "metric fit (degree 3)")])
def test_trend_degree_is_the_one_asked(tmp_path, degree, legend) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    store = str(tmp_path / "s.sqlite")
    assert main([*GRID, "--store", store, "--no-plots"]) == 0
    with open_existing(store) as st:
        run_id = st.list_runs()[0].run_id
    an = next(iter(phonebook_report([run_id], store, None, bootstrap=20).analyses.values()))
    fig, ax = plt.subplots()
    _draw(ax, an, 100, 10, "tab:blue", "N=10", degree)
    labels = ax.get_legend_handles_labels()[1]
    plt.close(fig)
    assert sorted(labels) == sorted(["N=10 (per bin, Wilson 95%)", f"N=10 {legend}"])


def test_a_negative_degree_is_refused(tmp_path, capsys) -> None:
    assert main([*GRID, "--store", str(tmp_path / "s.sqlite"), "--trend-degree", "-1"]) == 2
    assert "--trend-degree must be 0" in capsys.readouterr().err
