"""Built-in plugin `platform_hints` (being written)."""
