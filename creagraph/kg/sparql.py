"""SPARQL backend: the knowledge-graph interface over any Wikidata-style endpoint.

Works against the public Wikidata Query Service, QLever, Virtuoso or Oxigraph. Queries
come from the templates in ``wikidata/sparql/``; every value placed in a query is either a
validated id (``Q…``/``P…``) or a string escaped by :func:`sparql_string`.

The requests themselves (User-Agent, timeouts, retries, size cap, the on-disk response
cache and the endpoint's dataset identity, SPEC §2) are
:class:`~creagraph.kg.sparql_transport.SparqlClient`'s; its public names are importable
from here too.
"""

from __future__ import annotations

import functools
import os
import string
from collections.abc import Iterable, Iterator
from typing import Any, Unpack

from creagraph.core import settings
from creagraph.core.graph import (
    Category,
    Edge,
    EntityRecord,
    FuzzyStep,
    NameQuery,
    NameSearch,
    PropertyRecord,
    SearchHit,
    Side,
    check_pid,
    check_qid,
    is_pid,
    is_qid,
)
from creagraph.core.paths import wikidata_dir
from creagraph.core.text import normalize, normalize_loose
from creagraph.kg.common import id_number, inverse_labels
from creagraph.kg.ntriples import WD_ENTITY
from creagraph.kg.sparql_transport import (
    DATASET_HEADER,
    DEFAULT_CACHE_TTL,
    DEFAULT_MAX_MB,
    DEFAULT_TIMEOUT,
    DEFAULT_USER_AGENT,
    SparqlClient,
    SparqlError,
    TransportOptions,
    check_endpoint,
)

# the backend's names, then the transport's (re-exported: imports from before the split work)
__all__ = ["SparqlKG", "sparql_string", "SEARCH_MODES", "template", "SparqlClient",
           "SparqlError", "TransportOptions", "DEFAULT_USER_AGENT", "DEFAULT_TIMEOUT",
           "DEFAULT_CACHE_TTL", "DEFAULT_MAX_MB", "DATASET_HEADER", "check_endpoint"]

_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
_DESC = "http://schema.org/description"
_PRED_KIND = {_LABEL: "label", _ALT: "alias"}


#: short escapes, and ``\uXXXX`` for every other control character.
_SPARQL_ESCAPES = {
    ord("\\"): "\\\\",
    ord('"'): '\\"',
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    ord("\b"): "\\b",
    ord("\f"): "\\f",
}
_SPARQL_ESCAPES.update(
    {c: f"\\u{c:04X}" for c in (*range(0x20), 0x7F) if c not in _SPARQL_ESCAPES}
)


def sparql_string(text: str, lang: str | None = None) -> str:
    r"""A SPARQL string literal for arbitrary user text (quotes, backslashes, newlines...).

    Examples
    --------
    >>> sparql_string('say "hi"\n')
    '"say \\"hi\\"\\n"'
    >>> sparql_string("Paris", "en")
    '"Paris"@en'
    """
    literal = '"' + text.translate(_SPARQL_ESCAPES) + '"'
    if lang is not None:
        if not lang.replace("-", "").isalnum():
            raise ValueError(f"invalid language tag {lang!r}")
        literal += f"@{lang}"
    return literal



@functools.cache
def template(name: str) -> string.Template:
    """A query template from ``wikidata/sparql/<name>.rq`` with the standard prefixes."""
    folder = wikidata_dir() / "sparql"
    prefixes = (folder / "prefixes.rq").read_text(encoding="utf-8")
    return string.Template(prefixes + (folder / f"{name}.rq").read_text(encoding="utf-8"))


def _node(qid: str) -> str:
    return f"wd:{check_qid(qid)}"


def _prop(pid: str) -> str:
    return f"wdt:{check_pid(pid)}"


def _local_id(iri: str) -> str | None:
    if iri.startswith(WD_ENTITY):
        ident = iri[len(WD_ENTITY) :]
        if is_qid(ident) or is_pid(ident):
            return ident
    return None


def _wdt_pid(iri: str) -> str | None:
    prefix = "http://www.wikidata.org/prop/direct/"
    if iri.startswith(prefix) and is_pid(iri[len(prefix) :]):
        return iri[len(prefix) :]
    return None


