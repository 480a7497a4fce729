# Two entry points (see README): `make demo` and `make test`.
# Both create .venv and install creagraph into it when needed (torch 2.13.0 CPU first).
PYTHON ?= python3.11
# Where torch comes from. Empty: pip's configured index. On a Linux machine whose index would
# give the multi-GB CUDA build, `make install TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu`
# installs the CPU-only build instead.
TORCH_INDEX_URL ?=
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: install browser demo test test-fast lint bench

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON)"; exit 1; }
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet torch==2.13.0 $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL))
	$(VENV)/bin/pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

# Headless Chromium (Debian packages) renders the HTML report in the browser test.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  echo "installing chromium and chromium-driver (apt)"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends chromium chromium-driver >/dev/null; \
	fi

demo: $(STAMP)
	$(VENV)/bin/creagraph demo

test: $(STAMP) browser
	$(VENV)/bin/python -m pytest -q

# Everything but the tests over ~20 s, the browser and the Ray/Dask workers (markers in
# pyproject.toml); the docstring examples run in both.
test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -q -m "not slow and not browser and not distributed"

# ruff, then the type check (mypy; which files: [tool.mypy] in pyproject.toml)
lint: $(STAMP)
	$(VENV)/bin/ruff check creagraph tests benchmarks
	$(VENV)/bin/mypy
