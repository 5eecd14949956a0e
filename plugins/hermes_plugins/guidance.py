"""Built-in plugin `guidance` (being written)."""
