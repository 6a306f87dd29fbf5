"""Build a tiny random-weight Llama model that a real vLLM (CPU build) can serve.

Runs in the vLLM engine venv (ci/engines/build.sh); needs no model hub:
    python tests/tiny_model.py DIR
2 layers, hidden 128, 2 attention heads of size 64 (vLLM's CPU attention kernels refuse
head size 16), a WordLevel tokenizer of ~500 words.
"""

from __future__ import annotations

import sys
from pathlib import Path

VOCAB_WORDS = 500


def build(directory: Path) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    specials = ["<unk>", "<s>", "</s>", "<pad>"]
    words = [f"w{i}" for i in range(VOCAB_WORDS - len(specials) - 6)]
    words += ["hello", "world", "the", "a", "model", "tiny"]
    vocab = {tok: i for i, tok in enumerate(specials + words)}
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
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=512,
        bos_token_id=vocab["<s>"],
        eos_token_id=vocab["</s>"],
        pad_token_id=vocab["<pad>"],
        tie_word_embeddings=False,
        torch_dtype="float32",
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(torch.float32)
    model.save_pretrained(directory, safe_serialization=True)
    return directory


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tiny_model.py DIR")
    print(build(Path(sys.argv[1])))
