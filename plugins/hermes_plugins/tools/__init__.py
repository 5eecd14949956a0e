"""Built-in tools plugins."""
