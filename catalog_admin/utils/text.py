"""Short texts for messages, with their secrets redacted."""

from __future__ import annotations

import logging
import re
import traceback

__all__ = ("RedactSecrets", "first_line", "redact")

# A URL's password (``scheme://user:secret@host``) and any credential parameter (``?password=…``, ``&sslpassword=…``,
# ``passwd``, ``pwd``, ``secret``, ``token``, ``api_key``, ``credential(s)``; also the ``key=value`` words of a DSN).
_USERINFO_SECRET = re.compile(r"(?P<keep>[A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s]*:)[^@/?#\s]+(?=@)")
_CREDENTIAL_PARAM = re.compile(
    r"(?P<keep>\b[A-Za-z0-9_.-]*(?:pass|pwd|secret|token|credential|api_?key)[A-Za-z0-9_.-]*=)[^&;\s'\"]+",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """``text`` (a metastore URL, a DSN, an error message or a log line) with every secret it holds as ``***``: the
    password of ``scheme://user:password@`` and the value of every credential parameter (``?password=``, ``pwd=``,
    ``sslpassword=``, ``token=``, …). The one redaction pages, API answers, health checks and logs use."""
    return _CREDENTIAL_PARAM.sub(r"\g<keep>***", _USERINFO_SECRET.sub(r"\g<keep>***", text))


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text (its class name when empty), secrets redacted, for a one-line message."""
    text = str(exc).strip() or type(exc).__name__
    return redact(text.splitlines()[0])


class RedactSecrets(logging.Filter):
    """A logging filter: the record's message and traceback with their secrets redacted (``LOGGING``'s handlers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True
