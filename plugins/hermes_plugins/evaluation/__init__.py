"""The built-in ``eval`` plugin: ``hermes-ctx eval``, probe-based compaction quality."""
