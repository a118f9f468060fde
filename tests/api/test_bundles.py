"""GET /api/campaigns/<slug>/report/bundle/: the paper bundle of a starter's sample campaign
with simulated answers; its tables are the statistics', its BibTeX parses and holds what the
methods cite, its LaTeX compiles (where pdflatex is installed), and a recomputation gives the
same bytes."""
from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import zipfile

import bibtexparser
import pytest

from campaigns.selectors.analysis import campaign_statistics
from tests.analysis.figures.samples import sample_campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager", "few_resamples")]


def _bundle(api, slug, django_capture_on_commit_callbacks, query=""):
    url = f"/api/campaigns/{slug}/report/bundle/{query}"
    with django_capture_on_commit_callbacks(execute=True):
        first = api.get(url)
    assert first.status_code in (200, 202)
    response = api.get(url) if first.status_code == 202 else first
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "application/zip"
    assert f'filename="{slug}-paper-bundle.zip"' in response["Content-Disposition"]
    return response.content


@pytest.fixture
def pairwise(owner):
    return sample_campaign(owner, "pairwise-preference")


def _files(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {n.removeprefix("paper-bundle/"): archive.read(n) for n in archive.namelist()}


def test_the_bundle_holds_figures_tables_methods_references_and_datasheet(
        api, pairwise, django_capture_on_commit_callbacks):
    files = _files(_bundle(api, pairwise.slug, django_capture_on_commit_callbacks))
    for name in ("bradley_terry-preference", "win_rates-preference", "agreement", "workers",
                 "progress"):
        assert files[f"figures/{name}.pdf"].startswith(b"%PDF-")
        assert b"/FontFile2" in files[f"figures/{name}.pdf"]  # TrueType embedded (fonttype 42)
        assert files[f"figures/{name}.svg"].startswith(b"<?xml")
        assert b"\\toprule" in files[f"tables/{name}.tex"]
    statistics = campaign_statistics(campaign=pairwise, n_boot=0)  # strengths and counts
    strengths = statistics["pairwise_preference"][0]["bradley_terry"]
    rows = list(csv.DictReader(io.StringIO(files["tables/bradley_terry-preference.csv"]
                                           .decode())))
    assert [r["System"] for r in rows] == [s["system"] for s in strengths]
    assert [float(r["Strength"]) for r in rows] == [round(s["strength"], 3) for s in strengths]

    methods = files["methods.txt"].decode()
    counts = statistics["counts"]
    assert f"{counts['annotations_used']} of {counts['annotations']} annotations" in methods
    assert "We evaluated 12 items" in methods and "6 human raters" in methods
    assert "Bradley-Terry" in methods and "Krippendorff" in methods

    library = bibtexparser.parse_string(files["references.bib"].decode())
    assert not library.failed_blocks
    keys = {e.key for e in library.entries}
    cited = {k for group in re.findall(r"\\cite\{([^}]*)\}", files["methods.tex"].decode())
             for k in group.split(",")}
    assert cited == keys and {"krippendorff2004", "bradley1952", "dawid1979", "hovy2013"} <= keys
    assert all(e.fields_dict.get("year") for e in library.entries)

    sheet = files["datasheet.md"].decode()
    assert "**[TO ADD]**" in sheet and "Number of evaluators: 6" in sheet
    provenance = json.loads(files["provenance.json"])
    assert provenance["annotations"]["annotations"] == counts["annotations"]
    assert len(provenance["annotations"]["sha256"]) == 64
    assert provenance["bootstrap"]["seed"] == 0 and provenance["options"]["correction"] == "holm"


def test_recomputing_gives_the_same_bytes(api, pairwise, django_capture_on_commit_callbacks):
    first = _bundle(api, pairwise.slug, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(f"/api/campaigns/{pairwise.slug}/report/").status_code == 202
    again = _bundle(api, pairwise.slug, django_capture_on_commit_callbacks)
    assert again == first


def test_another_researchers_campaign_is_a_404(other_api, pairwise):
    response = other_api.get(f"/api/campaigns/{pairwise.slug}/report/bundle/")
    assert response.status_code == 404 and response["Content-Type"].startswith(
        "application/json")


def test_bad_options_are_a_400_naming_the_option(api, pairwise):
    response = api.get(f"/api/campaigns/{pairwise.slug}/report/bundle/?correction=nope")
    assert response.status_code == 400 and "correction" in response.content.decode()


def test_the_latex_compiles_with_pdflatex(api, owner, tmp_path,
                                          django_capture_on_commit_callbacks):
    if shutil.which("pdflatex") is None or shutil.which("bibtex") is None:
        pytest.skip("pdflatex/bibtex not installed (Debian: texlive-latex-base, "
                    "texlive-latex-recommended, texlive-binaries)")
    campaign = sample_campaign(owner, "mqm")  # error spans: escaped category names, MQM refs
    with zipfile.ZipFile(io.BytesIO(_bundle(api, campaign.slug,
                                            django_capture_on_commit_callbacks))) as archive:
        archive.extractall(tmp_path)
    root = tmp_path / "paper-bundle"
    for command in (["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "check.tex"],
                    ["bibtex", "check"],
                    ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "check.tex"],
                    ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "check.tex"]):
        done = subprocess.run(command, cwd=root, capture_output=True, text=True,  # noqa: S603
                              timeout=120, check=False)
        assert done.returncode == 0, done.stdout[-2000:]
    assert (root / "check.pdf").stat().st_size > 0
    assert "Citation" not in (root / "check.log").read_text(errors="replace")  # all resolved
