"""The report's numbers: pure functions over plain records, no file access.

Records are what the jobs write: ``queries.jsonl`` rows of ``creagraph score``, each read
as a :class:`creagraph.core.records.QueryRecord` (a record or its JSON form is taken:
``model``, ``utility``, ``utility_curve``, ``triple_status``, ``rel_b``, ...),
``distinct_paths.jsonl`` / ``distinct_summary.csv`` rows of ``creagraph distinct`` and the
cluster / anchor rows of ``creagraph tig clusters|anchors``.

Confidence intervals are percentile bootstrap intervals over queries (a model's queries
resampled with replacement, seeded; 2,000 resamples by default) [1]_.

References
----------
.. [1] Efron & Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 13.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from creagraph.core.manifest import COMPARABILITY_COLUMNS, QuerySetTally, comparison_key
from creagraph.core.records import ABSENT, READINGS, SUMMARY_IDENTITY, QueryLike, QueryRecord

__all__ = [
    "GROUNDING_STATUSES",
    "assign_tiers",
    "comparison_groups",
    "judge_error_counts",
    "kg_decided_share",
    "query_coverage",
    "bootstrap_ci",
    "cliche_tables",
    "grounding_coverage",
    "group_difference",
    "leaderboard",
    "mean_curves",
    "relation_breakdown",
    "source_relations",
]

#: Triple statuses of the kg judge, in the order the report shows them.
GROUNDING_STATUSES = ("verified", "refuted", "unknown")


def bootstrap_ci(
    values: Sequence[float | None],
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (``None`` values are dropped).

    Returns ``(nan, nan)`` for no values.

    Examples
    --------
    >>> lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0])
    >>> lo < 2.5 < hi
    True
    >>> bootstrap_ci([5.0, 5.0])
    (5.0, 5.0)
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    x = np.asarray([v for v in values if v is not None], dtype=np.float64)
    if len(x) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(n_resamples, len(x)))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1.0 - alpha))


def _records(queries: Iterable[QueryLike]) -> list[QueryRecord]:
    """The scored queries as records (:meth:`QueryRecord.of`)."""
    return [QueryRecord.of(q) for q in queries]


def _by_model(queries: Iterable[QueryRecord]) -> dict[str, list[QueryRecord]]:
    out: dict[str, list[QueryRecord]] = {}
    for q in queries:
        out.setdefault(str(q.model), []).append(q)
    return out


def _ceiling(q: QueryRecord) -> Mapping[str, Any] | None:
    """The query's ceiling record (``--ceiling``), ``None`` without one."""
    return q.ceiling if q.ceiling is not ABSENT and isinstance(q.ceiling, Mapping) else None


