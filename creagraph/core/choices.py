"""Choices shared by several jobs, declared once, free of NumPy so that the CLI can build its
options from them without slowing ``creagraph --help``.

Examples
--------
>>> UTILITY_MODES, utility_mode("published")
(('paper', 'published'), 'published')
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["UtilityMode", "UTILITY_MODES", "utility_mode"]

#: Which CREATE formulas: the paper's or the published code's (SPEC §3.5–3.6); the values
#: declared here once; :class:`creagraph.scoring.config.Mode` is built from them.
UtilityMode = Literal["paper", "published"]
#: The values of :data:`UtilityMode`, in the order they are listed.
UTILITY_MODES: tuple[UtilityMode, ...] = get_args(UtilityMode)


def utility_mode(mode: str) -> UtilityMode:
    """``mode`` as a :data:`UtilityMode` (an enum member's value included), else a
    ValueError naming the choices."""
    for choice in UTILITY_MODES:
        if mode == choice:
            return choice
    raise ValueError(f"mode must be 'paper' or 'published', not {mode!r}")
