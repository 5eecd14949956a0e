"""The archive and recall: what compactions took out of the context, kept by reference.

``plugin`` (entry ``archive``) records each compaction through ``hermes_session_compacted``;
``recall`` (entry ``recall``) offers ``context_search`` / ``context_expand`` over it; hosts read
originals with ``plugin.archive_of(session)``. See docs/recall.md.
"""
