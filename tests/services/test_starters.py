"""Starter templates: every one is a valid design whose sample items import into it, and the
service that creates a campaign from one."""
import pytest

from campaigns.errors import Conflict
from campaigns.models import Campaign
from campaigns.schema import REGISTRY, parse_schema, validate_answers
from campaigns.services.seeds import SEED_SLUGS
from campaigns.services.starters import campaign_create_from_starter
from campaigns.starters import StarterNotFound, starter_get, starter_list

ALL = starter_list(available_only=False)


def _available(starter):
    missing = set(starter.kinds) - set(REGISTRY)
    if missing:
        pytest.skip(f"needs the question kind(s) {sorted(missing)}, not registered on this branch")


def test_the_gallery_holds_the_seed_tasks_the_comparative_and_the_chat_designs():
    names = [s.name for s in ALL]
    assert names == [*SEED_SLUGS, "pairwise-preference", "best-worst", "esa", "mqm",
                     "chat-helpfulness-harmlessness", "arena-side-by-side",
                     "summaries-rate-then-best-worst"]


@pytest.mark.parametrize("starter", ALL, ids=lambda s: s.name)
def test_each_template_has_a_title_a_description_instructions_a_worked_example_and_items(starter):
    assert starter.title and starter.description and starter.source
    assert starter.instructions.strip() and starter.examples.strip()
    assert len(starter.items) >= 10


@pytest.mark.parametrize("starter", ALL, ids=lambda s: s.name)
def test_each_template_schema_validates(starter):
    _available(starter)
    parse_schema(starter.schema)


def test_a_seed_template_is_read_from_the_seed_fixture_not_copied(settings):
    import json
    from pathlib import Path

    seed = json.loads((Path(settings.BASE_DIR) / "fixtures/story-rating/campaign.json")
                      .read_text(encoding="utf-8"))
    starter = starter_get("story-rating")
    assert starter.schema == seed["schema"] and starter.instructions == seed["instructions"]
    assert starter.settings["intake_questions"] == seed["intake_questions"]
    assert "completion_code" not in starter.campaign_fields()  # the seed study's codes stay behind


def test_a_template_whose_kind_is_not_registered_is_not_offered(monkeypatch):
    from campaigns import starters

    monkeypatch.setattr("campaigns.schema.REGISTRY", {
        k: v for k, v in REGISTRY.items() if k != "bws"})
    names = [s.name for s in starters.starter_list()]
    assert "best-worst" not in names and "pairwise-preference" in names


def test_an_unknown_template_is_a_404_naming_the_known_ones():
    with pytest.raises(StarterNotFound, match="No template named 'nope'; the templates are: "
                                              "movie-continuation") as exc:
        starter_get("nope")
    assert exc.value.status == 404


@pytest.mark.django_db
@pytest.mark.parametrize("starter", ALL, ids=lambda s: s.name)
def test_each_template_creates_a_draft_whose_sample_items_import_and_take_valid_answers(
        starter, owner):
    import random

    _available(starter)
    campaign = campaign_create_from_starter(owner=owner, template=starter.name,
                                            slug=f"from-{starter.name}", with_items=True)
    assert campaign.status == Campaign.Status.DRAFT
    assert campaign.schema == starter.schema and campaign.name == starter.title
    assert campaign.items.count() == len(starter.items)
    schema = parse_schema(campaign.schema)
    rng = random.Random(1)
    for item in campaign.items.all()[:3]:  # the kinds' own example answers pass on real items
        answers = {q.id: q.example_answer(item.data, rng) for q in schema.questions}
        validate_answers(schema, answers, item.data)


@pytest.mark.django_db
def test_the_service_takes_a_name_and_leaves_the_items_out_unless_asked(owner):
    campaign = campaign_create_from_starter(owner=owner, template="pairwise-preference",
                                            slug="pw", name="My pairwise study")
    assert campaign.name == "My pairwise study" and campaign.items.count() == 0
    assert campaign.items_per_assignment == 6


@pytest.mark.django_db
def test_a_taken_slug_is_a_conflict_and_nothing_is_stored(owner):
    campaign_create_from_starter(owner=owner, template="best-worst", slug="bw")
    with pytest.raises(Conflict):
        campaign_create_from_starter(owner=owner, template="best-worst", slug="bw",
                                     with_items=True)
    assert Campaign.objects.get(slug="bw").items.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("starter", ALL, ids=lambda s: s.name)
def test_each_template_runs_publish_workers_dashboard_statistics_and_export(
        starter, owner, settings, tmp_path, django_capture_on_commit_callbacks, celery_eager):
    """A researcher's whole path from the template: the sample items, three workers, the
    dashboard's per-system progress, the statistics and the CSV export all work."""
    from campaigns.selectors.analysis import campaign_statistics
    from campaigns.selectors.dashboard import campaign_dashboard
    from campaigns.services.campaigns import campaign_publish
    from campaigns.services.exports import export_job_create
    from tests.admin.simulate import simulate
    from tests.exports.conftest import read_export

    _available(starter)
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    campaign = campaign_create_from_starter(owner=owner, template=starter.name,
                                            slug=f"run-{starter.name}", with_items=True)
    campaign_publish(campaign=campaign)
    simulate(campaign, workers=3)
    dashboard = campaign_dashboard(campaign=campaign)
    assert dashboard.per_system and sum(p.done for p in dashboard.per_system) > 0
    stats = campaign_statistics(campaign=campaign, n_boot=20)
    # The comparative designs get their own tables, per system shown.
    assert bool(stats["pairwise_preference"]) == ("pairwise" in starter.kinds)
    assert bool(stats["best_worst"]) == ("bws" in starter.kinds)
    with django_capture_on_commit_callbacks(execute=True):
        job = export_job_create(campaign=campaign, requested_by=owner, fmt="csv", options={})
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.rows_written == campaign.annotations.count() > 0
    assert read_export(job).count("\n") >= job.rows_written
