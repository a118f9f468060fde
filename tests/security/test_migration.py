"""Migration 0011 (providers): a judge whose URL and key variable were a provider's uses that
provider; a judge that sent an operator key to a URL of its own keeps the URL, loses the key
and cannot run until its researcher gives one of their own."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("campaigns", "0010_background_job_lifecycle")]
AFTER = [("campaigns", "0011_judge_providers")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def back_to_the_latest():
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_the_latest")
def test_judges_are_mapped_to_the_providers_they_matched(settings):
    settings.LLM_JUDGE_LOCAL_URL = ""
    settings.LLM_PROVIDERS = {
        "local": {}, "openai": {"base_url": "https://api.openai.com/v1/",
                                "key_env": "OPENAI_API_KEY"}}
    old = _migrate(BEFORE)
    owner = old.get_model("auth", "User").objects.create(username="owner")
    campaign = old.get_model("campaigns", "Campaign").objects.create(
        owner_id=owner.pk, name="c", slug="c")
    Judge = old.get_model("campaigns", "Judge")
    made = {name: Judge.objects.create(campaign=campaign, name=name, model="m", **fields).pk
            for name, fields in {
                "demo": {},
                "openai": {"base_url": "https://api.openai.com/v1",
                           "api_key_env": "OPENAI_API_KEY"},
                "thief": {"base_url": "https://evil.example/v1",
                          "api_key_env": "OPENAI_API_KEY"},
            }.items()}

    new = _migrate(AFTER)
    judges = {j.pk: j for j in new.get_model("campaigns", "Judge").objects.all()}
    assert (judges[made["demo"]].provider, judges[made["demo"]].base_url) == ("local", "")
    assert (judges[made["openai"]].provider, judges[made["openai"]].base_url) == ("openai", "")
    thief = judges[made["thief"]]
    assert (thief.provider, thief.base_url, thief.api_key_encrypted) == (
        "", "https://evil.example/v1", "")

    from campaigns.models import Judge as Current
    from campaigns.selectors.judges import judge_endpoint_problem
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    settings.LLM_OWN_KEY_HOSTS = ["evil.example"]  # even on an allowed host: no key, no run
    assert "needs a key of your own" in judge_endpoint_problem(
        Current.objects.get(pk=made["thief"]))