#: Longest token (characters) matched by the ``scan`` search's regular expression.
_SCAN_TOKEN_CHARS = 24
#: Search modes of :class:`SparqlKG` (``search_mode``); "auto" picks one per endpoint.
SEARCH_MODES = ("scan", "exact", "entitysearch", "prefix", "index")
_SEARCH_CHARS = 250  # of a mention sent to EntitySearch
_SEARCH_LIMIT = 20  # items EntitySearch returns per mention
_REGEX_SPECIAL = set("\\.*+?()[]{}|^$-")


@functools.cache
def _accent_variants() -> dict[str, str]:
    """Lower-case letter -> itself plus every Latin letter that folds to it (é, è, ê -> e)."""
    import unicodedata

    out: dict[str, set[str]] = {}
    for code in list(range(0xC0, 0x250)) + list(range(0x1E00, 0x1F00)):
        ch = chr(code).lower()
        base = normalize(ch)
        if len(ch) == 1 and len(base) == 1 and base != ch and unicodedata.category(ch)[0] == "L":
            out.setdefault(base, set()).add(ch)
    return {k: k + "".join(sorted(v)) for k, v in out.items()}


def _accent_insensitive(token: str) -> str:
    """An XPath regex matching ``token`` in lower-cased text whatever its accents."""
    variants = _accent_variants()
    parts = []
    for ch in token:
        if ch in variants:
            parts.append(f"[{variants[ch]}]")
        elif ch in _REGEX_SPECIAL:
            parts.append("\\" + ch)
        else:
            parts.append(ch)
    return "".join(parts)


def _fuzzy_rows(
    rows: list[tuple[str, str, str]], loose: str, limit: int, min_score: float
) -> list[SearchHit]:
    """The ``limit`` best (id, kind, text) ``rows`` whose names have a token-sort similarity
    ≥ ``min_score`` to the normalised search text ``loose`` (best first, then smaller id)."""
    from rapidfuzz import fuzz

    scored = []
    for i, k, t in rows:
        score = fuzz.token_sort_ratio(loose, normalize_loose(t))
        if score >= min_score:
            scored.append((score, i, k, t))
    scored.sort(key=lambda s: (-s[0], id_number(s[1])))
    return [
        SearchHit(i, None, t, k, float(score), False)  # type: ignore[arg-type]
        for score, i, k, t in scored[:limit]
    ]


