"""Built-in plugin `plugin` (being written)."""
