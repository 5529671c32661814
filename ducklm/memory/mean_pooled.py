"""A sentence-transformers folder of the plain shape, loaded with torch and tokenizers only.

Most sentence models (all-MiniLM-L6-v2, the one DuckLM ships, among them) are three
modules: a BERT, mean pooling and, often, normalising. Loading them through
sentence-transformers (or transformers' own `AutoModel` and `AutoTokenizer`) imports
thousands of modules that stay in memory for nothing: about 260 MiB of a resting
`ducklm serve` beyond torch (`scripts/bench/serve_rss.py --breakdown`). BERT's forward
pass is short, so it is written here over the safetensors weights, with the model's own
`tokenizer.json`; it gives sentence-transformers' vectors (`tests/unit/test_local_encoder.py`
compares them). A folder of any other shape is left to sentence-transformers
(`load_plain` answers None).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

TRANSFORMER = "sentence_transformers.models.Transformer"
POOLING = "sentence_transformers.models.Pooling"
NORMALIZE = "sentence_transformers.models.Normalize"
MEAN_ONLY = {
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}

Tokenize = Callable[[list[str]], Any]


def load_plain(folder: Path) -> tuple[Tokenize, Any] | None:
    """The tokenizer and a module (`features -> {"sentence_embedding"}`), or None.

    None when the folder is not a BERT with mean pooling (and normalising or not):
    sentence-transformers loads every other shape.
    """
    shape = _plain_shape(folder)
    if shape is None:
        return None
    max_length, normalize, config = shape
    import torch  # noqa: PLC0415  loaded with the model
    from safetensors.torch import load_file  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    # As sentence-transformers asks transformers for: the longest text's length, cut at
    # the model's `max_seq_length` (tokenizer.json's own settings say otherwise).
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.enable_padding(pad_id=int(config.get("pad_token_id") or 0))
    weights = load_file(str(folder / "model.safetensors"))

    def tokenize(texts: list[str]) -> dict[str, Any]:
        found = tokenizer.encode_batch([text.strip() for text in texts])
        return {
            "input_ids": torch.tensor([e.ids for e in found]),
            "token_type_ids": torch.tensor([e.type_ids for e in found]),
            "attention_mask": torch.tensor([e.attention_mask for e in found]),
        }

    return tokenize, _bert(weights, config, normalize)


def _bert(weights: dict[str, Any], config: dict[str, Any], normalize: bool) -> Any:
    """BERT's encoder and mean pooling over `weights`, as a module of features."""
    import torch  # noqa: PLC0415  loaded with the model

    functional = torch.nn.functional
    heads = int(config["num_attention_heads"])
    eps = float(config.get("layer_norm_eps", 1e-12))

    def w(name: str) -> Any:
        return weights[name.removeprefix("bert.")]

    def norm(prefix: str, x: Any) -> Any:
        return functional.layer_norm(
            x, x.shape[-1:], w(f"{prefix}.weight"), w(f"{prefix}.bias"), eps
        )

    def linear(prefix: str, x: Any) -> Any:
        return functional.linear(x, w(f"{prefix}.weight"), w(f"{prefix}.bias"))

    class MeanPooledBert(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # Registered, so `.to(dtype)` and TorchScript see them as the module's own.
            self.weights = torch.nn.ParameterDict(
                {
                    k.replace(".", "__"): torch.nn.Parameter(v, requires_grad=False)
                    for k, v in weights.items()
                }
            )
            for key in list(weights):
                weights[key] = self.weights[key.replace(".", "__")]

        def forward(self, features: dict[str, Any]) -> dict[str, Any]:
            ids, mask = features["input_ids"], features["attention_mask"]
            positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
            x = (
                functional.embedding(ids, w("embeddings.word_embeddings.weight"))
                + functional.embedding(positions, w("embeddings.position_embeddings.weight"))
                + functional.embedding(
                    features["token_type_ids"], w("embeddings.token_type_embeddings.weight")
                )
            )
            x = norm("embeddings.LayerNorm", x)
            dtype = x.dtype
            bias = (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
            for i in range(int(config["num_hidden_layers"])):
                x = self._layer(f"encoder.layer.{i}", x, bias, dtype)
            pooled_mask = mask.unsqueeze(-1).to(dtype)
            pooled = (x * pooled_mask).sum(1) / torch.clamp(pooled_mask.sum(1), min=1e-9)
            if normalize:
                pooled = functional.normalize(pooled, p=2, dim=1)
            return {"sentence_embedding": pooled}

        def _layer(self, prefix: str, x: Any, bias: Any, dtype: Any) -> Any:
            batch, length, width = x.shape

            def split(y: Any) -> Any:
                return y.view(batch, length, heads, width // heads).transpose(1, 2)

            q = split(linear(f"{prefix}.attention.self.query", x))
            k = split(linear(f"{prefix}.attention.self.key", x))
            v = split(linear(f"{prefix}.attention.self.value", x))
            scores = q @ k.transpose(-1, -2) / float(width // heads) ** 0.5 + bias
            context = (functional.softmax(scores, dim=-1).to(dtype) @ v).transpose(1, 2)
            attended = linear(f"{prefix}.attention.output.dense", context.reshape(x.shape))
            x = norm(f"{prefix}.attention.output.LayerNorm", attended + x)
            inner = functional.gelu(linear(f"{prefix}.intermediate.dense", x))
            return norm(f"{prefix}.output.LayerNorm", linear(f"{prefix}.output.dense", inner) + x)

    return MeanPooledBert()


def _plain_shape(folder: Path) -> tuple[int, bool, dict[str, Any]] | None:
    """(max tokens, normalised, the BERT's config) of a plain folder, else None."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        bert = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        types = [m["type"] for m in modules]
        paths = [m.get("path", "") for m in modules]
        if types[:2] != [TRANSFORMER, POOLING] or types[2:] not in ([], [NORMALIZE]):
            return None
        pooling = json.loads((folder / paths[1] / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    plain_bert = (
        bert.get("model_type") == "bert"
        and bert.get("hidden_act") == "gelu"
        and bert.get("position_embedding_type", "absolute") == "absolute"
        and (folder / "model.safetensors").is_file()
        and (folder / "tokenizer.json").is_file()
    )
    if not plain_bert or paths[0] or config.get("do_lower_case"):
        return None
    if any(pooling.get(k, False) != v for k, v in MEAN_ONLY.items()):
        return None
    return int(config.get("max_seq_length") or 512), len(types) == 3, bert
