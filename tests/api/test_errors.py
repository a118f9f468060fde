"""The one error shape, the right statuses, throttling, and JSON for unknown /api/ paths."""
import pytest
from rest_framework.test import APIClient

from campaigns.api.errors import exception_handler
from campaigns.errors import NotLive
from campaigns.importing import ImportRejected, RowError
from campaigns.schema import AnswerInvalid, SchemaInvalid, SchemaIssue

pytestmark = pytest.mark.django_db


def test_an_unknown_api_path_is_a_json_404(api):
    response = api.get("/api/nothing/here/")
    assert response.status_code == 404
    assert response.json() == {"message": "No such API endpoint.",
                               "extra": {"code": "not_found"}}


def test_a_path_without_its_slash_is_a_json_404_not_an_html_redirect(api):
    response = api.post("/api/campaigns", {}, format="json")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


def test_a_wrong_method_is_405_in_the_error_shape(api, campaign):
    response = api.put(f"/api/campaigns/{campaign.slug}/", {}, format="json")  # DELETE exists
    assert response.status_code == 405
    assert response.json()["extra"] == {"code": "method_not_allowed"}


def test_malformed_json_is_a_400(api):
    response = api.post("/api/campaigns/", "{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["extra"]["code"] == "parse_error"


def test_an_unknown_field_is_a_400_naming_it(api, campaign):
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"nmae": "typo"}, format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["fields"] == {"nmae": ["Unknown field."]}


@pytest.mark.parametrize(("exc", "status", "extra"), [
    (NotLive("The campaign is paused."), 409, {"code": "campaign_not_live"}),
    (ImportRejected([RowError(2, "id", "missing", 3)]), 400,
     {"code": "import_rejected", "total": 1,
      "errors": [{"row": 2, "line": 3, "field": "id", "message": "missing"}]}),
    (SchemaInvalid([SchemaIssue("schema.questions[0].points", "bad")]), 400,
     {"code": "schema_invalid",
      "errors": [{"path": "schema.questions[0].points", "message": "bad"}]}),
    (AnswerInvalid({"rubric.C7": "too high"}), 400,
     {"code": "answers_invalid", "errors": [{"path": "rubric.C7", "message": "too high"}]}),
])
def test_application_errors_render_with_their_status_and_details(exc, status, extra):
    response = exception_handler(exc, {})
    assert response.status_code == status
    assert set(response.data) == {"message", "extra"} and response.data["extra"] == extra


def test_an_unexpected_error_is_a_json_500_not_an_html_page(api, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr("campaigns.api.campaigns.campaigns_visible_to", broken)
    response = api.get("/api/campaigns/")
    assert response.status_code == 500
    assert response.json() == {"message": "Internal server error.",
                               "extra": {"code": "server_error"}}


def test_the_schema_is_served_without_authentication():
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/campaigns/{slug}/items/import/" in paths
    assert "202" in paths["/api/campaigns/{slug}/exports/"]["post"]["responses"]


def test_the_docs_page_loads_only_local_assets(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "https://" not in html and "<script>" not in html
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and "/api/schema/" in script.content.decode()


def test_a_json_body_over_the_api_json_limit_is_a_413_in_the_error_shape(api, settings):
    settings.API_JSON_MAX_BYTES = 100
    response = api.post("/api/campaigns/", {"name": "x" * 200}, format="json")
    assert response.status_code == 413
    assert set(response.json()) == {"message", "extra"}


def test_a_database_outage_is_a_503_in_the_error_shape(api, monkeypatch):
    from django.db import OperationalError

    def down(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("campaigns.api.campaigns.campaigns_visible_to", down)
    response = api.get("/api/campaigns/")
    assert response.status_code == 503
    assert set(response.json()) == {"message", "extra"}
    assert response["Retry-After"]
