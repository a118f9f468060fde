"""Cancel and retry, the same two routes on every kind of background job the API shows
(exports, item and judgment imports, judge runs): 200 with the cancelled job, 202 with the
job queued again, 409 (JSON) when the job's state does not allow it."""
from __future__ import annotations

from collections.abc import Callable

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..services.jobs import job_cancel_request, job_retry_request
from . import openapi

ACTIONS = {
    "cancel": (job_cancel_request, status.HTTP_200_OK,
               "Cancel the {noun} while it is queued{running} (409 once it has ended)."),
    "retry": (job_retry_request, status.HTTP_202_ACCEPTED,
              "Queue the failed or cancelled {noun} again (409 for one queued, running or "
              "done)."),
}


def job_action_api(action: str, *, noun: str, tag: str, operation: str, load: Callable,
                   output: type[serializers.Serializer], running: bool = True) -> type[APIView]:
    """The view that cancels or retries the job `load(user, **url_kwargs)` returns."""
    service, answer, doc = ACTIONS[action]

    class JobActionApi(APIView):
        @extend_schema(operation_id=f"{operation}_{action}", tags=[tag],
                       request=None, responses={answer: output, **openapi.errors(openapi.WRITE)})
        def post(self, request, **kwargs):
            job = service(job=load(request.user, **kwargs))
            return Response(output(job, context={"request": request}).data, status=answer)

    JobActionApi.post.__doc__ = doc.format(noun=noun, running=" or running" if running else "")
    JobActionApi.__name__ = JobActionApi.__qualname__ = (
        f"{noun.title().replace(' ', '')}{action.title()}Api")
    return JobActionApi
