"""Deferred tool disclosure: what is deferred, the BM25 search, the listing and the assembly."""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import PluginHost, ToolsContext
from hermes_core.config import Config, load_config
from hermes_core.diagnostics import collecting
from hermes_plugins.tools import bm25
from hermes_plugins.tools.assembly import assemble_tool_defs
from hermes_plugins.tools.catalog import (
    BRIDGE_TOOL_NAMES,
    CORE_TOOLS,
    DEFAULT_DEFER,
    classify,
    default_limit,
    estimate_schema_tokens,
    is_deferrable,
    listing_budget,
    source_label,
)
from hermes_plugins.tools.listing import render_listing, short_desc
from hermes_plugins.tools.settings import TOOLS, ToolSearchSection
from hermes_plugins.tools.state import ToolSearchState

from hypothesis_budget import examples
from tool_catalog import CATALOG, needs_stemmer, tool

#: Queries and the answers a person would expect, best first. The search must give exactly
#: these, and they must equal rank_bm25's (BM25Okapi) order over the same tokens once the
#: admission rules are applied (test below).
EXPECTED = {
    "create issue": ["github_create_issue", "github_list_issues"],
    "pull request": ["github_merge_pull_request", "github_create_pull_request"],
    "refund": ["stripe_refund_payment"],
    "slack message": ["slack_send_message", "slack_add_reaction"],
    "sql database query": ["postgres_run_query"],
    "weather forecast city": ["weather_forecast"],
    "upload file drive": ["gdrive_upload_file"],
    "calendar event attendees": ["calendar_create_event"],
    "invoice customer": ["stripe_create_invoice"],
    "ticket": ["jira_transition_ticket", "jira_create_ticket"],
    "list issues": ["github_list_issues", "github_create_issue"],
    "repository": ["github_search_code", "github_create_issue", "github_list_issues"],
    "emoji reaction": ["slack_add_reaction"],
    "search files": ["gdrive_search_files", "github_search_code", "gdrive_upload_file"],
    "channels": ["slack_list_channels", "slack_send_message", "slack_add_reaction"],
}

DEFAULTS = ToolSearchSection()

def deferred_of(defs: list[dict[str, Any]], settings: ToolSearchSection = DEFAULTS) -> tuple[Any, ...]:
    return classify(defs, settings).deferred


def names(defs: Any) -> list[str]:
    return [d["function"]["name"] for d in defs]


def search(query: str, limit: int = 5, defs: list[dict[str, Any]] = CATALOG) -> list[str]:
    return [h.name for h in bm25.index_for(deferred_of(defs)).search(query, limit)]


def bridge_search_description(result: Any) -> str:
    return next(d for d in result.tool_defs if d["function"]["name"] == "tool_search")["function"]["description"]


# --- config (§16 parse rules: never raise) -------------------------------------------------


def test_search_config_defaults() -> None:
    section = Config().section(TOOLS).search
    assert (section.enabled, section.threshold_pct, section.listing, section.listing_max_tokens) == (
        "auto", 5.0, "auto", 4000,
    )
    assert default_limit(section) == 5 and section.max_search_limit == 25


@pytest.mark.parametrize(
    "raw,expected",
    [(True, "auto"), (None, "auto"), (False, "off"), ("yes", "on"), ("0", "off"), ("auto", "auto")],
)
def test_enabled_is_a_tri_state(raw: Any, expected: str) -> None:
    config = load_config(data={"tools": {"search": {"enabled": raw}}}, env={})
    assert config.section(TOOLS).search.enabled == expected


def test_typos_fall_back_to_defaults_with_a_warning() -> None:
    with collecting() as bucket:
        config = load_config(
            data={"tools": {"search": {"enabled": "maybe", "listing_max_tokens": "lots"}}}, env={}, sections=[TOOLS]
        )
    assert config.section(TOOLS).search.enabled == "auto"
    assert config.section(TOOLS).search.listing_max_tokens == 4000
    assert {w.details["key"] for w in bucket} == {"tools.search.enabled", "tools.search.listing_max_tokens"}


def test_limits_are_clamped_and_the_default_limit_stays_under_the_maximum() -> None:
    section = load_config(
        data={"tools": {"search": {"max_search_limit": 999, "search_default_limit": 999}}}, env={}
    ).section(TOOLS).search
    assert section.max_search_limit == 50
    assert default_limit(section) <= section.max_search_limit
    small = load_config(
        data={"tools": {"search": {"max_search_limit": 3, "search_default_limit": 10}}}, env={}
    ).section(TOOLS).search
    assert default_limit(small) == 3


def test_defer_parse_rules_end_to_end(tmp_path: Any) -> None:
    (tmp_path / "config.yaml").write_text("tools:\n  search:\n    defer: terminal\n")
    with collecting() as bucket:
        config = load_config(home=tmp_path, env={}, sections=[TOOLS])
    assert config.section(TOOLS).search.defer is None  # the curated default
    assert any(
        "tools.search.defer" in w.message and "expected a YAML list" in w.message for w in bucket
    )
    assert load_config(data={"tools": {"search": {"defer": ["terminal"]}}}, env={}).section(TOOLS).search.defer == ("terminal",)
    assert load_config(data={"tools": {"search": {"defer": []}}}, env={}).section(TOOLS).search.defer == ()


