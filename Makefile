# draguard — the commands a newcomer needs.  `make test` and `make run` build the virtual
# environment from nothing when it is missing (it is re-made when pyproject.toml changes).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: all test lint typecheck unit run bench conformance certs clean apiserver

all: test

# the runtime dependencies at the versions of requirements.lock (what the image ships), so the
# tests run what is deployed; dev tools float.  Two steps: pip refuses an editable install in the
# hash-checking mode a hashed lock file turns on (even as -c constraints), and the second step
# keeps the locked versions, which already satisfy pyproject.toml.
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## test: ruff, mypy --strict on app/, then the whole pytest suite
test: $(STAMP) lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check app tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

## run: the webhook on https://127.0.0.1:8443 with the demo inventory in examples/inventory
run: $(STAMP)
	bash scripts/run-demo.sh

## bench: every benchmark under benchmarks/ (median of several runs each)
bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

## apiserver: the real kube-apiserver + etcd that tests/realapi.py uses (best effort)
apiserver:
	bash scripts/setup-apiserver.sh

## conformance: score draguard against ../shared/conformance (Kubernetes 1.36 verdicts)
conformance: $(STAMP)
	$(BIN)/python ../shared/conformance/check.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
