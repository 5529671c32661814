"""A conversation to a file and back: Markdown and JSONL out, JSONL in as a new conversation.

Both exports are made from the reopened conversation (`ducklm.runtime.transcript`): the
messages plus what only the audit log holds (how each tool call was decided, the
questions asked, each task's events and outcome). `lines` is the JSONL format, `jsonl`
and `markdown` write it, `reading` checks a file line by line, `importing` writes what it
read into a new thread: the messages only, as history (a tool call is shown, never run).
"""

from ducklm.runtime.exports.importing import import_conversation
from ducklm.runtime.exports.jsonl import jsonl_export
from ducklm.runtime.exports.markdown import markdown_export
from ducklm.runtime.exports.reading import BadImport, read_jsonl

__all__ = ["BadImport", "import_conversation", "jsonl_export", "markdown_export", "read_jsonl"]
