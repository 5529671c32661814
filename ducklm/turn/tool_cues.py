"""Tool cues: whether a request shows any sign of needing one of DuckLM's own tools.

On a model that writes JSON directives, a question such as "What is the capital of
France?" costs two calls: the directive (a long prompt: the tools' schema, examples)
that says "answer", then the thinker. Measured on SmolLM2, that made the answer 12x
slower than a prebuilt agent's one call, and the tiny model sometimes picked a tool for
a question that needed none. A request with no cue at all goes straight to the thinker.

The test is conservative on purpose: it looks for anything that could point at the
machine, the workspace or an earlier conversation, and one such sign sends the request
to the model as before. A missed "no tool" costs one model call; a wrong one answers a
request that needed a tool from the model's own knowledge. The signs:

- file names with an extension, paths, quoted text, code and shell syntax;
- words for the workspace's things and for acting on them (file, folder, list, read,
  write, run, search, ...), for the machine (command, git, python, version, ...) and for
  time (today, yesterday, last, ...), which the shell or `search_conversations` answer;
- words for what was said before (said, told, remember, conversation) and the
  possessives that point at the person's own things (my, our);
- words that refer back (it, this, that, here, again, other), since the thing they name may
  need a tool that an earlier turn used;
- a long or multi-line request, which may hide any of the above.

It is only sure for the tools whose cues it knows: with any other tool on offer (an
MCP server's, whose purpose could be anything) it never says "no tool".

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

import re

from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.file_ops import FILE_OP_NAMES

KNOWN_TOOLS = frozenset(
    {"file_read", "file_write", "list_dir", "search_files", "shell_exec", "search_conversations"}
    | CODER_TOOL_NAMES
    | FILE_OP_NAMES
)
"""The tools whose needs the cues below cover."""
MAX_WORDS = 20
"""Longer requests may hide a cue the words below miss; the model decides them."""

# Stems match with the usual English endings (list, lists, listed, listing).
CUE_STEMS = (
    # the workspace's things
    "file filename folder director(?:y|ie) dir workspace project repo repositor(?:y|ie) "
    "codebase path disk document doc readme log line content byte notes? "
    # acting on them
    "list ls read open show display print view create make write save store put append "
    "add delete remove rm rename move copy edit change modify update replace fix run "
    "execute exec launch start stop kill install build compile test deploy commit push pull "
    "clone download upload fetch search find grep look locate count check scan zip unzip "
    "extract clean format lint debug sort backup archive compress restart upgrade rebuild "
    "rerun measure benchmark profile organi[sz]e send merge configure verify validate "
    "collect plot "
    # the machine
    "command shell terminal console bash script program process port server git python pip "
    "npm node docker cpu memory ram system os version environment env variable machine "
    "computer code function class module package library bug error config setting json "
    "yaml csv html url http https www web website internet online email "
    # time, which the shell or a search of earlier conversations answers
    "today tonight clock yesterday tomorrow ago week month last recent earlier previous "
    # what was said before, and the person's own things
    "said told mention discuss talk asked remember recall remind forgot conversation chat "
    "message my mine our ours "
    # references back to something an earlier turn may have used a tool for
    "it its this that these those them here again other another same rest"
)
# Words that take no endings: "times" in "12 times 7" is no clock.
CUE_WORDS = "time date now"
CUE_WORD = re.compile(
    rf"\b(?:(?:{'|'.join(CUE_STEMS.split())})(?:s|es|ed|d|ing)?|{'|'.join(CUE_WORDS.split())})\b",
    re.I,
)
CUE_SIGN = re.compile(
    r"[`/\\~$|<>{}\[\]=_#@]"  # paths, code, shell syntax, markup
    r"|\"|\u201c|\u201d|\u2018|(?<!\w)'|'(?!\w)"  # quoted text (not an apostrophe)
    r"|\b[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}\b",  # a file name with an extension
)


def tool_cue(task: str) -> str | None:
    """The first sign in `task` that it may need a tool (as found), or `None` for none."""
    text = task.strip()
    if "\n" in text:
        return "several lines"
    if len(text.split()) > MAX_WORDS:
        return f"more than {MAX_WORDS} words"
    found = CUE_SIGN.search(text) or CUE_WORD.search(text)
    return found.group(0) if found else None


def needs_no_tool(task: str, tools: frozenset[str]) -> bool:
    """Whether `task` shows no sign of needing any of `tools` (all of them known here)."""
    return tools <= KNOWN_TOOLS and bool(task.strip()) and tool_cue(task) is None
