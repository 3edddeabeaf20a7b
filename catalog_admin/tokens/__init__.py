"""API tokens of the console's users (the ``api_tokens`` app): hashed, named, expiring, revocable."""
