"""Fuzz every API operation from its own OpenAPI schema: no 5xx, no answer the schema denies.

Schemathesis loads /api/schema/ from the WSGI app and calls it in-process with a researcher's
token. Path parameters point at a real campaign and a finished export job, so the fuzzer
reaches the views' logic instead of stopping at 404.
"""
import os
from collections import Counter

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from annotate.wsgi import application
from campaigns.models import ExportJob, Item, Judge, JudgeRun
from tests.api.conftest import make_annotation, make_items
from tests.factories import make_campaign

# Bounded so the suite stays quick; API_FUZZ_EXAMPLES=500 for a longer hunt.
MAX_EXAMPLES = int(os.environ.get("API_FUZZ_EXAMPLES", "30"))
TALLY: Counter = Counter()  # status code -> cases; tests/api/conftest.py prints it
CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance]


# Loaded at collection: generating the schema touches no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application)


@pytest.fixture
def world(owner):
    """A live campaign with items, annotations and a finished export of the researcher's."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import storages
    from rest_framework.authtoken.models import Token

    campaign = make_campaign(owner=owner, slug="fuzz")
    items = make_items(campaign, 3)
    # The items the judgments example in the schema names.
    Item.objects.bulk_create(Item(campaign=campaign, external_id=f"r{n}", system=f"model-{n}",
                                  data={"prompt": "p", "completion": "c"}, slots_wanted=3)
                             for n in (1, 2))
    make_annotation(campaign, items[0], worker_id="W1")
    make_annotation(campaign, items[1], worker_id="W2")
    name = storages["exports"].save("fuzz/fuzz-csv-test.csv", ContentFile(b"item,worker\n"))
    job = ExportJob.objects.create(campaign=campaign, requested_by=owner, status="done",
                                   file=name, rows_written=2, rows_total=2,
                                   finished_at=timezone.now())
    # A judge whose endpoint nobody listens on (the discard port); in the test transaction a
    # started run is never enqueued, so nothing is called either way.
    judge = Judge.objects.create(campaign=campaign, name="fuzz-judge",
                                 base_url="http://127.0.0.1:9/v1", model="m")
    run = JudgeRun.objects.create(judge=judge, scope={"scope": "all"}, status="done")
    # As Django's test client does: requests must not close the test transaction's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield {"token": Token.objects.get_or_create(user=owner)[0].key,
           "slug": campaign.slug, "job_id": job.pk, "name": judge.name, "run_id": run.pk}
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
    storages["exports"].delete(name)


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_no_operation_answers_5xx_or_contradicts_its_schema(case, world):
    if "slug" in (case.path_parameters or {}):
        case.path_parameters["slug"] = world["slug"]
    for key in ("job_id", "name", "run_id"):
        if key in (case.path_parameters or {}):
            case.path_parameters[key] = world[key]
    response = case.call(headers={"Authorization": f"Token {world['token']}"})
    TALLY[response.status_code] += 1
    case.validate_response(response, checks=CHECKS)
