"""The built-in plugins of hermes-core. Each module is one entry point of `hermes.plugins`."""
