"""Built-in plugin `session_store` (being written)."""
