"""LLM judges: create them, start, cancel and resume runs, and run them (the Celery task).

A run renders each item's prompt, skips every (item, prompt hash, sample) whose valid output
is stored or whose attempts are used up, and asks the endpoint for the rest from a pool of
`concurrency` threads under the judge's requests-per-minute limit. Threads only talk HTTP and
validate; the run's own thread stores results in batches: every response as a JudgeOutput
(raw, failed with the reason or valid), every valid one as the judge's annotation of the item.
The run's state lives on its JudgeRun row, claimed by bumping `attempts` as exports do.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone
from kombu.exceptions import KombuError

from ..errors import Conflict, ServiceError
from ..judging.client import (
    ChatClient,
    Completion,
    EndpointDown,
    FormatUnsupported,
    RateLimiter,
    Stopped,
)
from ..judging.outputs import OutputInvalid, output_answers
from ..judging.prompts import (
    PromptTemplateInvalid,
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
    Campaign,
    Item,
    Judge,
    JudgeOutput,
    JudgeRun,
    Worker,
)
from ..schema import SchemaInvalid, TaskSchema, parse_schema
from ..selectors.judges import (
    API_KEY_ENV,
    judge_api_key,
    judge_base_url,
    judge_run_estimate,
    judge_scope_items,
    judge_template_text,
)

logger = logging.getLogger(__name__)

PARAMETERS = {"temperature": (float, 0, 2), "top_p": (float, 0, 1),
              "max_tokens": (int, 1, 200_000), "seed": (int, -(2**31), 2**31 - 1),
              "presence_penalty": (float, -2, 2), "frequency_penalty": (float, -2, 2)}
LIMITS = {"samples": (1, 20), "concurrency": (1, 64), "requests_per_minute": (1, 1_000_000),
          "max_attempts": (1, 10)}
URL_CHECK = URLValidator(schemes=["http", "https"])
ITEMS_PER_BATCH = 500  # prompts rendered and checked against stored outputs at a time
# Store results this often: a worker killed mid-run loses at most the answers received since
# the last store (asked again by the resumed run); storing each alone would cost a
# transaction per output.
FLUSH_EVERY, FLUSH_SECONDS = 200, 0.25
IDLE_BEAT_SECONDS = 2.0
MAX_RUN_ATTEMPTS = 5
ACTIVE = (JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING)
ENQUEUE_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}


# --- judges ------------------------------------------------------------------------------------


def judge_problems(values: dict[str, Any]) -> dict[str, str]:
    """Every problem of a judge's settings, keyed by field ({} when they are fine)."""
    problems: dict[str, str] = {}
    name = values.get("name")
    if (not isinstance(name, str) or not name.strip() or len(name) > 200
            or any(c == "/" or ord(c) < 32 for c in name)):
        problems["name"] = "a name of 1-200 characters without slashes (it is part of URLs)"
    url = values.get("base_url") or ""
    try:
        if url:
            URL_CHECK(url)
    except ValidationError:
        problems["base_url"] = "an http:// or https:// base URL (or empty for the local setting)"
    model = values.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > 200:
        problems["model"] = "a model name of 1-200 characters"
    key = values.get("api_key_env") or ""
    if key and not (isinstance(key, str) and API_KEY_ENV.match(key)):
        problems["api_key_env"] = ("the NAME of an environment variable ending in _API_KEY "
                                   "(e.g. OPENAI_API_KEY), never the key itself")
    problems.update(_parameter_problems(values.get("parameters") or {}))
    for name_, (low, high) in LIMITS.items():
        value = values.get(name_)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not low <= value <= high):
            problems[name_] = f"a whole number from {low} to {high}"
    fmt = values.get("response_format")
    if fmt is not None and fmt not in Judge.ResponseFormat.values:
        problems["response_format"] = f"one of {', '.join(Judge.ResponseFormat.values)}"
    template = values.get("prompt_template") or ""
    if template:
        try:
            compile_template(template)
        except PromptTemplateInvalid as exc:
            problems["prompt_template"] = str(exc)
    return problems


