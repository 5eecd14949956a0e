"""Built-in plugin `agents_md` (being written)."""
