"""Logging to a file in the data dir, written by a background thread.

People see event messages, never tracebacks; the details go to `<data dir>/ducklm.log`.
A `QueueHandler` keeps the file writes off the event loop.

No log line holds a URL's query values: a client that sends a token or a login code in
the query (`?token=`, `?code=`) would otherwise have it written to the file or the
access log, line by line. `HIDE_QUERIES` rewrites every record that passes it, by the
shape of a URL query and never by a list of parameter names: each value after `?`,
`&` or `;` becomes `[hidden]`, the names stay. It sits on the file's handler (every
logger that propagates) and on uvicorn's loggers (`ducklm/cli/server.py`).
"""

from __future__ import annotations

import logging
import logging.handlers
import queue
import re
from pathlib import Path

from ducklm.config.data_dir import DataDir
from ducklm.stores.private import create_private_file, secure_data_dir

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
HIDDEN = "[hidden]"
# A query: `?` and what follows up to a space, a quote, an angle bracket or a fragment.
QUERY = re.compile(r"\?([^\s\"'<>#]+)")


def hide_query_values(text: str) -> str:
    """`text` with every URL query's values hidden.

    `GET /login?code=abc&x HTTP/1.1` -> `GET /login?code=[hidden]&[hidden] HTTP/1.1`.
    """
    return QUERY.sub(_hide_query, text)


def _hide_query(match: re.Match[str]) -> str:
    parts = re.split(r"([&;])", match.group(1))
    return "?" + "".join(_hide_part(part) for part in parts)


def _hide_part(part: str) -> str:
    if part in ("&", ";", ""):
        return part
    name, equals, _ = part.partition("=")
    return f"{name}={HIDDEN}" if equals else HIDDEN


class QueryValuesHidden(logging.Filter):
    """Rewrites a record's message (and its traceback's text) with query values hidden."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Always keep the record; hide what it would have said."""
        # Each argument first: uvicorn's access formatter reads the args one by one.
        if isinstance(record.args, tuple):
            record.args = tuple(_hide_in(arg) for arg in record.args)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format: the handler reports it, as without us
            return True
        hidden = hide_query_values(message)
        if hidden != message:  # a query the args alone did not hold (a URL object, the format)
            record.msg, record.args = hidden, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text and "?" in record.exc_text:
            record.exc_text = hide_query_values(record.exc_text)
        return True


def _hide_in(arg: object) -> object:
    return hide_query_values(arg) if isinstance(arg, str) and "?" in arg else arg


HIDE_QUERIES = QueryValuesHidden()
"""One instance: adding it twice to a logger or handler is a no-op."""


def start_file_logging(data_dir: Path, level: int = logging.INFO) -> logging.handlers.QueueListener:
    """Send every log record to the log file; stop the returned listener at exit.

    Blocking (opens the file): call before the event loop runs or on a worker thread.
    """
    secure_data_dir(data_dir)
    create_private_file(DataDir(data_dir).log)
    file_handler = logging.handlers.RotatingFileHandler(
        DataDir(data_dir).log, maxBytes=5_000_000, backupCount=3, encoding="utf-8"
    )
    file_handler.setFormatter(logging.Formatter(FORMAT))
    records: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    listener = logging.handlers.QueueListener(records, file_handler, respect_handler_level=True)
    root = logging.getLogger()
    handler = logging.handlers.QueueHandler(records)
    handler.addFilter(HIDE_QUERIES)  # on the handler: it sees every propagated record
    root.handlers = [handler]
    root.setLevel(level)
    # httpx logs every request it sends at INFO: a line per model call and embedding that
    # the run's events already tell, formatted on the event loop while the turn waits.
    # A DEBUG log keeps them.
    quiet = level if level < logging.INFO else max(level, logging.WARNING)
    logging.getLogger("httpx").setLevel(quiet)
    listener.start()
    return listener
