"""Human calibration of the Ekphrasis judge: export pairs for annotators, import their labels,
and measure any judge's agreement with the human majority (SPEC §4.12).

``export_pairs`` takes the comparisons of a ``tig judge`` run and writes, for one dimension:

* ``pairs.csv`` — one row per pair: ``pair_id``, the brief, ``response_1`` and
  ``response_2`` (anonymised, in an order drawn afresh from the seed), the checklist cues,
  and blank ``label`` (``1``, ``2`` or ``tie``) and ``annotator`` columns;
* ``annotate.html`` — the same pairs in one self-contained page (no network): one pair at a
  time, a tie option, the anchors shown as cues, and a button that saves the labels as CSV;
* ``key.jsonl`` — what annotators must not see: which model and response is behind 1 and 2.

``import_labels`` reads a filled-in CSV (``pair_id``, ``label``, optional ``annotator``),
checks every row against the key (file and line named on errors) and returns one human
comparison per label, in the record form of ``comparisons.jsonl`` (so ``tig judge --judge
human`` fits a leaderboard from them). ``agreement_with_humans`` compares a judge's verdicts
with the human majority of each pair: the share agreeing and Cohen's κ over the three
outcomes (a wins, b wins, tie), as Ekphrasis reports for its 235-case human slice.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "EXPORT_OUTPUTS",
    "LABELS",
    "export_pairs",
    "import_labels",
    "human_majority",
    "agreement_with_humans",
    "read_key",
]

EXPORT_OUTPUTS = ("pairs.csv", "annotate.html", "key.jsonl")
LABELS = ("1", "2", "tie")


def _text_of(record: Mapping[str, Any], rid: str, texts: Mapping[str, str]) -> str:
    return texts.get(rid, "")


def export_pairs(comparisons: Sequence[Mapping[str, Any]], texts: Mapping[str, str],
                 out: str | Path, *, limit: int | None = None, seed: int = 0) -> int:
    """Write ``pairs.csv``, ``annotate.html`` and ``key.jsonl`` into ``out``; returns the
    number of pairs.

    Parameters
    ----------
    comparisons : sequence of dict
        Records of ``comparisons.jsonl`` (swap re-asks and empty-rule pairs are skipped:
        annotators see each pair once).
    texts : dict response_id → str
        What each response says (:func:`creagraph.tig.judge.response_text`).
    limit : int, optional
        At most this many pairs, drawn at random (``seed``).
    """
    from creagraph.core.io import InputError, atomic_write, write_csv, write_jsonl

    pool = [c for c in comparisons if c.get("swap_of") is None and not c.get("empty_rule")]
    dimensions = {c["dimension"] for c in pool}
    if len(dimensions) > 1:
        raise InputError(f"the comparisons mix dimensions {sorted(dimensions)}; export one "
                         "dimension at a time")
    missing = sorted({rid for c in pool for rid in (c["response_a"], c["response_b"])}
                     - set(texts))
    if missing:
        raise InputError(f"no text for response {missing[0]!r} in the population given")
    rng = np.random.default_rng([seed, 0xE4])
    order = rng.permutation(len(pool))
    if limit is not None:
        order = order[:limit]
    rows, keys = [], []
    for k, i in enumerate(sorted(order.tolist())):
        c = pool[i]
        a_first = bool(rng.integers(2))
        first, second = ("a", "b") if a_first else ("b", "a")
        pair_id = f"p{k + 1:04d}"
        cues = [item["text"] for item in c.get("checklist", [])]
        rows.append({
            "pair_id": pair_id, "dimension": c["dimension"], "task_id": c["task_id"],
            "brief": c.get("brief", ""),
            "response_1": texts[c[f"response_{first}"]],
            "response_2": texts[c[f"response_{second}"]],
            "cues": "\n".join(cues), "label": "", "annotator": "",
        })
        keys.append({
            "pair_id": pair_id, "index": c["index"], "task_id": c["task_id"],
            "dimension": c["dimension"], "brief": c.get("brief", ""),
            "response_1": c[f"response_{first}"], "model_1": c[f"model_{first}"],
            "response_2": c[f"response_{second}"], "model_2": c[f"model_{second}"],
            "length_1": len(texts[c[f"response_{first}"]]),
            "length_2": len(texts[c[f"response_{second}"]]),
            "anchors": c.get("anchors", []), "reference_models": c.get("reference_models", []),
        })
    out = Path(out)
    write_csv(out / "pairs.csv", rows, ["pair_id", "dimension", "task_id", "brief",
                                        "response_1", "response_2", "cues", "label",
                                        "annotator"])
    write_jsonl(out / "key.jsonl", keys)
    with atomic_write(out / "annotate.html") as handle:
        handle.write(_page(rows))
    return len(rows)


def _page(rows: Sequence[Mapping[str, Any]]) -> str:
    """The annotation page: data inline, no external resource."""
    shown = [{"pair_id": r["pair_id"], "brief": r["brief"], "r1": r["response_1"],
              "r2": r["response_2"], "cues": r["cues"].split("\n") if r["cues"] else []}
             for r in rows]
    data = json.dumps(shown, ensure_ascii=False).replace("</", "<\\/")
    dimension = html.escape(rows[0]["dimension"]) if rows else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>creagraph — judge {dimension}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}
.r{{display:inline-block;vertical-align:top;width:45%;border:1px solid #aaa;padding:.6em;
margin:.3em;white-space:pre-wrap}} .cues{{color:#444;font-size:.9em}}</style></head><body>
<h1>Which response is better on <em>{dimension}</em>?</h1>
<p>The brief is context only. The cues below are things to consider, not a rubric to count.
Choose 1, 2 or tie; the responses are anonymised and their order is random.</p>
<label>Annotator id <input id="annotator"></label>
<div id="pair"></div>
<p><button onclick="step(-1)">previous</button> <span id="pos"></span>
<button onclick="step(1)">next</button></p>
<p><button onclick="save()">save labels (CSV)</button></p>
<script>
const PAIRS = {data};
const labels = {{}};
let at = 0;
function esc(s) {{ const d = document.createElement('div'); d.textContent = s;
  return d.innerHTML; }}
function show() {{
  const p = PAIRS[at]; if (!p) {{ document.getElementById('pair').textContent = 'no pairs';
    return; }}
  const opt = v => `<label><input type="radio" name="l" value="${{v}}"` +
    (labels[p.pair_id] === v ? ' checked' : '') +
    ` onchange="labels['${{p.pair_id}}']=this.value"> ${{v}}</label>`;
  document.getElementById('pair').innerHTML =
    `<h2>${{esc(p.pair_id)}}</h2><p><b>Brief:</b> ${{esc(p.brief)}}</p>` +
    `<div class="r"><b>1</b>\\n${{esc(p.r1)}}</div><div class="r"><b>2</b>\\n${{esc(p.r2)}}</div>` +
    `<ul class="cues">${{p.cues.map(c => '<li>' + esc(c) + '</li>').join('')}}</ul>` +
    `<p>${{opt('1')}} ${{opt('2')}} ${{opt('tie')}}</p>`;
  document.getElementById('pos').textContent = `${{at + 1}} / ${{PAIRS.length}}`;
}}
function step(d) {{ at = Math.max(0, Math.min(PAIRS.length - 1, at + d)); show(); }}
function save() {{
  const who = document.getElementById('annotator').value.replace(/[",\\n]/g, ' ');
  let csv = 'pair_id,label,annotator\\n';
  for (const p of PAIRS) {{
    if (labels[p.pair_id]) csv += `${{p.pair_id}},${{labels[p.pair_id]}},${{who}}\\n`;
  }}
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([csv], {{type: 'text/csv'}}));
  a.download = 'labels.csv'; a.click();
}}
show();
</script></body></html>
"""


