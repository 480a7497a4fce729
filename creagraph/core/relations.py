"""Linking relation phrases to Wikidata properties (SPEC §3.4).

Shared by scoring (grounding triples) and query generation (checking that a rewritten query
still names the same relation). Phrases are matched by phrasing rules
(``wikidata/relation_phrases.tsv``), property labels, aliases and inverse phrasings, then by
embedding similarity against all of them.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from creagraph.core.graph import KnowledgeGraph
from creagraph.core.paths import inverse_labels, wikidata_dir
from creagraph.core.text import normalize_loose

__all__ = [
    "Direction",
    "LinkMemo",
    "RelationLink",
    "RelationLinker",
    "directional_phrase",
    "directional_verbs",
    "property_implications",
    "implying_properties",
    "inverse_properties",
    "read_table_rows",
    "symmetric_properties",
    "phrase_core",
    "read_implication_table",
    "relation_phrases",
]

Direction = Literal["forward", "inverse"]


@functools.cache
def relation_phrases() -> dict[str, list[tuple[str, Direction]]]:
    """Normalised phrase -> [(PID, direction)] from ``wikidata/relation_phrases.tsv``."""
    path = wikidata_dir() / "relation_phrases.tsv"
    out: dict[str, list[tuple[str, Direction]]] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[2] not in ("forward", "inverse"):
            raise ValueError(f"{path}:{lineno}: expected 'phrase<TAB>PID<TAB>forward|inverse'")
        out.setdefault(normalize_loose(parts[0]), []).append((parts[1], parts[2]))  # type: ignore[arg-type]
    return out


def read_table_rows(name: str, fields: int) -> list[list[str]]:
    """The tab-separated rows of the table ``wikidata/NAME`` (blank lines and ``#`` comments
    skipped); a row with fewer than ``fields`` fields raises :class:`ValueError` naming
    ``file:line``."""
    path = wikidata_dir() / name
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < fields:
            raise ValueError(f"{path}:{lineno}: expected {fields} tab-separated fields")
        out.append(parts)
    return out


@functools.cache
def inverse_properties() -> dict[str, tuple[str, ...]]:
    """PID -> its declared inverse PIDs (both ways), from ``wikidata/inverse_properties.tsv``.

    Shared by grounding (a statement read through its inverse) and query generation (a
    target the start entity already meets through an inverse is trivial)."""
    out: dict[str, set[str]] = {}
    for a, b, *_ in read_table_rows("inverse_properties.tsv", 2):
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {p: tuple(sorted(v)) for p, v in out.items()}


@functools.cache
def symmetric_properties() -> frozenset[str]:
    """Symmetric PIDs, from ``wikidata/symmetric_properties.tsv``."""
    return frozenset(r[0] for r in read_table_rows("symmetric_properties.tsv", 1))


@functools.cache
def property_implications() -> dict[str, list[tuple[str, Direction]]]:
    """PID -> [(implied PID, direction)] from ``wikidata/property_implications.tsv``.

    A statement ``(s, pid, o)`` implies ``(s, implied, o)`` when the direction is
    ``forward`` and ``(o, implied, s)`` when it is ``inverse`` (sub-properties and
    near-equivalents: located in the administrative territorial entity ⇒ part of, member of
    political party ⇒ member of, doctoral advisor ⇒ student of). A malformed line raises
    :class:`ValueError` naming ``file:line``.
    """
    return _read_implication_table("property_implications.tsv")


@functools.cache
def read_implication_table(name: str) -> dict[str, list[tuple[str, Direction]]]:
    """PID -> [(implied PID, direction)] from the table ``wikidata/NAME`` in the format of
    ``property_implications.tsv`` (``pid<TAB>implied_pid<TAB>forward|inverse<TAB>note``)."""
    return _read_implication_table(name)


def _read_implication_table(name: str) -> dict[str, list[tuple[str, Direction]]]:
    path = wikidata_dir() / name
    out: dict[str, list[tuple[str, Direction]]] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if (
            len(parts) < 3
            or parts[2] not in ("forward", "inverse")
            or not all(_is_pid(p) for p in parts[:2])
        ):
            raise ValueError(
                f"{path}:{lineno}: expected 'pid<TAB>implied_pid<TAB>forward|inverse<TAB>note'"
            )
        targets = out.setdefault(parts[0], [])
        if (parts[1], parts[2]) not in targets:
            targets.append((parts[1], parts[2]))  # type: ignore[arg-type]
    return out


@functools.cache
def implying_properties() -> dict[str, list[tuple[str, Direction]]]:
    """Implied PID -> [(PID, direction)] whose statements imply it: the reverse index of
    :func:`property_implications`, which grounding consults for a claimed property."""
    out: dict[str, list[tuple[str, Direction]]] = {}
    for pid, targets in property_implications().items():
        for implied, direction in targets:
            out.setdefault(implied, []).append((pid, direction))
    return out


def _is_pid(text: str) -> bool:
    return len(text) > 1 and text[0] == "P" and text[1:].isdigit()


@functools.cache
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _similarities(names: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``names @ vector`` on one BLAS thread (issue 19).

    OpenBLAS splits a matrix-vector product over its threads, which changes the float32
    sums' last bits (up to ~4e-7) and, under load, makes the product 1–30× slower (0.2 ms
    steady on one thread, 0.2–7 ms on two). One thread gives every run the similarities of
    the default ``--threads 1`` scoring run, whatever the thread settings.
    """
    with _blas_controller().limit(limits=1, user_api="blas"):
        return names @ vector


