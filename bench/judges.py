"""Benchmark: 10,000 items judged by a judge run against a stand-in endpoint answering at once,
vs validating and inserting the same answers with the judgment import.

Usage:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_bench \
        .venv/bin/python bench/judges.py [--items 10000] [--concurrency 8]

The stand-in (tests/judges/standin.py) runs in its own process, so its CPU does not count.
Three timings, measured in the same run:
  run      the judge run (judge_run_execute): render each prompt, send it, parse and validate
           the answer, store output and annotation;
  http     the same requests alone (same client, threads and payload size, nothing rendered,
           validated or stored): what any caller pays the endpoint;
  import   judgments_import of the same answers for the same items (parse + validate + insert).
The platform's overhead per output is (run - http) / items, printed next to import / items,
in wall-clock time (rendering and storing overlap the waits for answers) and in this
process's CPU time (all threads: what the work costs however it overlaps).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from campaigns.judging.client import ChatClient, RateLimiter  # noqa: E402
from campaigns.models import Campaign, Item, JudgeRun  # noqa: E402
from campaigns.schema import parse_schema  # noqa: E402
from campaigns.services.items import items_import  # noqa: E402
from campaigns.services.judge_runs import judge_run_execute, judge_run_start  # noqa: E402
from campaigns.services.judges import judge_create  # noqa: E402
from campaigns.services.judgments import JudgmentRow, judgments_import  # noqa: E402

RPM = 1_000_000  # the highest a judge takes: the same limiter in both timings
SEED = ROOT / "fixtures" / "comparative-rubric" / "campaign.json"
WORDS = ("python java the answer compares speed typing libraries tooling jobs both languages "
         "are popular but differ in performance and ease of learning").split()
STANDIN = """
import sys, time
sys.path.insert(0, {root!r})
from tests.judges.standin import Reply, StandIn
server = StandIn(lambda body, n: Reply({answer!r})).start()
print(server.base_url, flush=True)
time.sleep(10**6)
"""


def make_campaign(owner, n: int) -> Campaign:
    config = json.loads(SEED.read_text())
    Campaign.objects.filter(slug="bench-judges").delete()
    campaign = Campaign.objects.create(
        owner=owner, slug="bench-judges", name="bench judges", schema=config["schema"],
        instructions=config["instructions"], examples=config["examples"], status="live")
    rng = random.Random(3)
    rows = [{"id": f"q{i}", "system": f"sys-{i % 4}", "question": f"What is better {i}?",
             "answer": " ".join(rng.choice(WORDS) for _ in range(250))} for i in range(n)]
    items_import(campaign=campaign, content="\n".join(map(json.dumps, rows)).encode(),
                 filename="items.jsonl")
    return campaign


def start_standin(answer: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", STANDIN.format(root=str(ROOT), answer=answer)],
                            stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def time_http(url: str, payload: dict, n: int, concurrency: int) -> float:
    client = ChatClient(base_url=url, api_key=None, timeout=30, retries=0, max_backoff=0,
                        limiter=RateLimiter(RPM), stop=threading.Event())
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda _: client.complete(payload), range(n)))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    owner, _ = get_user_model().objects.get_or_create(username="bench")
    campaign = make_campaign(owner, args.items)
    schema = parse_schema(campaign.schema)
    criteria = schema.questions[0].criteria
    answer = json.dumps({"rubric": {c.id: random.Random(c.id).randint(c.min, c.max)
                                    for c in criteria}})
    proc, url = start_standin(answer)
    # The stand-in on loopback is one of the operator's providers (loopback is refused else).
    settings.LLM_PROVIDERS = {**settings.LLM_PROVIDERS, "bench": {"base_url": url}}
    try:
        judge = judge_create(campaign=campaign, name="bench-judge", provider="bench", model="m",
                             concurrency=args.concurrency, requests_per_minute=RPM)
        run = judge_run_start(judge=judge, scope={"scope": "all"}, enqueue=False)
        started, cpu = time.perf_counter(), time.process_time()
        judge_run_execute(run_id=run.pk)
        run_seconds, run_cpu = time.perf_counter() - started, time.process_time() - cpu
        run = JudgeRun.objects.get(pk=run.pk)
        assert (run.status, run.done) == ("done", args.items), (run.status, run.error)
        sample = campaign.items.first()
        from campaigns.selectors.judges import judge_prompt_preview
        prompt = judge_prompt_preview(judge, sample).prompt
        payload = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
        cpu = time.process_time()
        http_seconds = time_http(url, payload, args.items, args.concurrency)
        http_cpu = time.process_time() - cpu
    finally:
        proc.kill()
    rows = [JudgmentRow(n, f"q{n}", "import-judge", answer) for n in range(args.items)]
    started, cpu = time.perf_counter(), time.process_time()
    judgments_import(campaign=campaign, rows=rows)
    import_seconds, import_cpu = time.perf_counter() - started, time.process_time() - cpu
    assert Item.objects.filter(campaign=campaign).count() == args.items
    per = 1e6 / args.items
    print(f"items: {args.items}, concurrency {args.concurrency}, prompt {len(prompt)} chars")
    print("                     wall s   us/output |  CPU s (this process)  us/output")
    for label, wall, cpu in (
            ("judge run", run_seconds, run_cpu), ("  HTTP alone", http_seconds, http_cpu),
            ("  overhead", run_seconds - http_seconds, run_cpu - http_cpu),
            ("judgment import", import_seconds, import_cpu)):
        print(f"{label:18} {wall:8.2f} {wall * per:10.0f}  | {cpu:8.2f} {cpu * per:18.0f}")
    print("overhead = run - HTTP alone (render, validate, store); import = parse, validate, "
          "insert")
    print(f"overhead / import: wall {(run_seconds - http_seconds) / import_seconds:.2f}x, "
          f"CPU {(run_cpu - http_cpu) / import_cpu:.2f}x (target <= 3x)")
    campaign.delete()


if __name__ == "__main__":
    main()