def _parameter_problems(parameters: Any) -> dict[str, str]:
    if not isinstance(parameters, dict):
        return {"parameters": "an object such as {\"temperature\": 0, \"max_tokens\": 512}"}
    problems = {}
    for key, value in parameters.items():
        if key not in PARAMETERS:
            problems[f"parameters.{key}"] = f"unknown; known: {', '.join(PARAMETERS)}"
            continue
        kind, low, high = PARAMETERS[key]
        ok = (not isinstance(value, bool) and isinstance(value, int | float)
              and (kind is float or isinstance(value, int)) and low <= value <= high)
        if not ok:
            problems[f"parameters.{key}"] = f"a {kind.__name__} from {low} to {high}"
    return problems


JUDGE_FIELDS = ("name", "base_url", "model", "api_key_env", "parameters", "samples",
                "concurrency", "requests_per_minute", "max_attempts", "response_format",
                "prompt_template", "price_input_per_million", "price_output_per_million")


def judge_create(*, campaign: Campaign, **values: Any) -> Judge:
    """A new judge; ServiceError 400 naming every bad field, 409 if the name is taken."""
    values = {k: v for k, v in values.items() if k in JUDGE_FIELDS and v is not None}
    problems = judge_problems(values)
    if problems:
        raise ServiceError("The judge's settings are invalid.", code="judge_invalid",
                           extra={"errors": problems})
    values["name"] = values["name"].strip()
    if Judge.objects.filter(campaign=campaign, name=values["name"]).exists():
        raise Conflict(f"This campaign already has a judge named {values['name']!r}.")
    return Judge.objects.create(campaign=campaign, **values)


DEMO_JUDGE = "local-llm"


def judge_demo_ensure(*, campaign: Campaign) -> tuple[Judge, bool]:
    """The demo's judge: no base URL of its own, so it uses LLM_JUDGE_LOCAL_URL, which is
    unset by default: nothing is called until someone points it at a local server."""
    return Judge.objects.get_or_create(
        campaign=campaign, name=DEMO_JUDGE,
        defaults={"base_url": "", "model": getattr(settings, "LLM_JUDGE_LOCAL_MODEL", ""),
                  "parameters": {"temperature": 0, "max_tokens": 1024, "seed": 1},
                  "concurrency": 2, "requests_per_minute": 120})


# --- runs: start, cancel, resume ---------------------------------------------------------------


def _clean_scope(scope: Any) -> dict:
    if not isinstance(scope, dict):
        raise ServiceError('The scope must be {"scope": "all"}, {"system": ...} or '
                           '{"sample": n}.', code="bad_scope")
    keys = set(scope) & {"scope", "system", "sample"}
    if set(scope) - {"scope", "system", "sample"} or len(keys) != 1:
        raise ServiceError('Give exactly one of "scope": "all", "system" or "sample".',
                           code="bad_scope")
    if "scope" in scope and scope["scope"] != "all":
        raise ServiceError('"scope" takes only "all".', code="bad_scope")
    if "system" in scope and (not isinstance(scope["system"], str) or not scope["system"]):
        raise ServiceError('"system" must be a system name.', code="bad_scope")
    sample = scope.get("sample", 1)
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise ServiceError('"sample" must be a whole number of items, at least 1.',
                           code="bad_scope")
    return dict(scope)


def judge_run_start(*, judge: Judge, requested_by=None, scope: Any, enqueue: bool = True
                    ) -> JudgeRun:
    """Record a run (with its estimate) and queue it once the transaction commits.

    409 when the judge has no endpoint or a run of it is queued or running; 400 for a bad
    scope or a campaign whose schema or template does not work."""
    scope = _clean_scope(scope)
    if not judge_base_url(judge):
        raise Conflict("The judge has no endpoint: give it a base URL or set "
                       "LLM_JUDGE_LOCAL_URL (e.g. http://127.0.0.1:11434/v1 for Ollama).",
                       extra={"field": "base_url"})
    try:
        estimate = judge_run_estimate(judge, scope)
    except SchemaInvalid as exc:
        raise ServiceError(f"The campaign's schema is invalid: {exc}") from None
    except PromptTemplateInvalid as exc:
        raise ServiceError(str(exc), code="judge_invalid",
                           extra={"errors": {"prompt_template": str(exc)}}) from None
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=judge.pk).first()  # one start at a time
        active = judge.runs.filter(status__in=ACTIVE).first()
        if active is not None:
            raise Conflict(f"Run {active.pk} of this judge is {active.status}; cancel it or "
                           "wait for it to end.", extra={"run": active.pk})
        run = JudgeRun.objects.create(judge=judge, requested_by=requested_by, scope=scope,
                                      total=estimate["units"], estimate=estimate)
        if enqueue:
            transaction.on_commit(lambda: judge_run_enqueue(run=run))
    return run


def judge_run_enqueue(*, run: JudgeRun) -> None:
    """Send the run to the task queue; a broker that is down fails the run and raises 503."""
    from ..tasks import task_judge_run  # here: campaigns.tasks imports this module

    try:
        task_judge_run.apply_async(kwargs={"run_id": run.pk}, retry=True,
                                   retry_policy=ENQUEUE_RETRY)
    except (KombuError, OSError) as exc:
        _finish(run, JudgeRun.Status.FAILED, f"the task queue is unreachable: {exc}")
        raise ServiceError("The run could not be started: the task queue is unreachable.",
                           code="broker_unreachable", status=503) from None


def judge_run_cancel(*, run: JudgeRun) -> JudgeRun:
    """Stop a queued or running run: requests in flight finish and are stored, no new ones
    are sent. 409 if the run already ended."""
    changed = JudgeRun.objects.filter(pk=run.pk, status__in=ACTIVE).update(
        status=JudgeRun.Status.CANCELLED, finished_at=timezone.now())
    run.refresh_from_db()
    if not changed:
        raise Conflict(f"The run is {run.status}; only a queued or running run can be "
                       "cancelled.", extra={"status": run.status})
    return run


def judge_run_resume(*, run: JudgeRun, enqueue: bool = True) -> JudgeRun:
    """Queue a cancelled or failed run again; what it stored is never asked for again."""
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=run.judge_id).first()
        if run.judge.runs.filter(status__in=ACTIVE).exclude(pk=run.pk).exists():
            raise Conflict("Another run of this judge is queued or running.")
        changed = JudgeRun.objects.filter(
            pk=run.pk, status__in=(JudgeRun.Status.CANCELLED, JudgeRun.Status.FAILED)
        # `attempts` goes on counting: a cancelled attempt still finishing its requests in
        # flight sees a newer attempt at its next store and stops there.
        ).update(status=JudgeRun.Status.QUEUED, error="", finished_at=None)
        run.refresh_from_db()
        if not changed:
            raise Conflict(f"The run is {run.status}; only a cancelled or failed run can be "
                           "resumed.", extra={"status": run.status})
        if enqueue:
            transaction.on_commit(lambda: judge_run_enqueue(run=run))
    return run


def judge_runs_sweep_stale(*, older_than: timedelta | None = None) -> int:
    """Queue again the running runs whose heartbeat stopped (their worker died); a run that
    was claimed MAX_RUN_ATTEMPTS times fails. Returns how many were queued."""
    older_than = older_than if older_than is not None else timedelta(
        seconds=settings.LLM_JUDGE_STALE_SECONDS)
    stale = JudgeRun.objects.filter(status=JudgeRun.Status.RUNNING,
                                    heartbeat_at__lt=timezone.now() - older_than)
    queued = 0
    for run in stale:
        if run.attempts >= MAX_RUN_ATTEMPTS:
            _finish(run, JudgeRun.Status.FAILED, f"gave up after {run.attempts} attempts: the "
                    "run's worker stopped each time (killed, restarted or out of memory)")
            continue
        # Conditional on the attempt seen: a run that came back to life is left alone.
        if JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING,
                                   attempts=run.attempts).update(status=JudgeRun.Status.QUEUED):
            judge_run_enqueue(run=run)
            queued += 1
    return queued


