"""Logging to a file in the data dir, written by a background thread.

People see event messages, never tracebacks; the details go to `<data dir>/ducklm.log`.
A `QueueHandler` keeps the file writes off the event loop.
"""

from __future__ import annotations

import logging
import logging.handlers
import queue
from pathlib import Path

from ducklm.config.data_dir import DataDir
from ducklm.stores.private import create_private_file, secure_data_dir

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


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
    root.handlers = [logging.handlers.QueueHandler(records)]
    root.setLevel(level)
    # httpx logs every request it sends at INFO: a line per model call and embedding that
    # the run's events already tell, formatted on the event loop while the turn waits.
    # A DEBUG log keeps them.
    quiet = level if level < logging.INFO else max(level, logging.WARNING)
    logging.getLogger("httpx").setLevel(quiet)
    listener.start()
    return listener
