"""Arithmetic in a request, computed: "What is 17 x 23?" is 391, never the model's guess.

The bundled model answered "17 x 23" with 409. A request that is nothing but a
calculation (a lead such as "what is" or "calculate", an expression in digits, operator
signs and the usual words for them: times, plus, divided by, to the power of, squared,
the square root of, percent of) is read into a Python expression and evaluated on its
syntax tree: numbers, + - * / // % **, unary signs and `sqrt`, nothing else, no names,
no `eval`. Exponents and results are bounded, so "9 ** 9 ** 9" is refused, not computed.

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

LEAD = (
    r"^\s*(?:(?:please|ok|hey|so|quick question)[,:\s]+)*"
    r"(?:(?:can|could|would) you\s+)?(?:please\s+)?"
    r"(?:(?:tell me|do you know)\s+)?"
    r"(?:what(?:'s|\s+is|\s+are|\s+does)|how\s+much\s+(?:is|are|does)|calculate|compute|"
    r"evaluate|work\s+out|figure\s+out|solve|find)?\s*(?:the\s+(?:result|value|answer)\s+of\s+)?"
)
TAIL = r"\s*(?:=\s*\??|equals?\s*\??|make|come\s+to|give)?\s*(?:,?\s*please)?\s*[.!?]*\s*$"
WORDS: tuple[tuple[str, str], ...] = (
    (r"(\d)\s*,\s*(?=\d{3}\b)", r"\1"),  # 1,000 -> 1000
    (r"\bthe\s+square\s+root\s+of\b|\bsquare\s+root\s+of\b|\u221a", " sqrt "),
    (r"\bmultiplied\s+by\b|\btimes\b|\u00d7|(?<=[\d)\s])[x\u2a2f](?=\s*[\d(])", "*"),
    (r"\bdivided\s+by\b|\bover\b|\u00f7", "/"),
    (r"\bplus\b|\badded\s+to\b", "+"),
    (r"\bminus\b|\u2212", "-"),
    (r"\bto\s+the\s+power\s+of\b|\braised\s+to(?:\s+the\s+power\s+of)?\b|\^", "**"),
    (r"\bsquared\b", "**2"),
    (r"\bcubed\b", "**3"),
    (r"\bmod(?:ulo)?\b", "%"),
    (r"(\d(?:\.\d+)?)\s*(?:%|\s+percent)\s+of\b", r"\1/100*"),
)
EXPRESSION = re.compile(r"[\d\s.+\-*/%()]*(?:sqrt[\d\s.+\-*/%()]*)*")
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 1e30
MAX_CHARS = 200
BinaryOp = Callable[[float, float], float]
BINARY: dict[type[ast.operator], BinaryOp] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
SHOWN = {"**": "^", "*": "\u00d7", "/": "\u00f7"}


class NotArithmetic(ValueError):
    """The text is not a calculation this evaluator does (or its numbers are out of bounds)."""


@dataclass(frozen=True)
class Calculation:
    """A request's expression and its value."""

    expression: str
    """The expression as evaluated (Python syntax)."""
    value: float

    def answer(self) -> str:
        """One sentence a person reads: the expression and its value."""
        return f"{shown(self.expression)} = {number_text(self.value)}"


def find_calculation(task: str) -> Calculation | None:
    """The calculation `task` consists of, computed; `None` when it is anything else."""
    text = " ".join(task.split())
    if not text or len(text) > MAX_CHARS:
        return None
    match = re.match(LEAD + r"(?P<body>.+?)" + TAIL, text, re.I)
    if match is None:
        return None
    body = match["body"]
    for pattern, replacement in WORDS:
        body = re.sub(pattern, replacement, body, flags=re.I)
    body = " ".join(body.split())
    if not re.search(r"\d", body) or EXPRESSION.fullmatch(body) is None:
        return None
    body = re.sub(r"sqrt\s*([\d.]+|\([^()]*\))", r"sqrt(\1)", body)
    try:
        tree = ast.parse(body, mode="eval")
        if not _has_operation(tree.body):
            return None
        value = evaluate(tree.body)
    except (SyntaxError, NotArithmetic, ArithmeticError, ValueError):
        return None
    return Calculation(body, value)


def evaluate(node: ast.expr) -> float:
    """The value of an arithmetic syntax tree; anything beyond arithmetic raises.

    Raises:
        NotArithmetic: A name, a call other than `sqrt`, or a number out of bounds.
        ArithmeticError: Division by zero.
    """
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise NotArithmetic(f"not arithmetic: {node.value!r}")
        return _bounded(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left, right = evaluate(node.left), evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > MAX_EXPONENT or abs(left) > 1e6):
            raise NotArithmetic("the power is too large")
        return _bounded(BINARY[type(node.op)](left, right))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "sqrt"
        and len(node.args) == 1
        and not node.keywords
    ):
        return math.sqrt(evaluate(node.args[0]))
    raise NotArithmetic(f"not arithmetic: {type(node).__name__}")


def _has_operation(node: ast.expr) -> bool:
    return isinstance(node, ast.BinOp | ast.Call) or (
        isinstance(node, ast.UnaryOp) and _has_operation(node.operand)
    )


def _bounded(value: float) -> float:
    if isinstance(value, complex) or not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        raise NotArithmetic("the number is out of bounds")
    return value


def number_text(value: float) -> str:
    """`value` as a person writes it: 391, 0.25, 3.1622776602 (ten significant digits)."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.10g}"


def shown(expression: str) -> str:
    """The expression with the signs people write: 17 \u00d7 23, 2^10."""
    spaced = " ".join(re.sub(r"(\*\*|[*/+\-%])", r" \1 ", expression).split())
    spaced = re.sub(r"(^|[(*/+%-]\s)- ", r"\1-", spaced)  # a sign, not a subtraction
    return re.sub(r"\*\*|\*|/", lambda m: SHOWN[m.group(0)], spaced).replace(" ^ ", "^")
