"""``hermes-ctx compress``: run the selected engine over a transcript (compressor issue)."""
