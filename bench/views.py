"""bench/crowd.py's ceiling: the cheapest Django view that writes one row (bench/urls.py)."""
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

TABLE = "bench_ping"  # created and dropped by bench/crowd.py, never by a migration


@csrf_exempt
@require_POST
def bench_insert(request: HttpRequest) -> HttpResponse:
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {TABLE} (at) VALUES (CURRENT_TIMESTAMP)")  # noqa: S608
    return HttpResponse("ok", content_type="text/plain")
