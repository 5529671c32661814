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

typecheck: install
	$(PY) scripts/typecheck.py

# The persistence tests run on SQLite and on a real PostgreSQL server: Debian's cluster on
# loopback, started by scripts/test-postgres.sh (a URL already set wins; without a server
# they skip, except under CI). TEST_WORKERS=N runs the suite in N processes (pytest-xdist;
# a group of cases sharing one server, `xdist_group`, stays on one process). It stays 0
# (one process) by default: on this project's 2-core machine, 4 processes were no faster
# and a timing-bound case that passes alone failed beside them (2026-12-03); use it where
# there are more cores than 2. The 30 slowest cases are printed last, where the CI log's
# tail shows them: they are where the suite's time goes.
TEST_WORKERS ?= 0
test: test-system lint typecheck
	DUCK_TEST_DATABASE_URL="$${DUCK_TEST_DATABASE_URL:-$$(scripts/test-postgres.sh || true)}" \
		$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=30

bench: install
	$(PY) scripts/bench/turn_overhead.py
	$(PY) scripts/bench/checkpoint_growth.py
	$(PY) scripts/bench/memory_recall.py
	$(PY) scripts/bench/server_latency.py
	$(PY) scripts/bench/local_model_stream.py
	$(PY) scripts/bench/llama_build.py
	$(PY) scripts/bench/cli_startup.py