# --- what is deferred --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["terminal", "read_file", "write_file", "patch", "search_files", "todo", "memory",
     "browser_navigate", "web_search", "session_search", "clarify", "execute_code",
     "delegate_task", "send_message"],
)
def test_core_tools_are_never_deferred(name: str) -> None:
    assert name in CORE_TOOLS
    assert not is_deferrable(name, source="mcp-anything")


def test_bridge_tools_are_never_deferred_even_when_listed() -> None:
    for name in BRIDGE_TOOL_NAMES:
        assert not is_deferrable(name, defer=frozenset(BRIDGE_TOOL_NAMES))


def test_defer_list_moves_tools_behind_the_bridge() -> None:
    computer = tool("computer_use", "Drive the desktop.")
    assert "computer_use" in DEFAULT_DEFER
    assert names(deferred_of([computer])) == ["computer_use"]
    no_defer = ToolSearchSection(defer=())
    assert deferred_of([computer], no_defer) == ()  # [] = no core tool deferred
    only_terminal = ToolSearchSection(defer=("terminal",))
    assert names(deferred_of(CATALOG[:2], only_terminal)) == ["terminal"]
    as_list = ToolSearchSection(defer=["terminal"])  # type: ignore[arg-type]  # built by hand
    assert names(deferred_of(CATALOG[:2], as_list)) == ["terminal"]


def test_mcp_and_plugin_tools_are_deferred_app_surface_tools_are_not() -> None:
    assert is_deferrable("github_create_issue", source="mcp-github")
    assert is_deferrable("acme_thing", source="plugin-acme")  # a plugin toolset's tool
    assert is_deferrable("mcp__linear__create_issue")  # an MCP name declares its server
    assert not is_deferrable("acme_thing")  # no source: the host's own tool stays visible
    assert is_deferrable("acme_thing", defer=frozenset({"acme_thing"}))  # unless listed in defer
    assert not is_deferrable("project_list", source="project")


def test_malformed_definitions_stay_visible_and_unchanged() -> None:
    odd = [{"type": "function"}, "not a tool", {"function": {"description": "no name"}}]
    split = classify([*odd, CATALOG[2]], DEFAULTS)
    assert list(split.visible) == odd
    assert names(split.deferred) == ["github_create_issue"]


def test_source_labels() -> None:
    assert source_label("mcp-github", "x") == "github"
    assert source_label("", "mcp__linear__create_issue") == "linear"
    assert source_label("plugin-calendar", "x") == "plugin-calendar"
    assert source_label("", "plain") == "other"


def test_token_estimate_is_compact_json_over_four() -> None:
    small = [tool("a_b", "x")]
    text = json.dumps(small[0], separators=(",", ":"))
    assert estimate_schema_tokens(small) == math.ceil(len(text) / 4)
    big = [tool("a_b", "x" * 5000, [f"p{i}" for i in range(50)])]
    assert estimate_schema_tokens(big) > 10 * estimate_schema_tokens(small)
    assert estimate_schema_tokens([]) == 0
    two = small + big
    assert estimate_schema_tokens(two) == math.ceil(
        sum(len(json.dumps(d, separators=(",", ":"))) for d in two) / 4
    )


# --- search ------------------------------------------------------------------------------


@needs_stemmer
@pytest.mark.parametrize("query", sorted(EXPECTED))
def test_search_gives_the_expected_answers(query: str) -> None:
    assert search(query) == EXPECTED[query]


@pytest.mark.parametrize("query", sorted(EXPECTED))
def test_search_agrees_with_rank_bm25(query: str) -> None:
    np = pytest.importorskip("numpy")
    rank_bm25 = pytest.importorskip("rank_bm25")
    deferred = deferred_of(CATALOG)
    keys = [bm25.tool_key(d) for d in deferred]
    corpus = [bm25.tokenize(bm25.search_text(k)) for k in keys]  # type: ignore[arg-type]
    reference = rank_bm25.BM25Okapi(corpus)
    terms = bm25.tokenize(query)
    scores = reference.get_scores(terms)
    order = [i for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
    # rank_bm25 has no admission rule: apply ours (a doc must hold one of the rarest terms).
    index = bm25.index_for(deferred)
    known = [t for t in set(terms) if index.idf(t) and any(t in doc for doc in corpus)]
    top = max(index.idf(t) for t in known)
    rare = {t for t in known if index.idf(t) == top}
    admitted = [keys[i][0] for i in order if rare & set(corpus[i])][:5]  # type: ignore[index]
    ours = search(query)
    assert ours == admitted
    # and what we return is rank_bm25's own top of the list
    assert ours == [keys[i][0] for i in order][: len(ours)]  # type: ignore[index]


def test_bm25_score_follows_the_formula() -> None:
    docs = [tool("alpha_tool", "apple apple banana"), tool("beta_tool", "banana cherry")]
    index = bm25.index_for(docs)
    hit = index.search("apple", 5)[0]
    # doc 0: "alpha tool apple apple banana" (5 tokens), doc 1: "beta tool banana cherri" (4)
    n, df, tf, dl, avgdl = 2, 1, 2, 5, 4.5
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    expected = idf * tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl))
    assert hit.name == "alpha_tool" and hit.score == pytest.approx(expected)


