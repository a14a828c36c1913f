"""What the area modules of known_differences share: the Difference record, and the contrib spec's float64
form of a com.microsoft op as a Difference's expected."""

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Difference:
    op: str
    reason: str
    applies: Callable  # (opset, inputs, attrs) -> bool
    expected: Callable  # (op, opset, inputs, attrs) -> list of arrays


def _contrib_spec(function_name):
    """The contrib spec's float64 form of a com.microsoft op (contrib_spec.py), as a Difference's expected."""
    def expected(op, opset, inputs, attrs):
        import contrib_spec

        return getattr(contrib_spec, function_name)(op.rsplit(".", 1)[-1], inputs, attrs)
    return expected
