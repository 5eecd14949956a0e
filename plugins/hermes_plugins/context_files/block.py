"""Built-in plugin `block` (being written)."""
