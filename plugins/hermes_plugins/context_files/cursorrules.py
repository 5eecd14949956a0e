"""Built-in plugin `cursorrules` (being written)."""
