"""Built-in skills plugins."""
