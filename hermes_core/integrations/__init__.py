"""Integrations with agent frameworks; each imports its framework and needs its extra."""
