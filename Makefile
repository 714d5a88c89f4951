# draguard — the commands a newcomer needs.  `make test` and `make run` build the virtual
# environment from nothing when it is missing (it is re-made when pyproject.toml changes).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: all test lint typecheck unit run bench fuzz conformance certs clean apiserver reasons kubernetes-version docs

all: test

# the runtime dependencies at the versions of requirements.lock (what the image ships), so the
# tests run what is deployed; dev tools float
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	sed -e '/^ *--hash/d' -e 's/ *\\$$//' requirements.lock > $(VENV)/constraints.txt  # pins without hashes: pip refuses hashes next to an editable install
	$(BIN)/pip install --quiet -c $(VENV)/constraints.txt -e '.[dev]'
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

## reasons: write docs/reference/reasons.md and README.md's reasons index from the reason registry (app/k8s/reasons.py)
reasons: $(STAMP)
	$(BIN)/python scripts/reasons-table.py

## docs: regenerate the reference pages of docs/reference/ from the code (scripts/docs/generate.py),
## then build the site into site/ with mkdocs --strict (a warning or a broken link fails it)
docs: $(STAMP)
	$(BIN)/python scripts/docs/generate.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

## run: the webhook on https://127.0.0.1:8443 with the demo inventory in examples/inventory
run: $(STAMP)
	bash scripts/run-demo.sh

## bench: every benchmark under benchmarks/ (median of several runs each); the raw output of the
## whole run goes into benchmarks/RESULTS.md ("make-bench" section), each script's own figures too.
## bench_go_peer.py and bench_lint_compare.py's part 3 time the real kube-scheduler where
## `make apiserver` has put it (and etcd) in place; without them they say so and use the published figure
bench: $(STAMP)
	@rm -rf .bench && mkdir -p .bench && echo "$$(date -u '+%Y-%m-%d %H:%M') UTC, load average $$(cut -d' ' -f1-3 /proc/loadavg)" > .bench/started
	@for b in benchmarks/bench_*.py; do echo "== $$b"; DRAGUARD_BENCH_WRITE=1 $(BIN)/python $$b > .bench/$$(basename $$b .py).txt 2>&1; \
		rc=$$?; cat .bench/$$(basename $$b .py).txt; [ $$rc = 0 ] || echo "(exit status $$rc)" | tee -a .bench/$$(basename $$b .py).txt; done
	$(BIN)/python benchmarks/results.py record .bench

## apiserver: the real kube-apiserver (+ scheduler, controller-manager) and etcd that tests/realapi.py
## uses — 1.36.2 (the team copies, see scripts/setup-apiserver.sh), and every version of scripts/kubernetes-versions built from
## Go modules (within DRAGUARD_KUBE_BUDGET seconds) — and helm for the chart tests (best effort:
## what cannot be had is skipped, and said)
apiserver:
	bash scripts/setup-apiserver.sh
	bash scripts/setup-kubernetes-versions.sh
	bash scripts/setup-helm.sh

## kubernetes-version V=v1.39.0: the recipe for a new Kubernetes release (README "Adding a Kubernetes
## version"): build its binaries and oracle, record its allocator test table, make its differential
## expectations, and print what changed in the DRA gates and types since the newest known version
kubernetes-version: $(STAMP)
	@test -n "$(V)" || { echo "usage: make kubernetes-version V=v1.MINOR.PATCH"; exit 2; }
	bash scripts/add-kubernetes-version.sh $(V)

## fuzz: 100,000+ generated inputs through decode, validation, CEL, satisfiability and the HTTPS
## doors (0 exceptions, 0 5xx, stable answers), then atheris on decode+review; figures in .fuzz/
fuzz: $(STAMP)
	@mkdir -p .fuzz
	DRAGUARD_FUZZ=full DRAGUARD_FUZZ_RESULTS=.fuzz/results.json $(BIN)/pytest tests/fuzz -q -s --timeout=3600
	@if $(BIN)/pip install --quiet -c $(VENV)/constraints.txt -e '.[dev,fuzz]' 2>/dev/null && $(BIN)/python -c 'import atheris' 2>/dev/null; then \
		mkdir -p .fuzz/corpus && cp -n examples/claims/good/*.yaml examples/claims/bad/*.yaml .fuzz/corpus/; \
		$(BIN)/python tests/fuzz/atheris_target.py -runs=$${ATHERIS_RUNS:-20000} -max_len=4096 -rss_limit_mb=2048 \
			-artifact_prefix=.fuzz/ .fuzz/corpus; \
	else echo "atheris does not install here: skipped (the generated-input run above still counts)"; fi

## conformance: score draguard against the sample in tests/data/conformance (Kubernetes 1.36.2's own
## verdicts) with the project's scorer, scripts/conformance.py
conformance: $(STAMP)
	$(BIN)/python scripts/conformance.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
