"""No module in campaigns/ (migrations aside) over 600 lines, no function over 60: a module or
a function that grows past them is split by job before it lands."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60
MODULES = sorted(p for p in (ROOT / "campaigns").rglob("*.py") if "migrations" not in p.parts)


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def function_lengths(source: str) -> list[tuple[str, int]]:
    """(name, lines from its first decorator to its last line) of every function and method."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found.append((node.name, node.end_lineno - start + 1))
    return found


def test_the_modules_are_found():
    assert len(MODULES) > 100
    assert ROOT / "campaigns" / "work" / "claim.py" in MODULES


def test_no_module_is_over_600_lines():
    long = [(_name(p), n) for p in MODULES if (n := len(p.read_text().splitlines()))
            > MAX_MODULE_LINES]
    assert not long, long


def test_no_function_is_over_60_lines():
    long = [(_name(p), name, n) for p in MODULES for name, n in function_lengths(p.read_text())
            if n > MAX_FUNCTION_LINES]
    assert not long, long


def test_a_function_is_measured_from_its_decorator_to_its_last_line():
    source = "@decorator\ndef f():\n" + "    x = 1\n" * 60
    assert function_lengths(source) == [("f", 62)]
