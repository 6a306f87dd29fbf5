"""A byte-level tokenizer (one token per byte, no merges), which decodes any text back and needs no model
hub: what `make bench-serving`'s load generator counts prompts with. Runs in the guidellm virtualenv
(ci/engines/build.sh guidellm):
    python tests/byte_tokenizer.py DIR
"""

from __future__ import annotations

import sys
from pathlib import Path


def build(directory: Path) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import PreTrainedTokenizerFast

    vocab = {symbol: index for index, symbol in enumerate(sorted(ByteLevel.alphabet()))}
    vocab["<|endoftext|>"] = len(vocab)
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>").save_pretrained(directory)
    return directory


if __name__ == "__main__":
    build(Path(sys.argv[1]))
