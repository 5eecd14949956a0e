"""Built-in context_files plugins."""
