"""``hermes_core.messages.content_text``: the one rule for the text of a message content."""

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.messages import content_text

from hypothesis_budget import examples


def test_the_rules() -> None:
    assert content_text(None) == ""
    assert content_text("plain") == "plain"
    assert content_text([]) == ""
    # text parts of every API, and bare strings, joined by newlines
    assert content_text([{"type": "text", "text": "a"}, {"type": "input_text", "text": "b"},
                         {"type": "output_text", "text": "c"}, "d", {"text": "e"}]) == "a\nb\nc\nd\ne"
    # images (each API's shape), audio, reasoning and tool calls hold no text and add no line
    assert content_text([
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
        {"type": "input_image", "image_url": "https://x/y.png"},
        {"type": "thinking", "thinking": "hmm", "signature": "s"},
        {"type": "reasoning", "text": "private"},
        {"type": "tool_use", "id": "t", "name": "run", "input": {"text": "arg"}},
        {"type": "text", "text": "here"},
    ]) == "look\nhere"
    # an Anthropic tool_result reads as its nested content, string or blocks
    assert content_text([
        {"type": "tool_result", "tool_use_id": "t1", "content": "out"},
        {"type": "tool_result", "tool_use_id": "t2",
         "content": [{"type": "text", "text": "x"}, {"type": "image", "source": {}}, {"type": "text", "text": "y"}]},
        {"type": "tool_result", "tool_use_id": "t3"},
    ]) == "out\nx\ny\n"
    # a content that is one part; the compressor's placeholder for a dropped image
    assert content_text({"type": "text", "text": "one"}) == "one"
    assert content_text({"_multimodal": True, "text_summary": "a login form"}) == "a login form"
    assert content_text({"type": "image_url", "image_url": {"url": "u"}}) == ""
    # SDK content blocks are objects, read through their attributes
    blocks = [SimpleNamespace(type="thinking", thinking="no"), SimpleNamespace(type="text", text="yes")]
    assert content_text(blocks) == "yes"
    # a caller may join differently (a model's reply split into blocks is one text)
    assert content_text([{"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}], sep="") == "abcd"
    assert content_text(12) == "12"


texts = st.text(max_size=20)
parts = st.one_of(
    texts.map(lambda t: {"type": "text", "text": t}),
    texts,
    st.just({"type": "image_url", "image_url": {"url": "u"}}),
    texts.map(lambda t: {"type": "tool_result", "tool_use_id": "t", "content": t}),
)


@settings(max_examples=examples(100))
@given(st.lists(parts, max_size=6))
def test_every_text_kept_in_order_and_nothing_else(content: list) -> None:
    expected = [p if isinstance(p, str) else p.get("text", p.get("content")) for p in content
                if isinstance(p, str) or p["type"] != "image_url"]
    assert content_text(content) == "\n".join(expected)
    assert content_text(content, sep="") == "".join(expected)
