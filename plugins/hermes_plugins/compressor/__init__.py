"""Built-in compressor plugins."""
