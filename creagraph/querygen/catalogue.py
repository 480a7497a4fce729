"""Data catalogues that steer query generation, kept as TSV files in ``wikidata/``.

- ``source_relations.tsv`` — the relations r whose categories (r, c) are paired, with the
  side of each category (SPEC §3.1 step 1);
- ``blocklist.tsv`` — non-selective relations never used for categories or expansions,
  each with its reason;
- ``phrasing.tsv`` — per-property phrasing of a target condition, active and passive voice;
- ``holder_types.tsv`` — how the unknown holder of the target is named ("someone who",
  "a film that") from its P31 types.

Every loader takes an optional path (default: the file in :func:`creagraph.core.paths.
wikidata_dir`), validates each line and raises :class:`creagraph.core.io.InputError`
naming the file, line and field of the first problem.

Examples
--------
>>> rels = load_source_relations()
>>> [(r.pid, r.side) for r in rels][:2]
[('P166', 'subject'), ('P39', 'subject')]
>>> "P31" in load_blocklist()
True
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from creagraph.core.graph import Side, is_pid, is_qid
from creagraph.core.io import InputError
from creagraph.core.paths import wikidata_dir

__all__ = [
    "SourceRelation",
    "Phrasing",
    "HolderType",
    "load_source_relations",
    "load_blocklist",
    "load_phrasing",
    "load_holder_types",
    "CategoryRules",
    "TargetTypes",
    "load_category_rules",
    "load_target_types",
    "load_demonyms",
    "TargetPolicy",
    "load_target_policy",
    "read_tsv",
    "PLACEHOLDERS",
]

PLACEHOLDERS = ("{y}", "{the y}", "{a y}", "{team y}", "{def y}")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class SourceRelation:
    """A relation whose categories are paired, and the side its class members are on.

    ``side == "subject"``: members are ``{x : (x, pid, c)}``; ``"object"``: ``{y : (c, pid, y)}``.
    """

    pid: str
    label: str
    side: Side
    note: str = ""


@dataclass(frozen=True)
class Phrasing:
    """How a holder of a target condition on property ``pid`` is described.

    ``active`` describes x with (x, pid, y), ``passive`` x with (y, pid, x); both contain
    exactly one placeholder for y (see :data:`PLACEHOLDERS`).
    """

    pid: str
    label: str
    active: str
    passive: str


@dataclass(frozen=True)
class HolderType:
    """A P31 class and how a query names an entity of that class ("a film", "that")."""

    qid: str
    label: str
    noun: str
    pronoun: str


def read_tsv(
    path: str | os.PathLike[str], n_fields: int, names: tuple[str, ...]
) -> list[tuple[int, list[str]]]:
    """Non-comment lines of a TSV file as ``(line number, fields)``.

    Blank lines and lines starting with ``#`` are skipped; every other line must have
    exactly ``n_fields`` tab-separated, non-empty fields (surrounding spaces stripped).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    rows = []
    for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != n_fields:
            raise InputError(
                f"{p}:{lineno}: expected {n_fields} tab-separated fields "
                f"({', '.join(names)}), found {len(fields)}"
            )
        for name, value in zip(names, fields):
            if not value:
                raise InputError(f"{p}:{lineno}: field {name!r} is empty")
        rows.append((lineno, fields))
    return rows


def _check_id(p: Path, lineno: int, field: str, value: str, kind: str) -> None:
    ok = is_pid(value) if kind == "P" else is_qid(value)
    if not ok:
        what = "property id such as P166" if kind == "P" else "item id such as Q5"
        raise InputError(f"{p}:{lineno}: field {field!r} must be a Wikidata {what}, not {value!r}")


def _unique(p: Path, lineno: int, field: str, value: str, seen: set[str]) -> None:
    if value in seen:
        raise InputError(f"{p}:{lineno}: field {field!r}: {value} is listed twice")
    seen.add(value)


def load_source_relations(path: str | os.PathLike[str] | None = None) -> list[SourceRelation]:
    """Source relations in file order (``pid, label, side, note``)."""
    p = Path(path) if path is not None else wikidata_dir() / "source_relations.tsv"
    names = ("pid", "label", "side", "members")
    out: list = []
    seen: set[str] = set()
    for lineno, (pid, label, side, note) in read_tsv(p, 4, names):
        _check_id(p, lineno, "pid", pid, "P")
        _unique(p, lineno, "pid", pid, seen)
        if side not in ("subject", "object"):
            raise InputError(
                f"{p}:{lineno}: field 'side' must be 'subject' or 'object', not {side!r}"
            )
        out.append(SourceRelation(pid, label, side, note))  # type: ignore[arg-type]
    if not out:
        raise InputError(f"{p}: no source relations listed")
    return out