def _finish(run: JudgeRun, status: str, error: str = "", attempt: int | None = None) -> bool:
    rows = JudgeRun.objects.filter(pk=run.pk, status__in=ACTIVE)
    if attempt is not None:
        rows = rows.filter(attempts=attempt)
    return bool(rows.update(status=status, error=error[:5000], finished_at=timezone.now()))


# --- running -----------------------------------------------------------------------------------


def judge_run_execute(*, run_id: int) -> None:
    """Run to done, failed or cancelled; return quietly if the run is gone or has ended."""
    run = _claim(run_id)
    if run is None:
        return
    try:
        outcome = _Runner(run).execute()
    except EndpointDown as exc:
        _finish(run, JudgeRun.Status.FAILED, f"the endpoint is down: {exc}", run.attempts)
        return
    except (ServiceError, SchemaInvalid, PromptTemplateInvalid) as exc:
        _finish(run, JudgeRun.Status.FAILED, getattr(exc, "message", str(exc)), run.attempts)
        return
    except Exception as exc:
        logger.exception("judge run %s failed", run.pk)
        _finish(run, JudgeRun.Status.FAILED, f"unexpected error ({type(exc).__name__}): {exc}",
                run.attempts)
        return
    if outcome == "finished":
        _finish(run, JudgeRun.Status.DONE, attempt=run.attempts)


def _claim(run_id: int) -> JudgeRun | None:
    # The row lock makes two deliveries of the same run take turns; the later one's attempt
    # number wins and the earlier one stops at its next store.
    with transaction.atomic():
        run = (JudgeRun.objects.select_for_update().select_related("judge__campaign")
               .filter(pk=run_id).first())
        if run is None or run.status not in ACTIVE:
            return None
        run.attempts += 1
        run.status = JudgeRun.Status.RUNNING
        run.started_at = run.started_at or timezone.now()
        run.heartbeat_at = timezone.now()
        run.done = run.failed = 0
        run.save(update_fields=["attempts", "status", "started_at", "heartbeat_at", "done",
                                "failed"])
    return run


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


class _Runner:
    def __init__(self, run: JudgeRun):
        self.run, self.judge = run, run.judge
        self.campaign = self.judge.campaign
        self.schema: TaskSchema = parse_schema(self.campaign.schema)
        self.template = compile_template(judge_template_text(self.judge, self.schema))
        self.stop = threading.Event()
        self.format = self.judge.response_format
        self.client = ChatClient(
            base_url=judge_base_url(self.judge), api_key=judge_api_key(self.judge),
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
                  "attempt": attempt, "raw_output": c.content or c.refusal or "",
                  "usage": usage, "seconds": round(c.seconds, 4),
                  "prompt_tokens": _tokens(usage.get("prompt_tokens")),
                  "completion_tokens": _tokens(usage.get("completion_tokens"))}
        reason, values = "", None
        if c.refusal:
            reason = f"the model refused: {c.refusal[:500]}"
        elif c.finish_reason == "unreadable":
            reason, output["raw_output"] = "the endpoint's answer is not a chat completion", \
                c.raw.get("text", "")
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
        updated = JudgeRun.objects.filter(pk=self.run.pk, attempts=self.run.attempts).update(
            done=F("done") + done, failed=F("failed") + failed,
            requests=F("requests") + sum(r.requests for r in results),
            prompt_tokens=F("prompt_tokens") + sum(o["prompt_tokens"] or 0 for o in outputs),
            completion_tokens=F("completion_tokens")
            + sum(o["completion_tokens"] or 0 for o in outputs),
            heartbeat_at=timezone.now())
        self.beat_at = time.monotonic()
        status = JudgeRun.objects.filter(pk=self.run.pk).values_list("status", flat=True).first()
        if not updated or status != JudgeRun.Status.RUNNING:
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