#: Words that give a relation phrase its direction when it ends or starts with them: "father
#: of", "directed by", "student of", "is the capital of", "has part".
_DIRECTIONAL_LAST = frozenset(
    {"of", "by", "to", "from", "in", "at", "for", "with", "on", "as", "into", "under"}
)
_DIRECTIONAL_FIRST = frozenset({"is", "was", "were", "are", "has", "had", "have"})
#: Nouns that, followed by "of", say what the *subject* is ("member of sports team", "part of
#: the series", "instance of"): the phrase reads one way only, as a label naming the object
#: ("place of birth", "country of citizenship": "Y is the place of birth of X") does not.
_SUBJECT_ROLE = frozenset({"member", "part", "instance", "subclass"})


@functools.cache
def directional_verbs() -> frozenset[str]:
    """Present-tense verbs whose meaning states the direction ("contains", "owns"), from
    ``wikidata/directional_verbs.tsv``."""
    return frozenset(r[0].strip().lower() for r in read_table_rows("directional_verbs.tsv", 1))


def directional_phrase(phrase: str) -> bool:
    """Whether ``phrase`` states which end is which ("father of", "directed", "student
    of", "predecessor of"), as a bare noun or property label ("father", "doctoral advisor",
    "spouse") does not (issue 28: a claim stated backwards must not be verified).

    Examples
    --------
    >>> [directional_phrase(p) for p in ("father of", "directed", "has part", "father")]
    [True, True, True, False]
    >>> directional_phrase("member of sports team"), directional_phrase("place of birth")
    (True, False)
    >>> directional_phrase("contains"), directional_phrase("awards")
    (True, False)
    """
    words = normalize_loose(phrase).split()
    return _directional_form(words) or (
        bool(words) and words[0] in directional_verbs()  # "contains", "owns"
    )


def _directional_form(words: list[str]) -> bool:
    """Whether the words state a direction by their form: a last preposition, a first
    copula or "has", a past-tense verb, a subject-role noun with "of"."""
    if not words:
        return False
    last = words[-1]
    return (
        last in _DIRECTIONAL_LAST
        or words[0] in _DIRECTIONAL_FIRST
        or (len(words) > 1 and words[0] in _SUBJECT_ROLE and words[1] == "of")
        or (len(last) > 4 and last.endswith("ed"))  # a verb: "directed", "founded"
    )


def _active_verb(text: str) -> bool:
    return not text.endswith(" by") and len(text.split()[-1]) > 4 and text.endswith("ed")


_COPULA = frozenset({"is", "was", "are", "were", "be", "been"})
_ARTICLES = frozenset({"a", "an", "the"})


