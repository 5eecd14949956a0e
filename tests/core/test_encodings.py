"""The shipped o200k_base encoding (gpt-4o, gpt-4.1, gpt-5, o-series), offline."""

from __future__ import annotations

import gzip
from importlib import resources

import pytest

from hermes_core import encodings


def test_o200k_base_encodes_as_openai_publishes_it() -> None:
    enc = encodings.o200k_base()
    assert enc.name == "o200k_base" and enc.n_vocab == 200_019
    # Token ids of the real o200k_base (cl100k_base gives [15339, 1917] for the first).
    assert enc.encode("hello world") == [24912, 2375]
    text = "def parse(path: str) -> dict:\n    return json.loads(Path(path).read_text())  # 日本語 🎉"
    assert enc.decode(enc.encode(text)) == text
    assert enc.encode("<|endoftext|>", allowed_special="all") == [199_999]


def test_a_rank_file_that_is_not_openais_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    real = resources.files("hermes_core").joinpath("data/o200k_base.tiktoken.gz").read_bytes()
    tampered = gzip.compress(gzip.decompress(real).replace(b" 0\n", b" 1\n", 1))

    class Files:
        def joinpath(self, _name: str) -> Files:
            return self

        def read_bytes(self) -> bytes:
            return tampered

    monkeypatch.setattr(encodings.resources, "files", lambda _pkg: Files())
    with pytest.raises(ValueError, match="not OpenAI's o200k_base"):
        encodings._ranks()