@needs_stemmer
def test_words_are_stemmed() -> None:
    assert bm25.tokenize("Creating Issues, repositories!") == ["creat", "issu", "repositori"]
    assert search("creating issues")[0] == "github_create_issue"


def test_name_is_split_into_words_and_mcp_prefix_dropped() -> None:
    defs = [tool("mcp__linear__createIssue", "Open one."), tool("other_tool", "Nothing here.")]
    key = bm25.tool_key(defs[0])
    assert key is not None
    assert bm25.search_text(key).split()[:3] == ["linear", "create", "Issue"]
    assert search("issue", defs=defs) == ["mcp__linear__createIssue"]
    assert search("mcp", defs=defs) == []


def test_top_level_parameter_names_are_indexed_but_not_schema_bodies() -> None:
    nested = {"type": "object", "properties": {"zebra": {"type": "string", "description": "quokka"}}}
    defs = [tool("thing_one", "Does one thing.", ["giraffe"], source="mcp-x", options=nested),
            tool("thing_two", "Other.", source="mcp-x")]
    assert search("giraffe", defs=defs) == ["thing_one"]
    assert search("options", defs=defs) == ["thing_one"]
    assert search("quokka", defs=defs) == []
    assert search("zebra", defs=defs) == []


def test_source_label_is_searchable() -> None:
    defs = [tool("post_update", "Share news.", source="mcp-mastodon"), tool("other_tool", "x")]
    assert search("mastodon", defs=defs) == ["post_update"]


def test_exact_name_is_always_first() -> None:
    assert search("slack_list_channels")[0] == "slack_list_channels"
    assert search("SLACK_LIST_CHANNELS", limit=1) == ["slack_list_channels"]
    hit = bm25.index_for(deferred_of(CATALOG)).search("weather_forecast", 5)[0]
    assert hit.exact and hit.score > 0


def test_the_rarest_query_term_must_match() -> None:
    # "github" is in 5 tools, "refund" in one: only the refund tool may answer.
    assert search("github refund") == ["stripe_refund_payment"]


def test_four_answerable_terms_need_half_of_them() -> None:
    defs = [
        tool("run_thing", "run"), tool("shell_thing", "shell"), tool("command_thing", "command"),
        tool("execute_thing", "execute"), tool("code_thing", "code"),
        tool("list_issues_tool", "list issues"), tool("send_message_tool", "send message"),
    ]
    defs = [{**d, "source": "mcp-x"} for d in defs]
    assert search("run shell command execute code", defs=defs) == []
    assert search("list issues", defs=defs)[0] == "list_issues_tool"
    assert search("send message", defs=defs)[0] == "send_message_tool"


def test_limit_is_respected() -> None:
    assert len(search("github", limit=1)) == 1
    assert search("github", limit=0) == []


def test_query_without_known_words_finds_nothing() -> None:
    assert search("xylophone") == []
    assert search("") == []


# --- the catalog always reflects the live definitions --------------------------------------


def test_index_reflects_changed_definitions() -> None:
    defs = copy.deepcopy(CATALOG)
    assert search("refund", defs=defs) == ["stripe_refund_payment"]
    assert search("partially", defs=defs) == ["stripe_refund_payment"]
    defs[15]["function"]["description"] = "Give money back to a customer."
    assert search("partially", defs=defs) == []  # the old description is gone
    defs[15]["function"]["name"] = "stripe_give_back"
    assert "stripe_refund_payment" not in search("customer", defs=defs, limit=10)
    assert "stripe_give_back" in search("customer", defs=defs, limit=10)


def test_in_place_edits_of_parameter_names_are_seen() -> None:
    defs = copy.deepcopy(CATALOG)
    assert search("wombat", defs=defs) == []
    defs[19]["function"]["parameters"]["properties"]["wombat"] = {"type": "string"}
    assert search("wombat", defs=defs) == ["weather_forecast"]


def test_removed_tools_disappear_and_new_ones_appear() -> None:
    defs = [d for d in CATALOG if d["function"]["name"] != "weather_forecast"]
    assert search("weather", defs=defs) == []
    defs.append(tool("weather_radar", "Rain radar images for a region.", source="plugin-weather"))
    assert search("weather", defs=defs) == ["weather_radar"]