def read_key(path: str | Path) -> dict[str, dict[str, Any]]:
    """``pair_id → key record`` of a ``key.jsonl``."""
    from creagraph.core.io import InputError, iter_jsonl

    key: dict[str, dict[str, Any]] = {}
    for line, record in enumerate(iter_jsonl(Path(path)), start=1):
        if "pair_id" not in record:
            raise InputError(f"{path}:{line}: missing field 'pair_id'")
        key[str(record["pair_id"])] = record
    return key


def import_labels(labels_path: str | Path, key: Mapping[str, Mapping[str, Any]]
                  ) -> list[dict[str, Any]]:
    """Human comparisons from a filled-in labels CSV (blank labels skipped).

    Raises
    ------
    InputError
        Naming the file and line of an unknown pair id or a label other than 1, 2, tie.
    """
    from creagraph.core.io import InputError, iter_csv_lines

    records: list[dict[str, Any]] = []
    for line, row in iter_csv_lines(labels_path, required=["pair_id", "label"]):
        pair_id = (row.get("pair_id") or "").strip()
        label = (row.get("label") or "").strip().lower()
        if not label:
            continue
        if pair_id not in key:
            raise InputError(f"{labels_path}:{line}: unknown pair_id {pair_id!r} (not in the "
                             "key file of this export)")
        if label not in LABELS:
            raise InputError(f"{labels_path}:{line}: label {label!r} is not one of 1, 2, tie")
        k = key[pair_id]
        winner = "tie" if label == "tie" else k[f"model_{label}"]
        records.append({
            "index": len(records), "pair_id": pair_id, "source_index": k["index"],
            "task_id": k["task_id"], "brief": k.get("brief", ""),
            "dimension": k["dimension"], "judge": "human",
            "annotator": (row.get("annotator") or "").strip(),
            "model_a": k["model_1"], "model_b": k["model_2"],
            "response_a": k["response_1"], "response_b": k["response_2"],
            "shown": [k["response_1"], k["response_2"]], "swap_of": None,
            "length_a": k.get("length_1", 0), "length_b": k.get("length_2", 0),
            "anchors": k.get("anchors", []), "reference_models": k.get("reference_models", []),
            "raw_reply": label, "parsed": True, "repaired": False, "empty_rule": False,
            "verdict_position": {"1": "A", "2": "B"}.get(label, "tie"), "winner": winner,
        })
    return records


