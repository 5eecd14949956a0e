"""Built-in plugin `caching` (being written)."""
