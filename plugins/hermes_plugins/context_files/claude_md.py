"""Built-in plugin `claude_md` (being written)."""
