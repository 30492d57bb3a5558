"""The retrievers follow their ecosystems' conventions for how much they return.

LangChain: its own standard retriever suite (``langchain-tests``) runs against a real
Memory, for a passage strategy and for chain search, and ``k`` / ``budget`` / ``strategy``
work in the constructor and per call. LlamaIndex: ``similarity_top_k`` / ``budget`` /
``strategy`` on the retriever. Without a cap both return exactly ``Memory.ask``'s evidence.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests
from llama_index.core.schema import QueryBundle

from engramdb.platform.embedders import count_tokens
from engramdb.platform.interfaces.memory import Memory
from engramdb.retrieval.integrations.langchain import EngramRetriever
from engramdb.retrieval.integrations.llamaindex import EngramLlamaIndexRetriever
from tests.conftest import private_settings

#: Eight one-passage documents; six say who won the Nobel Prize in Physics, so every strategy
#: has well over three evidence items for QUESTION (the standard suite asks for k=3).
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
STRATEGIES = ("dense", "chain")
#: Below what any strategy returns for QUESTION uncapped (about 120-150 tokens), above the recipe minimum.
BUDGET = 64


@pytest.fixture(scope="module")
def people_memory(tmp_path_factory, neo4j_server, settings, driver):
    """The eight documents, GSW only (no other memory stages: chain and passages need none)."""
    cfg = private_settings(tmp_path_factory.mktemp("retriever-home"), neo4j_server, settings, stages=[])
    mem = Memory(namespace=f"retr{uuid.uuid4().hex[:12]}", settings=cfg)
    mem.ingest(PEOPLE)
    yield mem
    mem.close()


# --------------------------------------------------------------------------- LangChain's standard suite


class _StandardSuite(RetrieversIntegrationTests):
    """LangChain's retriever suite on the module's memory; subclasses pick the strategy.

    Why the class marks: the suite has one ``async def`` test, which pytest-asyncio runs only
    when marked (the project does not use its auto mode), and the standard tests may not be
    overridden to mark it alone. The mark on the sync tests is harmless; its warning is silenced.
    """

    strategy: str

    @pytest.fixture(autouse=True)
    def _use_people_memory(self, people_memory: Memory) -> None:
        self.memory = people_memory

    @property
    def retriever_constructor(self) -> type[EngramRetriever]:
        return EngramRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"memory": self.memory, "strategy": self.strategy}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION


STANDARD_MARKS = (
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("ignore:The test <Function .* is marked with '@pytest.mark.asyncio'"),
)


@STANDARD_MARKS[0]
@STANDARD_MARKS[1]
class TestLangChainStandardDense(_StandardSuite):
    strategy = "dense"


@STANDARD_MARKS[0]
@STANDARD_MARKS[1]
class TestLangChainStandardChain(_StandardSuite):
    strategy = "chain"


# --------------------------------------------------------------------------- LangChain: k, budget, strategy


def texts(docs: list[Document]) -> list[str]:
    return [d.page_content for d in docs]


def evidence_texts(memory: Memory, strategy: str, budget: int | None = None) -> list[str]:
    return [e.text for e in memory.ask(QUESTION, strategy=strategy, budget=budget).evidence]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_langchain_without_caps_returns_all_of_asks_evidence(people_memory: Memory, strategy: str) -> None:
    docs = EngramRetriever(memory=people_memory, strategy=strategy).invoke(QUESTION)
    result = people_memory.ask(QUESTION, strategy=strategy)
    assert len(result.evidence) >= 4  # enough for every cap below to cut something
    assert texts(docs) == [e.text for e in result.evidence]
    assert [d.metadata["id"] for d in docs] == [e.id for e in result.evidence]
    assert {d.metadata["strategy"] for d in docs} == {strategy}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_langchain_k_keeps_the_first_k_items(people_memory: Memory, strategy: str) -> None:
    full = evidence_texts(people_memory, strategy)
    for k in (1, 2, 3):
        assert (
            texts(EngramRetriever(memory=people_memory, strategy=strategy, k=k).invoke(QUESTION)) == full[:k]
        )
    assert EngramRetriever(memory=people_memory, strategy=strategy, k=0).invoke(QUESTION) == []
    more_than_there_is = EngramRetriever(memory=people_memory, strategy=strategy, k=len(full) + 10)
    assert texts(more_than_there_is.invoke(QUESTION)) == full


def test_langchain_k_per_call_overrides_the_constructor(people_memory: Memory) -> None:
    full = evidence_texts(people_memory, "dense")
    retriever = EngramRetriever(memory=people_memory, strategy="dense", k=1)
    assert texts(retriever.invoke(QUESTION, k=3)) == full[:3]
    assert texts(retriever.invoke(QUESTION, k=None)) == full  # an explicit None lifts the cap
    assert retriever.invoke(QUESTION, k=0) == []
    assert texts(retriever.invoke(QUESTION)) == full[:1]  # the call did not change the retriever
    assert retriever.k == 1


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_langchain_budget_caps_evidence_tokens(people_memory: Memory, strategy: str) -> None:
    uncapped = evidence_texts(people_memory, strategy)
    budgeted = evidence_texts(people_memory, strategy, budget=BUDGET)
    assert count_tokens(uncapped) > BUDGET  # so the budget really cuts
    in_constructor = EngramRetriever(memory=people_memory, strategy=strategy, budget=BUDGET).invoke(QUESTION)
    per_call = EngramRetriever(memory=people_memory, strategy=strategy).invoke(QUESTION, budget=BUDGET)
    for docs in (in_constructor, per_call):
        assert docs and 0 < count_tokens(texts(docs)) <= BUDGET
        assert texts(docs) == budgeted


def test_langchain_budget_then_k(people_memory: Memory) -> None:
    """k cuts the budgeted evidence: a prefix of what the budget packed."""
    budgeted = evidence_texts(people_memory, "dense", budget=BUDGET)
    assert len(budgeted) >= 2
    retriever = EngramRetriever(memory=people_memory, strategy="dense", budget=BUDGET, k=1)
    assert texts(retriever.invoke(QUESTION)) == budgeted[:1]
    wider = retriever.invoke(QUESTION, budget=None, k=2)  # per call: no budget, two items
    assert texts(wider) == evidence_texts(people_memory, "dense")[:2]


def test_langchain_strategy_per_call(people_memory: Memory) -> None:
    retriever = EngramRetriever(memory=people_memory, strategy="chain")
    dense = retriever.invoke(QUESTION, strategy="dense")
    assert texts(dense) == evidence_texts(people_memory, "dense")
    assert {d.metadata["kind"] for d in dense} == {"passage"}
    assert {d.metadata["strategy"] for d in dense} == {"dense"}
    chain = retriever.invoke(QUESTION)
    assert {d.metadata["kind"] for d in chain} == {"qa_pair"} and {d.metadata["strategy"] for d in chain} == {
        "chain"
    }


def test_langchain_ainvoke_takes_the_same_options(people_memory: Memory) -> None:
    """BaseRetriever's default async path drops call options; ours passes them on."""
    retriever = EngramRetriever(memory=people_memory, strategy="chain", k=1)
    docs = asyncio.run(retriever.ainvoke(QUESTION, k=2, strategy="dense"))
    assert texts(docs) == evidence_texts(people_memory, "dense")[:2]
    budgeted = asyncio.run(retriever.ainvoke(QUESTION, k=None, budget=BUDGET, strategy="dense"))
    assert texts(budgeted) == evidence_texts(people_memory, "dense", budget=BUDGET)


