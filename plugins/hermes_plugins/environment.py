"""Built-in plugin `environment` (being written)."""