def phrase_core(key: str) -> str:
    """A normalised relation phrase without a leading copula and article, which state no
    relation of their own ("was a member of" says what "member of" says).

    Examples
    --------
    >>> phrase_core("was a member of"), phrase_core("is the capital of"), phrase_core("is")
    ('member of', 'capital of', 'is')
    """
    words = key.split()
    i = 1 if words and words[0] in _COPULA else 0
    if i < len(words) and words[i] in _ARTICLES:
        i += 1
    return " ".join(words[i:]) or key


def _same_noun(a: str, b: str) -> bool:
    wa, wb = a.split(), b.split()
    return len(wa) == len(wb) and all(x.rstrip("s") == y.rstrip("s") for x, y in zip(wa, wb))


def _reads_the_other_way(phrase: str, genitive: bool, name: str) -> bool | None:
    """Whether an embedding neighbour ``name`` of ``phrase`` (both normalised) states its
    property the other way round: "predecessor of" near the bare name "predecessor" ("X
    predecessor of Y" is Y's predecessor), "edited" near "edited by" (active near passive).

    ``None`` when the neighbour cannot say: a bare name with another noun than the
    genitive phrase's may be a synonym ("son of" near "child": the other way) or the
    converse ("alumnus of" near "alma mater", "son of" near "father": the same way), which
    similarity does not tell apart. A name with "of" inside ("member of political party")
    reads like the phrase.
    """
    if genitive and not _directional_form(name.split()) and "of" not in name.split():
        noun = phrase_core(phrase)[: -len(" of")]
        return True if _same_noun(noun, name) else None
    passive_phrase, passive_name = phrase.endswith(" by"), name.endswith(" by")
    return (passive_name and _active_verb(phrase)) or (passive_phrase and _active_verb(name))


@dataclass(frozen=True)
class RelationLink:
    pid: str
    direction: Direction
    method: str  # "rule", "label", "alias", "inverse-label", "inverse-of", "embedding"
    score: float


_NameTable = tuple[
    list[tuple[str, str, Direction, str]], dict[str, list[RelationLink]], dict[str, list[int]]
]


def _build_name_table(kg: KnowledgeGraph, properties: Sequence[str] | None) -> _NameTable:
    """The names relation linking matches phrases against: (text, pid, direction, method)
    for each label, alias and inverse phrasing of ``properties`` (default: the graph's
    properties with statements) and each phrasing rule; the exact links by normalised name;
    each PID's rows."""
    names: list[tuple[str, str, Direction, str]] = []
    props = properties
    if props is None:
        counts = getattr(kg, "property_counts", None)
        try:
            props = (
                sorted(p for p, n in counts().items() if n > 0)
                if counts is not None
                else sorted(inverse_labels())
            )
        except (RuntimeError, OSError):  # a remote endpoint that cannot count them all
            props = sorted(inverse_labels())
    inverse = inverse_labels()
    for pid in props:
        record = kg.property(pid)
        if record is None:
            continue
        if record.label:
            names.append((record.label, pid, "forward", "label"))
        for alias in record.aliases:
            names.append((alias, pid, "forward", "alias"))
        if pid in inverse:
            names.append((inverse[pid], pid, "inverse", "inverse-label"))
    for phrase, targets in relation_phrases().items():
        for pid, direction in targets:
            names.append((phrase, pid, direction, "rule"))
    exact: dict[str, list[RelationLink]] = {}
    rows: dict[str, list[int]] = {}
    for i, (text, pid, direction, method) in enumerate(names):
        link = RelationLink(pid, direction, method, 1.0)
        exact.setdefault(normalize_loose(text), []).append(link)
        rows.setdefault(pid, []).append(i)
    return names, exact, rows


class LinkMemo(Protocol):
    """Where a :class:`RelationLinker` keeps its links between runs (issue 31): each under
    the phrase's normalised form and the text it embeds (``(normalize_loose(phrase),
    phrase.lower())``, which decide its links), kept apart by whatever else decides them
    (the graph, the linker's settings and property-name table, the embedding model).
    :class:`creagraph.scoring.groundcache.RelationLinkMemo` keeps them beside the grounding
    verdicts."""

    def read(
        self, phrases: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[RelationLink]]:
        """The kept links of those ``phrases`` that have some."""
        ...

    def write(self, phrase: tuple[str, str], links: Sequence[RelationLink]) -> None:
        """Keep ``links`` as the links of ``phrase``."""
        ...


