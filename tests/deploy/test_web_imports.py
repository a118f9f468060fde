"""A web process loads without the analysis stack: pandas, numpy and scipy wait for a request."""
from .helpers import run_python

HEAVY = ("pandas", "numpy", "scipy")


def test_the_wsgi_application_and_its_urlconf_load_without_pandas_numpy_or_scipy():
    code = (
        "import sys; from annotate.wsgi import application; "
        "from django.urls import get_resolver; get_resolver().url_patterns; "
        "import annotate.urls, campaigns.admin, campaigns.api.urls; "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    result = run_python("-c", code, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout + result.stderr