def _mean(values: Iterable[Any]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def leaderboard(
    queries: Sequence[QueryLike],
    distinct_summary: Sequence[Mapping[str, Any]] = (),
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per-model means over queries with bootstrap CIs of s₀.₇ and s₀.₉, best s₀.₉ first.

    Columns: ``model, n_queries, s_0.7, s_0.7_ci_low, s_0.7_ci_high, s_0.9, …,
    s_0.9_strict, s_0.9_lenient, decided_share, max_quality, mean_pairwise_distance,
    n_kept`` (strict/lenient: unknown triples counted as not factual / factual, SPEC §3.4;
    decided: share of triples with a known factuality), ``judge, mode, creagraph_version,
    query_set, query_set_size`` (the query set the model is compared on, by the rule of
    :mod:`creagraph.core.manifest`), ``comparison_group`` and, for models in
    ``distinct_summary``, ``avg_nu, max_nu``.

    Models scored under different judges, modes or query sets are never ranked together:
    each (judge, mode, query set) is its own ``comparison_group`` (1 = the group with the
    most models), sorted and tiered on its own; the table lists group 1 first. Within a
    group, models that answered different queries of the set are flagged by the report's
    coverage caveat.

    Examples
    --------
    >>> q = [{"model": "m", "utility": {"0.7": u, "0.9": u}, "max_quality": 3,
    ...       "mean_pairwise_distance": None, "n_kept": 1} for u in (1.0, 3.0)]
    >>> row = leaderboard(q, n_resamples=200)[0]
    >>> row["model"], row["s_0.9"], row["s_0.9_ci_low"] >= 1.0
    ('m', 2.0, True)
    """
    nu = {str(row["model"]): row for row in distinct_summary}
    records = _records(queries)
    query_sets = QuerySetTally()  # the rule of creagraph.core.manifest
    for q in records:
        query_sets.add(q.to_dict())
    named = query_sets.resolve()
    table = []
    for model, rows in _by_model(records).items():
        entry: dict[str, Any] = {"comparison_group": 0, "model": model, "n_queries": len(rows)}
        for name in SUMMARY_IDENTITY:  # what a ranking must share
            entry[name] = "+".join(sorted({str(getattr(q, name) or "unknown") for q in rows}))
        entry.update(named[model])
        for gamma in ("0.7", "0.9"):
            values = [q.utility[gamma] for q in rows]
            lo, hi = bootstrap_ci(values, n_resamples=n_resamples, level=level, seed=seed)
            entry[f"s_{gamma}"] = _mean(values)
            entry[f"s_{gamma}_ci_low"], entry[f"s_{gamma}_ci_high"] = lo, hi
        for reading in READINGS:  # unknown triples as not factual / factual
            entry[f"s_0.9_{reading}"] = _mean(q.utility_under(reading)["0.9"] for q in rows)
        entry["decided_share"] = _mean(q.decided_share for q in rows)
        entry["max_quality"] = _mean(q.max_quality for q in rows)
        entry["mean_pairwise_distance"] = _mean(q.mean_pairwise_distance for q in rows)
        entry["n_kept"] = _mean(q.n_kept for q in rows)
        ceilings = [c for c in map(_ceiling, rows) if c is not None]
        if ceilings:
            entry["ceiling_fraction_0.9"] = _mean(
                (c.get("fraction") or {}).get("0.9") for c in ceilings
            )
            entry["graph_path_recall"] = _mean(c.get("graph_path_recall") for c in ceilings)
        if model in nu:
            entry["avg_nu"] = nu[model].get("avg_nu")
            entry["max_nu"] = nu[model].get("max_nu")
        table.append(entry)
    out: list[dict[str, Any]] = []
    for number, group in enumerate(comparison_groups(table), start=1):
        group.sort(
            key=lambda e: (-(e["s_0.9"] if e["s_0.9"] is not None else -np.inf), e["model"])
        )
        for entry in group:
            entry["comparison_group"] = number
        out.extend(assign_tiers(group))
    return out


def comparison_groups(rows: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The rows split by :func:`creagraph.core.manifest.comparison_key` (judge, mode,
    query set): the groups whose models may be ranked together, the group with the most
    models first (ties: by key).

    Examples
    --------
    >>> rows = [{"model": m, "judge": j, "mode": "paper", "query_set": "s"}
    ...         for m, j in (("a", "kg"), ("b", "stored"), ("c", "kg"))]
    >>> [[r["model"] for r in g] for g in comparison_groups(rows)]
    [['a', 'c'], ['b']]
    """
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(comparison_key(row), []).append(row)
    return [groups[k] for k in sorted(groups, key=lambda k: (-len(groups[k]), k))]


def group_difference(first: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    """What separates ``other``'s comparison group from ``first``'s (leaderboard rows):
    each differing column of :data:`~creagraph.core.manifest.COMPARABILITY_COLUMNS`.

    Examples
    --------
    >>> group_difference({"model": "a", "judge": "kg", "mode": "paper", "query_set": "s"},
    ...                  {"model": "b", "judge": "stored", "mode": "paper", "query_set": "t"})
    'judge kg vs stored; query_set s vs t'
    """
    parts = []
    for column in COMPARABILITY_COLUMNS:
        a, b = (str(row.get(column) or "unknown") for row in (first, other))
        if a != b:
            parts.append(f"{column} {a} vs {b}")
    return "; ".join(parts)


def assign_tiers(table: list[dict[str, Any]], gamma: str = "0.9") -> list[dict[str, Any]]:
    """Give each row (sorted best first) a ``tier``: ranks only where intervals separate.

    Walking down the table, a model opens a new tier when its interval of s_γ lies wholly
    below the interval of the model above it; otherwise it shares that model's tier (as
    the statistics job's indistinguishability tiers group neighbours whose difference is
    inside the interval).

    Examples
    --------
    >>> rows = [{"s_0.9_ci_low": 5, "s_0.9_ci_high": 7}, {"s_0.9_ci_low": 4, "s_0.9_ci_high": 6},
    ...         {"s_0.9_ci_low": 1, "s_0.9_ci_high": 3}]
    >>> [r["tier"] for r in assign_tiers(rows)]
    [1, 1, 2]
    """
    tier = 0
    previous: Mapping[str, Any] | None = None
    for row in table:
        lo, hi = row.get(f"s_{gamma}_ci_low"), row.get(f"s_{gamma}_ci_high")
        separated = (
            previous is not None
            and hi is not None
            and previous.get(f"s_{gamma}_ci_low") is not None
            and hi == hi  # not NaN
            and hi < previous[f"s_{gamma}_ci_low"]
        )
        if previous is None or separated or lo is None:
            tier += 1
        row["tier"] = tier
        previous = row
    return table


def _query_key(q: QueryRecord) -> str:
    key = q.query_key
    if isinstance(key, str) and key:
        return key
    return f"index:{q.index}"


def query_coverage(queries: Iterable[QueryLike]) -> dict[str, Any]:
    """How many queries × models were scored, and which models were scored on different
    queries than the others (identified by query key: query_id, index or text).

    Returns ``n_queries`` (distinct queries over all models), ``n_models``, ``common``
    (queries every model answered), ``same`` (every model has the same query set) and
    ``differs``: model → ``{"missing": n, "extra": n}`` against the usual queries (those
    more than half of the models answered), for every model whose queries differ.

    Examples
    --------
    >>> q = [{"model": m, "query_key": k} for m in "ab" for k in ("x", "y")]
    >>> q += [{"model": "c", "query_key": "x"}, {"model": "c", "query_key": "z"}]
    >>> cov = query_coverage(q)
    >>> cov["n_queries"], cov["n_models"], cov["common"], cov["same"], cov["differs"]
    (3, 3, 1, False, {'c': {'missing': 1, 'extra': 1}})
    """
    sets: dict[str, set[str]] = {}
    for q in _records(queries):
        sets.setdefault(str(q.model), set()).add(_query_key(q))
    if not sets:
        return {"n_queries": 0, "n_models": 0, "common": 0, "same": True, "differs": {}}
    answered: dict[str, int] = {}
    for keys in sets.values():
        for k in keys:
            answered[k] = answered.get(k, 0) + 1
    usual = {k for k, n in answered.items() if n > len(sets) / 2}
    differs = {
        model: {"missing": len(usual - keys), "extra": len(keys - usual)}
        for model, keys in sorted(sets.items())
        if keys != usual
    }
    every = set.intersection(*sets.values())
    return {
        "n_queries": len(set().union(*sets.values())),
        "n_models": len(sets),
        "common": len(every),
        "same": not differs,
        "differs": differs,
    }


#: Verdicts by which the kg judge *decided* a triple (true or false); anything else
#: (absent without completeness evidence, unlinked, unknown) leaves it undecided.
DECIDED_STATUSES = ("verified", "refuted")
_KG_STATUSES = ("verified", "refuted", "absent", "unlinked", "unknown", "malformed")


def kg_decided_share(queries: Iterable[QueryLike]) -> dict[str, float]:
    """Per model, the share of triples the knowledge-graph judge decided (verified or
    refuted) among those it judged, over queries scored by the kg or hybrid judge.

    Examples
    --------
    >>> kg_decided_share([{"model": "m", "judge": "kg",
    ...                    "triple_status": {"verified": 1, "absent": 2, "unlinked": 1}}])
    {'m': 0.25}
    """
    decided: dict[str, int] = {}
    total: dict[str, int] = {}
    for q in _records(queries):
        if q.judge not in ("kg", "hybrid"):
            continue
        status = q.triple_status or {}
        model = str(q.model)
        n = sum(int(v) for k, v in status.items() if k in _KG_STATUSES)
        if q.judge == "hybrid":  # triples the llm judged were undecided by the graph
            n += sum(int(v) for k, v in status.items() if k not in _KG_STATUSES)
        total[model] = total.get(model, 0) + n
        decided[model] = decided.get(model, 0) + sum(
            int(status.get(k, 0)) for k in DECIDED_STATUSES
        )
    return {m: decided[m] / total[m] for m in sorted(total) if total[m]}


def judge_error_counts(queries: Iterable[QueryLike]) -> dict[str, dict[str, int]]:
    """Per model, triples whose LLM judge reply could not be read (``unparsed``) or whose
    request failed (``failed``); models without any are left out."""
    out: dict[str, dict[str, int]] = {}
    for q in _records(queries):
        errors = q.judge_errors or {}
        if not any(errors.get(k) for k in ("unparsed", "failed")):
            continue
        mine = out.setdefault(str(q.model), {"unparsed": 0, "failed": 0})
        for k in ("unparsed", "failed"):
            mine[k] += int(errors.get(k, 0))
    return out


def mean_curves(
    queries: Sequence[QueryLike],
) -> dict[str, tuple[list[float], list[float]]]:
    """Model → (γ values, mean creative utility over the model's queries at each γ).

    Examples
    --------
    >>> mean_curves([{"model": "m", "utility_curve": {"0.0": 1.0, "1.0": 3.0}},
    ...              {"model": "m", "utility_curve": {"0.0": 3.0, "1.0": 5.0}}])
    {'m': ([0.0, 1.0], [2.0, 4.0])}
    """
    out: dict[str, tuple[list[float], list[float]]] = {}
    for model, rows in sorted(_by_model(_records(queries)).items()):
        gammas = sorted({g for q in rows for g in q.utility_curve or {}}, key=float)
        means = [_mean((q.utility_curve or {}).get(g) for q in rows) for g in gammas]
        out[model] = (
            [float(g) for g, m in zip(gammas, means) if m is not None],
            [m for m in means if m is not None],
        )
    return out


_DESCRIPTION = re.compile(r"^(Q\d+)__(P\d+)$")


def source_relations(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """Query text → ``{"id", "label"}`` of the relation the query's source path is built on.

    Reads generated query records (``source_relation``, ``source_relation_label``, from
    ``creagraph queries generate``) and published CREATE answer rows (``description`` =
    ``"<QID>__<PID>"``, the label taken from ``triple1_labels`` when ``triple1`` uses that
    property). Records carrying neither are skipped.

    Examples
    --------
    >>> source_relations([{"query": "q?", "description": "Q1__P166",
    ...                    "triple1": ["Q2", "P166", "Q1"],
    ...                    "triple1_labels": ["a", "award received", "b"]}])
    {'q?': {'id': 'P166', 'label': 'award received'}}
    """
    out: dict[str, dict[str, str]] = {}
    for r in records:
        query = r.get("query")
        if not isinstance(query, str):
            continue
        pid = r.get("source_relation")
        label = r.get("source_relation_label")
        if not isinstance(pid, str) or not pid:
            match = _DESCRIPTION.match(str(r.get("description") or ""))
            if match is None:
                continue
            pid = match.group(2)
            triple, labels = r.get("triple1"), r.get("triple1_labels")
            if (
                isinstance(triple, list)
                and isinstance(labels, list)
                and len(triple) == 3
                and len(labels) == 3
                and triple[1] == pid
            ):
                label = labels[1]
        out[query] = {"id": pid, "label": str(label) if label else pid}
    return out


def relation_breakdown(
    queries: Sequence[QueryLike],
    key: str = "query",
    relations: Mapping[str, Mapping[str, str]] | None = None,
    *,
    gamma: str = "0.9",
) -> list[dict[str, Any]]:
    """Mean creative utility per relation and model.

    Parameters
    ----------
    queries : queries.jsonl records.
    key : ``"query"`` groups by the query relation (``rel_b``: how concept C hangs off
        the hidden bridge, carried by every scored query); ``"source"`` groups by the
        relation of the source path, looked up by query text in ``relations`` (see
        :func:`source_relations`); queries not found there are left out.
    gamma : the patience of the utility averaged.

    Returns
    -------
    list of dict
        ``relation, model, n_queries, mean_utility, mean_kept`` sorted by relation, model.

    Examples
    --------
    >>> q = [{"model": "m", "rel_b": "occupation", "utility": {"0.9": 2.0}, "n_kept": 1},
    ...      {"model": "m", "rel_b": "occupation", "utility": {"0.9": 4.0}, "n_kept": 3}]
    >>> relation_breakdown(q)[0]["mean_utility"]
    3.0
    """
    if key not in ("query", "source"):
        raise ValueError(f"key must be 'query' or 'source', got {key!r}")
    groups: dict[tuple[str, str], list[QueryRecord]] = {}
    for q in _records(queries):
        if key == "query":
            relation = q.rel_b
            name = str(relation) if relation else None
        else:
            found = (relations or {}).get(str(q.query))
            name = f"{found['id']} {found['label']}" if found else None
            if found and found["label"] == found["id"]:
                name = found["id"]
        if name is None:
            continue
        groups.setdefault((name, str(q.model)), []).append(q)
    return [
        {
            "relation": relation,
            "model": model,
            "n_queries": len(rows),
            "mean_utility": _mean(q.utility.get(gamma) for q in rows),
            "mean_kept": _mean(q.n_kept for q in rows),
        }
        for (relation, model), rows in sorted(groups.items())
    ]


def grounding_coverage(queries: Iterable[QueryLike]) -> list[dict[str, Any]]:
    """Per model, the fractions of triples the kg judge verified / refuted / left unknown,
    summed over the queries it judged (``triple_status`` of queries.jsonl).

    Queries judged otherwise (e.g. only ``stored`` statuses) are ignored; an empty list
    means grounding coverage is not available.

    Examples
    --------
    >>> grounding_coverage([{"model": "m", "triple_status": {"verified": 1, "unknown": 3}},
    ...                     {"model": "m", "triple_status": {"stored": 9}}])
    [{'model': 'm', 'n_queries': 1, 'n_triples': 4, 'verified': 0.25, 'refuted': 0.0, \
'unknown': 0.75}]
    """
    counts: dict[str, dict[str, int]] = {}
    n_queries: dict[str, int] = {}
    for q in _records(queries):
        status = q.triple_status or {}
        if not any(s in status for s in GROUNDING_STATUSES):
            continue
        model = str(q.model)
        mine = counts.setdefault(model, dict.fromkeys(GROUNDING_STATUSES, 0))
        for s in GROUNDING_STATUSES:
            mine[s] += int(status.get(s, 0))
        n_queries[model] = n_queries.get(model, 0) + 1
    out = []
    for model in sorted(counts):
        total = sum(counts[model].values())
        row: dict[str, Any] = {"model": model, "n_queries": n_queries[model], "n_triples": total}
        for s in GROUNDING_STATUSES:
            row[s] = counts[model][s] / total if total else 0.0
        out.append(row)
    return out


def cliche_tables(
    clusters: Sequence[Mapping[str, Any]] = (),
    anchors: Sequence[Mapping[str, Any]] = (),
    *,
    top: int = 5,
) -> list[dict[str, Any]]:
    """The top cliché clusters per task (and per comparison), highest ClichéScore first.

    Parameters
    ----------
    clusters : rows of ``creagraph tig clusters`` (``task_id, type, summary, labels,
        cliche_score, coverage, models, comparison_key``).
    anchors : rows of ``creagraph tig anchors`` (``task_id, comparison_key, rank, text,
        cluster_id, cluster_summary, atom_type, cliche_score, coverage,
        cluster_models``); anchors name the cluster they were built from, so they count as
        that cluster, with the checklist question attached.
    top : clusters kept per (task, comparison).

    Returns
    -------
    list of dict
        One per (task, comparison), sorted by task then comparison: ``task_id,
        comparison_key`` (``""`` = the whole population) and ``rows`` (``rank, type,
        summary, cliche_score, coverage, n_models, checklist``).
    """
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    groups: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for c in clusters:
        group = groups.setdefault((str(c["task_id"]), str(c.get("comparison_key") or "")), {})
        labels = list(c.get("labels") or [])
        groups_row = {
            "type": str(c.get("type") or ""),
            "summary": str(c.get("summary") or ", ".join(labels[:3])),
            "cliche_score": float(c["cliche_score"]),
            "coverage": c.get("coverage"),
            "n_models": len(c.get("models") or []),
            "checklist": None,
        }
        group[str(c.get("id") or len(group))] = groups_row
    for a in anchors:
        group = groups.setdefault((str(a["task_id"]), str(a.get("comparison_key") or "")), {})
        cid = str(a.get("cluster_id") or f"anchor-{len(group)}")
        row = group.get(cid)
        if row is None:
            row = group[cid] = {
                "type": str(a.get("atom_type") or ""),
                "summary": str(a.get("cluster_summary") or ""),
                "cliche_score": float(a["cliche_score"]),
                "coverage": a.get("coverage"),
                "n_models": len(a.get("cluster_models") or []),
                "checklist": None,
            }
        row["checklist"] = str(a.get("text") or "") or None
    out = []
    for (task, comparison), rows in sorted(groups.items()):
        best = sorted(rows.values(), key=lambda r: (-r["cliche_score"], r["summary"]))[:top]
        for rank, r in enumerate(best, start=1):
            r["rank"] = rank
        out.append({"task_id": task, "comparison_key": comparison, "rows": best})
    return out
