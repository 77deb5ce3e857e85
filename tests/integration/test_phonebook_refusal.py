"""Phone-book sizes that cannot hold N needles are refused before anything is stored."""

from __future__ import annotations

import pytest

from ctxprobe.cli import main


@pytest.mark.parametrize("sizes", [["--lengths", "1k,2k"], ["--entries", "40,1k"]])
def test_too_many_needles_for_the_smallest_book_writes_nothing(tmp_path, capsys, sizes) -> None:
    store = tmp_path / "pb.sqlite"
    code = main(["phonebook", "--model", "sim:perfect", *sizes, "--needles", "10,50", "--runs", "1",
                 "--store", str(store), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "50" in err and "needles" in err and "Traceback" not in err
    assert not store.exists()  # found: a run row and one response were stored before the error


def test_a_book_that_holds_the_largest_n_runs(tmp_path, capsys) -> None:
    store = tmp_path / "ok.sqlite"
    code = main(["phonebook", "--model", "sim:perfect", "--lengths", "2k", "--needles", "10,20", "--runs", "1",
                 "--store", str(store), "--no-plots", "--no-progress"])
    assert code == 0, capsys.readouterr().err