def test_langchain_verbose_is_left_to_langchain(people_memory: Memory) -> None:
    """``verbose`` is LangChain's own invoke option (it reaches us too) and is not an error."""
    docs = EngramRetriever(memory=people_memory, strategy="dense").invoke(QUESTION, verbose=True, k=1)
    assert len(docs) == 1


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [({"top_k": 3}, TypeError, "unknown keyword argument.*top_k.*takes k, budget, strategy"),
     ({"k": -1}, ValueError, "k must be >= 0"), ({"k": "3"}, TypeError, "k must be an int"),
     ({"k": True}, TypeError, "k must be an int"), ({"budget": 5}, ValueError, "budget .* 5"),
     ({"budget": 64.0}, TypeError, "budget must be an int"), ({"strategy": "nope"}, ValueError, "unknown strategy 'nope'")],
)  # fmt: skip
def test_langchain_bad_call_options_are_errors(
    people_memory: Memory, options: dict, error: type[Exception], message: str
) -> None:
    retriever = EngramRetriever(memory=people_memory, strategy="dense")
    with pytest.raises(error, match=message):
        retriever.invoke(QUESTION, **options)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [({"top_k": 3}, ValueError, "top_k\n.*Extra inputs are not permitted"), ({"k": -1}, ValueError, "k must be >= 0"),
     ({"k": 2.5}, TypeError, "k must be an int"), ({"budget": 100_001}, ValueError, "budget"),
     ({"strategy": "nope"}, ValueError, "unknown strategy 'nope'")],
)  # fmt: skip
def test_langchain_bad_constructor_options_are_errors(
    people_memory: Memory, options: dict, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        EngramRetriever(memory=people_memory, **options)


# --------------------------------------------------------------------------- LlamaIndex


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_llamaindex_without_caps_returns_all_of_asks_evidence(people_memory: Memory, strategy: str) -> None:
    nodes = EngramLlamaIndexRetriever(people_memory, strategy=strategy).retrieve(QUESTION)
    result = people_memory.ask(QUESTION, strategy=strategy)
    assert [n.node.get_content() for n in nodes] == [e.text for e in result.evidence]
    assert [n.node.node_id for n in nodes] == [f"{e.kind}:{e.id}" for e in result.evidence]
    assert [n.score for n in nodes] == [e.score for e in result.evidence]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_llamaindex_similarity_top_k(people_memory: Memory, strategy: str) -> None:
    full = evidence_texts(people_memory, strategy)
    retriever = EngramLlamaIndexRetriever(people_memory, strategy=strategy, similarity_top_k=2)
    assert retriever.similarity_top_k == 2
    assert [n.node.get_content() for n in retriever.retrieve(QUESTION)] == full[:2]
    retriever.similarity_top_k = 3  # LlamaIndex retrievers are reconfigured by attribute
    assert [n.node.get_content() for n in retriever.retrieve(QueryBundle(QUESTION))] == full[:3]
    retriever.similarity_top_k = 0
    assert retriever.retrieve(QUESTION) == []
    retriever.similarity_top_k = None
    assert [n.node.get_content() for n in retriever.retrieve(QUESTION)] == full


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_llamaindex_budget_caps_evidence_tokens(people_memory: Memory, strategy: str) -> None:
    retriever = EngramLlamaIndexRetriever(people_memory, strategy=strategy, budget=BUDGET)
    got = [n.node.get_content() for n in retriever.retrieve(QUESTION)]
    assert got and 0 < count_tokens(got) <= BUDGET
    assert got == evidence_texts(people_memory, strategy, budget=BUDGET)
    retriever.similarity_top_k = 1
    assert [n.node.get_content() for n in retriever.retrieve(QUESTION)] == got[:1]


def test_llamaindex_strategy_is_the_retrievers(people_memory: Memory) -> None:
    retriever = EngramLlamaIndexRetriever(people_memory)
    assert retriever.strategy == "chain"
    assert {n.node.metadata["kind"] for n in retriever.retrieve(QUESTION)} == {"qa_pair"}
    retriever.strategy = "dense"
    nodes = retriever.retrieve(QUESTION)
    assert {n.node.metadata["kind"] for n in nodes} == {"passage"}
    assert [n.node.get_content() for n in nodes] == evidence_texts(people_memory, "dense")


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [({"similarity_top_k": -1}, ValueError, "similarity_top_k must be >= 0"),
     ({"similarity_top_k": 2.0}, TypeError, "similarity_top_k must be an int"),
     ({"budget": 8}, ValueError, "budget .* 8"), ({"budget": "64"}, TypeError, "budget must be an int"),
     ({"strategy": "nope"}, ValueError, "unknown strategy 'nope'"),
     ({"top_k": 3}, TypeError, "unexpected keyword argument 'top_k'")],
)  # fmt: skip
def test_llamaindex_bad_options_are_errors(
    people_memory: Memory, options: dict, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        EngramLlamaIndexRetriever(people_memory, **options)
    retriever = EngramLlamaIndexRetriever(people_memory, strategy="dense", similarity_top_k=2)
    name, value = next(iter(options.items()))
    if name != "top_k":  # the attributes are checked when set, too, and a failed set changes nothing
        with pytest.raises(error, match=message):
            setattr(retriever, name, value)
        assert (retriever.strategy, retriever.similarity_top_k, retriever.budget) == ("dense", 2, None)
