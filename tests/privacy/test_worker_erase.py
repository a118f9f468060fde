"""Deleting a worker's data on request removes it everywhere, fixes counters, and is recorded."""
import io

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.core.management import CommandError, call_command
from django.db.models import Count, Q

from campaigns.exporting.pseudonyms import worker_pseudonym
from campaigns.models import (
    Annotation,
    Assignment,
    DeletionRecord,
    ExportJob,
    Item,
    Qualification,
    QualificationAnswer,
    Worker,
)
from campaigns.services.privacy import worker_erase, worker_find
from campaigns.work import (
    annotation_submit,
    assignment_claim,
    assignment_submit,
    worker_get_or_create,
)
from tests.factories import make_campaign, make_items

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

ANSWERS = {"coherence": 4, "sentiment": 2}
RAW_ID = "5f1e0c7a9b2d4e6f8a0b1c2d"


@pytest.fixture
def study(owner):
    campaign = make_campaign(owner=owner, slug="erase-study", items_per_assignment=2,
                             annotations_per_item=2)
    make_items(campaign, 3)
    return campaign


def work(campaign, platform_id, *, answer=2, submit=True, **platform_ids):
    worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id=platform_id)
    assignment = assignment_claim(campaign=campaign, worker=worker, platform_ids=platform_ids)
    for position in range(1, answer + 1):
        annotation_submit(assignment=assignment, position=position, answers=ANSWERS)
    if submit:
        assignment_submit(assignment=assignment)
    return worker


def assert_counters_match_rows(campaign):
    for item in Item.objects.filter(campaign=campaign).annotate(
        n_done=Count("annotations", distinct=True),
        n_held=Count("slots", filter=Q(slots__holds_slot=True), distinct=True),
    ):
        assert (item.annotations_done, item.slots_taken) == (item.n_done, item.n_held), item


def test_erasing_removes_answers_intake_and_platform_ids_and_records_it(study, owner):
    worker = work(study, RAW_ID, session_id="SESSION-XYZ", study_id="STUDY-1")
    Worker.objects.filter(pk=worker.pk).update(intake={"age": "30-39", "native": "yes"})
    other = work(study, "other-worker")
    pseudonym = worker_pseudonym(campaign_id=study.pk, platform="prolific", platform_id=RAW_ID)

    result = worker_erase(worker=worker, requested_by=owner, via="admin", reason="ticket 42")

    worker.refresh_from_db()
    assert worker.platform_id.startswith("erased-") and RAW_ID not in worker.platform_id
    assert worker.intake is None and worker.erased_at is not None
    assert not Annotation.objects.filter(worker=worker).exists()
    assert not Assignment.objects.filter(worker=worker).exists()
    assert Annotation.objects.filter(worker=other).count() == 2  # nobody else is touched
    record = result.record
    assert (record.campaign, record.campaign_slug, record.pseudonym) == (
        study, study.slug, pseudonym)
    assert (record.requested_by, record.requested_via, record.reason) == (
        owner, "admin", "ticket 42")
    assert (record.annotations_deleted, record.assignments_deleted, record.intake_cleared) == (
        2, 1, True)
    assert_counters_match_rows(study)
    dump = io.StringIO()
    call_command("dumpdata", "campaigns", stdout=dump)
    for secret in (RAW_ID, "SESSION-XYZ", "30-39"):
        assert secret not in dump.getvalue(), f"{secret} is still stored somewhere"


def test_freed_slots_are_handed_out_again(study):
    first, second = work(study, "w1"), work(study, "w2")  # items 0 and 1 are now full (k=2)
    worker_erase(worker=first)
    third = worker_get_or_create(campaign=study, platform="prolific", platform_id="w3")
    assignment = assignment_claim(campaign=study, worker=third)
    assert {i.external_id for i in assignment.items.all()} & {"item-0", "item-1"}
    assert second.annotations.count() == 2
    assert_counters_match_rows(study)


def test_erasing_a_worker_with_an_open_assignment_frees_its_slots(study):
    worker = work(study, "half-done", answer=1, submit=False)
    worker_erase(worker=worker)
    assert_counters_match_rows(study)
    assert sum(Item.objects.filter(campaign=study).values_list("slots_taken", flat=True)) == 0


