"""A faster graph of the offline embedder's model, derived once per machine from the packaged one.

Why: running the model is the largest step of every offline ingest (about half of a 2Wiki ingest,
more of a long document). The packaged ONNX graph, exported from PyTorch with int8 weights that ONNX
Runtime widens to float32 when it loads them, spells each layer's attention as a dozen small
operators (three matrix products for Q, K and V, reshapes, transposes, a mask built per call, a NaN
guard after the softmax) and each GELU as five; ONNX Runtime's own fusions recognise neither. This
module rewrites every layer's attention into one ``com.microsoft.Attention`` operator (Q, K and V
in one matrix product) and every GELU with its bias into ``com.microsoft.BiasGelu``. The function
is the same (float32 rounding aside): a build is kept only if its outputs agree with the packaged
graph's on probe inputs (cosine of every token's hidden state at least ``MIN_COSINE``), else the
packaged graph is used. Both operators ship in every build of ``onnxruntime``.

The derived file (float32 weights, ~90 MB) is cached in the user's cache folder, keyed by the
packaged model's digest, the ``onnxruntime`` version (the folding step is its own) and
``REWRITE_VERSION``; it is written under a temporary name and renamed, so processes building it at
once never read half a file.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MIN_COSINE", "REWRITE_VERSION", "FusionError", "fused_graph"]

log = logging.getLogger("engramdb")

#: Bump when the rewrite changes, so caches built by an older one are not reused.
REWRITE_VERSION = 1
#: Least cosine, token by token, between the packaged and the derived graph's hidden states.
MIN_COSINE = 0.99999
_MASKED = float(np.finfo(np.float32).min)  # what the packaged graph adds to a masked position


class FusionError(RuntimeError):
    """The packaged graph could not be rewritten, or the rewrite computes something else."""


def fused_graph(source: Path, num_heads: int, cache_root: Path, digest: str) -> Path:
    """The derived graph of ``source`` (built and checked on first use, then read from the cache);
    ``digest``: the source's sha256, which the embedder computes anyway to check the package."""
    import onnxruntime as ort

    target = cache_root / f"{source.stem}-{digest[:16]}-ort{ort.__version__}-fused{REWRITE_VERSION}.onnx"
    if target.is_file():
        return target
    cache_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_root, prefix=".build-") as tmp:
        folded = Path(tmp) / "folded.onnx"
        _fold(source, folded)
        built = Path(tmp) / "fused.onnx"
        _rewrite(folded, built, num_heads)
        worst = _agreement(source, built)
        if worst < MIN_COSINE:
            raise FusionError(f"the rewritten graph disagrees with {source.name} (cosine {worst:.6f})")
        os.replace(built, target)
    log.info("offline embedder: built %s (agreement %.7f)", target, worst)
    return target


