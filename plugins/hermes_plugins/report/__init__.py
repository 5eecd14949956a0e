"""One offline HTML report of a session: ``hermes-ctx report`` and ``--html`` of eval, cache-report, compress."""
