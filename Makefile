# One entry point per role: `make demo` and `make test` set everything up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: install demo dev test test-fast lint bench clean

# Test processes (pytest-xdist). Each starts its own PostgreSQL and Temporal servers; tests of
# one module stay on one process, so its servers start once; the longest modules go first, by
# tests/durations.json (tests/scheduling.py says how to regenerate it). A process that crashes
# (the hang guard ends one after 360 s: ADR 0058) ends the run, failed, naming the test: with
# --dist loadgroup, pytest-xdist's replacement process is handed no work and the run waits for
# ever.
TEST_WORKERS ?= 3
PARALLEL := -n $(TEST_WORKERS) --dist loadgroup --max-worker-restart=0

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/tollgate demo

dev: install
	$(BIN)/tollgate dev

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# mypy runs beside the suite, not before it: from a fresh clone (no cache yet) it takes about a
# minute of one core, and the suite leaves about a third of two cores idle (docs/testing.md). At a
# lower priority, so the tests' own timing is not what waits; its report follows pytest's, and
# either one failing fails `make test`.
test: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	@types=$$(mktemp); nice -n 10 $(BIN)/mypy >"$$types" 2>&1 & mypy=$$!; \
	$(BIN)/pytest $(PARALLEL); tests=$$?; \
	wait $$mypy; typed=$$?; echo "mypy (run beside the tests):"; cat "$$types"; rm -f "$$types"; \
	if [ $$tests -ne 0 ]; then exit $$tests; fi; exit $$typed

# The quick loop: everything but the slow tiers (the e2e marker: the real dev server, the named
# faults, whole stacks, scale-out). `make test` still runs them all.
test-fast: install
	$(BIN)/pytest $(PARALLEL) -m "not e2e"

bench: install
	$(BIN)/tollgate bench --duplicates 0.3 --model-latency 5 --parked 2000 --replay

clean:
	rm -rf .tollgate
