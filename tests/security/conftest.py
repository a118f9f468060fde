"""Security tests: each attack replayed against real loopback servers (tests/security/
servers.py), which count what reaches them."""
import pytest

from campaigns.services.seeds import seed_campaigns_load
from tests.api.conftest import token_client

from .servers import Probe


@pytest.fixture
def probe():
    """probe(answer) -> a started loopback server, closed after the test."""
    started = []

    def start(answer):
        server = Probe(answer)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


@pytest.fixture
def api(researcher):
    """A researcher's (not a superuser's) token client."""
    return token_client(researcher)


@pytest.fixture
def movie(owner):
    (campaign, _), = seed_campaigns_load(owner=owner, slugs=("movie-continuation",))
    return campaign


def declare(settings, name: str, server: Probe, **spec) -> str:
    """The loopback stand-in as one of the operator's providers (loopback is refused to all
    else)."""
    settings.LLM_PROVIDERS = {**settings.LLM_PROVIDERS, name: {"base_url": server.base_url,
                                                               **spec}}
    return name