def test_odd_shapes_are_indexed_too() -> None:
    flat = {"name": "flat_tool", "description": "A flat definition with a unicorn.", "parameters": {},
            "source": "mcp-odd"}
    no_params = {"type": "function", "source": "mcp-odd",
                 "function": {"name": "bare_tool", "description": "unicorn"}}
    listy = {"type": "function", "source": "mcp-odd", "function": {"name": "listy_tool", "description": ["odd"]}}
    defs = [flat, no_params, listy]
    assert sorted(search("unicorn", defs=defs)) == ["bare_tool", "flat_tool"]
    assert search("listy", defs=defs) == ["listy_tool"]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["alpha", "beta", "gamma", "delta"]),
                          st.sampled_from(["red", "green", "blue"]),
                          st.lists(st.sampled_from(["size", "colour", "weight"]), max_size=3, unique=True)),
                min_size=1, max_size=12))
def test_memoised_index_equals_a_fresh_one(spec: list[tuple[str, str, list[str]]]) -> None:
    defs = [tool(f"{a}_{i}", f"A {c} thing.", p, source="mcp-x") for i, (a, c, p) in enumerate(spec)]
    for query in ("alpha red", "blue", "size colour", "gamma_2"):
        cached = bm25.index_for(defs).search(query, 5)
        fresh = bm25.SearchIndex([(object(), bm25.tool_key(d)) for d in defs]).search(query, 5)
        assert cached == fresh
        scores = [h.score for h in cached if not h.exact]
        assert scores == sorted(scores, reverse=True)



# --- a settled catalog: one == against a structural copy -----------------------------------


def _settle(defs: Any, state: ToolSearchState) -> tuple[Any, ...]:
    for _ in range(3):
        print_ = bm25.fingerprint(defs, state)
    assert state.seen[0].copy is not None  # the shortcut is armed
    assert bm25.fingerprint(defs, state) is print_
    return print_


class _Text(str):
    pass


