"""``hermes-ctx prompt``: the assembled system prompt (built by the prompt issue's Session)."""