class SparqlKG(NameSearch):
    """The knowledge-graph interface answered by a SPARQL endpoint.

    Parameters
    ----------
    endpoint : str
        SPARQL 1.1 query URL, e.g. ``https://query.wikidata.org/sparql`` or
        ``http://localhost:7878/query``.
    **transport
        How requests are sent, retried and cached (``user_agent``, ``timeout``,
        ``max_response_bytes``, ``retries``, ``backoff``, ``max_retry_after``, ``cache``,
        ``cache_ttl``, ``sleep``): see :class:`~creagraph.kg.sparql_transport.SparqlClient`,
        the transport (``kg.client``).
    search_mode : {"auto", "scan", "exact", "entitysearch", "prefix"}
        ``scan`` finds labels case-insensitively with a ``CONTAINS`` filter (fine on a
        local server, too slow for all of Wikidata); ``exact`` only looks up exact label
        strings in a few capitalisations; ``entitysearch`` asks the Wikidata Query
        Service's own search (the ``mwapi`` EntitySearch service) for candidates and reads
        their labels and aliases; ``prefix`` keeps labels starting with a few
        capitalisations of the mention (``STRSTARTS``, which QLever answers from its
        sorted vocabulary: a server holding all of Wikidata); ``auto`` takes
        ``$CREAGRAPH_SPARQL_SEARCH`` when set, else ``entitysearch`` for
        query.wikidata.org, ``prefix`` for a URL naming qlever and ``scan`` elsewhere;
        ``index`` finds candidate names in a local label index
        (:mod:`creagraph.kg.labelindex`, ``kg import --labels-only``) and asks the
        endpoint only for statements.
    label_index : path, optional
        The label index of ``search_mode="index"`` (default
        :func:`~creagraph.kg.labelindex.default_label_index_path`).
    language : str
        Language of labels, aliases and descriptions.

    Examples
    --------
    >>> kg = SparqlKG("http://localhost:7878/query")          # doctest: +SKIP
    >>> kg.count_subjects("P69", "Q174710")                     # doctest: +SKIP
    97
    """

    backend = "sparql"

    def __init__(
        self,
        endpoint: str,
        *,
        search_mode: str = "auto",
        language: str = "en",
        label_index: str | os.PathLike[str] | None = None,
        **transport: Unpack[TransportOptions],
    ):
        parsed = check_endpoint(endpoint)
        sparql_string("", language)  # a language tag, not arbitrary text
        self.language = language
        self._lang = sparql_string(language)
        if search_mode == "auto":
            search_mode = settings.value("CREAGRAPH_SPARQL_SEARCH") or "auto"
        if search_mode == "auto":
            if parsed.netloc.endswith("query.wikidata.org"):
                search_mode = "entitysearch"
            elif "qlever" in parsed.netloc.lower() or "qlever" in parsed.path.lower():
                search_mode = "prefix"
            else:
                search_mode = "scan"
        if search_mode not in SEARCH_MODES:
            raise ValueError(
                f"search_mode must be auto or {', '.join(SEARCH_MODES)}, not {search_mode!r}"
            )
        self.search_mode = search_mode
        self._labels: Any = None
        if search_mode == "index":
            from creagraph.kg.labelindex import LabelIndex, default_label_index_path

            self._labels = LabelIndex(label_index or default_label_index_path())
        #: The transport: sends the queries, retries, caches (``kg.client.query(text)``).
        self.client = SparqlClient(endpoint, **transport)
        # the transport's settings, where they were before the split
        self.endpoint, self.timeout = endpoint, self.client.timeout
        self.max_response_bytes = self.client.max_response_bytes
        self._inverse = inverse_labels()

    @property
    def requests_sent(self) -> int:
        """HTTP requests sent so far (answers from the cache are not counted)."""
        return self.client.requests_sent

    def query(self, query: str) -> dict[str, Any]:
        """Run a query and return the SPARQL JSON results (cached, retried)."""
        return self.client.query(query)

    def dataset_identity(self) -> str | None:
        """The identity the endpoint declares for the data it serves
        (:meth:`SparqlClient.dataset_identity`)."""
        return self.client.dataset_identity()

    def _select(self, name: str, **values: str) -> list[dict[str, str]]:
        result = self.query(template(name).substitute(values))
        rows = []
        for binding in result.get("results", {}).get("bindings", []):
            rows.append({k: v.get("value", "") for k, v in binding.items()})
        return rows

    def _ask(self, name: str, **values: str) -> bool:
        result = self.query(template(name).substitute(values))
        return bool(result.get("boolean"))

    # -- records ---------------------------------------------------------------------
    def _record(self, ident: str) -> tuple[str | None, tuple[str, ...], str | None, bool]:
        rec = self.records([ident]).get(ident)
        if rec is None:
            return None, (), None, False
        return (*rec, True)

    def entity(self, qid: str) -> EntityRecord | None:
        label, aliases, description, found = self._record(check_qid(qid))
        if not found and not self._ask("is_known", node=_node(qid)):
            return None
        return EntityRecord(qid, label, aliases, description)

    def property(self, pid: str) -> PropertyRecord | None:
        label, aliases, description, found = self._record(check_pid(pid))
        if not found and not self._property_used(pid):
            return None
        return PropertyRecord(pid, label, aliases, description, self._inverse.get(pid))

    def _property_used(self, pid: str) -> bool:
        return bool(self._select("property_statements", prop=_prop(pid), limit="1"))

    def records(
        self, idents: Iterable[str]
    ) -> dict[str, tuple[str | None, tuple[str, ...], str | None]]:
        """``id -> (label, aliases, description)`` for many items/properties, batched."""
        found: dict[str, list] = {}
        for ident, row in self._text_rows("records", idents):
            entry = found.setdefault(ident, [None, set(), None])
            if row["pred"] == _LABEL and entry[0] is None:
                entry[0] = row["text"]
            elif row["pred"] == _DESC and entry[2] is None:
                entry[2] = row["text"]
            elif row["pred"] == _ALT:
                entry[1].add(row["text"])
        return {i: (e[0], tuple(sorted(e[1])), e[2]) for i, e in found.items()}

    def _text_rows(self, name: str, idents: Iterable[str]) -> Iterator[tuple[str, dict]]:
        """``(id, row)`` from template ``name`` run over the well-formed ids among ``idents``,
        200 at a time; each batch's rows in the order of their ``text``."""
        wanted = [i for i in dict.fromkeys(idents) if is_qid(i) or is_pid(i)]
        for start in range(0, len(wanted), 200):
            chunk = wanted[start : start + 200]
            rows = self._select(name, values=" ".join(f"wd:{i}" for i in chunk), lang=self._lang)
            for row in sorted(rows, key=lambda r: r["text"]):
                ident = _local_id(row["e"])
                if ident is not None:
                    yield ident, row

    def property_statements(self, pid: str, limit: int) -> list[Edge]:
        """Up to ``limit`` item-to-item statements of property ``pid``."""
        rows = self._select("property_statements", prop=_prop(pid), limit=str(int(limit)))
        return [
            Edge(s, pid, o)
            for row in rows
            if (s := _local_id(row["s"])) and (o := _local_id(row["o"]))
        ]

    def label(self, ident: str) -> str | None:
        return self.labels([ident]).get(ident)

    def labels(self, idents: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for ident, row in self._text_rows("labels", idents):
            out.setdefault(ident, row["text"])
        return out

    # -- search ----------------------------------------------------------------------
    def degree(self, qid: str) -> int:
        return self._popularity([qid]).get(qid, 0)

    def _popularity(self, ids: list[str]) -> dict[str, int]:
        """Statements per id (0 for properties and unknown ids), a query per 100 ids."""
        qids = [i for i in ids if is_qid(i)]
        out = {i: 0 for i in ids}
        for start in range(0, len(qids), 100):
            chunk = qids[start : start + 100]
            for row in self._select("degree", values=" ".join(f"wd:{q}" for q in chunk)):
                ident = _local_id(row["e"])
                if ident is not None:
                    out[ident] = int(row["n"])
        return out

    def _name_rows(self, text: str) -> list[tuple[str, str, str]]:
        """Candidate (id, kind, text) rows whose label/alias could match ``text``."""
        variants = {text, text.lower(), text.title(), text[:1].upper() + text[1:], text.upper()}
        if self._labels is not None:
            return self._labels.rows(text)
        if self.search_mode == "exact":
            values = " ".join(sparql_string(v, self.language) for v in sorted(variants))
            rows = self._select("search_exact", values=values)
        elif self.search_mode == "entitysearch":
            rows = self._select(
                "search_entitysearch",
                search=sparql_string(text.strip()[:_SEARCH_CHARS]),
                lang=self._lang,
                limit=str(_SEARCH_LIMIT),
            )
        elif self.search_mode == "prefix":
            # the first word is enough to bound the candidates; the matches are filtered below
            heads = sorted({v.split()[0][:_SCAN_TOKEN_CHARS] for v in variants if v.split()})
            if not heads:
                return []
            condition = " || ".join(
                f"STRSTARTS(STR(?text), {sparql_string(h)})" for h in heads
            )
            rows = self._select("search_prefix", condition=condition, lang=self._lang)
        else:
            tokens = sorted(
                {w for w in normalize_loose(text).split() if len(w) >= 2},
                key=lambda w: (-len(w), w),
            )[:2]
            if not tokens:
                tokens = [normalize(text)] if normalize(text) else []
            if not tokens:
                return []
            # A prefix finds a superset of the names holding the whole token (the matches
            # are filtered below), and keeps a long search text from becoming a regex the
            # server takes minutes over.
            tokens = [t[:_SCAN_TOKEN_CHARS] for t in tokens]
            condition = " || ".join(
                f"REGEX(LCASE(STR(?text)), {sparql_string(_accent_insensitive(t))})" for t in tokens
            )
            rows = self._select("search_scan", condition=condition, lang=self._lang)
        out = []
        for row in rows:
            ident = _local_id(row["e"])
            kind = _PRED_KIND.get(row["pred"])
            if ident is not None and kind is not None:
                out.append((ident, kind, row["text"]))
        return out

    def _name_matches(self, query: NameQuery) -> tuple[list[SearchHit], FuzzyStep]:
        rows = [r for r in self._name_rows(query.text) if r[0][0] == query.prefix]
        key, loose = query.key, query.loose
        hits = [
            SearchHit(i, None, t, k, 100.0, True)  # type: ignore[arg-type]
            for i, k, t in rows
            if normalize(t) == key or (loose and normalize_loose(t) == loose)
        ]
        return hits, lambda limit, min_score: _fuzzy_rows(rows, loose, limit, min_score)

    # -- edges -----------------------------------------------------------------------
    def out_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        ends = self._edge_ends("out", qid, prop, "o")
        edges = {Edge(qid, p, o) for p, o in ends}
        return sorted(edges, key=lambda e: (id_number(e.property), id_number(e.object)))

    def in_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        ends = self._edge_ends("in", qid, prop, "s")
        edges = {Edge(s, p, qid) for p, s in ends}
        return sorted(edges, key=lambda e: (id_number(e.property), id_number(e.subject)))

    def _edge_ends(
        self, direction: str, qid: str, prop: str | None, other: str
    ) -> list[tuple[str, str]]:
        """``(PID, other end)`` of ``qid``'s statements in one direction (template
        ``{direction}_edges``, or ``{direction}_edges_prop`` for one property), the other
        end read from variable ``other``; rows that are not item-to-item are left out."""
        if prop is None:
            rows = self._select(f"{direction}_edges", node=_node(qid))
            pairs = [(_wdt_pid(row["p"]), _local_id(row[other])) for row in rows]
        else:
            rows = self._select(f"{direction}_edges_prop", node=_node(qid), prop=_prop(prop))
            pairs = [(prop, _local_id(row[other])) for row in rows]
        return [(p, x) for p, x in pairs if p and x]

    def has_triple(self, subject: str, prop: str, obj: str) -> bool:
        return self._ask("ask_triple", subject=_node(subject), prop=_prop(prop), object=_node(obj))

    def property_counts(self) -> dict[str, int]:
        """Item-to-item statements per property (one ``GROUP BY`` query, cached; meant for
        self-hosted slices — on the public endpoint it may time out)."""
        rows = self._select("property_counts")
        return {p: int(row["n"]) for row in rows if (p := _wdt_pid(row["p"]))}

    def edges_between(self, a: str, b: str) -> list[Edge]:
        rows = self._select("edges_between", a=_node(a), b=_node(b))
        edges = {
            Edge(s, p, o)
            for row in rows
            if (p := _wdt_pid(row["p"]))
            and (s := _local_id(row["s"]))
            and (o := _local_id(row["o"]))
        }
        return sorted(edges, key=lambda e: (id_number(e.property), e.subject, e.object))

    def property_types(self, prop: str, side: Side, *, limit: int = 20) -> dict[str, int]:
        if side not in ("subject", "object"):
            raise ValueError(f"side must be 'subject' or 'object', not {side!r}")
        rows = self._select(f"property_types_{side}", prop=_prop(prop))
        counts = [(int(row["n"]), t) for row in rows if (t := _local_id(row["t"])) and is_qid(t)]
        counts.sort(key=lambda x: (-x[0], id_number(x[1])))
        return {t: n for n, t in counts[:limit]}

    def count_subjects(self, prop: str, obj: str) -> int:
        rows = self._select("count_subjects", prop=_prop(prop), object=_node(obj))
        return int(rows[0]["n"]) if rows and "n" in rows[0] else 0

    def count_objects(self, subject: str, prop: str) -> int:
        rows = self._select("count_objects", subject=_node(subject), prop=_prop(prop))
        return int(rows[0]["n"]) if rows and "n" in rows[0] else 0

    def categories(
        self,
        properties: Iterable[str],
        *,
        side: Side,
        min_size: int = 2,
        max_size: int | None = None,
    ) -> Iterator[Category]:
        if side not in ("subject", "object"):
            raise ValueError(f"side must be 'subject' or 'object', not {side!r}")
        upper = max_size if max_size is not None else 2**62
        for pid in sorted({check_pid(p) for p in properties}, key=id_number):
            rows = self._select(
                f"category_sizes_{side}",
                prop=_prop(pid),
                min_size=str(int(min_size)),
                max_size=str(int(upper)),
            )
            sizes = {c: int(r["n"]) for r in rows if (c := _local_id(r["c"])) and is_qid(c)}
            anchors = sorted(sizes, key=id_number)
            for start in range(0, len(anchors), 100):
                chunk = anchors[start : start + 100]
                members: dict[str, set[str]] = {c: set() for c in chunk}
                for row in self._select(
                    f"category_members_{side}",
                    values=" ".join(f"wd:{c}" for c in chunk),
                    prop=_prop(pid),
                ):
                    c, m = _local_id(row["c"]), _local_id(row["m"])
                    if c in members and m is not None:
                        members[c].add(m)
                for c in chunk:
                    ordered = tuple(sorted(members[c], key=id_number))
                    yield Category(pid, c, side, len(ordered), ordered)

    def stats(self) -> dict[str, int]:
        rows = self._select("stats")
        ents = self._select("stats_entities", lang=self._lang)
        return {
            "statements": int(rows[0].get("statements", 0)) if rows else 0,
            "entities": int(ents[0].get("entities", 0)) if ents else 0,
            "properties": int(rows[0].get("properties", 0)) if rows else 0,
        }

    def close(self) -> None:
        """Nothing to release (connections are per request)."""
