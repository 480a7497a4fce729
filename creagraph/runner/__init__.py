"""The ``run`` job: send the benchmarks' prompts to a model at an OpenAI-compatible
endpoint and collect its answers in the forms the scorers read.

- :func:`run_create` — CREATE queries → ``answers.jsonl`` (read by ``creagraph score``);
- :func:`run_briefs` — creative briefs → ``responses.jsonl`` (read by ``tig build`` /
  ``tig score``);
- :func:`eval_create` — run → score → report in one call;
- :mod:`creagraph.runner.prompts` — the default CREATE prompt, templates, and templates
  derived from a published answer file (checked byte for byte).

Requests go through :class:`creagraph.core.llm.ChatClient` (bounded concurrency, reply
cache, deadlines, retries, progress, failure summary).
"""

from creagraph.runner.briefs import Brief, read_briefs, run_briefs, shared_briefs
from creagraph.runner.common import Endpoint
from creagraph.runner.create import read_queries, run_create
from creagraph.runner.evaluate import eval_create
from creagraph.runner.prompts import (
    DEFAULT_CREATE_TEMPLATE,
    check_template,
    derive_template,
    render,
)

__all__ = [
    "Brief",
    "DEFAULT_CREATE_TEMPLATE",
    "Endpoint",
    "check_template",
    "derive_template",
    "eval_create",
    "read_briefs",
    "read_queries",
    "render",
    "run_briefs",
    "run_create",
    "shared_briefs",
]
