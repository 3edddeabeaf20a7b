"""A per-installation secret key kept under ``var/`` when none is given in the environment."""

import secrets
from pathlib import Path

__all__ = ("local_secret_key",)


def local_secret_key(path: Path) -> str:
    """Read the key at ``path``, creating it (mode 0600) on first use."""
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    path.write_text(key)
    path.chmod(0o600)
    return key
