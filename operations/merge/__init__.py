"""Merging one metastore into another (issue 11). This slice: the pure-read preview (``preview.merge_preview``)."""
