"""Small transformers written in PyTorch and exported with torch.onnx.export, as test fixtures:
a GPT-style decoder block (hand-written causal attention, or scaled_dot_product_attention), a
BERT-style encoder block (hand-written heads, or nn.MultiheadAttention) and a ViT, each exported by
the TorchScript exporter (opset 17) and the dynamo exporter (opset 18), with an input .npz and
onnxruntime's outputs.

    python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch==2.13.0 onnx onnxruntime onnxscript numpy
    /tmp/torchvenv/bin/python examples/models/transformers.py test/unit/data/torch_export

Needs torch (ziggurat does not), so it runs in a virtual environment of its own. The
weights are seeded random values; nothing is downloaded. The directory gets, per model and
exporter, `<model>_<exporter>.onnx`, `.inputs.npz` (keyed by input name) and `.outputs.npz`
(onnxruntime's outputs with graph optimizations off, keyed by output name), and a README.md
naming the versions that wrote them.
"""

import argparse
import math
import platform
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import onnxscript
import torch
from torch import nn
from torch.nn import functional as F

VOCAB, TYPES, MAX_POSITIONS = 64, 2, 16
BATCH, SEQUENCE = 2, 12
MODEL, HEADS, HIDDEN = 32, 4, 64
IMAGE, PATCH, CLASSES = 32, 8, 10


class CausalSelfAttention(nn.Module):
    """GPT-2's attention, heads split with sizes read from x.size(); the causal mask by triu and
    masked_fill, or (`sdpa`) by F.scaled_dot_product_attention(is_causal=True), as nanoGPT has it."""

    def __init__(self, sdpa: bool = False):
        super().__init__()
        self.sdpa = sdpa
        self.q_proj, self.k_proj, self.v_proj = (nn.Linear(MODEL, MODEL) for _ in range(3))
        self.out_proj = nn.Linear(MODEL, MODEL)

    def forward(self, x):
        batch, length, channels = x.size()
        head = channels // HEADS
        q = self.q_proj(x).view(batch, length, HEADS, head).transpose(1, 2)
        k = self.k_proj(x).view(batch, length, HEADS, head).transpose(1, 2)
        v = self.v_proj(x).view(batch, length, HEADS, head).transpose(1, 2)
        if self.sdpa:
            context = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(head)
            future = torch.triu(
                torch.ones(length, length, dtype=torch.bool, device=x.device), diagonal=1
            )
            scores = scores.masked_fill(future, float("-inf"))
            context = F.softmax(scores, dim=-1) @ v
        return self.out_proj(context.transpose(1, 2).contiguous().view(batch, length, channels))


class GPTBlock(nn.Module):
    """Token and position embeddings, one pre-norm decoder block (GPT-2's tanh GELU), a final
    LayerNorm and the language-model head, whose weights are the token embedding's."""

    def __init__(self, sdpa: bool = False):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, MODEL)
        self.positions = nn.Embedding(MAX_POSITIONS, MODEL)
        self.norm1, self.norm2, self.norm_out = (
            nn.LayerNorm(MODEL),
            nn.LayerNorm(MODEL),
            nn.LayerNorm(MODEL),
        )
        self.attention = CausalSelfAttention(sdpa)
        self.mlp = nn.Sequential(
            nn.Linear(MODEL, HIDDEN), nn.GELU(approximate="tanh"), nn.Linear(HIDDEN, MODEL)
        )
        self.lm_head = nn.Linear(MODEL, VOCAB, bias=False)
        self.lm_head.weight = self.tokens.weight

    def forward(self, input_ids):
        positions = torch.arange(0, input_ids.shape[1], dtype=torch.long, device=input_ids.device)
        x = self.tokens(input_ids) + self.positions(positions)
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return self.lm_head(self.norm_out(x))


