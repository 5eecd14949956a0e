"""Built-in plugin `output_limits` (being written)."""
