"""Checklists of the Ekphrasis pairwise judge: three fixed cue slots per dimension (SPEC §4.12).

Usefulness, Expressiveness and Novelty each have three slots. For Novelty the first slot
(cliché distance) is *materialised* from the pair's leave-two-models-out Typed Idea Graph:
it is replaced by the top anchor question(s) of the reference population that leaves both
candidates out (:func:`creagraph.tig.l2mo.l2mo_results`), so neither response shapes the
cue that judges it. When that population yields no anchor, the generic slot text stays and
the comparison is counted as having no L2MO profile (a pilot gate of the diagnostics).

Checklists are cues for the judge, not equal-weight rubrics: the prompt says so, and no
item is scored or counted.

Examples
--------
>>> [item.slot for item in build_checklist("usefulness")]
['brief_fit', 'operation_completion', 'constraint_fit']
>>> build_checklist("novelty")[0].cluster_id is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DIMENSIONS",
    "SLOTS",
    "ChecklistItem",
    "build_checklist",
    "checklist_text",
]

#: The three judged dimensions, each with its own Bradley–Terry model.
DIMENSIONS = ("usefulness", "expressiveness", "novelty")

#: dimension → its three ``(slot id, cue)``; the first novelty slot is replaced by anchors.
SLOTS: dict[str, tuple[tuple[str, str], ...]] = {
    "usefulness": (
        ("brief_fit", "Brief fit: does the response answer what the brief actually asks for?"),
        ("operation_completion", "Operation completion: does it carry out the brief's operation "
         "(the abstraction, combination, transformation or use) fully rather than partly?"),
        ("constraint_fit", "Constraint and context fit: does it respect the brief's constraints "
         "and would it work in the stated context?"),
    ),
    "expressiveness": (
        ("visual_grounding", "Visual grounding: is the idea carried by concrete, visible things "
         "rather than abstract statements?"),
        ("spatial_organisation", "Spatial organisation: is it clear where things are and how "
         "the scene is arranged?"),
        ("appearance_specificity", "Appearance specificity: are shapes, materials and details "
         "specific enough to picture one image?"),
    ),
    "novelty": (
        ("cliche_distance", "Cliché distance: does the idea avoid the patterns most answers "
         "to this brief fall back on?"),
        ("source_domain_shift", "Source-domain shift: does it draw on a domain far from the "
         "obvious one for this brief?"),
        ("perspective_shift", "Perspective or relation shift: does it change the viewpoint, "
         "scale or relation between elements in an unexpected way?"),
    ),
}


@dataclass(frozen=True)
class ChecklistItem:
    """One cue shown to the judge; anchors keep the cluster they come from."""

    slot: str
    text: str
    cluster_id: str | None = None
    anchor_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"slot": self.slot, "text": self.text, "cluster_id": self.cluster_id,
                "anchor_id": self.anchor_id}


def build_checklist(dimension: str, anchors: Sequence[Any] = (), *,
                    n_anchors: int = 2) -> list[ChecklistItem]:
    """The checklist of ``dimension`` for one comparison.

    Parameters
    ----------
    dimension : {"usefulness", "expressiveness", "novelty"}
    anchors : sequence of ChecklistAnchor
        The pair's L2MO anchors, best first (only used for novelty).
    n_anchors : int
        How many anchors replace the first novelty slot.

    Raises
    ------
    ValueError
        For an unknown dimension.
    """
    if dimension not in SLOTS:
        raise ValueError(f"unknown dimension {dimension!r} (expected one of {DIMENSIONS})")
    slots = SLOTS[dimension]
    items = [ChecklistItem(slot, text) for slot, text in slots]
    if dimension == "novelty" and anchors:
        first = slots[0][0]
        materialised = [ChecklistItem(first, a.text, a.cluster_id, a.item_id)
                        for a in list(anchors)[:n_anchors]]
        items = materialised + items[1:]
    return items


def checklist_text(items: Sequence[ChecklistItem]) -> str:
    """The checklist as the numbered lines shown in a prompt."""
    return "\n".join(f"{k}. {item.text}" for k, item in enumerate(items, start=1))
