"""The retrievers follow their ecosystems' conventions for how much they return."""

from __future__ import annotations

import uuid

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.integrations.langchain import EngramRetriever
from tests.conftest import private_settings

PEOPLE = [
    {"id": "curie", "title": "Marie Curie", "text": "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903 and the Nobel Prize in Chemistry in 1911."},
    {"id": "einstein", "title": "Albert Einstein", "text": "Albert Einstein was born in Ulm in 1879. He won the Nobel Prize in Physics in 1921."},
    {"id": "bohr", "title": "Niels Bohr", "text": "Niels Bohr was born in Copenhagen in 1885. He won the Nobel Prize in Physics in 1922."},
    {"id": "planck", "title": "Max Planck", "text": "Max Planck was born in Kiel in 1858. He won the Nobel Prize in Physics in 1918."},
    {"id": "meitner", "title": "Lise Meitner", "text": "Lise Meitner was born in Vienna in 1878. She worked with Otto Hahn in Berlin."},
    {"id": "fermi", "title": "Enrico Fermi", "text": "Enrico Fermi was born in Rome in 1901. He won the Nobel Prize in Physics in 1938."},
    {"id": "dirac", "title": "Paul Dirac", "text": "Paul Dirac was born in Bristol in 1902. He won the Nobel Prize in Physics in 1933."},
    {"id": "noether", "title": "Emmy Noether", "text": "Emmy Noether was born in Erlangen in 1882. She taught mathematics in Göttingen."},
]  # fmt: skip
QUESTION = "Who won the Nobel Prize in Physics?"


@pytest.fixture(scope="module")
def people_memory(tmp_path_factory, neo4j_server, settings, driver):
    cfg = private_settings(tmp_path_factory.mktemp("retr-home"), neo4j_server, settings, stages=[])
    mem = Memory(namespace=f"retr{uuid.uuid4().hex[:12]}", settings=cfg)
    mem.ingest(PEOPLE)
    yield mem
    mem.close()


def test_explore(people_memory):
    for s in ("dense", "chain", "bm25"):
        for q in (QUESTION, "Where was Marie Curie born?"):
            r = people_memory.ask(q, strategy=s)
            print(s, q, len(r.evidence), r.evidence_tokens, [e.kind for e in r.evidence])
            for e in r.evidence:
                print("   ", e.text[:100].replace("\n", " | "))


@pytest.mark.asyncio
class TestLangChainStandardDense(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _memory(self, people_memory: Memory) -> None:
        self.memory = people_memory

    @property
    def retriever_constructor(self) -> type[EngramRetriever]:
        return EngramRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"memory": self.memory, "strategy": "dense"}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION
