"""The work of a judge run: prompts rendered per item, asked from a pool of `concurrency`
threads under the judge's requests-per-minute limit, results stored in batches.

Threads only talk HTTP and validate; the run's own thread stores results: every response as
a JudgeOutput (raw, failed with the reason or valid), every valid one as the judge's
annotation of the item. Each store is the run's heartbeat, and tells it whether it was
cancelled or taken over by a newer attempt.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from ..jobs.kinds import JUDGE_RUN
from ..jobs.lifecycle import job_heartbeat
from ..judging.client import (
    ChatClient,
    Completion,
    EndpointDown,
    FormatUnsupported,
    RateLimiter,
    Stopped,
)
from ..judging.outputs import OutputInvalid, output_answers, storable_text
from ..judging.prompts import (
    answers_json_schema,
    compile_template,
    prompt_context,
    prompt_hash,
    render_prompt,
)
from ..models import (
    Annotation,
    Assignment,
    AssignmentItem,
    Item,
    Judge,
    JudgeOutput,
    JudgeRun,
    Worker,
)
from ..schema import TaskSchema, parse_schema
from ..selectors.judges import (
    judge_endpoint,
    judge_scope_items,
    judge_template_text,
)

logger = logging.getLogger(__name__)

ITEMS_PER_BATCH = 500  # prompts rendered and checked against stored outputs at a time
# Store results this often: a worker killed mid-run loses at most the answers received since
# the last store (asked again by the resumed run); storing each alone would cost a
# transaction per output.
FLUSH_EVERY, FLUSH_SECONDS = 200, 0.25
IDLE_BEAT_SECONDS = 2.0


@dataclass
class _Unit:
    item: Item
    prompt: str
    digest: str
    sample: int
    attempt: int  # the next attempt's number


@dataclass
class _Result:
    unit: _Unit
    outputs: list[dict] = field(default_factory=list)  # JudgeOutput fields, one per attempt
    values: dict | None = None  # the valid answers' annotation values, if any
    requests: int = 0
    error: EndpointDown | None = None


class Runner:
    def __init__(self, run: JudgeRun):
        self.run, self.judge = run, run.judge
        self.campaign = self.judge.campaign
        self.schema: TaskSchema = parse_schema(self.campaign.schema)
        self.template = compile_template(judge_template_text(self.judge, self.schema))
        self.stop = threading.Event()
        self.format = self.judge.response_format
        endpoint = judge_endpoint(self.judge)
        self.client = ChatClient(
            base_url=endpoint.base_url, api_key=endpoint.api_key,
            timeout=settings.LLM_JUDGE_TIMEOUT_SECONDS,
            retries=settings.LLM_JUDGE_REQUEST_RETRIES,
            max_backoff=settings.LLM_JUDGE_MAX_BACKOFF_SECONDS,
            limiter=RateLimiter(self.judge.requests_per_minute), stop=self.stop)
        self.buffer: list[_Result] = []
        self.flushed_at = self.beat_at = time.monotonic()
        self.store = _Store(self.judge)

    # The run's thread: plan units, keep the pool busy, store results, watch for a stop.
    def execute(self) -> str:
        pool = ThreadPoolExecutor(max_workers=self.judge.concurrency,
                                  thread_name_prefix=f"judge-run-{self.run.pk}")
        in_flight: set[Future] = set()
        error: BaseException | None = None
        try:
            for unit in self._units():
                while len(in_flight) >= 2 * self.judge.concurrency:
                    error = self._collect(in_flight) or error
                    if error or self.stop.is_set():
                        break
                if error or self.stop.is_set():
                    break
                in_flight.add(pool.submit(self._ask, unit))
            while in_flight:
                error = self._collect(in_flight) or error
        finally:
            if error is not None:
                self.stop.set()
            pool.shutdown(wait=True)
            self._flush()
        if error:
            raise error
        return "stopped" if self.stop.is_set() else "finished"

    def _collect(self, in_flight: set[Future]) -> BaseException | None:
        finished, _ = wait(in_flight, timeout=FLUSH_SECONDS, return_when=FIRST_COMPLETED)
        error = None
        for future in finished:
            in_flight.discard(future)
            result = future.result()
            self.buffer.append(result)
            if result.error is not None:
                error = error or result.error
                self.stop.set()  # no new requests; those in flight finish and are stored
        if (len(self.buffer) >= FLUSH_EVERY
                or time.monotonic() - self.flushed_at >= FLUSH_SECONDS):
            self._flush()
        return error

    def _units(self):
        items = judge_scope_items(self.judge, self.run.scope).only(
            "id", "external_id", "data", "control", "gold", "gold_tolerance")
        batch: list[Item] = []
        for item in items.iterator(chunk_size=ITEMS_PER_BATCH):
            batch.append(item)
            if len(batch) == ITEMS_PER_BATCH:
                yield from self._batch_units(batch)
                batch = []
            if self.stop.is_set():
                return
        if batch:
            yield from self._batch_units(batch)

    def _batch_units(self, items: list[Item]):
        prompts = {}
        for item in items:
            prompt = render_prompt(self.template, prompt_context(
                campaign=self.campaign, schema=self.schema, item_data=item.data,
                external_id=item.external_id))
            prompts[item.pk] = (prompt, prompt_hash(prompt))
        stored = {}
        for row in (JudgeOutput.objects.filter(judge=self.judge, item__in=[i.pk for i in items])
                    .values("item_id", "prompt_hash", "sample")
                    .annotate(ok=Count("id", filter=Q(failed=False)), last=Max("attempt"))):
            stored[(row["item_id"], row["prompt_hash"], row["sample"])] = row
        done = failed = 0
        units = []
        for item in items:
            prompt, digest = prompts[item.pk]
            for sample in range(self.judge.samples):
                row = stored.get((item.pk, digest, sample))
                if row and row["ok"]:
                    done += 1
                elif row and row["last"] >= self.judge.max_attempts:
                    failed += 1
                else:
                    units.append(_Unit(item, prompt, digest, sample,
                                       (row["last"] if row else 0) + 1))
        self._count(done=done, failed=failed)
        return units

    def _payload(self, unit: _Unit) -> dict:
        payload = {"model": self.judge.model, **self.judge.parameters,
                   "messages": [{"role": "user", "content": unit.prompt}]}
        if self.format == Judge.ResponseFormat.JSON_SCHEMA:
            payload["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "answers", "strict": False,
                "schema": answers_json_schema(self.schema, unit.item.data)}}
        elif self.format == Judge.ResponseFormat.JSON_OBJECT:
            payload["response_format"] = {"type": "json_object"}
        return payload

    # A pool thread: HTTP and validation only (no database).
    def _ask(self, unit: _Unit) -> _Result:
        result = _Result(unit)
        for attempt in range(unit.attempt, self.judge.max_attempts + 1):
            try:
                completion = self._complete(unit, result)
            except Stopped:
                break  # the outputs so far are still stored
            except EndpointDown as exc:
                result.error = exc
                break
            output, values = self._judge_output(unit, attempt, completion)
            result.outputs.append(output)
            if values is not None:
                result.values = values
                break
        return result

    def _complete(self, unit: _Unit, result: _Result) -> Completion:
        try:
            completion = self.client.complete(self._payload(unit))
        except FormatUnsupported:
            # The endpoint knows no JSON-schema mode: the prompt's own instruction remains.
            logger.info("judge %s: %s refuses response_format; asking in plain text",
                        self.judge.pk, self.client.url)
            self.format = Judge.ResponseFormat.NONE
            result.requests += 1
            completion = self.client.complete(self._payload(unit))
        result.requests += completion.requests
        return completion

    def _judge_output(self, unit: _Unit, attempt: int, c: Completion) -> tuple[dict, dict | None]:
        usage = c.usage if isinstance(c.usage, dict) else {}
        output = {"item": unit.item, "prompt_hash": unit.digest, "sample": unit.sample,
                  "attempt": attempt, "raw_output": storable_text(c.content or c.refusal),
                  "usage": usage, "seconds": round(c.seconds, 4),
                  "prompt_tokens": _tokens(usage.get("prompt_tokens")),
                  "completion_tokens": _tokens(usage.get("completion_tokens"))}
        reason, values = "", None
        if c.refusal:
            reason = f"the model refused: {storable_text(c.refusal[:500])}"
        elif c.finish_reason == "unreadable":
            # Nothing of the body is stored: it is whatever the URL's server holds.
            reason = (f"the endpoint's answer ({c.raw.get('bytes', 0):,} bytes) is not a "
                      "chat completion")
        elif c.finish_reason == "too_large":
            reason = f"the endpoint's answer is unusable: {c.raw.get('reason', 'too large')}"
        elif c.finish_reason == "content_filter":
            reason = "the endpoint's content filter stopped the answer"
        else:
            try:
                values = output_answers(self.schema, unit.item, c.content)
            except OutputInvalid as exc:
                reason = str(exc)
                if c.finish_reason == "length":
                    reason += " (cut off at max_tokens)"
        output.update(failed=bool(reason), failure_reason=reason,
                      answers=values["answers"] if values else None)
        return output, values

    # The run's thread again: store, count, and learn whether to stop.
    def _flush(self) -> None:
        results, self.buffer = self.buffer, []
        self.flushed_at = time.monotonic()
        if results:
            with transaction.atomic():
                self.store.save(self.run, results)
            done = sum(1 for r in results if r.values is not None)
            failed = sum(1 for r in results if r.values is None
                         and r.outputs and r.outputs[-1]["attempt"] >= self.judge.max_attempts)
            self._count(done=done, failed=failed, results=results)
        elif time.monotonic() - self.beat_at >= IDLE_BEAT_SECONDS:
            self._count()  # the heartbeat, and a look for a cancel, while answers are slow

    def _count(self, *, done: int = 0, failed: int = 0, results: list[_Result] = ()) -> None:
        outputs = [o for r in results for o in r.outputs]
        owned = job_heartbeat(
            JUDGE_RUN, self.run, done=F("done") + done, failed=F("failed") + failed,
            requests=F("requests") + sum(r.requests for r in results),
            prompt_tokens=F("prompt_tokens") + sum(o["prompt_tokens"] or 0 for o in outputs),
            completion_tokens=F("completion_tokens")
            + sum(o["completion_tokens"] or 0 for o in outputs))
        self.beat_at = time.monotonic()
        if not owned:
            self.stop.set()  # cancelled, or a newer attempt took over


def _tokens(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


class _Store:
    """Writes a batch of results: outputs raw, valid answers as the judge's annotations.

    Each sample of a judge has its own submitted assignment of the judge's Worker (platform
    "llm", platform id = the judge's name), so an item has one annotation per sample."""

    def __init__(self, judge: Judge):
        self.judge = judge
        self.assignments: dict[int, Assignment] = {}

    def _assignment(self, sample: int) -> Assignment:
        if sample not in self.assignments:
            judge = self.judge
            worker, _ = Worker.objects.get_or_create(
                campaign_id=judge.campaign_id, platform=Worker.Platform.LLM,
                platform_id=judge.name)
            Worker.objects.select_for_update().filter(pk=worker.pk).first()
            session = f"judge-{judge.pk}-sample-{sample}"
            assignment = Assignment.objects.filter(worker=worker, session_id=session).first()
            if assignment is None:
                now = timezone.now()
                assignment = Assignment.objects.create(
                    campaign_id=judge.campaign_id, worker=worker, session_id=session,
                    status=Assignment.Status.SUBMITTED, deadline=now, submitted_at=now)
            self.assignments[sample] = assignment
        return self.assignments[sample]

    def save(self, run: JudgeRun, results: list[_Result]) -> None:
        annotations = {}
        for sample in sorted({r.unit.sample for r in results if r.values is not None}):
            valid = [r for r in results if r.values is not None and r.unit.sample == sample]
            annotations.update(self._annotate(self._assignment(sample), valid))
        rows = []
        for r in results:
            for output in r.outputs:
                annotation = annotations.get(id(r)) if not output["failed"] else None
                rows.append(JudgeOutput(judge=self.judge, run=run, model=self.judge.model,
                                        annotation=annotation, **output))
        # A superseded attempt may have stored the same attempt: the first one stays.
        JudgeOutput.objects.bulk_create(rows, ignore_conflicts=True)

    def _annotate(self, assignment: Assignment, results: list[_Result]) -> dict[int, Annotation]:
        existing = {a.item_id: a for a in Annotation.objects.filter(
            assignment=assignment, item__in=[r.unit.item.pk for r in results])}
        now, fresh, changed, out = timezone.now(), [], [], {}
        for r in results:
            item = r.unit.item
            annotation = existing.get(item.pk)
            if annotation is None:
                annotation = Annotation(campaign_id=assignment.campaign_id,
                                        assignment=assignment, item=item,
                                        worker_id=assignment.worker_id)
                existing[item.pk] = annotation
                fresh.append(annotation)
            elif annotation not in changed:
                changed.append(annotation)
            annotation.answers = r.values["answers"]
            annotation.control_passed = r.values["control_passed"]
            annotation.updated_at = now  # bulk_update skips auto_now
            out[id(r)] = annotation
        if changed:
            Annotation.objects.bulk_update(changed, ["answers", "control_passed", "updated_at"])
        if fresh:
            last = assignment.slots.aggregate(n=Max("position"))["n"] or 0
            # holds_slot=False: a judge takes no item's slot (slots count human work only).
            AssignmentItem.objects.bulk_create([
                AssignmentItem(assignment=assignment, item=a.item, position=last + n,
                               holds_slot=False) for n, a in enumerate(fresh, start=1)])
            Annotation.objects.bulk_create(fresh)
        return out