def _fold(source: Path, out: Path) -> None:
    """``source`` with its constants folded (weights widened to float32) by ONNX Runtime's basic,
    hardware-independent optimisations, so the rewrite sees plain weight matrices."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(out)
    options.log_severity_level = 3
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def _rewrite(folded: Path, out: Path, num_heads: int) -> None:
    import onnx
    from onnx import helper

    model = onnx.load(str(folded))
    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def only(name: str, op: str) -> Any:
        nodes = consumers.get(name, [])
        if len(nodes) != 1 or nodes[0].op_type != op:
            raise FusionError(f"expected one {op} after {name}")
        return nodes[0]

    replacements: dict[str, Any] = {}  # output name -> the fused node computing it
    extra: list[Any] = []
    mask = helper.make_node("Cast", ["attention_mask"], ["engramdb_mask_i32"], to=onnx.TensorProto.INT32)
    for node in list(graph.node):
        bias = node.input[1] if node.op_type == "Add" and len(node.input) == 2 else ""
        if bias in weights and bias.endswith("attention.self.query.bias"):
            prefix = bias.removesuffix("query.bias")
            x = producer[node.input[0]].input[0]
            parts = [
                _projection(x, prefix + kind + ".bias", consumers, weights)
                for kind in ("query", "key", "value")
            ]
            # the value path leads to the context: Reshape, Transpose, MatMul(probs, v), Transpose, Reshape
            context = only(
                only(only(parts[2][1].output[0], "Reshape").output[0], "Transpose").output[0], "MatMul"
            )
            view = only(only(context.output[0], "Transpose").output[0], "Reshape")
            layer = len(extra) // 2
            w = np.concatenate([_array(weights[m.input[1]]) for m, _ in parts], axis=1)
            b = np.concatenate([_array(weights[a.input[1]]) for _, a in parts])
            names = (f"engramdb_qkv_weight_{layer}", f"engramdb_qkv_bias_{layer}")
            extra += [onnx.numpy_helper.from_array(w.astype(np.float32), names[0]),
                      onnx.numpy_helper.from_array(b.astype(np.float32), names[1])]  # fmt: skip
            replacements[view.output[0]] = helper.make_node(
                "Attention", [x, *names, mask.output[0]], [view.output[0]], domain="com.microsoft",
                num_heads=num_heads, mask_filter_value=_MASKED, name=f"engramdb_attention_{layer}",
            )  # fmt: skip
        elif node.op_type == "Erf":
            fused = _bias_gelu(node, producer, consumers, weights)
            if fused is not None:
                replacements[fused.output[0]] = fused
    layers = len(extra) // 2
    if layers == 0:
        raise FusionError("no attention block found to fuse")
    nodes = [mask, *(replacements.get(n.output[0], n) for n in graph.node)]
    needed = {o.name for o in graph.output}
    kept = []
    for node in reversed(nodes):  # drop what no output needs any more
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(node.input)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    used = [i for i in [*graph.initializer, *extra] if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(used)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(out))


def _projection(
    x: str, bias: str, consumers: dict[str, list[Any]], weights: dict[str, Any]
) -> tuple[Any, Any]:
    """The MatMul of ``x`` by a weight followed by the Add of ``bias``: one of Q, K, V."""
    for node in consumers.get(x, []):
        if node.op_type == "MatMul" and node.input[1] in weights:
            after = consumers.get(node.output[0], [])
            if len(after) == 1 and after[0].op_type == "Add" and after[0].input[1] == bias:
                return node, after[0]
    raise FusionError(f"no projection with bias {bias}")


def _bias_gelu(
    erf: Any, producer: dict[str, Any], consumers: dict[str, list[Any]], weights: dict[str, Any]
) -> Any:
    """``BiasGelu`` for x·0.5·(1 + erf((h + b)/√2)) with x = h + b, or None for another pattern."""
    from onnx import helper

    def constant(name: str, value: float) -> bool:
        return name in weights and np.allclose(_array(weights[name]), value, rtol=1e-6)

    div = producer.get(erf.input[0])
    if div is None or div.op_type != "Div" or not constant(div.input[1], 2**0.5):
        return None
    add_bias = producer.get(div.input[0])
    if add_bias is None or add_bias.op_type != "Add" or add_bias.input[1] not in weights:
        return None
    after = consumers.get(erf.output[0], [])
    if len(after) != 1 or after[0].op_type != "Add" or not constant(after[0].input[1], 1.0):
        return None
    half = consumers.get(after[0].output[0], [])
    if len(half) != 1 or half[0].op_type != "Mul" or not any(constant(i, 0.5) for i in half[0].input):
        return None
    out = consumers.get(half[0].output[0], [])
    if len(out) != 1 or out[0].op_type != "Mul" or add_bias.output[0] not in out[0].input:
        return None
    return helper.make_node(
        "BiasGelu", [add_bias.input[0], add_bias.input[1]], [out[0].output[0]], domain="com.microsoft"
    )


def _array(tensor: Any) -> np.ndarray:
    from onnx import numpy_helper

    return numpy_helper.to_array(tensor)


def _agreement(source: Path, built: Path) -> float:
    """Least cosine between the two graphs' hidden states, over every real token of padded batches
    of random token ids (lengths 1 to 200, so masking and both short and long inputs are checked)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    sessions = [
        ort.InferenceSession(str(p), options, providers=["CPUExecutionProvider"]) for p in (source, built)
    ]
    rng = np.random.default_rng(0)
    worst = 1.0
    for lengths in ([1, 3, 9, 16], [40, 7, 128, 2], [200, 64]):
        width = max(lengths)
        ids = np.zeros((len(lengths), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, n in enumerate(lengths):
            ids[row, :n] = rng.integers(1000, 29000, size=n)
            ids[row, 0], ids[row, n - 1] = 101, 102
            mask[row, :n] = 1
        outs = []
        for session in sessions:
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in {i.name for i in session.get_inputs()}:
                feeds["token_type_ids"] = np.zeros_like(ids)
            outs.append(session.run(None, feeds)[0][mask.astype(bool)])
        a, b = outs
        cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
        worst = min(worst, float(cos.min()))
    return worst
