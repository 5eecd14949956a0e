"""The independent corpus, planted in every context of one history, reaches none of the sinks of
issue 31 through the public entry points: the SQLite archive and everything else under the home,
the spill folder, what the LLM summariser is sent (a local fake OpenAI server), the log events,
the Redis store, and every CLI output (history list/search/show, cache-report table/--json/--html,
eval table/--json, report --json/--html, compress --json/--html). A property test draws fresh
values and a handful of families per example and checks the same sinks."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hypothesis_budget import examples
from redis_support import redis_server
from secret_corpus import CORPUS, Sample, corpus, leaked
from secret_sinks import planted_history, redis_dump, sink_outputs

SINKS = {"summariser_input", "spill_folder", "store_and_home", "logs", "history search --json", "cache-report",
         "cache-report --json_page", "eval", "eval --json", "report --json", "report --json_page", "compress --json",
         "compress --json_page"}


def _leaks(samples, outputs) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for sink, blob in outputs.items():
        names = [f"{s.family}/{s.layout}" for s in samples if leaked(s.secrets, blob)]
        if names:
            found[sink] = names
    return found


def test_no_sample_of_the_corpus_reaches_any_sink(tmp_path: Path) -> None:
    outputs = sink_outputs(tmp_path, planted_history(CORPUS))
    assert SINKS <= set(outputs)
    assert len(outputs["store_and_home"]) > 100_000 and len(outputs["spill_folder"]) > 100_000
    assert len(outputs["summariser_input"]) > 10_000 and len(outputs["report --json"]) > 10_000
    assert _leaks(CORPUS, outputs) == {}


def test_the_redis_store_holds_no_sample_of_the_corpus(tmp_path: Path) -> None:
    with redis_server(tmp_path) as url:
        dump = redis_dump(url, planted_history(CORPUS))
    assert len(dump) > 100_000
    assert _leaks(CORPUS, {"redis": dump}) == {}


def test_eval_quotes_a_source_message_redacted_line_by_line(tmp_path: Path) -> None:
    # eval --json quotes the message a probe came from on one line: redacting after the lines
    # were joined left "password: <words>" in the middle of a line, where it is not a pair.
    yaml = Sample("keyword", "yaml_words", "db:\n  user: app\n  password: correcthorsebattery\n  port: 5432",
                  ("correcthorsebattery",))
    outputs = sink_outputs(tmp_path, planted_history([yaml, *CORPUS[:24]]))
    assert "source" in str(outputs["eval --json"])
    assert _leaks([yaml], {k: outputs[k] for k in ("eval --json", "report --json")}) == {}


@settings(max_examples=examples(2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(salt=st.text(min_size=1, max_size=6), picks=st.lists(st.integers(0, len(CORPUS) - 1), min_size=3, max_size=6,
                                                            unique=True))
def test_fresh_secrets_of_any_family_never_reach_a_sink(salt: str, picks: list[int]) -> None:
    samples = [corpus(salt)[i] for i in picks]
    with tempfile.TemporaryDirectory() as tmp:
        outputs = sink_outputs(Path(tmp), planted_history(samples))
    assert _leaks(samples, outputs) == {}