class RelationLinker:
    """Link relation phrases to (PID, direction) candidates.

    Exact matches (phrasing rules, property labels, aliases, inverse phrasings) come
    first, and for "N of" without one, the properties named N read the other way
    ("doctoral student of"); then the ``top_k`` most similar property names by
    embedding, when the cosine similarity is at least ``min_similarity``. A genitive
    phrase near a bare name takes that name's other direction ("predecessor of" near
    "predecessor", issue 28: neighbours used to bring their own direction).

    With a ``memo`` (:class:`LinkMemo`) and a caching embedder (one with a ``cache_path``,
    whose vector of a text never changes once computed), the links of each phrase are kept
    between runs: a run whose phrases were all linked before reads their links and neither
    a phrase's vector nor the property names' (issue 31). The links read are those the
    phrase's vector and the names' vectors give, so they equal the links computed again.
    """

    def __init__(
        self,
        kg: KnowledgeGraph,
        embedder: Any = None,
        *,
        properties: Sequence[str] | None = None,
        top_k: int = 4,
        min_similarity: float = 0.6,
        memo: LinkMemo | None = None,
    ) -> None:
        self.kg = kg
        self.embedder = embedder
        self.top_k = top_k
        self.min_similarity = min_similarity
        self.memo = memo
        self._cache: dict[str, list[RelationLink]] = {}
        #: links read from :attr:`memo` by :meth:`prepare` (until linked), and the phrases
        #: it found missing there (not asked for again)
        self._recalled: dict[tuple[str, str], list[RelationLink]] = {}
        self._not_kept: set[tuple[str, str]] = set()
        self._properties = None if properties is None else list(properties)
        #: the property-name table (_names, _exact, _rows), built when first needed: a run
        #: whose links are all kept in the memo never needs it (issue 31)
        self._table: _NameTable | None = None
        self._vectors: np.ndarray | None = None
        self._prepared: dict[str, np.ndarray] = {}  # phrase vectors from prepare(), if uncached

    @property
    def _names(self) -> list[tuple[str, str, Direction, str]]:
        """(text, pid, direction, method) of every property name, in table order."""
        return self._name_table()[0]

    @property
    def _exact(self) -> dict[str, list[RelationLink]]:
        """Normalised name -> its exact links."""
        return self._name_table()[1]

    @property
    def _rows(self) -> dict[str, list[int]]:
        """PID -> its rows in :attr:`_names`, for :meth:`similarity`."""
        return self._name_table()[2]

    def _name_table(self) -> _NameTable:
        if self._table is None:
            self._table = _build_name_table(self.kg, self._properties)
        return self._table

    def table_identity(self) -> dict[str, Any]:
        """What decides the property-name table besides the graph itself (its property
        records and counts): the ``properties`` given, the inverse phrasings and the
        phrasing rules. With the graph's identity it stands for the table in cache keys
        (:mod:`creagraph.scoring.groundcache`) without building it."""
        return {
            "properties": self._properties,
            "inverse labels": inverse_labels(),
            "rules": relation_phrases(),
        }

    def name_texts(self) -> list[str]:
        """Every property name linking compares phrases with, in table order (labels,
        aliases and inverse phrasings per property, then the phrasing rules; a text may
        repeat). :mod:`creagraph.core.propvectors` saves their vectors at import."""
        return [t for t, *_ in self._names]

    def _name_vectors(self) -> np.ndarray:
        if self._vectors is None:
            texts = self.name_texts()
            saved = self._saved_name_vectors(texts)
            self._vectors = saved if saved is not None else self.embedder.encode(texts)
        return self._vectors

    def _saved_name_vectors(self, texts: list[str]) -> np.ndarray | None:
        """The names' vectors saved in the store at import, when they are exactly the ones
        :meth:`_name_vectors` would otherwise compute (issue 19).

        With a caching embedder they stand in only for a cache holding none of the names
        (a cold run embeds them all in one call, which is how they were saved) and are
        written to the cache, which then holds what a cold run leaves there; a cache
        holding some or all of them is read as before.
        """
        from creagraph.core.propvectors import saved_name_vectors

        # a CachedEmbedder has both; another Embedder may have neither
        lookup: Any = getattr(self.embedder, "lookup", None)
        add: Any = getattr(self.embedder, "add", None)
        caching = lookup is not None and add is not None
        if caching and texts and lookup(texts[:1]):  # a warm cache: read it (no file load)
            return None
        vectors = saved_name_vectors(self.kg, self.embedder, texts)
        if vectors is None:
            return None
        if caching:
            if lookup(texts):
                return None
            unique = dict(zip(texts, vectors))
            add(list(unique), np.stack(list(unique.values())))
        return vectors

    def prepare(self, phrases: Iterable[str], *, chunk: int = 4096) -> int:
        """Embed the property names and every phrase :meth:`link` will embed, batched.

        :meth:`link` embeds one phrase per model call; a model call per phrase costs ~6×
        more than the same phrases in one batch (904 phrases: 6.8 s vs 1.2 s). Call this
        with all phrases of a run first (duplicates and already linked phrases are
        skipped; ``chunk`` phrases per call bound the memory). With a caching embedder
        (:class:`~creagraph.core.embeddings.CachedEmbedder`) the vectors go to its cache,
        which :meth:`link` then reads; otherwise they are kept until linked. With a
        :attr:`memo`, the kept links of the phrases are read first (one query per chunk),
        and only the phrases without any are embedded, the names only when one is.

        Returns
        -------
        int
            Number of phrases embedded.
        """
        if self.embedder is None:
            return 0
        cached = hasattr(self.embedder, "cache_path")
        todo: dict[str, str] = {}  # normalised key -> text to embed (first spelling seen)
        seen: set[str] = set()
        done = 0
        for phrase in itertools.chain(phrases, [None]):
            if phrase is not None:
                key = normalize_loose(phrase)
                if key and key not in self._cache and key not in seen:
                    seen.add(key)
                    todo[key] = phrase.lower()
            if todo and (phrase is None or len(todo) >= chunk):
                self._recall(todo)
                texts = list(todo.values())
                if texts:
                    self._name_vectors()
                    vectors = self.embedder.encode(texts)
                    if not cached:
                        self._prepared.update(zip(texts, vectors))
                done += len(texts)
                todo.clear()
        return done

    def _memo_used(self) -> bool:
        """Whether links are kept in :attr:`memo`: only beside a caching embedder, whose
        vector of a text (which decides its links) stays the one first computed."""
        return self.memo is not None and hasattr(self.embedder, "cache_path")

    def _recall(self, todo: dict[str, str]) -> None:
        """Read the kept links of ``todo`` (normalised key -> text) from :attr:`memo` and
        drop those phrases from ``todo``: they need no vector."""
        if not self._memo_used() or self.memo is None:
            return
        found = self.memo.read(list(todo.items()))
        for key, text in list(todo.items()):
            links = found.get((key, text))
            if links is None:
                self._not_kept.add((key, text))
            else:
                self._recalled[(key, text)] = links
                del todo[key]

    def _kept_links(self, key: str, text: str) -> list[RelationLink] | None:
        """The links of ``(key, text)`` in :attr:`memo` (read by :meth:`prepare` or now),
        or ``None``."""
        if not self._memo_used() or self.memo is None:
            return None
        phrase = (key, text)
        if phrase in self._recalled:
            return self._recalled.pop(phrase)
        if phrase in self._not_kept:  # prepare asked already
            self._not_kept.discard(phrase)
            return None
        return self.memo.read([phrase]).get(phrase)

    def _phrase_vector(self, phrase: str) -> np.ndarray:
        text = phrase.lower()
        vector = self._prepared.pop(text, None)
        return vector if vector is not None else self.embedder.encode([text])[0]

    def link(self, phrase: str) -> list[RelationLink]:
        """The (PID, direction) candidates of ``phrase``: exact matches first, then
        embedding neighbours (see the class docstring); remembered by the phrase's
        normalised form for the run, and in :attr:`memo` between runs."""
        key = normalize_loose(phrase)
        if key in self._cache:
            return self._cache[key]
        kept = self._kept_links(key, phrase.lower()) if self.embedder is not None and key else None
        if kept is not None:
            self._cache[key] = kept
            return kept
        core = phrase_core(key)
        links = list(dict.fromkeys(self._exact.get(key) or self._exact.get(core, [])))
        genitive = key.endswith(" of")
        if not links and genitive:
            links = list(dict.fromkeys(self._genitive(core[: -len(" of")])))
        if self.embedder is not None and key:
            sims = _similarities(self._name_vectors(), self._phrase_vector(phrase))
            seen = {(link.pid, link.direction) for link in links}
            # only names at or above the threshold can be linked: sorting just those (in
            # index order, stably) gives the same order as sorting all, for ~1 % of the work
            above = np.flatnonzero(sims >= self.min_similarity)
            for i in above[np.argsort(-sims[above], kind="stable")].tolist():
                if len(links) >= self.top_k + len(seen):
                    break
                text, pid, direction, _ = self._names[i]
                other_way = _reads_the_other_way(key, genitive, normalize_loose(text))
                if other_way is None:
                    continue  # a neighbour that cannot tell the direction
                if other_way:
                    direction = "inverse" if direction == "forward" else "forward"
                if (pid, direction) not in seen:
                    seen.add((pid, direction))
                    links.append(RelationLink(pid, direction, "embedding", float(sims[i])))
            if self._memo_used() and self.memo is not None:
                self.memo.write((key, phrase.lower()), links)
        self._cache[key] = links
        return links

    def _genitive(self, noun: str) -> list[RelationLink]:
        """Links for "N of" from the bare property names N: "X doctoral student of Y" is
        (Y, doctoral student, X), the name read the other way (method ``inverse-of``).
        A name that already states its direction ("has works in the collection") is not a
        noun: its "of" completes it and nothing flips."""
        out: list[RelationLink] = []
        if _directional_form(normalize_loose(noun).split()):
            return out
        for link in self._exact.get(noun, []):
            if link.method in ("label", "alias") and link.direction == "forward":
                out.append(RelationLink(link.pid, "inverse", "inverse-of", 1.0))
        return out

    def similarity(self, phrase: str, pid: str, direction: Direction | None = None) -> float:
        """How well ``phrase`` names property ``pid``: 1.0 for an exact match of one of its
        names (label, alias, inverse phrasing, phrasing rule), else the best cosine
        similarity to them (0.0 without an embedder or when ``pid`` is not among the
        linker's properties). With ``direction`` only the names that read that way for
        this phrase count (``"inverse"``: the inverse phrasings and inverse rules,
        "directed" for P57; "edited by" for the phrase "edited")."""
        key = normalize_loose(phrase)
        if any(
            link.pid == pid and direction in (None, link.direction)
            for link in self._exact.get(key) or self._exact.get(phrase_core(key), [])
        ):
            return 1.0
        rows = self._rows.get(pid)
        if direction is not None and rows:
            genitive = key.endswith(" of")
            kept = []
            for i in rows:
                other_way = _reads_the_other_way(key, genitive, normalize_loose(self._names[i][0]))
                if other_way is not None and (self._names[i][2] == direction) != other_way:
                    kept.append(i)
            rows = kept
        if self.embedder is None or not rows or not key:
            return 0.0
        vectors = self._name_vectors()[rows]
        return float(np.max(_similarities(vectors, self.embedder.encode([phrase.lower()])[0])))

    def same_property(self, phrase: str, other: str) -> bool:
        """Whether two phrases share an exactly-linked property (used by validity)."""
        a = {(link.pid, link.direction) for link in self.link(phrase) if link.score >= 0.8}
        b = {(link.pid, link.direction) for link in self.link(other) if link.score >= 0.8}
        return bool(a & b)
