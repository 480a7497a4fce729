"""Progress bars for long work (counts, rate and ETA on stderr)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from creagraph.core import settings

try:  # notebook widgets only where ipywidgets exists (tqdm.auto warns on stderr otherwise)
    import ipywidgets  # noqa: F401
    from tqdm.auto import tqdm
except ImportError:
    from tqdm import tqdm

__all__ = ["progress", "progress_bar"]

T = TypeVar("T")


def _disabled() -> bool:
    return not settings.enabled("CREAGRAPH_PROGRESS")


def progress(
    iterable: Iterable[T], *, total: int | None = None, desc: str = "", unit: str = "it"
) -> Iterator[T]:
    """Wrap ``iterable`` in a progress bar (disabled with ``CREAGRAPH_PROGRESS=0``)."""
    yield from tqdm(
        iterable, total=total, desc=desc, unit=unit, dynamic_ncols=True, disable=_disabled()
    )


def progress_bar(
    *, total: float | None = None, desc: str = "", unit: str = "it", disable: bool = False,
    **kwargs: Any,
) -> tqdm:
    """A manually updated progress bar (``bar.update(n)``), e.g. for bytes read."""
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        dynamic_ncols=True,
        disable=disable or _disabled(),
        **kwargs,
    )