def test_erasing_twice_returns_the_first_record(study):
    worker = work(study, "twice")
    first = worker_erase(worker=worker)
    again = worker_erase(worker=worker)
    assert again.already_erased and again.record.pk == first.record.pk
    assert DeletionRecord.objects.count() == 1


def test_earlier_export_files_are_withdrawn(study, owner, settings, tmp_path,
                                            django_capture_on_commit_callbacks):
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path)}}}
    worker = work(study, RAW_ID)
    path = storages["exports"].save("erase-study/export.csv", ContentFile(f"{RAW_ID}\n".encode()))
    job = ExportJob.objects.create(campaign=study, requested_by=owner, status="done", file=path)
    with django_capture_on_commit_callbacks(execute=True):
        result = worker_erase(worker=worker)
    job.refresh_from_db()
    assert job.status == "failed" and job.file == "" and "deleted on request" in job.error
    assert not storages["exports"].exists(path)
    assert result.record.export_files_deleted == 1


def test_the_command_erases_by_platform_id(study):
    work(study, RAW_ID)
    out = io.StringIO()
    call_command("erase_worker", study.slug, "prolific", RAW_ID, "--reason", "email", stdout=out)
    assert "Deleted the data of worker w_" in out.getvalue()
    assert DeletionRecord.objects.get().requested_via == "command"
    with pytest.raises(CommandError, match="No worker with prolific id"):
        call_command("erase_worker", study.slug, "prolific", RAW_ID)
    with pytest.raises(CommandError, match="No campaign"):
        call_command("erase_worker", "nope", "prolific", RAW_ID)


def test_worker_find_names_what_is_missing(study):
    with pytest.raises(Exception, match="No worker with mturk id 'A1'"):
        worker_find(campaign=study, platform="mturk", platform_id="A1")


def test_erasing_purges_the_campaigns_export_spools_and_withdraws_running_exports(
        study, owner, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.EXPORT_SPOOL_DIR = tmp_path
    worker = work(study, RAW_ID)
    running = ExportJob.objects.create(campaign=study, requested_by=owner, status="running",
                                       attempts=1)
    spool = tmp_path / f"export-{study.pk}-{running.pk}-1-abc"
    spool.write_text(f"{RAW_ID},4\n")
    with django_capture_on_commit_callbacks(execute=True):
        worker_erase(worker=worker)
    running.refresh_from_db()
    assert running.status == "failed" and "deleted on request" in running.error
    assert not spool.exists()


def test_a_running_export_stops_and_stores_nothing_once_a_worker_is_erased(
        study, owner, settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks):
    from campaigns.services import exports

    settings.EXPORT_SPOOL_DIR = tmp_path / "spool"
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    worker = work(study, RAW_ID)
    job = exports.export_job_create(campaign=study, requested_by=owner, fmt="jsonl",
                                    enqueue=False)
    real_scope = exports.export_scope

    def erased_meanwhile(**kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            worker_erase(worker=worker)
        return real_scope(**kwargs)

    monkeypatch.setattr(exports, "export_scope", erased_meanwhile)
    exports.export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and job.file == ""
    assert not any((tmp_path / "exports").rglob("*.jsonl"))
    assert list((tmp_path / "spool").iterdir()) == []


def test_erasing_deletes_the_campaigns_cached_statistics(study, django_capture_on_commit_callbacks):
    from campaigns.models import StatisticsResult
    from campaigns.services.statistics import Kind, statistics_request

    worker = work(study, RAW_ID)
    statistics_request(campaign=study, kind=Kind.STATISTICS, options={})  # computed (eager)
    assert StatisticsResult.objects.get().result["counts"]["annotations"] == 2
    worker_erase(worker=worker)
    assert not StatisticsResult.objects.filter(campaign=study).exists()


def test_erasure_deletes_the_workers_qualification_test_and_its_answers(owner):
    from tests.work.test_qualification import GOOD, qualified_campaign, start, take

    campaign = qualified_campaign(owner)
    worker, test = start(campaign)
    take(test, [GOOD] * 3)
    worker_erase(worker=worker)
    assert not Qualification.objects.exists() and not QualificationAnswer.objects.exists()
