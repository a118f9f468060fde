"""The five seed campaigns load with one command, faithful to their seed texts."""
import pytest
from django.core.management import call_command

from campaigns.models import Campaign
from campaigns.schema import parse_questions, parse_schema
from campaigns.services.seeds import SEED_SLUGS, seed_campaigns_load
from tests.shared_data import SHARED, require

pytestmark = pytest.mark.django_db
SEEDS = SHARED / "seeds"


@pytest.fixture
def seeded(owner):
    return {c.slug: c for c, _ in seed_campaigns_load(owner=owner)}


def test_all_five_slugs_load_with_at_least_24_regular_items_each(seeded):
    assert sorted(seeded) == sorted(SEED_SLUGS)
    for campaign in seeded.values():
        assert campaign.items.filter(control="").count() >= 24, campaign.slug
        assert campaign.source.strip(), f"{campaign.slug} does not note its data source"
        parse_schema(campaign.schema)
        parse_questions(campaign.intake_questions)


def test_loading_twice_changes_nothing(owner, seeded):
    before = {slug: c.items.count() for slug, c in seeded.items()}
    again = seed_campaigns_load(owner=owner)
    assert all(not created for _, created in again)
    assert {c.slug: c.items.count() for c, _ in again} == before


def test_the_load_command_needs_an_existing_owner(owner, capsys):
    call_command("load_seed_campaigns", owner="alice")
    assert Campaign.objects.count() == 5


def test_story_rating_has_12_items_per_assignment_and_the_personal_details_intake(seeded):
    campaign = seeded["story-rating"]
    assert campaign.items_per_assignment == 12
    intake = {q.id for q in parse_questions(campaign.intake_questions)}
    assert {"age", "sex", "handedness", "language_region"} <= intake
    assert not intake & {"name", "email", "e-mail"}


def test_the_rubric_has_15_criteria_worth_19_points_with_every_level_described(seeded):
    rubric = parse_schema(seeded["comparative-rubric"].schema).question("rubric")
    assert [c.id for c in rubric.criteria] == [f"C{n}" for n in range(1, 16)]
    assert rubric.max_total == 19
    assert all(len(c.levels) == c.max - c.min + 1 for c in rubric.criteria)


def test_the_translation_slider_runs_0_to_100_with_four_described_anchors(seeded):
    schema = parse_schema(seeded["translation-acceptability"].schema)
    slider = schema.question("acceptability")
    assert (slider.min, slider.max, len(slider.anchors)) == (0, 100, 4)
    assert all(a.description for a in slider.anchors)
    assert schema.question("source_issues").kind == "flags"


def test_scale_descriptions_are_transcribed_verbatim_from_the_seeds(seeded):
    require(SEEDS)
    seed_000 = next(SEEDS.glob("000_*.txt")).read_text()
    coherence = parse_schema(seeded["movie-continuation"].schema).question("coherence")
    for point in coherence.points:
        assert point.description in seed_000, point.description
    seed_003 = next(SEEDS.glob("003_*.txt")).read_text()
    rubric = parse_schema(seeded["comparative-rubric"].schema).question("rubric")
    for criterion in rubric.criteria:
        for level in criterion.levels:
            assert level.description in seed_003, (criterion.id, level.description)


def test_every_seed_is_a_prolific_study_with_the_studys_codes(seeded):
    for campaign in seeded.values():
        assert campaign.recruitment == "prolific", campaign.slug
        assert campaign.completion_mode == "fixed" and campaign.completion_code, campaign.slug
        assert campaign.completion_code_no_work, campaign.slug
        assert campaign.completion_redirect_url == (
            "https://app.prolific.com/submissions/complete?cc={code}"), campaign.slug


def _worker_texts(campaign) -> str:
    questions = campaign.schema["questions"] + list(campaign.intake_questions or [])
    parts = [campaign.name, campaign.description, campaign.instructions, campaign.examples,
             campaign.consent_text]
    for q in questions:
        parts += [q.get("text", ""), q.get("help", ""), q.get("placeholder", "")]
    return "\n".join(p for p in parts if p)


@pytest.mark.parametrize("wrong", ["Mechanical Turk", "HIT ", "e-mail", "email",
                                   "not preserved", "upper right corner", "“Flag”",
                                   "“Add details”", "three axes", "the the "])
def test_no_worker_visible_seed_text_describes_something_the_page_does_not_have(seeded, wrong):
    for campaign in seeded.values():
        assert wrong not in _worker_texts(campaign), (campaign.slug, wrong)


def test_the_demo_adds_the_arena_template_as_a_live_campaign_once(owner):
    from campaigns.services.seeds import starter_campaigns_load
    [(arena, created)] = starter_campaigns_load(owner=owner)
    assert created and arena.slug == "arena-side-by-side" and arena.status == Campaign.Status.LIVE
    assert arena.items.count() == 12 and "Content warning" in arena.consent_text
    schema = parse_schema(arena.schema)
    assert schema.outputs_format == "markdown"
    assert [q.kind for q in schema.questions] == ["pairwise", "likert"]
    assert all("messages" in o for o in arena.items.first().data["outputs"])
    assert starter_campaigns_load(owner=owner) == [(arena, False)]
