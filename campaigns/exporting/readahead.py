"""Read-ahead: the next chunk is fetched in a thread while the current one is written.

Fetching (PostgreSQL's work) and formatting (Python's) then overlap instead of taking turns.
The thread has its own database connection, so it is used only outside a transaction (a
transaction's uncommitted rows are invisible to another connection).
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connection, connections

_END = object()


def read_ahead_possible() -> bool:
    return not connection.in_atomic_block


def read_ahead(make_chunks: Callable[[], Iterator[list]]) -> Iterator[list]:
    """Yield what make_chunks() yields, fetched one chunk ahead; at most two wait in memory."""
    ahead: queue.Queue[Any] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def offer(item: Any) -> bool:
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for chunk in make_chunks():
                if not offer(chunk):
                    return
            offer(_END)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            offer(exc)
        finally:
            connections.close_all()  # this thread's connections only

    thread = threading.Thread(target=produce, name="export-read-ahead", daemon=True)
    thread.start()
    try:
        while (item := ahead.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()