EDITS = {
    "name": lambda d: d["function"].__setitem__("name", "renamed_tool"),
    "description": lambda d: d["function"].__setitem__("description", "Now about wombats."),
    "source": lambda d: d.__setitem__("source", "mcp-zoo"),
    "source removed": lambda d: d.pop("source"),
    "parameter added": lambda d: d["function"]["parameters"]["properties"].__setitem__("wombat", {}),
    "parameter removed": lambda d: d["function"]["parameters"]["properties"].popitem(),
    "properties replaced": lambda d: d["function"]["parameters"].__setitem__("properties", {"zebra": {}}),
    "parameters replaced": lambda d: d["function"].__setitem__("parameters", {"properties": {"yak": {}}}),
    "function replaced": lambda d: d.__setitem__("function", {"name": "other_tool", "description": "x"}),
    "flattened": lambda d: (d.update(d.pop("function"))),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_a_settled_catalog_sees_every_in_place_edit(edit: str) -> None:
    state = ToolSearchState()
    defs = copy.deepcopy(CATALOG)
    deferred = deferred_of(defs)
    before = _settle(deferred, state)
    target = next(d for d in deferred if d["function"]["name"] == "weather_forecast")
    EDITS[edit](target)
    after = bm25.fingerprint(deferred, state)
    assert after != before
    assert after == bm25._read(deferred)
    fresh = bm25.SearchIndex([(object(), bm25.tool_key(d)) for d in deferred])
    for query in ("weather", "wombat", "zebra", "yak", "renamed", "zoo", "other"):
        assert bm25.index_for(deferred, state=state).search(query, 5) == fresh.search(query, 5)


def test_edits_below_properties_do_not_matter_and_keep_the_shortcut() -> None:
    state = ToolSearchState()
    defs = copy.deepcopy(CATALOG)
    deferred = deferred_of(defs)
    before = _settle(deferred, state)
    deferred[0]["function"]["parameters"]["properties"].setdefault("x", {})["description"] = "new"
    deferred[0]["function"]["parameters"]["properties"]["x"]["description"] = "newer"
    assert bm25.fingerprint(deferred, state) is not before  # a property was added: re-read ...
    again = _settle(deferred, state)
    deferred[0]["function"]["parameters"]["properties"]["x"]["description"] = "newest"
    assert bm25.fingerprint(deferred, state) is again  # ... but a schema body is not indexed


def test_a_string_subclass_indexes_like_the_string_it_equals() -> None:
    state = ToolSearchState()
    defs = copy.deepcopy(CATALOG)
    deferred = deferred_of(defs)
    _settle(deferred, state)
    target = next(d for d in deferred if d["function"]["name"] == "weather_forecast")
    target["function"]["name"] = _Text("weather_forecast")
    target["function"]["description"] = _Text(target["function"]["description"])
    assert [h.name for h in bm25.index_for(deferred, state=state).search("weather", 5)] == ["weather_forecast"]


def test_mappings_that_are_not_dicts_are_read_every_time() -> None:
    state = ToolSearchState()
    from types import MappingProxyType

    defs = copy.deepcopy(CATALOG)
    deferred = list(deferred_of(defs))
    inner = dict(deferred[0]["function"])
    deferred[0] = {"type": "function", "function": MappingProxyType(inner)}
    for _ in range(3):
        bm25.fingerprint(deferred, state)
    assert state.seen[0].copy is None  # no faithful copy: no shortcut
    inner["description"] = "Now about wombats."
    assert bm25.fingerprint(deferred, state) == bm25._read(deferred)


_FIELDS = st.sampled_from(["alpha", "beta", "gamma"])
_EDIT = st.one_of(
    st.tuples(st.just("name"), st.integers(0, 5), _FIELDS),
    st.tuples(st.just("description"), st.integers(0, 5), _FIELDS),
    st.tuples(st.just("source"), st.integers(0, 5), _FIELDS),
    st.tuples(st.just("param"), st.integers(0, 5), _FIELDS),
    st.tuples(st.just("drop_param"), st.integers(0, 5), _FIELDS),
    st.tuples(st.just("look"), st.integers(0, 5), _FIELDS),
)



def _indexed(print_: tuple[Any, ...]) -> list[Any]:
    # What the index is built from, per tool. A dict's == ignores key order, so a catalog whose
    # parameters were only reordered is proven unchanged and keeps its fingerprint: BM25 reads
    # the parameter names as a bag of words, so the index (and every search) is the same.
    return [(seg[0], seg[1], seg[2], frozenset(seg[3])) if len(seg) == 4 else seg for seg in bm25._segments(print_)]

@settings(max_examples=examples(80), deadline=None)
@given(st.lists(_EDIT, max_size=25))
def test_the_fingerprint_always_equals_a_fresh_read(edits: list[tuple[str, int, str]]) -> None:
    defs = [tool(f"t{i}", "A thing.", ["size"], source="mcp-x") for i in range(6)]
    state = ToolSearchState()
    for kind, i, value in edits:
        fn = defs[i]["function"]
        props = fn["parameters"]["properties"]
        if kind == "name":
            fn["name"] = f"{value}_{i}"
        elif kind == "description":
            fn["description"] = f"About {value}."
        elif kind == "source":
            defs[i]["source"] = f"mcp-{value}"
        elif kind == "param":
            props[value] = {"type": "string"}
        elif kind == "drop_param":
            props.pop(value, None)
        assert _indexed(bm25.fingerprint(defs, state)) == _indexed(bm25._read(defs))
        assert _indexed(bm25.fingerprint(defs, state)) == _indexed(bm25._read(defs))  # once settled


def test_alternating_catalogs_each_keep_their_shortcut() -> None:
    state = ToolSearchState()
    a = [tool(f"a{i}", "Alpha thing.", ["size"]) for i in range(5)]
    b = [tool(f"b{i}", "Beta thing.", ["size"]) for i in range(5)]
    prints = {}
    for _ in range(3):
        prints["a"], prints["b"] = bm25.fingerprint(a, state), bm25.fingerprint(b, state)
    assert all(e.copy is not None for e in state.seen)
    assert bm25.fingerprint(a, state) is prints["a"] and bm25.fingerprint(b, state) is prints["b"]
    a[2]["function"]["description"] = "Changed."
    assert bm25.fingerprint(a, state) == bm25._read(a) != prints["a"]
    assert bm25.fingerprint(b, state) is prints["b"]

# --- listing -----------------------------------------------------------------------------


def test_short_desc() -> None:
    assert short_desc("Create an issue. Then more text.") == "Create an issue."
    assert short_desc("Use e.g. this one. Second.") == "Use e.g. this one."
    long = "word " * 40
    clipped = short_desc(long)
    assert len(clipped) <= 61 and clipped.endswith("…")
    assert short_desc("") == ""
    assert short_desc("First line\n\nSecond paragraph.") == "First line"


def _entries(defs: list[dict[str, Any]]) -> list[Any]:
    from hermes_plugins.tools.catalog import entry_of

    return [entry_of(d) for d in deferred_of(defs)]


BIG = [
    tool(f"{svc}_{verb}_{noun}", f"{verb.title()} a {noun} in {svc}.", source=f"mcp-{svc}")
    for svc, count in (("alpha", 12), ("beta", 8), ("gamma", 5), ("delta", 1))
    for verb, noun in [(v, n) for v in ("get", "put", "drop", "scan") for n in ("box", "crate", "bin")][:count]
]


def _forms(entries: list[Any]) -> dict[str, list[int]]:
    seen: dict[str, list[int]] = {}
    for budget in range(0, 400, 5):
        text, form = render_listing(entries, budget)
        seen.setdefault(form, []).append(budget)
        if text is not None:
            assert math.ceil(len(text) / 4) <= budget
            assert "tool_describe" in text and "tool_call" in text
    return seen


def test_listing_degrades_full_names_mixed_groups_none() -> None:
    without_delta = [d for d in BIG if d["source"] != "mcp-delta"]
    assert list(_forms(_entries(without_delta))) == ["none", "groups", "mixed", "names", "full"]


def test_a_source_with_one_short_name_is_never_collapsed() -> None:
    seen = _forms(_entries(BIG))
    assert "groups" not in seen and "mixed" in seen
    text, _ = render_listing(_entries(BIG), seen["mixed"][0])
    assert text is not None and "delta: delta_get_box" in text


def test_listing_collapses_the_largest_group_first() -> None:
    entries = _entries(BIG)
    forms = {budget: render_listing(entries, budget) for budget in range(0, 400, 5)}
    mixed = [text for text, form in forms.values() if form == "mixed"]
    assert mixed
    widest = mixed[-1]  # the largest budget that still needed collapsing
    assert widest is not None
    assert "alpha: 12 tools, names not listed (use tool_search)" in widest
    assert "beta: beta_drop_box" in widest


def test_listing_is_byte_stable_whatever_the_input_order() -> None:
    shuffled = list(CATALOG)
    random.Random(7).shuffle(shuffled)
    a = assemble_tool_defs(CATALOG, context_length=None, config=None)
    b = assemble_tool_defs(shuffled, context_length=None, config=None)
    assert bridge_search_description(a) == bridge_search_description(b)


def test_listing_budget() -> None:
    assert listing_budget(DEFAULTS, None) == 4000
    assert listing_budget(DEFAULTS, 0) == 4000
    assert listing_budget(DEFAULTS, 20_000) == 1000  # 5% of the window
    assert listing_budget(ToolSearchSection(listing_max_tokens=60_000), None) == 10_000
    assert listing_budget(ToolSearchSection(threshold_pct=0.0), 1_000_000) == 0


# --- assembly ----------------------------------------------------------------------------


def test_assembly_shows_core_tools_plus_the_bridge() -> None:
    result = assemble_tool_defs(CATALOG, context_length=200_000, config=None)
    assert result.activated
    assert names(result.tool_defs) == ["terminal", "read_file", "tool_search", "tool_describe", "tool_call"]
    assert result.deferred_count == 18
    assert result.deferred_tokens == estimate_schema_tokens(CATALOG[2:])
    assert result.listing_form == "full" and result.tier == 1
    description = bridge_search_description(result)
    assert "18 more tools" in description and "github_create_issue" in description


def test_pure_core_tools_pass_through_unchanged() -> None:
    core = CATALOG[:2]
    result = assemble_tool_defs(core, context_length=None, config=None)
    assert not result.activated
    assert list(result.tool_defs) == core


def test_disabled_search_passes_everything_through_without_bridge() -> None:
    off = ToolSearchSection(enabled="off")
    stale = assemble_tool_defs(CATALOG, context_length=None, config=None).tool_defs
    result = assemble_tool_defs([*CATALOG, *stale[2:]], context_length=None, config=off)
    assert not result.activated and result.deferred_count == 18
    assert names(result.tool_defs) == names(CATALOG)
    huge = [tool(f"t_{i}", "x" * 4000) for i in range(250)]
    assert not assemble_tool_defs(huge, context_length=None, config=off).activated


def test_assembly_is_idempotent() -> None:
    once = assemble_tool_defs(CATALOG, context_length=100_000, config=None)
    twice = assemble_tool_defs(list(once.tool_defs), context_length=100_000, config=None)
    assert list(twice.tool_defs) == list(once.tool_defs)
    # stale bridge definitions next to the live tools are replaced, not duplicated
    again = assemble_tool_defs([*once.tool_defs, *CATALOG[2:]], context_length=100_000, config=None)
    assert list(again.tool_defs) == list(once.tool_defs)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(CATALOG), max_size=10), st.sampled_from([None, 8_000, 1_000_000]))
