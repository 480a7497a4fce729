"""How well the knowledge-graph judge agrees with the published LLM judge (SPEC §3.4).

Run: ``.venv/bin/python benchmarks/grounding.py [--store DIR] [--rows N]``.

On the shared published sample outputs (``../shared/external/create-leaderboard``), every
triple of every parsed path is grounded in the Wikidata slice and compared with the published
judge's stored per-triple factuality (``parsed_scores_factuality_0``, gpt-oss-120b, which agrees
with humans at balanced accuracy 0.86 in the paper) and strength (``raw_salience_scores_0``).
Prints:

- triples decided (verified or refuted) as a share of all triples, and as a share of the
  *decidable* ones (head, relation and tail all linked: the graph holds the ends and a
  property the phrase names);
- agreement with the stored factuality on decided triples; verified precision (stored = 1)
  and refuted precision (stored = 0); the same agreement on the decided triples that the
  hand reading (:data:`READINGS`, one row per disagreeing triple: who is right and why)
  did not mark as the stored judge's error (and verified precision on them), and how many
  disagreements have no reading;
- reversed-claim probes: every verified triple with a directional phrase ("father of",
  "directed") asked the other way round, plus :data:`PROBES`; how many are verified
  (should be none) and how many of the rightly stated ones still are;
- with ``--edge-sweep``: the edge step's verifications by similarity threshold and their
  precision against the stored judge (the figures that chose ``edge_min_similarity``);
- Spearman correlation of the graph's σ with the stored σ, on triples where the graph has σ;
- per query, Spearman correlation of the kg judge's utility s(γ) (strict and lenient) with
  the stored judge's utility on the same parsed paths, and how often [strict, lenient]
  brackets the stored-judge utility.

The figures are compared with ``BASELINE``: the same script run on the code before issue 14
(commit 51a8eb5: closed world, where a linked triple that is not in the graph was "absent",
i.e. false). The script reads both the old statuses (``absent`` counts as decided false) and
the new ones, so re-running it on that commit reproduces the baseline.
"""

from __future__ import annotations

import csv
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import KG_PAPER, STORED_PAPER, parser_with_store, sample_outputs, slice_store

from creagraph.core.embeddings import CachedEmbedder, SentenceTransformerEmbedder
from creagraph.scoring.api import build_scorer
from creagraph.scoring.inputs import read_answers
from creagraph.scoring.parse import parse_answer

# Measured on commit 51a8eb5 (before issue 14) with this script: see benchmarks/RESULTS.md.
BASELINE: dict[str, object] = {
    "triples": 5277,
    "statuses": {"absent": 788, "unlinked": 4044, "verified": 445},
    "decided_share": 0.234,
    "agreement_on_decided": 0.422,
    "verified": 445,
    "verified_precision": 0.901,
    "refuted": 788,  # "absent", read as false (closed world)
    "refuted_precision": 0.151,
    "sigma_spearman": 0.526,
    "sigma_pairs": 1233,
    "queries": 80,
    "utility_0.9_spearman_strict": 0.15,
    "utility_0.9_spearman_lenient": 0.15,  # one reading only
    "utility_0.9_mean_stored": 8.021,
    "utility_0.9_mean_strict": 0.128,
    "utility_0.9_mean_lenient": 0.128,
    "bracketed_share": 0.212,
}

DECIDED = {"verified": 1.0, "refuted": 0.0, "absent": 0.0}

#: Claims the kg judge once verified read backwards (issue 28), in their rightly stated form;
#: the probes ask each one as stated and the other way round.
PROBES = [
    ("Kirk Douglas", "father of", "Michael Douglas"),
    ("George H. W. Bush", "father of", "George W. Bush"),
    ("Max von Laue", "doctoral student of", "Max Planck"),
    ("Max von Laue", "student of", "Max Planck"),
    ("Martin Scorsese", "directed", "Goodfellas"),
    ("Goodfellas", "directed by", "Martin Scorsese"),
]
#: The disagreements with the stored judge read by hand against the slice: triple, our
#: verdict, the stored one, who is right (``graph``, ``stored``, ``neither``), why.
READINGS = Path(__file__).with_name("grounding_readings.csv")
EDGE_THRESHOLDS = (0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)


