"""``ctxprobe report`` of a phone-book run takes the phone book's plot flags as
``ctxprobe phonebook`` does: ``--all-panels`` (a position plot per M, an M-sweep per N) and
``--trend-degree`` (the trend through the bin means; 0: the metric fit). Given for runs
that have no plots of their own, they are refused in one line."""

from __future__ import annotations

import pytest

from ctxprobe.cli import main
from ctxprobe.store import open_existing

pytest.importorskip("matplotlib")

GRID = ["phonebook", "--model", "sim:decay?slope=0.6", "--tokenizer", "local", "--entries", "50,100",
        "--needles", "5,10", "--runs", "2", "--no-progress", "--no-plots"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[str, str]:
    store = str(tmp_path_factory.mktemp("pb") / "s.sqlite")
    assert main([*GRID, "--store", store]) == 0
    with open_existing(store) as st:
        return st.list_runs()[0].run_id, store


def _pngs(folder) -> dict[str, bytes]:
    return {p.name.split("-", 2)[2]: p.read_bytes() for p in folder.iterdir()}


def test_all_panels_and_the_default_on_report(run, tmp_path) -> None:
    run_id, store = run
    assert main(["report", run_id, "--store", store, "--out", str(tmp_path / "all"), "--all-panels"]) == 0
    assert sorted(_pngs(tmp_path / "all")) == ["msweep-N10.png", "msweep-N5.png", "position-M100.png",
                                               "position-M50.png"]
    assert main(["report", run_id, "--store", store, "--out", str(tmp_path / "default")]) == 0
    assert sorted(_pngs(tmp_path / "default")) == ["msweep.png", "position.png"]  # the largest M and N only


def test_the_trend_degree_reaches_the_plots(run, tmp_path) -> None:
    run_id, store = run
    drawn = {}
    for name, flags in (("default", []), ("two", ["--trend-degree", "2"]), ("one", ["--trend-degree", "1"]),
                        ("fit", ["--trend-degree", "0"])):
        assert main(["report", run_id, "--store", store, "--out", str(tmp_path / name), *flags]) == 0
        drawn[name] = _pngs(tmp_path / name)["position.png"]
    assert drawn["default"] == drawn["two"]  # 2 is the default, as the post's figures
    assert len({drawn["two"], drawn["one"], drawn["fit"]}) == 3  # another degree draws another trend


def test_bad_degrees_and_runs_without_own_plots_are_one_line_errors(run, tmp_path, capsys) -> None:
    run_id, store = run
    assert main(["report", run_id, "--store", store, "--no-plots", "--trend-degree", "-1"]) == 2
    assert "--trend-degree must be 0" in capsys.readouterr().err
    other = str(tmp_path / "n.sqlite")
    assert main(["run", "--model", "sim:perfect", "--lengths", "512", "--reps", "1", "--store", other,
                 "--no-plots", "--no-progress"]) == 0
    with open_existing(other) as st:
        niah = st.list_runs()[0].run_id
    capsys.readouterr()
    assert main(["report", niah, "--store", other, "--no-plots", "--all-panels"]) == 2
    err = capsys.readouterr().err
    assert "--all-panels" in err and "phone book" in err and len(err.strip().splitlines()) == 1
