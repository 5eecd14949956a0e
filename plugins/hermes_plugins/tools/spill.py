"""Built-in plugin `spill` (being written)."""