def test_assembly_is_idempotent_for_any_catalog(defs: list[dict[str, Any]], window: int | None) -> None:
    once = assemble_tool_defs(defs, context_length=window, config=None)
    twice = assemble_tool_defs(list(once.tool_defs), context_length=window, config=None)
    assert list(twice.tool_defs) == list(once.tool_defs)
    assert sum(1 for d in once.tool_defs if d["function"]["name"] in BRIDGE_TOOL_NAMES) in (0, 3)
    seen = set(names(once.tool_defs))
    assert {n for n in names(defs) if n in CORE_TOOLS} <= seen


def test_listing_off_gives_a_bare_bridge() -> None:
    result = assemble_tool_defs(CATALOG, context_length=None, config=ToolSearchSection(listing="off"))
    assert result.activated and result.listing_form == "off"
    description = bridge_search_description(result)
    assert "github" not in description and "slack" not in description


def test_five_hundred_tools_fit_the_listing_budget() -> None:
    defs = [
        tool(f"svc{i % 25}_action_{i}", f"Do action number {i} on service {i % 25}. More words.",
             ["a", "b"], source=f"mcp-svc{i % 25}")
        for i in range(500)
    ]
    result = assemble_tool_defs(defs, context_length=1_000_000, config=None)
    schema = next(d for d in result.tool_defs if d["function"]["name"] == "tool_search")
    assert math.ceil(len(json.dumps(schema, separators=(",", ":"))) / 4) < 4_500
    assert result.listing_form in {"names", "groups", "mixed"}


