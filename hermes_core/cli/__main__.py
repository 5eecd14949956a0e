"""``python -m hermes_core.cli`` runs ``hermes-ctx``."""

from hermes_core.cli import main

main()
