"""A researcher configures a judge in the admin, previews its prompt, sees the estimate,
starts a run and watches it; nobody else sees any of it."""
import pytest
from django.test import Client
from django.urls import reverse

from campaigns.models import Judge, JudgeOutput, JudgeRun
from campaigns.services.seeds import seed_campaigns_load
from tests.judges.conftest import valid_reply
from tests.judges.standin import StandIn

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


@pytest.fixture
def server(settings):
    started = StandIn(valid_reply).start().declare(settings)
    yield started
    started.close()


@pytest.fixture
def rubric(researcher):
    (campaign, _), = seed_campaigns_load(owner=researcher, slugs=("comparative-rubric",))
    return campaign


def _add(client, campaign, server, **extra):
    data = {"campaign": campaign.pk, "name": "judge-1", "provider": server.provider,
            "base_url": "", "model": "m-1", "parameters": '{"temperature": 0}',
            "samples": 1, "concurrency": 2, "requests_per_minute": 6000, "max_attempts": 3,
            "response_format": "json_schema", "prompt_template": "",
            "price_input_per_million": "2.5", "price_output_per_million": "10", **extra}
    return client.post(reverse("admin:campaigns_judge_add"), data)


def test_a_researcher_adds_a_judge_previews_its_prompt_estimates_and_runs_it(
        researcher_client, rubric, server, django_capture_on_commit_callbacks):
    response = _add(researcher_client, rubric, server)
    assert response.status_code == 302, response.context["adminform"].form.errors
    judge = Judge.objects.get()
    page = researcher_client.get(reverse("admin:campaigns_judge_change", args=[judge.pk]))
    assert b"Preview the prompt" in page.content and b"Default template" in page.content

    item = rubric.items.order_by("id")[1]
    preview = researcher_client.get(reverse("admin:campaigns_judge_preview", args=[judge.pk]),
                                    {"item": item.external_id})
    assert preview.status_code == 200
    assert preview.context["preview"].prompt_hash.encode() in preview.content
    assert b"&quot;C15&quot;" in preview.content or b'"C15"' in preview.content

    run_url = reverse("admin:campaigns_judge_run", args=[judge.pk])
    estimate = researcher_client.get(run_url, {"scope": "sample", "sample": 4})
    assert estimate.context["estimate"]["to_request"] == 4
    assert estimate.context["estimate"]["cost"] > 0
    assert server.requests == 0  # an estimate calls nothing
    with django_capture_on_commit_callbacks(execute=True):
        started = researcher_client.post(run_url, {"scope": "sample", "sample": 4})
    assert started.status_code == 302
    run = JudgeRun.objects.get()
    assert (run.status, run.done, server.requests) == ("done", 4, 4)
    listing = researcher_client.get(reverse("admin:campaigns_judgerun_changelist"))
    assert b"4 / 0 / 0 of 4" in listing.content
    outputs = researcher_client.get(reverse("admin:campaigns_judgeoutput_changelist"))
    assert outputs.status_code == 200 and outputs.context["cl"].result_count == 4


def test_a_key_with_a_provider_or_a_bad_template_is_shown_next_to_the_field(
        researcher_client, rubric, server):
    response = _add(researcher_client, rubric, server, api_key="sk-live-123",
                    prompt_template="{% include 'x.html' %}")
    errors = response.context["adminform"].form.errors
    assert "api_key" in errors and "prompt_template" in errors
    assert b"sk-live-123" not in response.content  # a refused key is not shown back either
    assert not Judge.objects.exists()


def test_an_own_key_is_saved_encrypted_and_never_shown_again(researcher_client, rubric, server):
    response = _add(researcher_client, rubric, server, provider="",
                    base_url="https://api.openai.com/v1", api_key="sk-own-456")
    assert response.status_code == 302, response.context["adminform"].form.errors
    judge = Judge.objects.get()
    assert judge.api_key_encrypted and "sk-own-456" not in judge.api_key_encrypted
    page = researcher_client.get(reverse("admin:campaigns_judge_change", args=[judge.pk]))
    assert b"sk-own-456" not in page.content and b"stored (never shown)" in page.content


def test_another_researcher_sees_no_judge_run_or_output(researcher_client, rubric, server,
                                                        other_researcher):
    _add(researcher_client, rubric, server)
    judge = Judge.objects.get()
    other = Client()
    other.force_login(other_researcher)
    for url in (reverse("admin:campaigns_judge_change", args=[judge.pk]),
                reverse("admin:campaigns_judge_preview", args=[judge.pk]),
                reverse("admin:campaigns_judge_run", args=[judge.pk])):
        assert other.get(url).status_code == 404, url
    assert other.get(reverse("admin:campaigns_judge_changelist")).context["cl"].result_count == 0
    assert not JudgeOutput.objects.exists()
