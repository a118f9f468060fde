"""`make demo`'s processes, measured: a worker's start-up time and memory, and how long a POST
that starts a judge run or an export takes to answer 202 while a real worker runs the job.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_bench \
        .venv/bin/python bench/demo_jobs.py

It runs `python -m annotate.demo serve` (migrate, demo_setup, a worker with beat, runserver) on
DATABASE_URL with nothing else configured, the demo judge's endpoint pointed at a socket that
accepts and never answers. Then, on a seed campaign and on a copy with ITEMS items and as many
annotations, REPEAT times each: POST judges/local-llm/runs/ and POST exports/ through the API
with the admin's token, timing each request to its 202 (and each job to the worker's start).
"""
from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ITEMS = int(os.environ.get("BENCH_ITEMS", 20_000))
REPEAT = int(os.environ.get("BENCH_REPEAT", 5))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _silent_endpoint() -> str:
    """A TCP server that accepts connections and never answers (a judge endpoint that hangs)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held = []
    threading.Thread(target=lambda: [held.append(server.accept()) for _ in iter(int, 1)],
                     daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}/v1"


def _tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def worker_cost(env: dict) -> tuple[list[float], list[float], list[float]]:
    """Start-up seconds (to every one "ready."), RSS and USS in MB of the demo's workers (one
    per queue, beat in the periodic one's)."""
    from annotate.demo import worker_commands

    starts, rss, uss = [], [], []
    for n in range(3):
        logs = [ROOT / f".bench-worker-{n}-{i}.log" for i in range(4)]
        started = time.monotonic()
        procs = []
        for log, command in zip(logs, worker_commands(Path(f"/tmp/bench-beat-{n}")), strict=True):
            with log.open("wb") as out:
                procs.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                              stderr=subprocess.STDOUT, start_new_session=True))
        while not all(b" ready." in log.read_bytes() for log in logs):
            for proc, log in zip(procs, logs, strict=True):
                assert proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.05)
        starts.append(time.monotonic() - started)
        time.sleep(5)
        tree = [p for proc in procs for p in _tree(proc.pid)]
        rss.append(sum(p.memory_info().rss for p in tree) / 2**20)
        uss.append(sum(p.memory_full_info().uss for p in tree) / 2**20)
        for proc in procs:
            proc.terminate()
            proc.wait()
        for log in logs:
            log.unlink()
    return starts, rss, uss


def _post(url: str, token: str, body: dict) -> tuple[int, float, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Token {token}",
                                              "Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        payload = json.loads(response.read())
        return response.status, time.perf_counter() - started, payload


def _big_copy(seed_slug: str):
    from datetime import timedelta

    from django.utils import timezone

    from campaigns.models import Annotation, Assignment, Campaign, Item, Worker
    from campaigns.services.judges import judge_demo_ensure

    Campaign.objects.filter(slug="bench-big").delete()
    seed = Campaign.objects.get(slug=seed_slug)
    big = Campaign.objects.get(pk=seed.pk)
    big.pk, big.slug, big.name = None, "bench-big", "bench: big copy"
    big.save()
    items = Item.objects.bulk_create(
        Item(campaign=big, external_id=f"i{n}", system=f"s{n % 4}", slots_wanted=3,
             data={"prompt": f"P{n}", "completion": f"C{n}"}) for n in range(ITEMS))
    workers = Worker.objects.bulk_create(
        Worker(campaign=big, platform="prolific", platform_id=f"{n:024x}") for n in range(50))
    deadline = timezone.now() + timedelta(hours=1)
    done = Assignment.objects.bulk_create(
        Assignment(campaign=big, worker=workers[n % 50], deadline=deadline, status="submitted",
                   token=f"bench-{n}") for n in range(ITEMS))
    Annotation.objects.bulk_create(
        Annotation(campaign=big, assignment=a, item=i, worker=a.worker,
                   answers={"coherence": 3, "sentiment": 4})
        for a, i in zip(done, items, strict=True))
    judge_demo_ensure(campaign=big)
    return big


def main() -> None:
    os.environ.pop("CELERY_BROKER_URL", None)
    port = _free_port()
    env = {**os.environ, "LLM_JUDGE_LOCAL_URL": _silent_endpoint(),
           "LLM_JUDGE_TIMEOUT_SECONDS": "30", "PYTHONUNBUFFERED": "1",
           "RATELIMIT_PER_TOKEN": "1000000", "DJANGO_SETTINGS_MODULE": "annotate.settings"}
    os.environ.update({k: env[k] for k in ("LLM_JUDGE_LOCAL_URL", "DJANGO_SETTINGS_MODULE")})
    starts, rss, uss = worker_cost(env)
    print(f"worker (2 pool processes + beat): ready in {statistics.median(starts):.2f} s "
          f"(runs {', '.join(f'{s:.2f}' for s in starts)}); RSS {statistics.median(rss):.0f} MB "
          f"summed over its processes, USS {statistics.median(uss):.0f} MB")

    log = (ROOT / ".bench-demo.log").open("wb")
    demo = subprocess.Popen([sys.executable, "-m", "annotate.demo", "serve", "127.0.0.1",
                             str(port)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        while not (b" ready." in (ROOT / ".bench-demo.log").read_bytes()
                   and b"Quit the server" in (ROOT / ".bench-demo.log").read_bytes()):
            assert demo.poll() is None, (ROOT / ".bench-demo.log").read_text()
            time.sleep(0.2)
        import django

        django.setup()
        from django.contrib.auth import get_user_model
        from rest_framework.authtoken.models import Token

        from campaigns.models import ExportJob, JudgeRun

        token = Token.objects.get_or_create(user=get_user_model().objects.get(
            username="admin"))[0].key
        big = _big_copy("movie-continuation")
        api = f"http://127.0.0.1:{port}/api/campaigns"
        for slug, size in (("movie-continuation", "seed"), (big.slug, f"{ITEMS:,} items")):
            for name, path, body, model in (
                    ("judge run", "judges/local-llm/runs/", {"scope": "all"}, JudgeRun),
                    ("export csv", "exports/", {"format": "csv"}, ExportJob)):
                took, picked = [], []
                for _ in range(REPEAT):
                    code, seconds, payload = _post(f"{api}/{slug}/{path}", token, body)
                    assert code == 202, (code, payload)
                    took.append(seconds * 1000)
                    deadline = time.monotonic() + 30
                    while time.monotonic() < deadline:
                        job = model.objects.get(pk=payload["id"])
                        if job.status != "queued":
                            break
                        time.sleep(0.02)
                    picked.append(job.status)
                    if model is JudgeRun:  # the endpoint never answers: stop it for the next
                        from campaigns.services.judge_runs import judge_run_cancel

                        judge_run_cancel(run=job)
                print(f"{name:<11} {size:>14}: POST to 202 median {statistics.median(took):.0f} "
                      f"ms, max {max(took):.0f} ms ({REPEAT} runs); worker took them: "
                      f"{sorted(set(picked))}")
    finally:
        demo.terminate()
        demo.wait()
        log.close()
        (ROOT / ".bench-demo.log").unlink()


if __name__ == "__main__":
    main()
