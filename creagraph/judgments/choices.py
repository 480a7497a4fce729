"""Choices of the judgments API and CLI as :class:`enum.StrEnum` (SPEC §5).

Kept in a module of their own, free of NumPy and SciPy, so that the CLI can declare its
options with them without slowing ``creagraph --help``. Members compare equal to their
string values, so the library functions accept either.

Examples
--------
>>> Ties("half") == "half", [str(c) for c in BootstrapUnit]
(True, ['comparison', 'rater', 'prompt'])
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["BootstrapUnit", "MeasurementLevel", "Ties"]


class Ties(StrEnum):
    """Tie policy of a Bradley–Terry fit (:mod:`creagraph.judgments.leaderboard`)."""

    EXCLUDE = "exclude"
    """Ties dropped from the likelihood (Ekphrasis)."""
    HALF = "half"
    """A tie counts as half a win for each side (Chatbot Arena)."""
    DAVIDSON = "davidson"
    """Davidson's model with a tie parameter."""


class BootstrapUnit(StrEnum):
    """What a Bradley–Terry bootstrap resamples: single comparisons, or whole raters or
    prompts with all their comparisons (a cluster bootstrap)."""

    COMPARISON = "comparison"
    RATER = "rater"
    PROMPT = "prompt"


class MeasurementLevel(StrEnum):
    """Level of measurement of Krippendorff's α."""

    NOMINAL = "nominal"
    ORDINAL = "ordinal"
    INTERVAL = "interval"
    RATIO = "ratio"