def test_hook_is_trylast_and_a_third_party_wins(plugin_host: PluginHost, register_plugin: Any) -> None:
    ctx = ToolsContext(context_length=200_000, config=Config())
    assert names(plugin_host.tools_assemble(CATALOG, ctx))[-3:] == ["tool_search", "tool_describe", "tool_call"]

    class Mine:
        from hermes_core import hookimpl

        @hookimpl
        def hermes_tools_assemble(self, tools: Any, ctx: Any) -> Any:
            return list(tools)[:1]

    register_plugin(Mine(), "mine")
    assert names(plugin_host.tools_assemble(CATALOG, ctx)) == ["terminal"]


def test_blocking_the_plugin_sends_every_schema() -> None:
    host = PluginHost.create(only=(), blocked=("tool_search",))
    assert names(host.tools_assemble(CATALOG, ToolsContext())) == names(CATALOG)


def test_a_catalog_that_changes_every_turn_does_not_unsettle_a_stable_one() -> None:
    state = ToolSearchState()
    stable = [tool(f"s{i}", "Stable thing.", ["size"]) for i in range(5)]
    churning = [tool(f"c{i}", "Churning thing.", ["size"]) for i in range(5)]
    print_ = _settle(stable, state)
    for turn in range(10):
        churning[0]["function"]["description"] = f"Revision {turn}."
        bm25.fingerprint(churning, state)
    assert bm25.fingerprint(stable, state) is print_
    assert any(e.print_ is print_ and e.copy is not None for e in state.seen)
    assert len(state.seen) <= bm25._SEEN_MAX


def test_alternating_catalogs_reuse_their_indexes() -> None:
    state = ToolSearchState()
    a = [tool(f"alpha_{i}", "Alpha thing.", ["size"], source="mcp-a") for i in range(5)]
    b = [tool(f"beta_{i}", "Beta thing.", ["size"], source="mcp-b") for i in range(5)]
    first = {"a": bm25.index_for(a, state=state), "b": bm25.index_for(b, state=state)}
    for _ in range(4):
        assert bm25.index_for(a, state=state) is first["a"] and bm25.index_for(b, state=state) is first["b"]
    assert [h.name for h in bm25.index_for(b, state=state).search("beta_3", 1)] == ["beta_3"]


def test_alternating_catalogs_reuse_their_listings_without_hashing_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hermes_core.frozen import freeze_tools

    state = ToolSearchState()
    plain = [tool(f"alpha_{i}", "Alpha thing.", ["size"], source="mcp-a") for i in range(5)]
    frozen = freeze_tools([tool(f"beta_{i}", "Beta thing.", ["size"], source="mcp-b") for i in range(5)])
    first = {}
    for _ in range(3):  # settle both
        first["plain"] = assemble_tool_defs(plain, context_length=None, config=None, state=state)
        first["frozen"] = assemble_tool_defs(frozen, context_length=None, config=None, state=state)

    class Counting(dict):  # type: ignore[type-arg]
        gets = 0

        def get(self, key: Any, default: Any = None) -> Any:
            Counting.gets += 1
            return super().get(key, default)

    state.listing_memo = Counting(state.listing_memo)  # type: ignore[assignment]
    for _ in range(3):
        again = {
            "plain": assemble_tool_defs(plain, context_length=None, config=None, state=state),
            "frozen": assemble_tool_defs(frozen, context_length=None, config=None, state=state),
        }
        assert again == first
    assert Counting.gets == 0  # each catalog's listing was found by identity
    plain[2]["function"]["description"] = "Changed."
    changed = assemble_tool_defs(plain, context_length=None, config=None, state=state)
    assert Counting.gets == 1 and changed.tool_defs != first["plain"].tool_defs


def test_a_catalog_edited_while_it_is_being_copied_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    state = ToolSearchState()
    defs = [tool(f"t{i}", "A thing.", ["size"]) for i in range(4)]
    original = bm25._structural_copy

    def edited_meanwhile(definitions: Any) -> Any:
        definitions[1]["function"]["description"] = "Edited by another thread."
        return original(definitions)

    bm25.fingerprint(defs, state)
    monkeypatch.setattr(bm25, "_structural_copy", edited_meanwhile)
    bm25.fingerprint(defs, state)  # settles: copies (and sees the edit)
    monkeypatch.setattr(bm25, "_structural_copy", original)
    assert bm25.fingerprint(defs, state) == bm25._read(defs)
    assert [h.name for h in bm25.index_for(defs, state=state).search("edited thread", 5)] == ["t1"]


# --- the split of a settled plain catalog --------------------------------------------------


def _fresh_split(defs: Any, settings: ToolSearchSection = DEFAULTS) -> Any:
    from hermes_plugins.tools.catalog import _build, _split, defer_list

    return _build(*_split(list(defs), defer_list(settings)))


def _same_split(got: Any, want: Any) -> bool:
    return all(
        len(a) == len(b) and all(x is y for x, y in zip(a, b))
        for a, b in ((got.visible, want.visible), (got.deferred, want.deferred), (got.bridge, want.bridge))
    ) and got.deferred_names == want.deferred_names


