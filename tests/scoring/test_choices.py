"""The scoring choices are built from the one place each is declared (issue 30 item 2)."""

from __future__ import annotations

import pytest

from creagraph.core.choices import UTILITY_MODES, utility_mode
from creagraph.core.records import READINGS
from creagraph.scoring.config import Mode, UnknownReading


def test_mode_and_reading_enums_follow_core_declarations() -> None:
    assert tuple(m.value for m in Mode) == UTILITY_MODES
    assert tuple(r.value for r in UnknownReading) == READINGS
    assert Mode("paper") == "paper"


def test_utility_mode_accepts_members_and_refuses_others() -> None:
    assert utility_mode(Mode("published")) == "published"
    with pytest.raises(ValueError, match="'paper' or 'published'"):
        utility_mode("papers")
