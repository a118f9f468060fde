"""A login whose ?next= is refused lands on the admin, not on a 404."""
import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("next_url", ["https://evil.example/", "//evil.example/x", ""])
def test_a_refused_or_missing_next_falls_back_to_the_admin(client, researcher, next_url):
    researcher.set_password("pw-researcher-123")
    researcher.save()
    response = client.post(f"/admin/login/?next={next_url}", {
        "username": researcher.username, "password": "pw-researcher-123", "next": next_url},
        follow=True)
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == "/admin/"


def test_an_allowed_next_is_still_followed(client, researcher):
    researcher.set_password("pw-researcher-123")
    researcher.save()
    response = client.post("/admin/login/", {"username": researcher.username,
                                              "password": "pw-researcher-123",
                                              "next": "/admin/campaigns/campaign/"})
    assert response.status_code == 302 and response["Location"] == "/admin/campaigns/campaign/"
