"""Built-in plugin `session_line` (being written)."""
