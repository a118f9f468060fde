"""The data some tests read from the `shared` folder next to the checkout (seed texts, ratings)."""
import os
from pathlib import Path

import pytest
from django.conf import settings

# SHARED_DATA_DIR points elsewhere when the checkout is not next to the folder (a worktree).
SHARED = Path(os.environ.get("SHARED_DATA_DIR") or Path(settings.BASE_DIR).parent / "shared")


def require(path: Path) -> None:
    """Skip when `path` is missing on a laptop; fail in CI (CI set), where the data must be."""
    if path.is_dir():
        return
    message = f"{path} not found: this test reads the shared data folder next to the checkout"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI is set, so a missing folder is a failure, not a skip")
    pytest.skip(message)