class BertEncoder(nn.Module):
    """BERT's embeddings (word + position + token type, LayerNorm), one post-norm encoder layer, and
    the tanh pooler on the first token. The attention has hand-written heads and HF's additive mask,
    or (`mha`) is an nn.MultiheadAttention given the padding as its key_padding_mask."""

    def __init__(self, mha: bool = False):
        super().__init__()
        self.words = nn.Embedding(VOCAB, MODEL)
        self.positions = nn.Embedding(MAX_POSITIONS, MODEL)
        self.token_types = nn.Embedding(TYPES, MODEL)
        self.embedding_norm = nn.LayerNorm(MODEL, eps=1e-12)
        self.mha = nn.MultiheadAttention(MODEL, HEADS, batch_first=True) if mha else None
        self.query, self.key, self.value = (nn.Linear(MODEL, MODEL) for _ in range(3))
        self.attention_out = nn.Linear(MODEL, MODEL)
        self.attention_norm = nn.LayerNorm(MODEL, eps=1e-12)
        self.intermediate = nn.Linear(MODEL, HIDDEN)
        self.output = nn.Linear(HIDDEN, MODEL)
        self.output_norm = nn.LayerNorm(MODEL, eps=1e-12)
        self.pooler = nn.Linear(MODEL, MODEL)

    def heads(self, x):
        return x.view(x.size()[:-1] + (HEADS, MODEL // HEADS)).permute(0, 2, 1, 3)

    def attention(self, x, attention_mask):
        if self.mha is not None:
            return self.mha(x, x, x, key_padding_mask=attention_mask == 0, need_weights=False)[0]
        extended = attention_mask[:, None, None, :].to(dtype=x.dtype)
        additive = (1.0 - extended) * torch.finfo(x.dtype).min
        q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(MODEL // HEADS) + additive
        context = torch.matmul(scores.softmax(dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return self.attention_out(context.view(context.size()[:-2] + (MODEL,)))

    def forward(self, input_ids, token_type_ids, attention_mask):
        length = input_ids.size(1)
        position_ids = torch.arange(length, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.words(input_ids) + self.positions(position_ids) + self.token_types(token_type_ids)
        x = self.embedding_norm(x)
        x = self.attention_norm(x + self.attention(x, attention_mask))
        x = self.output_norm(x + self.output(F.gelu(self.intermediate(x))))
        return x, torch.tanh(self.pooler(x[:, 0]))


class ViT(nn.Module):
    """Patchify conv, class token, position embedding, two pre-norm nn.TransformerEncoderLayers,
    and a linear head on the class token."""

    def __init__(self):
        super().__init__()
        patches = (IMAGE // PATCH) ** 2
        self.patchify = nn.Conv2d(3, MODEL, PATCH, stride=PATCH)
        self.class_token = nn.Parameter(torch.randn(1, 1, MODEL) * 0.02)
        self.positions = nn.Parameter(torch.randn(1, patches + 1, MODEL) * 0.02)
        layer = dict(
            dim_feedforward=HIDDEN,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(MODEL, HEADS, **layer) for _ in range(2)
        )
        self.norm = nn.LayerNorm(MODEL)
        self.head = nn.Linear(MODEL, CLASSES)

    def forward(self, image):
        x = self.patchify(image).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.positions
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x)[:, 0])


def token_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"input_ids": rng.integers(0, VOCAB, (BATCH, SEQUENCE), dtype=np.int64)}


def bert_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    token_types = np.zeros((BATCH, SEQUENCE), np.int64)
    token_types[:, SEQUENCE // 2 :] = 1
    mask = np.ones((BATCH, SEQUENCE), np.int64)
    mask[1, SEQUENCE - 4 :] = 0  # the second sequence is padded
    return token_inputs(rng) | {"token_type_ids": token_types, "attention_mask": mask}


def image_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"image": rng.standard_normal((BATCH, 3, IMAGE, IMAGE)).astype(np.float32)}


MODELS = {
    # name -> (module factory, inputs, output names, dynamic axes of every input)
    "gpt_block": (GPTBlock, token_inputs, ["logits"], {0: "batch", 1: "sequence"}),
    "gpt_sdpa": (
        lambda: GPTBlock(sdpa=True),
        token_inputs,
        ["logits"],
        {0: "batch", 1: "sequence"},
    ),
    "bert_encoder": (BertEncoder, bert_inputs, ["hidden", "pooled"], {0: "batch", 1: "sequence"}),
    "bert_mha": (
        lambda: BertEncoder(mha=True),
        bert_inputs,
        ["hidden", "pooled"],
        {0: "batch", 1: "sequence"},
    ),
    "vit": (ViT, image_inputs, ["logits"], {0: "batch"}),
}

EXPORTERS = {"torchscript": 17, "dynamo": 18}
"""Exporter -> opset. The dynamo exporter's own lowest opset is 18 (asked for 17, it converts its
opset-18 graph with onnx's version converter), so it exports what it builds."""


def export(name: str, exporter: str, directory: Path) -> onnx.ModelProto:
    module_type, make_inputs, output_names, dynamic = MODELS[name]
    torch.manual_seed(0)
    module = module_type().eval()
    inputs = make_inputs(np.random.default_rng(0))
    arguments = tuple(torch.from_numpy(array) for array in inputs.values())
    stem = directory / f"{name}_{exporter}"
    path = stem.with_suffix(".onnx")
    # Batch and sequence length dynamic, as models are usually exported for serving.
    axes = {input_name: dynamic for input_name in inputs}
    common = dict(
        input_names=list(inputs),
        output_names=output_names,
        opset_version=EXPORTERS[exporter],
        verbose=False,
    )
    if exporter == "torchscript":
        torch.onnx.export(module, arguments, str(path), dynamo=False, dynamic_axes=axes, **common)
    else:
        torch.onnx.export(
            module,
            arguments,
            str(path),
            dynamo=True,
            dynamic_axes=axes,
            external_data=False,
            **common,
        )
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    outputs = session.run(None, inputs)
    # The export computes what the module does (else the fixture would pin an exporter bug).
    with torch.no_grad():
        expected = module(*arguments)
    for ours, theirs in zip(
        outputs, expected if isinstance(expected, tuple) else (expected,), strict=True
    ):
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-4, atol=1e-5)
    np.savez(f"{stem}.inputs.npz", **inputs)
    np.savez(
        f"{stem}.outputs.npz",
        **dict(zip([o.name for o in session.get_outputs()], outputs, strict=True)),
    )
    return model


def readme(models: dict[str, onnx.ModelProto]) -> str:
    rows = []
    for stem, model in models.items():
        size = len(model.SerializeToString())
        opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
        rows.append(
            f"| `{stem}.onnx` | {len(model.graph.node)} | {opsets} | {size / 1024:.0f} KiB |"
        )
    return "\n".join(
        [
            "# Transformers exported from PyTorch",
            "",
            "Written by `examples/models/transformers.py` (seeded random weights, eval mode) with",
            f"torch {torch.__version__}, onnxscript {onnxscript.__version__}, onnx {onnx.__version__}, "
            f"onnxruntime {onnxruntime.__version__}, Python {platform.python_version()}; regenerate with",
            "",
            "```sh",
            "python3 -m venv /tmp/torchvenv",
            f"/tmp/torchvenv/bin/pip install torch=={torch.__version__.split('+')[0]} onnx onnxruntime onnxscript "
            "numpy",
            "/tmp/torchvenv/bin/python examples/models/transformers.py test/unit/data/torch_export",
            "```",
            "",
            "Per model and exporter: `<stem>.onnx`, `<stem>.inputs.npz` (keyed by input name) and",
            "`<stem>.outputs.npz` (onnxruntime's outputs, graph optimizations off, keyed by output name).",
            "Both exporters declare batch and sequence dynamic (`dynamic_axes`), so the import needs the",
            "input shapes (from the .npz). `test/unit/test_torch_exported.py` imports each one and compares.",
            "",
            "| model | nodes | opsets | size |",
            "|---|---|---|---|",
            *rows,
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="where to write the models and their data")
    args = parser.parse_args()
    args.directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for name in MODELS:
        for exporter in EXPORTERS:
            written[f"{name}_{exporter}"] = export(name, exporter, args.directory)
            print(f"wrote {name}_{exporter}.onnx", file=sys.stderr)
    (args.directory / "README.md").write_text(readme(written))


if __name__ == "__main__":
    main()
