"""Build a tiny random-weight Llama model that a real vLLM (CPU build) can serve.

Runs in the vLLM engine venv (ci/engines/build.sh); needs no model hub:
    python tests/tiny_model.py DIR [LAYERS HIDDEN [SHARD [DTYPE]]]     (SHARD or DTYPE "": the default)
    python tests/tiny_model.py --adapter DIR BASE_NAME SEED      (a LoRA adapter of the default model)
By default 2 layers, hidden 128, 2 attention heads of size 64 (vLLM's CPU attention kernels refuse
head size 16), a WordLevel tokenizer of ~500 words; more layers and a wider hidden size make weights of
the size a benchmark asks for (the MLP 4 times as wide, heads of 64), in safetensors shards of at most
SHARD (transformers' max_shard_size, such as 500MB: a hub model's weights come as many shards), stored as
DTYPE (float32 by default; bfloat16 as most hub models' weights are).
"""

from __future__ import annotations

import sys
from pathlib import Path

VOCAB_WORDS = 500
SPECIALS = ["<unk>", "<s>", "</s>", "<pad>"]
NAMED = ["hello", "world", "the", "a", "model", "tiny"]
NUMBERED_WORDS = VOCAB_WORDS - len(SPECIALS) - len(NAMED)
"""The tokenizer's words w0 … w489: a token each, and the rest of its vocabulary."""
CONTEXT_TOKENS = 512
"""The model's positions: the longest request it serves, prompt and output."""


def build(directory: Path, layers: int = 2, hidden: int = 128, shard: str | None = None,
          dtype: str = "float32") -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    words = [f"w{i}" for i in range(NUMBERED_WORDS)] + NAMED
    vocab = {tok: i for i, tok in enumerate(SPECIALS + words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
    )
    fast.save_pretrained(directory)

    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        intermediate_size=2 * hidden if hidden == 128 else 4 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        num_key_value_heads=hidden // 64,
        head_dim=64,
        max_position_embeddings=CONTEXT_TOKENS,
        bos_token_id=vocab["<s>"],
        eos_token_id=vocab["</s>"],
        pad_token_id=vocab["<pad>"],
        tie_word_embeddings=False,
        torch_dtype=dtype,
    )
    torch.manual_seed(0)
    # Made in DTYPE from the start: a model of gigabytes never exists in a wider type.
    torch.set_default_dtype(getattr(torch, dtype))
    model = LlamaForCausalLM(config)
    model.save_pretrained(directory, safe_serialization=True, **({"max_shard_size": shard} if shard else {}))
    return directory


def adapter(directory: Path, base_name: str, seed: int, rank: int = 8) -> Path:
    """A LoRA adapter of the default model (PEFT's files: its config naming BASE_NAME, and its weights on
    the attention's q and v projections), strong enough that its answers differ from the model's."""
    import json

    import torch
    from safetensors.torch import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    hidden, layers = 128, 2
    tensors = {f"base_model.model.model.layers.{layer}.self_attn.{projection}.lora_{half}.weight":
               torch.randn(*shape).contiguous()
               for layer in range(layers) for projection in ("q_proj", "v_proj")
               for half, shape in (("A", (rank, hidden)), ("B", (hidden, rank)))}
    save_file(tensors, directory / "adapter_model.safetensors")
    (directory / "adapter_config.json").write_text(json.dumps({
        "peft_type": "LORA", "base_model_name_or_path": base_name, "r": rank, "lora_alpha": 2 * rank,
        "target_modules": ["q_proj", "v_proj"], "lora_dropout": 0.0, "bias": "none", "task_type": "CAUSAL_LM"}))
    return directory


if __name__ == "__main__":
    if sys.argv[1:2] == ["--adapter"] and len(sys.argv) == 5:
        print(adapter(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
    elif len(sys.argv) in (2, 4, 5, 6):
        directory, *sized = sys.argv[1:]
        layers, hidden = (int(sized[0]), int(sized[1])) if sized else (2, 128)
        shard, dtype = [*sized[2:], "", ""][:2]
        print(build(Path(directory), layers, hidden, shard or None, dtype or "float32"))
    else:
        sys.exit("usage: tiny_model.py DIR [LAYERS HIDDEN [SHARD [DTYPE]]]\n"
                 "       tiny_model.py --adapter DIR BASE_NAME SEED")
