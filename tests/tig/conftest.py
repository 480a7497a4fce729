"""Fixtures for the Typed Idea Graph tests: the real cached MiniLM embedder and small
populations of responses to a "calm" brief (real sentences, several models and samples)."""

from __future__ import annotations

import os

import pytest

from creagraph.tig.schema import Atom, Response

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

CALM_BRIEF = "Create a visual concept that makes calm visible."

#: model → its three Core Ideas. Plants/leaves, a still lake and a sleeping cat recur
#: across models (the population's clichés); each model also has one idea of its own.
CALM_IDEAS: dict[str, list[str]] = {
    "m1": [
        "A potted fern unfurling its leaves on a quiet windowsill to evoke calm.",
        "A still lake at dawn reflecting a lone heron, seen from above.",
        "A clock whose hands melt into honey, suggesting time slowing down.",
    ],
    "m2": [
        "Soft green leaves of a houseplant growing around a reading chair to evoke calm.",
        "A sleeping cat curled on a warm blanket beside a window.",
        "A still mountain lake at dawn mirroring the sky, seen from above.",
    ],
    "m3": [
        "A potted plant with broad green leaves in a sunlit room, symbolizing serenity.",
        "A glass jar of fireflies turning into slow stars.",
        "A sleeping cat curled in a basket of folded laundry.",
    ],
    "m4": [
        "A still lake at sunrise reflecting pine trees, seen from above.",
        "Fern leaves unfurling inside a glass terrarium to evoke calm.",
        "A lighthouse made of stacked books standing in a quiet harbor.",
    ],
    "m5": [
        "A sleeping cat curled on a sunny windowsill beside a potted plant.",
        "A teacup holding a tiny ocean storm, viewed from above.",
        "Green leaves of a monstera plant in a quiet bedroom to evoke calm.",
    ],
    "m6": [
        "A still lake at dawn reflecting a wooden boat, seen from above.",
        "A ribbon of smoke becoming a sleeping whale above a candle.",
        "A houseplant with soft green leaves on a wooden desk to evoke calm.",
    ],
}


def calm_population(ideas: dict[str, list[str]] | None = None,
                    task_id: str = "calm") -> list[Response]:
    """Responses for ``ideas`` (default :data:`CALM_IDEAS`), samples numbered from 0."""
    ideas = CALM_IDEAS if ideas is None else ideas
    return [
        Response(task_id=task_id, brief=CALM_BRIEF, model=model, sample=i, core_idea=text,
                 visual_description=f"{text} Rendered as a quiet still image.",
                 family="Abstraction")
        for model, texts in ideas.items()
        for i, text in enumerate(texts)
    ]


@pytest.fixture(scope="session")
def embedder():
    from creagraph.core.embeddings import default_embedder

    return default_embedder()


@pytest.fixture(scope="session")
def offline_extractor(embedder):
    from creagraph.tig.atoms import OfflineExtractor

    return OfflineExtractor(embedder)


@pytest.fixture()
def calm_responses() -> list[Response]:
    return calm_population()


def atoms_by_text(responses: list[Response],
                  spec: dict[str, list[tuple[str, str]]]) -> dict[str, list[Atom]]:
    """Pre-extracted atoms keyed by response id from ``{core_idea: [(type, text)]}``."""
    return {r.response_id: [Atom(t, x) for t, x in spec[r.core_idea]] for r in responses}
