"""Built-in plugin `summarizers` (being written)."""