def test_a_settled_plain_catalog_is_split_by_position_from_the_live_definitions() -> None:
    state = ToolSearchState()
    defs = copy.deepcopy(CATALOG)
    splits = [classify(defs, DEFAULTS, state) for _ in range(4)]
    assert splits[2].deferred_print is not None and splits[3].deferred_print is splits[2].deferred_print
    assert splits[3].deferred_print == bm25._read(splits[3].deferred)
    assert _same_split(splits[3], _fresh_split(defs))  # the live objects, not last turn's


@pytest.mark.parametrize(
    ("edit", "name", "now"),
    [
        (lambda d: d["function"].__setitem__("name", "terminal"), "terminal", "visible"),
        (lambda d: d.__setitem__("source", "desktop_ui"), "weather_forecast", "visible"),
        (lambda d: d["function"].__setitem__("name", "tool_search"), "tool_search", "bridge"),
    ],
)
def test_editing_a_settled_catalog_changes_its_split(edit: Any, name: str, now: str) -> None:
    state = ToolSearchState()
    defs = copy.deepcopy(CATALOG)
    for _ in range(3):
        classify(defs, DEFAULTS, state)
    target = next(d for d in defs if d["function"]["name"] == "weather_forecast")
    edit(target)
    split = classify(defs, DEFAULTS, state)
    assert _same_split(split, _fresh_split(defs))
    assert any(d is target for d in getattr(split, now))
    assert name not in split.deferred_names


def test_a_settled_catalog_is_split_again_under_another_defer_list() -> None:
    state = ToolSearchState()
    defs = copy.deepcopy(CATALOG)
    for _ in range(3):
        classify(defs, DEFAULTS, state)
    deferring = ToolSearchSection(defer=("terminal",))
    split = classify(defs, deferring, state)
    assert "terminal" in split.deferred_names
    assert _same_split(split, _fresh_split(defs, deferring))


_SPLIT_EDIT = st.tuples(
    st.sampled_from(["name", "source", "description", "look"]),
    st.integers(0, 5),
    st.sampled_from(["terminal", "mcp_thing", "tool_call", "desktop_ui", "mcp-zoo", ""]),
)


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(_SPLIT_EDIT, max_size=20))
def test_the_split_always_equals_a_fresh_one(edits: list[tuple[str, int, str]]) -> None:
    state = ToolSearchState()
    defs = [tool(f"zoo_{i}", "A zoo thing.", ["size"], source="mcp-zoo") for i in range(3)]
    defs += [tool(name, "Core.", ["x"]) for name in ("terminal", "read_file", "memory")]
    for kind, i, value in edits:
        if kind == "name":
            defs[i]["function"]["name"] = value or f"renamed_{i}"
        elif kind == "source":
            defs[i]["source"] = value
        elif kind == "description":
            defs[i]["function"]["description"] = value
        for _ in range(2):
            split = classify(defs, DEFAULTS, state)
            assert _same_split(split, _fresh_split(defs))
            if split.deferred_print is not None:
                assert split.deferred_print == bm25._read(split.deferred)


def _brute_force(index: bm25.SearchIndex, query: str, limit: int) -> list[tuple[str, float, bool]]:
    """The admission and ranking rules applied to every indexed tool, one by one."""
    counts: dict[str, int] = {}
    for term in bm25.tokenize(query):
        if term in index._postings:
            counts[term] = counts.get(term, 0) + 1
    terms = [(mult, *index._term(term)) for term, mult in counts.items()]
    exact = index._lower.get(query.strip().lower())
    top = max((idf for _, idf, _ in terms), default=None)
    need = math.ceil(len(terms) / 2) if len(terms) >= 4 else 0
    ranked = []
    exact_score = 0.0
    for d in range(len(index)):
        score, hit, rare = 0.0, 0, False
        for mult, idf, weights in terms:
            if d in weights:
                score += mult * weights[d]
                hit += 1
                rare = rare or idf == top
        if d == exact:
            exact_score = score
        elif rare and hit >= need:
            ranked.append((-score, index.names[d]))
    ranked.sort()
    out = [(name, -neg, False) for neg, name in ranked][: limit - (exact is not None)]
    if exact is not None:
        out.insert(0, (index.names[exact], exact_score, True))
    return out[:limit]


_WORD = st.sampled_from(["alpha", "beta", "gamma", "red", "blue", "size", "the", "of"])


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(st.tuples(st.lists(_WORD, min_size=1, max_size=6), st.lists(_WORD, max_size=3)),
             min_size=1, max_size=25),
    st.lists(_WORD, min_size=1, max_size=6),
    st.integers(1, 8),
    st.booleans(),
)
def test_search_equals_the_rules_applied_tool_by_tool(
    spec: list[tuple[list[str], list[str]]], words: list[str], limit: int, by_name: bool
) -> None:
    defs = [tool(f"t{i}_{desc[0]}", " ".join(desc), params, source="mcp-x")
            for i, (desc, params) in enumerate(spec)]
    index = bm25.SearchIndex([(object(), bm25.tool_key(d)) for d in defs])
    query = f"T0_{spec[0][0][0]}" if by_name else " ".join(words)
    got = [(h.name, h.score, h.exact) for h in index.search(query, limit)]
    assert got == _brute_force(index, query, limit)
