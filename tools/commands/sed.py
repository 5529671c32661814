"""Whether a sed script can write files or run commands, by scanning its commands."""

from __future__ import annotations

from ducklm.tools.commands.quotes import skip_delimited

_SED_SKIP = " \t\n;{}!0123456789$,~+"
_SED_TO_EOL = "aicrR#"  # text, file names and comments run to the end of the line
_SED_LABEL = "btT:"  # labels end at ";" or a newline
_SED_PLAIN = "dDgGhHlLnNpPqQxz=Fv"


def sed_script_is_risky(script: str) -> bool:
    """Whether a sed script can write files or run commands (`w`, `W`, `e`, `s///w`).

    Anything this small scanner cannot follow counts as risky.
    """
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in _SED_SKIP:
            i += 1
        elif c in "/\\":  # a regex address: /re/ or \%re%
            i = skip_delimited(script, i + 1, "/") if c == "/" else _sed_custom(script, i)
        elif c in "sy":
            end = skip_delimited(
                script, skip_delimited(script, i + 2, script[i + 1 : i + 2]), script[i + 1 : i + 2]
            )
            if end < 0:
                return True
            i = _until(script, end, ";\n}")
            if c == "s" and any(flag in script[end:i] for flag in "we"):
                return True
        elif c in _SED_TO_EOL or c in _SED_LABEL:
            i = _until(script, i + 1, "\n" if c in _SED_TO_EOL else ";\n")
        elif c in _SED_PLAIN:
            i += 1
        else:
            return True  # w, W, e, or something not understood
        if i < 0:
            return True
    return False


def _sed_custom(script: str, i: int) -> int:
    return skip_delimited(script, i + 2, script[i + 1 : i + 2])


def _until(text: str, i: int, stops: str) -> int:
    while i < len(text) and text[i] not in stops:
        i += 1
    return i
