"""axe-core in the page under test: inject the vendored copy, run it, name every violation."""
from pathlib import Path

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
# WCAG 2.0-2.2 A and AA plus axe's best practices (landmarks, one h1, heading order...).
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


def axe_violations(page) -> list[str]:
    """One line per violation (rule, impact, the offending nodes) on the page as it is now.

    The script goes in through Playwright's evaluate, which the page's Content-Security-Policy
    does not govern, so the app's strict policy stays on for the test.
    """
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}})", TAGS)
    return [f"{v['id']} ({v['impact']}): {v['help']} at "
            + "; ".join(" ".join(n["target"]) for n in v["nodes"][:5])
            for v in result["violations"]]


def assert_accessible(page, state: str) -> None:
    violations = axe_violations(page)
    assert not violations, f"{state} ({page.url}): " + "\n".join(violations)
