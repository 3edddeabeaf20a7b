"""Spark work the console launches: the engine (h6) and its programs."""
