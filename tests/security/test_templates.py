"""Prompt templates cannot hold a process: looping or multiplying tags and filters are refused
at save (400), and a render over its budget is a 400 at preview, within a second."""
import time

import pytest
from django.urls import reverse

from campaigns.models import Item, Judge, JudgeRun

pytestmark = pytest.mark.django_db

NESTED = ("{% for a in item.completion %}{% for b in item.completion %}{% for c in "
          "item.completion %}{{ a }}{% endfor %}{% endfor %}{% endfor %}")


@pytest.mark.parametrize(("template", "says"), [
    (NESTED, "inside another"),
    ("{% lorem 3000000 w %}", "lorem"),
    ("{{ item.completion|ljust:'100000000' }}", "ljust"),
    ("{{ item.completion|join:item.completion }}", "join"),
    ("{% widthratio 1 1 100000000000 %}", "widthratio"),
    ("{% include 'admin/base.html' %}", "include"),
    ("{% load static %}", "load"),
    ("{% debug %}", "debug"),
    ("x" * 50_001, "longer than"),
])
def test_a_template_that_could_loop_or_blow_up_is_refused_at_save(api, movie, template, says):
    response = api.post(f"/api/campaigns/{movie.slug}/judges/", {
        "name": "t", "model": "m", "provider": "local", "prompt_template": template},
        format="json")
    assert response.status_code == 400, response.json()
    assert says in response.json()["extra"]["errors"]["prompt_template"]
    assert not Judge.objects.exists()


@pytest.mark.parametrize(("template", "completion", "says"), [
    ("{% for c in item.completion %}{{ item.completion }}{% endfor %}", "w" * 900,
     "longer than"),
    ("{% for c in item.completion %}{% if c %}{% endif %}{% endfor %}", "w" * 40_000,
     "values"),
    (NESTED, "w", "inside another"),  # saved before templates were checked
])
def test_a_preview_over_budget_is_a_400_within_a_second(researcher_client, movie, settings,
                                                         template, completion, says):
    settings.LLM_JUDGE_MAX_PROMPT_CHARS = 100_000
    item = movie.items.order_by("id").first()
    Item.objects.filter(pk=item.pk).update(data={**item.data, "completion": completion})
    judge = Judge.objects.create(campaign=movie, name="t", provider="local", model="m",
                                 prompt_template=template)
    started = time.monotonic()
    response = researcher_client.get(reverse("admin:campaigns_judge_preview", args=[judge.pk]),
                                     {"item": item.external_id})
    assert time.monotonic() - started < 1
    assert response.status_code == 400 and says in response.context["error"]
    estimate = researcher_client.get(reverse("admin:campaigns_judge_run", args=[judge.pk]),
                                     {"scope": "all"})
    assert estimate.status_code == 400 and says in estimate.context["error"]
    assert not JudgeRun.objects.exists()


def test_an_ordinary_template_still_renders(researcher_client, movie):
    judge = Judge.objects.create(
        campaign=movie, name="ok", provider="local", model="m",
        prompt_template="{% for c in 'abc' %}{{ c|upper }}{% endfor %} {{ item_id|default:'-' }}"
                        "{% if questions %} {{ questions|truncatewords:3 }}{% endif %}")
    response = researcher_client.get(reverse("admin:campaigns_judge_preview", args=[judge.pk]))
    assert response.status_code == 200 and response.context["preview"].prompt.startswith("ABC")
