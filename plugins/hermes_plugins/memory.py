"""Built-in plugin `memory` (being written)."""
