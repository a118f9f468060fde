"""Property test: arbitrary fields on every worker form and arbitrary files on every import
route never give a 5xx, and a refused request stores nothing.

Fixed seed (derandomize) and a bounded number of examples, so it runs in the normal suite.
"""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from campaigns.models import Annotation, Assignment, Item
from campaigns.services.researchers import researchers_group
from tests.api.conftest import token_client
from tests.views.conftest import PROLIFIC, start

pytestmark = pytest.mark.django_db

FUZZ = settings(derandomize=True, max_examples=60, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

# Names the forms read, so the fuzz reaches the kinds' parsing and not only the unknown keys.
KNOWN_NAMES = ["q-coherence", "q-sentiment", "q-feedback", "q-lines__count", "q-lines.1.label",
               "q-lines.2.label", "q-lines.1.why", "q-rubric.C1", "q-rubric.#total",
               "q-adequacy", "started", "form_key", "PROLIFIC_PID", "STUDY_ID", "SESSION_ID",
               "workerId", "assignmentId", "hitId", "turkSubmitTo", "more", "consent"]
NASTY = ["", "\x00", "9" * 400, "1e400", "-1", "NaN", "inf", "1e3", "x", "\ud800".encode(
    "utf-8", "surrogatepass").decode("utf-8", "replace"), "0" * 5000, "[" * 3000]
# Weighted towards the names the forms read and values known to be troublesome.
names = st.one_of(st.sampled_from(KNOWN_NAMES), st.sampled_from(KNOWN_NAMES),
                  st.text(max_size=30))
values = st.one_of(st.sampled_from(NASTY), st.sampled_from(NASTY), st.text(max_size=200),
                   st.integers().map(str), st.floats().map(str))
posts = st.dictionaries(names, st.one_of(values, st.lists(values, max_size=3)), max_size=8)


def _clean(post: dict) -> dict:
    # The test client's multipart encoder writes str values; a NUL in a field *name* is
    # something no browser sends and the encoder cannot frame, so names drop it.
    return {k.replace("\x00", ""): v for k, v in post.items()}


@pytest.mark.parametrize("fixture", ["continuation", "summary_campaign", "rubric_campaign",
                                     "translation_campaign"])
def test_arbitrary_posts_to_the_worker_forms_never_fail(request, fixture):
    campaign = request.getfixturevalue(fixture)
    client = Client(raise_request_exception=False)
    assignment = start(client, campaign, PROLIFIC)
    entry = reverse("campaigns:entry", args=[campaign.slug])
    item = reverse("campaigns:item", args=[assignment.token, 1])
    finish = reverse("campaigns:finish", args=[assignment.token])

    @FUZZ
    @given(post=posts, target=st.sampled_from(["entry", "item", "finish"]))
    def check(post, target):
        url = {"entry": entry, "item": item, "finish": finish}[target]
        before = (Annotation.objects.count(), Assignment.objects.count())
        response = client.post(url, _clean(post))
        assert response.status_code < 500, (url, post)
        if response.status_code >= 400:
            # Refused: no answer saved, no slot claimed. (A well-formed platform id that
            # finds no work left, a 409, keeps its worker row: that is not bad input.)
            after = (Annotation.objects.count(), Assignment.objects.count())
            assert after == before, (url, post, response.status_code)

    check()


files = st.tuples(st.sampled_from(["csv", "tsv", "json", "jsonl", "txt", "bin"]),
                  st.one_of(st.binary(max_size=400),
                            st.text(max_size=400).map(lambda t: t.encode("utf-8", "replace")),
                            st.sampled_from([b"[" * 6000, b'[{"id": NaN}]', b"9" * 5000,
                                             b'{"id": "a", "prompt": ' + b"9" * 5000 + b"}",
                                             b"\xff\xfe\x00a", b"\x1f\x8b\x08\x00"])))


def test_arbitrary_files_to_every_import_route_never_fail(campaign, owner):
    owner.is_staff = True
    owner.save()
    owner.groups.add(researchers_group())
    api: APIClient = token_client(owner)
    api.raise_request_exception = False
    admin = Client(raise_request_exception=False)
    admin.force_login(owner)
    routes = [
        ("api", f"/api/campaigns/{campaign.slug}/items/import/"),
        ("api", f"/api/campaigns/{campaign.slug}/judgments/import/"),
        ("admin", reverse("admin:campaigns_campaign_import", args=[campaign.pk])),
        ("admin", reverse("admin:campaigns_campaign_judgments", args=[campaign.pk])),
    ]

    @FUZZ
    @given(file=files, route=st.sampled_from(routes))
    def check(file, route):
        (ext, content), (kind, url) = file, route
        upload = SimpleUploadedFile(f"upload.{ext}", content)
        before = (Item.objects.count(), Annotation.objects.count())
        if kind == "api":
            response = api.post(url, {"file": upload}, format="multipart")
        else:
            response = admin.post(url, {"file": upload})
        assert response.status_code < 500, (url, ext, content[:200])
        if response.status_code >= 400:
            assert (Item.objects.count(), Annotation.objects.count()) == before

    check()
