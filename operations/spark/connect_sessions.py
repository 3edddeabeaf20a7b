"""
A job's Spark Connect session, named so that it can be stopped from outside its client.

A Spark Connect server keeps running what a client asked for after the client is gone: a killed client's operations
stay attached to its session until the server gives up on them, so a cancelled job's tasks could go on writing into a
staging directory the console has already removed. Each driver therefore connects with a session id of its own
(``;session_id=<uuid>`` in its ``sc://`` URL, written to its ``job.json``), and whoever stops it — the worker on a
cancel, the driver's watchdog when its worker is gone or a stop is requested — first interrupts every operation of
that session (``SparkConnectClient.interrupt_all``, the call behind ``SparkSession.interruptAll``) from a client of
its own, then ends the client's process.

Django-free: the driver's entry point imports it.
"""

from __future__ import annotations

import threading
import uuid

__all__ = ("interrupt_session", "new_session_id", "session_of", "with_session")

SESSION_PARAMETER = "session_id"


def new_session_id() -> str:
    """A session id as Spark Connect takes it (a version 4 UUID)."""
    return str(uuid.uuid4())


def with_session(master: str, session_id: str) -> str:
    """``master`` (``sc://host:port[/;name=value…]``) naming the client session ``session_id`` (replacing one it
    names already)."""
    base, _, given = master.partition("/;")
    kept = [p for p in given.split(";") if p and p.split("=", 1)[0] != SESSION_PARAMETER]
    return f"{base.rstrip('/')}/;" + ";".join([*kept, f"{SESSION_PARAMETER}={session_id}"])


def session_of(master: str) -> str | None:
    """The session id ``master`` names, if it is a Spark Connect URL naming one."""
    if not master.startswith("sc://"):
        return None
    _, _, given = master.partition("/;")
    found = [p.split("=", 1)[1] for p in given.split(";") if p.startswith(f"{SESSION_PARAMETER}=")]
    return found[-1] if found else None


def interrupt_session(master: str, *, timeout: float = 10.0) -> bool:
    """Interrupt every operation of the session ``master`` names, from a client of our own (the session's client may
    be hung or gone); whether the server confirmed it within ``timeout`` seconds. A URL naming no session: False."""
    if session_of(master) is None:
        return False
    done = threading.Event()

    def interrupt() -> None:
        from pyspark.sql.connect.client import SparkConnectClient

        client = SparkConnectClient(master)
        try:
            client.interrupt_all()
            done.set()
        except Exception:  # noqa: BLE001, S110 - an unreachable server: the caller ends the client anyway
            pass
        finally:
            client.close()

    thread = threading.Thread(target=interrupt, name="connect-interrupt", daemon=True)
    thread.start()
    thread.join(timeout)
    return done.is_set()
