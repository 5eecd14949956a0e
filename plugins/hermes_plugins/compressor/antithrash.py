"""Anti-thrash state (§6.4, §6.5): ineffective compressions, summariser cooldowns, thrash count.

* A compression that saves under 10% is *ineffective*; two in a row block automatic compression
  (reason ``ineffective``) so a conversation that cannot shrink does not compress every turn.
  Unlike the reference, which never recovers, the block lifts once the conversation has grown by
  ``compression.ineffective_recovery_margin`` x threshold since it was set: by then there is new
  material worth compressing.
* A failed summariser starts a cooldown (``cooldown:<seconds>``): timeouts climb a ladder
  60 -> 300 -> 900 s, a summariser that is not registered waits 600 s, anything else 60 s.
* Compressions are stamped with the turn they ran in, so a host can ask how many ran in the
  last N turns and warn on thrash.

Time comes from the caller (``now``), so tests drive it with a fake clock.
"""

from __future__ import annotations

from collections import deque

import attrs

INEFFECTIVE_SAVINGS_PERCENT = 10.0
BLOCK_AFTER_INEFFECTIVE = 2
TIMEOUT_LADDER = (60.0, 300.0, 900.0)
DEFAULT_COOLDOWN = 60.0
PROVIDER_MISSING_COOLDOWN = 600.0


@attrs.define(kw_only=True)
class AntiThrash:
    ineffective_count: int = 0
    #: The token figure when the ineffective block was set; growth beyond it lifts the block.
    block_base_tokens: int | None = None
    cooldown_until: float = 0.0
    timeout_streak: int = 0
    last_failure: str | None = None
    turn: int = 0
    compression_turns: deque[int] = attrs.field(factory=lambda: deque(maxlen=256))
    #: Real prompt tokens before the last compression, awaiting the next real figure.
    pending_verification: int | None = None

    # --- ineffective compressions -------------------------------------------------------

    @property
    def blocked(self) -> bool:
        return self.ineffective_count >= BLOCK_AFTER_INEFFECTIVE

    def record_verdict(self, savings_percent: float, tokens: int | None) -> bool:
        """Count one compression's savings; True when it was ineffective."""
        if savings_percent < INEFFECTIVE_SAVINGS_PERCENT:
            was_blocked = self.blocked
            self.ineffective_count += 1
            if self.blocked and (not was_blocked or self.block_base_tokens is None):
                self.block_base_tokens = tokens
            return True
        self.clear_ineffective()
        return False

    def clear_ineffective(self) -> None:
        self.ineffective_count = 0
        self.block_base_tokens = None

    def lifts_block(self, tokens: int, threshold: int, margin: float) -> bool:
        """Whether the conversation grew enough since the block to try again."""
        if self.block_base_tokens is None:
            # No figure was known when the block was set: the first one seen is the base.
            self.block_base_tokens = tokens
            return False
        return tokens >= self.block_base_tokens + margin * threshold

    # --- summariser cooldowns -----------------------------------------------------------

    def cooldown_remaining(self, now: float) -> float:
        return max(0.0, self.cooldown_until - now)

    def start_cooldown(self, kind: str, now: float, *, provider_missing: bool = False) -> float:
        if provider_missing:
            seconds = PROVIDER_MISSING_COOLDOWN
            self.timeout_streak = 0
        elif kind == "timeout":
            self.timeout_streak += 1
            seconds = TIMEOUT_LADDER[min(self.timeout_streak, len(TIMEOUT_LADDER)) - 1]
        else:
            self.timeout_streak = 0
            seconds = DEFAULT_COOLDOWN
        self.cooldown_until = now + seconds
        return seconds

    def clear_cooldown(self) -> None:
        self.cooldown_until = 0.0
        self.timeout_streak = 0

    # --- thrash window ------------------------------------------------------------------

    def record_compression(self) -> None:
        self.compression_turns.append(self.turn)

    def recent(self, window: int) -> int:
        """Compressions stamped within the last ``window`` turns (the current one included)."""
        oldest = self.turn - max(1, window) + 1
        return sum(1 for stamp in self.compression_turns if stamp >= oldest)

    def reset(self) -> None:
        self.clear_ineffective()
        self.clear_cooldown()
        self.last_failure = None
        self.turn = 0
        self.compression_turns.clear()
        self.pending_verification = None