def spearman(a, b) -> float | None:
    """Spearman rank correlation with average ranks for ties (None under 3 pairs or no
    variance)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 3:
        return None

    def ranks(x: np.ndarray) -> np.ndarray:
        order = np.argsort(x, kind="stable")
        r = np.empty(len(x))
        r[order] = np.arange(len(x))
        for v in np.unique(x):
            mask = x == v
            r[mask] = r[mask].mean()
        return r

    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def main() -> None:
    parser = parser_with_store(__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=0, help="sample rows (0: all)")
    parser.add_argument("--gamma", default="0.9", help="patience key compared (0.7 or 0.9)")
    parser.add_argument("--show", type=int, default=0, help="print N disagreements")
    parser.add_argument(
        "--edge-sweep",
        action="store_true",
        help=f"ground with edge_min_similarity {EDGE_THRESHOLDS[0]} and print the edge step's "
        "precision by threshold (the other figures are then those of that threshold)",
    )
    parser.add_argument(
        "--no-utility",
        action="store_true",
        help="skip the per-query utility figures (the triple and probe figures only)",
    )
    args = parser.parse_args()
    kg = slice_store(args.store)
    rows = read_answers(sample_outputs())
    if args.rows:
        rows = rows[: args.rows]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        embedder = CachedEmbedder(SentenceTransformerEmbedder(), Path(tmp) / "cache.sqlite")
        kg_scorer = build_scorer(KG_PAPER, kg=kg, embedder=embedder)
        grounder = kg_scorer.judge.grounder
        if args.edge_sweep:
            grounder.edge_min_similarity = EDGE_THRESHOLDS[0]
        edges: list[tuple[float, float]] = []
        per_triple = _triple_figures(rows, kg_scorer.judge, args.show, edges)
        probes = _probe_figures(rows, kg_scorer.judge)
        per_query: dict[str, object] = {}
        if not args.no_utility:
            stored_scorer = build_scorer(STORED_PAPER, kg=kg, embedder=embedder)
            per_query = _utility_figures(rows, kg_scorer, stored_scorer, args.gamma)
    figures = {
        **per_triple,
        **probes,
        **({"edge_sweep": _edge_sweep(edges)} if args.edge_sweep else {}),
        "queries": len(rows),
        **per_query,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(figures, indent=1, ensure_ascii=False))
    if BASELINE:
        print("baseline (commit 51a8eb5, closed world):")
        print(json.dumps(BASELINE, indent=1))


def read_readings(path: Path = READINGS) -> dict[tuple[str, str, str], dict[str, str]]:
    """The hand readings of disagreements: (head, relation, tail) -> the CSV row."""
    if not path.exists():
        return {}
    with path.open(encoding="utf-8", newline="") as handle:
        out = {}
        for lineno, row in enumerate(csv.DictReader(handle), start=2):
            if row.get("right") not in ("graph", "stored", "neither"):
                raise ValueError(f"{path}:{lineno}: right must be graph, stored or neither")
            out[(row["head"], row["relation"], row["tail"])] = row
        return out


def _triple_figures(rows, kg_judge, show: int, edges: list) -> dict[str, object]:
    """Per triple: the kg judge's statuses and σ against the stored judge's; prints the
    first ``show`` disagreements; appends (similarity, stored factuality) to ``edges`` for
    each verification by the edge step."""
    readings = read_readings()
    stored_errors = verified_stored_errors = unread = 0
    unread_triples: set[tuple[str, str, str]] = set()
    n = decided = agree = decidable = decidable_decided = 0
    verified = verified_true = refuted = refuted_false = 0
    statuses: dict[str, int] = {}
    sig_kg, sig_stored = [], []
    shown = 0
    for r in rows:
        stored_f = r.extra["parsed_scores_factuality_0"]
        stored_s = r.extra["raw_salience_scores_0"]
        for i, p in enumerate(parse_answer(r.answer).paths):
            if not p.triples or i >= len(stored_f):
                continue
            for k, j in enumerate(kg_judge.judge(r, i, p.triples)):
                if k >= len(stored_f[i]) or stored_f[i][k] is None:
                    continue
                n += 1
                truth = float(stored_f[i][k])
                statuses[j.status] = statuses.get(j.status, 0) + 1
                linked = "links" in j.evidence and not j.evidence.get("unlinked")
                decidable += linked
                decidable_decided += linked and j.status in DECIDED
                if j.evidence.get("via") == "edge":
                    edges.append((j.evidence["relation_similarity"], truth))
                if j.specificity is not None and k < len(stored_s[i]):
                    sig_kg.append(j.specificity)
                    sig_stored.append(float(stored_s[i][k]))
                if j.status not in DECIDED:
                    continue
                decided += 1
                verdict = DECIDED[j.status]
                agree += verdict == truth
                if j.status == "verified":
                    verified += 1
                    verified_true += truth == 1.0
                else:
                    refuted += 1
                    refuted_false += truth == 0.0
                if verdict != truth:
                    key = tuple(str(x) for x in p.triples[k])
                    reading = readings.get(key)
                    if reading is None:
                        unread += 1
                        unread_triples.add(key)
                    elif reading["right"] == "graph":
                        stored_errors += 1
                        verified_stored_errors += j.status == "verified"
                if verdict != truth and shown < show:
                    shown += 1
                    ev = {k2: v for k2, v in j.evidence.items() if k2 != "backend"}
                    print("DISAGREE", p.triples[k], j.status, "stored", truth, ev)
    return {
        "triples": n,
        "statuses": dict(sorted(statuses.items())),
        "decided_share": round(decided / n, 3) if n else None,
        "decidable": decidable,
        "decided_share_of_decidable": (
            round(decidable_decided / decidable, 3) if decidable else None
        ),
        "agreement_on_decided": round(agree / decided, 3) if decided else None,
        "agreement_without_stored_errors": (
            f"{agree} of {decided - stored_errors} = {agree / (decided - stored_errors):.3f}"
            if decided > stored_errors
            else None
        ),
        "disagreements_read_as_stored_error": stored_errors,
        "disagreements_without_reading": f"{unread} ({len(unread_triples)} distinct triples)",
        "verified": verified,
        "verified_precision": round(verified_true / verified, 3) if verified else None,
        "verified_precision_without_stored_errors": (
            round(verified_true / (verified - verified_stored_errors), 3)
            if verified > verified_stored_errors
            else None
        ),
        "refuted": refuted,
        "refuted_precision": round(refuted_false / refuted, 3) if refuted else None,
        "sigma_spearman": _round(spearman(sig_kg, sig_stored)),
        "sigma_pairs": len(sig_kg),
    }


def _probe_figures(rows, kg_judge) -> dict[str, object]:
    """Reversed claims: each verified sample triple whose phrase states a direction, asked
    the other way round, and :data:`PROBES`. A reversed claim should never be verified
    (unless the graph holds both directions, as for symmetric properties)."""
    from creagraph.core.relations import directional_phrase, symmetric_properties

    grounder = kg_judge.grounder
    seen: set[tuple[str, str, str]] = set()
    reversed_n = reversed_verified = 0
    for r in rows:
        context = kg_judge._query_context(r)
        for p in parse_answer(r.answer).paths:
            for t in p.triples:
                if len(t) != 3 or not all(t) or t in seen or not directional_phrase(t[1]):
                    continue
                seen.add(t)
                g = grounder.ground(*t, context=context)
                if g.status != "verified" or g.property in symmetric_properties():
                    continue
                links = grounder.relations.link(t[1])
                if any(
                    (a.pid, a.direction) != (b.pid, b.direction) and a.pid == b.pid
                    for a in links
                    for b in links
                    if a.method != "embedding" and b.method != "embedding"
                ):
                    continue  # the phrase tables read it both ways ("starred"): ambiguous
                back = grounder.ground(t[2], t[1], t[0], context=context)
                s, _, o = g.evidence["statement"]
                if grounder.kg.has_triple(o, g.property, s):
                    continue  # the graph says both (mutual relations)
                reversed_n += 1
                if back.status == "verified":
                    reversed_verified += 1
                    print("REVERSED VERIFIED", t, back.evidence.get("via"))
    fixed = [
        (grounder.ground(t[2], t[1], t[0]).status, grounder.ground(*t).status) for t in PROBES
    ]
    return {
        "reversed_probes": reversed_n,
        "reversed_probes_verified": reversed_verified,
        "fixed_probes_reversed_verified": sum(w == "verified" for w, _ in fixed),
        "fixed_probes_right_verified": f"{sum(r == 'verified' for _, r in fixed)} of {len(fixed)}",
    }


def _edge_sweep(edges: list[tuple[float, float]]) -> dict[str, object]:
    """The edge step's verifications with similarity ≥ each threshold, and their precision
    against the stored judge."""
    out: dict[str, object] = {}
    for threshold in EDGE_THRESHOLDS:
        kept = [truth for sim, truth in edges if sim >= threshold]
        precision = round(sum(t == 1.0 for t in kept) / len(kept), 3) if kept else None
        out[str(threshold)] = {"verified": len(kept), "precision": precision}
    return out


def _utility_figures(rows, kg_scorer, stored_scorer, gamma: str) -> dict[str, object]:
    """Per query: the kg judge's utility (strict and lenient) against the stored judge's."""
    u_stored, u_strict, u_lenient = [], [], []
    bracket = 0
    for r in rows:
        qs = stored_scorer.score(r).query
        qk = kg_scorer.score(r).query
        s = qs["utility"][gamma]
        lo = qk.get("utility_strict", qk["utility"])[gamma]
        hi = qk.get("utility_lenient", qk["utility"])[gamma]
        u_stored.append(s)
        u_strict.append(lo)
        u_lenient.append(hi)
        bracket += min(lo, hi) - 1e-9 <= s <= max(lo, hi) + 1e-9
    return {
        f"utility_{gamma}_spearman_strict": _round(spearman(u_strict, u_stored)),
        f"utility_{gamma}_spearman_lenient": _round(spearman(u_lenient, u_stored)),
        f"utility_{gamma}_mean_stored": round(float(np.mean(u_stored)), 3),
        f"utility_{gamma}_mean_strict": round(float(np.mean(u_strict)), 3),
        f"utility_{gamma}_mean_lenient": round(float(np.mean(u_lenient)), 3),
        "bracketed_share": round(bracket / len(rows), 3) if rows else None,
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


if __name__ == "__main__":
    main()
