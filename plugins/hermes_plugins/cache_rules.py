"""Rules of Anthropic's prompt cache that more than one module follows, and the ``prompt_caching``
keys.

The caching plugin places its breakpoints by them and the cache report simulates them; both
import them from here, so the report (a command the plugin registers) never has to import the
plugin back.
"""

from __future__ import annotations

from typing import Any

import attrs

from hermes_core.plugin import ConfigSection, boolean, field, string

#: A breakpoint finds an earlier cache entry only this many block boundaries back (its own
#: boundary included), so a turn that adds more blocks than that must keep a breakpoint on the
#: previous request's last message (see ``caching.choose_breakpoints``).
LOOKBACK_BLOCKS = 20


@attrs.frozen(kw_only=True)
class PromptCachingSettings:
    cache_ttl: str = field("5m", string(choices=("5m", "1h")))
    prompt_cache_key: bool = field(True, boolean, doc="send a stable OpenAI prompt_cache_key")


#: The ``prompt_caching.*`` keys: the caching plugin's, read by the cache report too.
PROMPT_CACHING = ConfigSection(name="prompt_caching", model=PromptCachingSettings, doc="Provider prompt caching.")


def cache_ttl(asked: str | None, config: Any) -> str:
    """The TTL a request's layout uses: the one asked for (``PayloadContext.cache_ttl``), else
    the configured ``prompt_caching.cache_ttl``."""
    if asked:
        return asked
    return config.section(PROMPT_CACHING).cache_ttl if config is not None else "5m"
