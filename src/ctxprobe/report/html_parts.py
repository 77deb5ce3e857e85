"""Building blocks of the HTML report: escaping, the colour scale, tables, inline images.

Everything that came from a model, a prompt or a user's spec goes through :func:`esc`
before it touches the page; the helpers here take plain strings and escape them, and
only return markup they built themselves, so a caller cannot forget.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from ctxprobe.report.evidence import Excerpt
from ctxprobe.report.format import fmt_interval, fmt_score

# ColorBrewer RdYlGn (the map matplotlib's "RdYlGn" is built from), so table cells and
# PNG heatmaps mean the same accuracy by the same colour.
_RDYLGN = ((165, 0, 38), (215, 48, 39), (244, 109, 67), (253, 174, 97), (254, 224, 139), (255, 255, 191),
           (217, 239, 139), (166, 217, 106), (102, 189, 99), (26, 152, 80), (0, 104, 55))

#: Outcomes with a colour of their own in badges (others are neutral grey).
OUTCOME_CLASS = {"correct": "ok", "distractor": "bad", "wrong": "bad", "partial": "warn", "not_found": "bad",
                 "refusal": "warn", "empty": "warn", "parse_error": "warn", "output_truncated": "warn",
                 "input_truncated": "harness", "error": "harness"}


def esc(value: object) -> str:
    """Text → HTML text node / attribute value. The one way untrusted text enters the page."""
    return html.escape("" if value is None else str(value), quote=True)


def accuracy_colours(mean: float | None) -> tuple[str, str]:
    """(background, foreground) CSS colours for an accuracy on the fixed 0 red → 1 green scale."""
    if mean is None:
        return "#d9d9d9", "#333"
    x = min(max(mean, 0.0), 1.0) * (len(_RDYLGN) - 1)
    i = min(int(x), len(_RDYLGN) - 2)
    t = x - i
    r, g, b = (round(a + (c - a) * t) for a, c in zip(_RDYLGN[i], _RDYLGN[i + 1]))
    # same rule as the PNG heatmap: white text on the saturated ends
    fg = "#fff" if mean < 0.2 or mean > 0.85 else "#111"
    return f"rgb({r},{g},{b})", fg


def score_cell(mean: float | None, lo: float | None = None, hi: float | None = None, n: int | None = None,
               extra: str = "") -> str:
    """A <td> coloured by accuracy, with the interval and n as a tooltip; ``extra`` is plain text."""
    bg, fg = accuracy_colours(mean)
    tip = []
    if mean is not None and lo is not None and hi is not None:
        tip.append(f"Wilson 95% CI {fmt_interval(lo, hi)}")
    if n is not None:
        tip.append(f"n={n}")
    return (f'<td class="acc" style="background:{bg};color:{fg}" title="{esc(", ".join(tip))}">'
            f"{esc(fmt_score(mean) + extra)}</td>")


def table(headers: list[str], rows: list[list[str]], *, cls: str = "", caption: str = "",
          raw_rows: bool = False) -> str:
    """A scrollable table. Headers and cells are escaped unless ``raw_rows`` (cells then
    must be markup built by these helpers, each a complete ``<td>``)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = row if raw_rows else [f"<td>{esc(c)}</td>" for c in row]
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (f'<div class="scroll"><table class="{esc(cls)}">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def td(value: object, cls: str = "") -> str:
    return f'<td class="{esc(cls)}">{esc(value)}</td>' if cls else f"<td>{esc(value)}</td>"


def img(path: Path, alt: str) -> str:
    """A PNG inlined as a data: URI (the report must open with no network and no side files)."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}" loading="eager">'


def badge(outcome: str) -> str:
    return f'<span class="badge {OUTCOME_CLASS.get(outcome, "other")}">{esc(outcome)}</span>'


def excerpt_html(ex: Excerpt) -> str:
    """Prompt excerpt with the evidence and distractors marked; every segment escaped."""
    parts = ["…" if ex.start > 0 else ""]
    for text, kind in ex.segments:
        if kind == "evidence":
            parts.append(f'<mark class="ev">{esc(text)}</mark>')
        elif kind == "distractor":
            parts.append(f'<mark class="dis">{esc(text)}</mark>')
        else:
            parts.append(esc(text))
    end = ex.start + sum(len(t) for t, _ in ex.segments)
    parts.append("…" if end < ex.prompt_chars else "")
    return f'<pre class="excerpt">{"".join(parts)}</pre>'


CSS = """
:root{--fg:#1d2430;--muted:#5b6577;--line:#d8dde6;--bg:#fff;--panel:#f6f8fb;--accent:#2456a6}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 color:var(--fg);background:var(--bg)}
main{max-width:1240px;margin:0 auto;padding:16px 20px 60px}
h1{font-size:1.6rem;margin:.4em 0 .1em}h2{font-size:1.3rem;margin:1.6em 0 .5em;padding-top:.4em;
 border-top:2px solid var(--line)}h3{font-size:1.08rem;margin:1.2em 0 .4em}
nav.toc{position:sticky;top:0;background:#fffffff2;border-bottom:1px solid var(--line);padding:6px 0;
 z-index:2;font-size:.9rem}
nav.toc a{color:var(--accent);margin-right:14px;text-decoration:none;white-space:nowrap}
.sub{color:var(--muted);margin:0 0 1em}
.summary{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:10px 18px}
.summary li{margin:.45em 0}.verdict{font-weight:600}
.scroll{overflow-x:auto;max-width:100%;margin:.4em 0 1em}
table{border-collapse:collapse;font-size:.88rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--panel);font-weight:600;white-space:nowrap}
td.num,td.acc{text-align:right;white-space:nowrap}td.acc{font-weight:600}
caption{caption-side:top;text-align:left;color:var(--muted);padding:2px 0 6px;font-size:.85rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,440px),1fr));gap:14px;align-items:start}
.wide{max-width:760px;margin:0 0 14px}
figure{margin:0;background:#fff;border:1px solid var(--line);border-radius:6px;padding:6px}
figure img{width:100%;height:auto;display:block}figcaption{font-size:.82rem;color:var(--muted);padding:4px 2px 0}
.note{color:var(--muted);font-size:.88rem}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:.8rem;font-weight:600;
 background:#e3e6ec;color:#333}
.badge.ok{background:#1a9850;color:#fff}.badge.bad{background:#d73027;color:#fff}
.badge.warn{background:#fdae61;color:#222}.badge.harness{background:#8e44ad;color:#fff}
details.failure{border:1px solid var(--line);border-radius:6px;margin:6px 0;background:#fff}
details.failure>summary{cursor:pointer;padding:6px 10px;background:var(--panel);overflow-wrap:anywhere}
details.failure[open]>summary{border-bottom:1px solid var(--line)}
.fbody{padding:6px 12px 10px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fbfbfd;border:1px solid var(--line);
 border-radius:4px;padding:8px;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
 max-height:26em;overflow:auto;margin:.3em 0 .8em}
mark.ev{background:#a6d96a;color:#000;font-weight:600}mark.dis{background:#fdae61;color:#000}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.3em 0}
dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;overflow-wrap:anywhere}
.legend span{display:inline-block;width:28px;height:12px;vertical-align:middle}
footer{color:var(--muted);font-size:.8rem;margin-top:3em}
"""
