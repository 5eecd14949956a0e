"""Built-in plugin `hermes_md` (being written)."""
