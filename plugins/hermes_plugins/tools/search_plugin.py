"""Built-in plugin `search_plugin` (being written)."""
