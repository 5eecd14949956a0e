"""Rules of Anthropic's prompt cache that more than one module follows.

The caching plugin places its breakpoints by them and the cache report simulates them; both
import them from here, so the report (a command the plugin registers) never has to import the
plugin back.
"""

from __future__ import annotations

#: A breakpoint finds an earlier cache entry only this many block boundaries back (its own
#: boundary included), so a turn that adds more blocks than that must keep a breakpoint on the
#: previous request's last message (see ``caching.choose_breakpoints``).
LOOKBACK_BLOCKS = 20
