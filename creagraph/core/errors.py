"""The error type every job raises for bad input (SPEC: errors name the file, line, field).

:class:`InputError` lives here, below :mod:`creagraph.core.io` and
:mod:`creagraph.core.extras`, so that both can use it; it is re-exported by
``creagraph.core.io`` and ``creagraph.core`` (its historical homes).
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """Bad user input, with the file (and line or field) it came from in the message.

    ``creagraph`` prints it as one line, ``error: …``, and exits with status 2.

    Examples
    --------
    >>> raise InputError("answers.jsonl:3: field 'query': expected a string")
    Traceback (most recent call last):
    ...
    creagraph.core.errors.InputError: answers.jsonl:3: field 'query': expected a string
    """
