"""Login throttling: wrong admin passwords lock the username and address pair out, with a
clear message, even for the right password; other addresses and users are unaffected."""
import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
PASSWORD = "correct horse battery staple"


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("dora", password=PASSWORD, is_staff=True)


def _login(client, username, password):
    return client.post(LOGIN, {"username": username, "password": password,
                               "next": "/admin/"})


def test_the_right_password_logs_in(staff):
    response = _login(Client(), "dora", PASSWORD)
    assert response.status_code == 302


def test_repeated_wrong_passwords_lock_out_even_the_right_one(staff, settings):
    client = Client(REMOTE_ADDR="203.0.113.9")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, "dora", "wrong").status_code == 200  # the form, with its error
    assert _login(client, "dora", "wrong").status_code == 429  # that one locks the pair out
    response = _login(client, "dora", PASSWORD)
    assert response.status_code == 429
    text = response.content.decode()
    assert "too many login attempts for this username from your address" in text
    assert "try again in 15 minutes" in text
    assert "_auth_user_id" not in client.session


def test_the_lockout_is_per_username_and_address(staff, django_user_model, settings):
    django_user_model.objects.create_user("erik", password=PASSWORD, is_staff=True)
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(attacker, "dora", "wrong")
    assert _login(Client(REMOTE_ADDR="198.51.100.7"), "dora", PASSWORD).status_code == 302
    assert _login(Client(REMOTE_ADDR="203.0.113.9"), "erik", PASSWORD).status_code == 302


def test_a_success_resets_the_count(staff, settings):
    client = Client(REMOTE_ADDR="203.0.113.9")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, "dora", "wrong")
    assert _login(client, "dora", PASSWORD).status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, "dora", "wrong")
    assert _login(client, "dora", PASSWORD).status_code == 302


def test_the_api_token_page_is_reached_only_through_the_throttled_login(staff):
    response = Client().get(reverse("api-token"))
    assert response.status_code == 302 and response["Location"].startswith(LOGIN)