def human_majority(labels: Sequence[Mapping[str, Any]]) -> dict[int, str | None]:
    """``source comparison index → majority winner`` (a model or ``"tie"``); ``None``
    when the most frequent answers are equally frequent."""
    votes: dict[int, Counter[str]] = {}
    for r in labels:
        votes.setdefault(int(r["source_index"]), Counter())[str(r["winner"])] += 1
    majority: dict[int, str | None] = {}
    for index, counter in votes.items():
        top = counter.most_common()
        majority[index] = None if len(top) > 1 and top[0][1] == top[1][1] else top[0][0]
    return majority


def agreement_with_humans(comparisons: Sequence[Mapping[str, Any]],
                          labels: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Share of pairs where the judge's verdict equals the human majority, and Cohen's κ
    (:func:`creagraph.judgments.cohens_kappa`) over a-wins / b-wins / tie.

    Pairs without a human majority or without a judge verdict are counted and left out.
    """
    from creagraph.judgments import cohens_kappa

    majority = human_majority(labels)
    by_index = {int(c["index"]): c for c in comparisons}
    judge_labels, human_labels = [], []
    no_majority = no_verdict = 0
    for index, winner in sorted(majority.items()):
        c = by_index.get(index)
        if winner is None:
            no_majority += 1
            continue
        if c is None or c.get("winner") is None:
            no_verdict += 1
            continue

        def side(w: str, c: Mapping[str, Any] = c) -> str:
            return "tie" if w == "tie" else ("a" if w == c["model_a"] else "b")

        judge_labels.append(side(c["winner"]))
        human_labels.append(side(winner))
    n = len(judge_labels)
    share = float(np.mean([x == y for x, y in zip(judge_labels, human_labels, strict=True)])) \
        if n else None
    kappa = None
    if n and len(set(judge_labels) | set(human_labels)) > 1:
        kappa = float(cohens_kappa(judge_labels, human_labels,
                                   categories=["a", "b", "tie"]).kappa)
    return {"n_pairs": n, "share_agreeing": share, "cohen_kappa": kappa,
            "n_without_majority": no_majority, "n_without_verdict": no_verdict,
            "n_labels": len(labels)}
