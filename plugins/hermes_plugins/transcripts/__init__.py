"""Built-in transcript formats: one module per format, declared together by ``plugin``."""
