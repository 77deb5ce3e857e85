"""``ctxprobe view``'s pages as a user reads them: the history's trend where a run is
below the shortest length, compare's effective lengths worded as its verdict words them,
an imported run saying where it came from, and a bundle that promises no live updates."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from ctxprobe.report.compare_runs import compare_runs
from ctxprobe.report.format import fmt_tokens
from ctxprobe.view import make_app, write_bundle
from ctxprobe.view.charts import trend


@pytest.fixture(scope="module")
def client(view_store: dict[str, Any]) -> TestClient:
    return TestClient(make_app(view_store["store"]))


def test_a_trend_below_the_shortest_length_stays_at_the_bottom() -> None:
    """``None`` is below the shortest length (an EffectiveLength's hi never exceeds the
    longest): a run reliable nowhere draws its point and its whole interval on the bottom
    tick, "< 512", never a bar up to the top of the chart."""
    lengths = [512, 1024, 2048]
    labels = {L: fmt_tokens(L) for L in lengths}
    t = trend([(None, None, None, "below"), (2048, 1024, 2048, "1K-2K"), (1024, None, 1024, "up to 1K")],
              lengths, labels)
    bottom = t.top + t.plot_h
    tick = {label: y for y, label in t.yticks}
    assert tick["< 512"] == bottom and tick["2K"] == t.top
    (_, y0, lo0, hi0, _), (_, y1, lo1, hi1, _), (_, y2, lo2, hi2, _) = t.points
    assert y0 == lo0 == hi0 == bottom  # below 512: nothing above the bottom tick
    assert (y1, lo1, hi1) == (tick["2K"], tick["1K"], tick["2K"])
    assert (y2, lo2, hi2) == (tick["1K"], bottom, tick["1K"])  # "at most 1K, possibly below 512"


def test_history_page_labels_the_bottom_tick(client: TestClient, view_store: dict[str, Any]) -> None:
    """Each family's chart has the "< shortest" tick the runs reliable nowhere sit on."""
    found = client.get("/api/history").json()
    (sl,) = [s for s in found if view_store["blind"] in s["runs"]]
    assert set(sl["families"]) == {"niah"}
    page = client.get("/history").text
    assert page.count("&lt; 512</text>") >= 1


def test_compare_words_an_effective_length_below_every_length_as_its_verdict(client: TestClient,
                                                                             view_store: dict[str, Any]) -> None:
    a, b = view_store["perfect"], view_store["blind"]
    cmp = compare_runs(a, b, view_store["store"])
    (fam,) = cmp.families
    assert fam.effective_b is None  # blind-middle clears the bar nowhere
    shortest = fmt_tokens(min(c.length for c in fam.cells if c.length is not None))
    page = html.unescape(client.get(f"/compare/{a}/{b}").text)
    assert f"B below {shortest}" in page and f"-> below {shortest}" in cmp.verdict() and "B none" not in page


def test_an_imported_run_page_says_where_it_came_from(client: TestClient, view_store: dict[str, Any]) -> None:
    page = client.get(f"/run/{view_store['imported']}").text
    assert 'id="imported">imported from inspect (log view-test.eval)</span>' in page
    assert 'id="imported"' not in client.get(f"/run/{view_store['perfect']}").text


def test_the_bundle_promises_no_live_updates(client: TestClient, view_store: dict[str, Any], tmp_path: Path) -> None:
    live = "a running sweep updates here as it goes"
    assert live in client.get("/").text
    index = write_bundle(view_store["store"], tmp_path / "b").read_text(encoding="utf-8")
    assert live not in index and "as the store stood when this bundle was written" in index


def test_runs_sort_on_numbers(client: TestClient, view_store: dict[str, Any]) -> None:
    """The runs page sorts cost and effective length as numbers: each row carries the
    cost in dollars (empty when unpriced) and its shortest observed effective length
    (0 when below the shortest tested length; empty when nothing is scored)."""
    rows = {r["run_id"]: r for r in client.get("/api/runs").json()["runs"]}
    for rid in (view_store["perfect"], view_store["blind"], view_store["imported"]):
        r = rows[rid]
        assert r["eff_key"] == min(f["point"] or 0 for f in r["lengths"])
    secret = rows[view_store["secret"]]
    assert (secret["eff_key"], secret["usd"], secret["cost"]) == (None, None, "—")
    page = client.get("/").text
    assert f'data-run="{view_store["secret"]}"' in page and 'data-cost="" data-eff=""' in page
    assert 'data-sort="eff" data-numeric="yes"' in page and 'data-sort="cost" data-numeric="yes"' in page


def test_a_url_no_route_matches_is_the_one_line_page(client: TestClient, view_store: dict[str, Any]) -> None:
    for url in ("/nothing/here", f"/run/{view_store['blind']}/cell/niah/long/0.5"):
        r = client.get(url)
        assert r.status_code == 404 and "no page at " in r.text and "<nav>" in r.text, url
    api = client.get("/api/nothing")
    assert api.status_code == 404 and api.json()["error"].startswith("no page at /api/nothing")
