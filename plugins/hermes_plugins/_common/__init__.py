"""Helpers shared by two or more built-in plugins; not a plugin itself (no hook, no entry point).

Plugin packages never import each other; what two of them need alike lives here instead of in
``hermes_core``, which keeps only the framework and the services it documents for everyone. Not a
public API: third-party plugins should not import it.
"""