def load_blocklist(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """``pid -> reason`` for every blocklisted relation (``pid, label, reason``)."""
    p = Path(path) if path is not None else wikidata_dir() / "blocklist.tsv"
    out: dict[str, str] = {}
    for lineno, (pid, _label, reason) in read_tsv(p, 3, ("pid", "label", "reason")):
        _check_id(p, lineno, "pid", pid, "P")
        _unique(p, lineno, "pid", pid, set(out))
        out[pid] = reason
    return out


def _check_template(p: Path, lineno: int, field: str, template: str) -> None:
    found = _PLACEHOLDER.findall(template)
    if len(found) != 1 or found[0] not in PLACEHOLDERS:
        raise InputError(
            f"{p}:{lineno}: field {field!r} must contain exactly one of "
            f"{', '.join(PLACEHOLDERS)}, found {found or 'none'} in {template!r}"
        )
    if template != template.strip() or "  " in template:
        raise InputError(f"{p}:{lineno}: field {field!r} has stray spaces: {template!r}")


def load_phrasing(path: str | os.PathLike[str] | None = None) -> dict[str, Phrasing]:
    """``pid -> Phrasing`` (``pid, label, active, passive``), templates validated."""
    p = Path(path) if path is not None else wikidata_dir() / "phrasing.tsv"
    out: dict[str, Phrasing] = {}
    for lineno, (pid, label, active, passive) in read_tsv(
        p, 4, ("pid", "label", "active", "passive")
    ):
        _check_id(p, lineno, "pid", pid, "P")
        _unique(p, lineno, "pid", pid, set(out))
        _check_template(p, lineno, "active", active)
        _check_template(p, lineno, "passive", passive)
        out[pid] = Phrasing(pid, label, active, passive)
    return out


def load_holder_types(path: str | os.PathLike[str] | None = None) -> list[HolderType]:
    """Holder classes in priority order (``qid, label, noun phrase, relative pronoun``)."""
    p = Path(path) if path is not None else wikidata_dir() / "holder_types.tsv"
    out: list = []
    seen: set[str] = set()
    for lineno, (qid, label, noun, pronoun) in read_tsv(p, 4, ("qid", "label", "noun", "pronoun")):
        _check_id(p, lineno, "qid", qid, "Q")
        _unique(p, lineno, "qid", qid, seen)
        if pronoun not in ("who", "that", "which"):
            raise InputError(
                f"{p}:{lineno}: field 'pronoun' must be who, that or which, not {pronoun!r}"
            )
        out.append(HolderType(qid, label, noun, pronoun))
    return out


@dataclass(frozen=True)
class CategoryRules:
    """Specificity rules of categories (``wikidata/category_rules.tsv``), per relation.

    Attributes
    ----------
    generic_class, anchor, generic_item, generic_usage : dict of str to dict
        ``pid -> {value: reason}`` for each rule; ``"*"`` holds rules of every relation.
    max_degree : dict of str to int
        ``pid -> most statements`` a category entity may have (``"*"``: every relation).
    """

    generic_class: dict[str, dict[str, str]]
    anchor: dict[str, dict[str, str]]
    generic_item: dict[str, dict[str, str]]
    generic_usage: dict[str, dict[str, str]]
    max_degree: dict[str, int]

    def rules(self, name: str, pid: str) -> dict[str, str]:
        """The ``name`` rules of ``pid`` together with those of every relation (``*``)."""
        table: dict[str, dict[str, str]] = getattr(self, name)
        return {**table.get("*", {}), **table.get(pid, {})}

    def covers(self, pid: str) -> bool:
        """Whether ``pid`` has rules of its own (not only those of every relation)."""
        return any(
            pid in getattr(self, name)
            for name in ("generic_class", "anchor", "generic_item", "generic_usage")
        )

    def degree_limit(self, pid: str) -> int | None:
        """Most statements a category entity of ``pid`` may have (None: no limit)."""
        return self.max_degree.get(pid, self.max_degree.get("*"))


_CATEGORY_RULES = {
    "generic_class": "Q",
    "anchor": "P",
    "generic_item": "Q",
    "generic_usage": "P",
    "max_degree": "N",
}


def load_category_rules(path: str | os.PathLike[str] | None = None) -> CategoryRules:
    """Category specificity rules (``pid, rule, value, label, reason``), validated."""
    p = Path(path) if path is not None else wikidata_dir() / "category_rules.tsv"
    tables: dict[str, dict[str, dict[str, str]]] = {k: {} for k in _CATEGORY_RULES}
    degree: dict[str, int] = {}
    names = ("pid", "rule", "value", "label", "reason")
    for lineno, (pid, rule, value, _label, reason) in read_tsv(p, 5, names):
        if pid != "*":
            _check_id(p, lineno, "pid", pid, "P")
        kind = _CATEGORY_RULES.get(rule)
        if kind is None:
            raise InputError(
                f"{p}:{lineno}: field 'rule' must be one of {', '.join(_CATEGORY_RULES)}, "
                f"not {rule!r}"
            )
        if kind == "N":
            if not value.isdigit() or int(value) < 1:
                raise InputError(f"{p}:{lineno}: field 'value' must be a positive integer")
            degree[pid] = int(value)
            continue
        _check_id(p, lineno, "value", value, kind)
        table = tables[rule].setdefault(pid, {})
        _unique(p, lineno, "value", value, set(table))
        table[value] = reason
    return CategoryRules(
        tables["generic_class"],
        tables["anchor"],
        tables["generic_item"],
        tables["generic_usage"],
        degree,
    )


@dataclass(frozen=True)
class TargetTypes:
    """Object type checks of target relations (``wikidata/target_types.tsv``).

    ``require[pid]``: classes of which y must have one (when y is typed at all);
    ``deny[pid]``: classes y must not have; ``deny_words[pid]``: words y's label must not hold.
    Each maps the value to its reason.
    """

    require: dict[str, dict[str, str]]
    deny: dict[str, dict[str, str]]
    deny_words: dict[str, dict[str, str]]


def load_target_types(path: str | os.PathLike[str] | None = None) -> TargetTypes:
    """Object type checks (``pid, rule, value, label, reason``), validated."""
    p = Path(path) if path is not None else wikidata_dir() / "target_types.tsv"
    tables: dict[str, dict[str, dict[str, str]]] = {
        "require_class": {},
        "deny_class": {},
        "deny_word": {},
    }
    names = ("pid", "rule", "value", "label", "reason")
    for lineno, (pid, rule, value, _label, reason) in read_tsv(p, 5, names):
        _check_id(p, lineno, "pid", pid, "P")
        if rule not in tables:
            raise InputError(
                f"{p}:{lineno}: field 'rule' must be one of {', '.join(tables)}, not {rule!r}"
            )
        if rule != "deny_word":
            _check_id(p, lineno, "value", value, "Q")
        table = tables[rule].setdefault(pid, {})
        _unique(p, lineno, "value", value, set(table))
        table[value] = reason
    return TargetTypes(tables["require_class"], tables["deny_class"], tables["deny_word"])


@dataclass(frozen=True)
class TargetPolicy:
    """Which target conditions are specific in the world (``wikidata/target_policy.tsv``).

    ``drop[pid]``: the reason ``pid`` is never a target (a broad attribute such as
    occupation); ``broad_class[pid]``: P31 classes that make a target value broad for
    ``pid`` (a city of millions for a birthplace), class -> reason; ``deny_label[pid]``:
    regular expressions a target label must not match (an award *ceremony* such as "56th
    Academy Awards" is not an award), pattern -> reason; the key ``"*"`` applies to every
    property.
    """

    drop: dict[str, str]
    broad_class: dict[str, dict[str, str]]
    deny_label: dict[str, dict[str, str]] = field(default_factory=dict)

    def broad_classes(self, pid: str) -> dict[str, str]:
        """The broad classes of ``pid`` and of every property (``*``)."""
        return {**self.broad_class.get("*", {}), **self.broad_class.get(pid, {})}


def load_target_policy(path: str | os.PathLike[str] | None = None) -> TargetPolicy:
    """The target policy (``pid, rule, value, label, reason``), validated."""
    p = Path(path) if path is not None else wikidata_dir() / "target_policy.tsv"
    drop: dict[str, str] = {}
    broad: dict[str, dict[str, str]] = {}
    deny: dict[str, dict[str, str]] = {}
    names = ("pid", "rule", "value", "label", "reason")
    for lineno, (pid, rule, value, _label, reason) in read_tsv(p, 5, names):
        if pid != "*":
            _check_id(p, lineno, "pid", pid, "P")
        if rule == "drop":
            if value != "-":
                raise InputError(f"{p}:{lineno}: field 'value' of a drop rule must be '-'")
            _unique(p, lineno, "pid", pid, set(drop))
            drop[pid] = reason
        elif rule == "broad_class":
            _check_id(p, lineno, "value", value, "Q")
            table = broad.setdefault(pid, {})
            _unique(p, lineno, "value", value, set(table))
            table[value] = reason
        elif rule == "deny_label":
            try:
                re.compile(value)
            except re.error as exc:
                raise InputError(
                    f"{p}:{lineno}: field 'value' is not a regular expression: {exc}"
                ) from None
            deny.setdefault(pid, {})[value] = reason
        else:
            raise InputError(
                f"{p}:{lineno}: field 'rule' must be one of drop, broad_class, deny_label, "
                f"not {rule!r}"
            )
    return TargetPolicy(drop, broad, deny)


def load_demonyms(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """``country or nation name -> adjective`` (``name, adjective``), e.g. Belgium -> Belgian."""
    p = Path(path) if path is not None else wikidata_dir() / "demonyms.tsv"
    out: dict[str, str] = {}
    for lineno, (name, adjective) in read_tsv(p, 2, ("name", "adjective")):
        _unique(p, lineno, "name", name, set(out))
        out[name] = adjective
    return out
