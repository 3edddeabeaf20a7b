"""
What the console knows about Apache Hive, free of Django models: schema versions and their capabilities, names,
partition names, statistics flags and locations. Everything here is pure Python and cites the Hive source it follows.
"""
