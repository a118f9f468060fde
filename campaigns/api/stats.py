"""Statistics endpoints: every analysis table, and one question's agreement on its own.

The analysis (pandas, numpy, scipy) is imported by the requests that need it, not when a web
process loads the URLconf: most processes never serve a statistics request.
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..analysis import N_BOOT
from ..errors import ServiceError
from ..services.statistics import Kind, Status, statistics_request
from . import openapi
from .permissions import campaign_for
from .serializers import validated

FIELD_NAME = r"^[A-Za-z0-9_.-]{1,64}$"


STATS_PARAMETERS = [
        OpenApiParameter("exclude_flagged", bool, description=(
            "Leave workers flagged by quality control out of every statistic; `changes` "
            "then compares the figures with and without them.")),
        OpenApiParameter("correction", str, enum=["holm", "bh"], description=(
            "Multiple-comparison correction over the system pairs of a question: Holm "
            "(family-wise, default) or Benjamini-Hochberg (false discovery rate).")),
        OpenApiParameter("alpha", float, description="Significance level (default 0.05)."),
        OpenApiParameter("pair_by", str, description=(
            "Item field whose values pair systems (the same input answered by each); "
            "default: the first displayed field that does; empty for unpaired tests.")),
        OpenApiParameter("subset_by", str, many=True, description=(
            "Item fields (e.g. a language pair) to give agreement per value of, beside "
            "the pooled and per-system figures.")),
        OpenApiParameter("include_failed_judge_outputs", bool, description=(
            "Count judge outputs detected as failed runs (all-minimum, identical for every "
            "item) in the judge figures; by default they are listed and left out.")),
        OpenApiParameter("levels", str, many=True, description=(
            "`question:level` (ordinal, interval, ratio) to state a numeric question's "
            "level of measurement for agreement.")),
        OpenApiParameter("ties", str, enum=["split", "davidson"], description=(
            "How pairwise questions' Bradley-Terry fits treat ties: half a win each "
            "(split) or Davidson's tie parameter; default: each question's tie_model.")),
        OpenApiParameter("style", bool, description=(
            "Add pairwise questions' Bradley-Terry strengths adjusted for the outputs' "
            "length and Markdown (headers, lists, bold): Chatbot Arena's style control.")),
    ]
PENDING_SCHEMA = {
    "type": "object",
    "description": "The figures are being computed: ask `url` again in a few seconds.",
    "properties": {"status": {"type": "string",
                              "enum": ["queued", "running", "done", "failed"]},
                   "requested_at": {"type": ["string", "null"], "format": "date-time"},
                   "url": {"type": "string"}, "message": {"type": "string"}},
    "required": ["status", "url", "message"],
}
FRESHNESS = {
    "computed_at": {"type": "string", "format": "date-time",
                    "description": "When the data these figures come from was read."},
    "stale": {"type": "boolean",
              "description": "Annotations (or the campaign's schema or settings) changed "
                             "since `computed_at`: POST to recompute."},
    "computing": {"type": "boolean", "description": "A recomputation is queued or running."},
    "last_error": {"type": "string", "description": "Why the latest recomputation failed."},
    "computation": {"type": "object", "additionalProperties": {}, "description": (
        "Statistics only: `intervals` is `computed` (every figure from the data of "
        "`intervals_basis`) or `reused` (a recomputation after few changes: point estimates "
        "from all annotations, `point_estimates_basis`; the intervals and worker reliability "
        "from the full computation over `intervals_basis.annotations` annotations read at "
        "`intervals_basis.read_at`; `note` says so in words). POST with `full=1` computes "
        "everything again.")},
}


STATS_SCHEMA = {
    "type": "object",
    "description": "Every analysis table as lists of row objects (see docs/analysis).",
    "properties": {
        "campaign": {"type": "string"},
        "exclude_flagged": {"type": "boolean"},
        "counts": {"type": "object", "additionalProperties": {}},
        **FRESHNESS,
    },
    "required": ["campaign", "exclude_flagged", "counts", "computed_at", "stale"],
    "additionalProperties": {},
}



class CampaignStatsApi(APIView):
    class StatsFilterInput(serializers.Serializer):
        exclude_flagged = serializers.BooleanField(required=False, default=False)
        correction = serializers.ChoiceField(choices=("holm", "bh"), required=False,
                                             default="holm")
        alpha = serializers.FloatField(required=False, default=0.05, min_value=0.0001,
                                       max_value=0.5)
        pair_by = serializers.RegexField(FIELD_NAME, required=False, allow_blank=True,
                                         default=None)
        subset_by = serializers.ListField(child=serializers.RegexField(FIELD_NAME),
                                          required=False, default=list, max_length=5)
        include_failed_judge_outputs = serializers.BooleanField(required=False, default=False)
        levels = serializers.ListField(child=serializers.RegexField(
            r"^[A-Za-z0-9_.-]{1,64}:(ordinal|interval|ratio)$"), required=False, default=list,
            max_length=50)
        ties = serializers.ChoiceField(choices=("split", "davidson"), required=False,
                                       default=None)
        style = serializers.BooleanField(required=False, default=False)

        def validate_levels(self, value):
            return dict(v.split(":", 1) for v in value)

    @extend_schema(operation_id="campaigns_stats", tags=["statistics"],
                   parameters=STATS_PARAMETERS,
                   responses={200: STATS_SCHEMA, 202: PENDING_SCHEMA, **openapi.errors()})
    def get(self, request, slug: str):
        """Agreement, system scores and ranking, pairwise tests, judge-vs-human figures,
        worker quality and progress per day: the cached result at once, with `computed_at` and
        `stale`; 202 while the first computation runs (ask again)."""
        return _cached(request, slug, Kind.STATISTICS, self.StatsFilterInput)

    @extend_schema(operation_id="campaigns_stats_recompute", tags=["statistics"],
                   parameters=[*STATS_PARAMETERS, OpenApiParameter("full", bool, description=(
                       "Recompute every figure, the intervals too, however few annotations "
                       "changed since the last full computation."))], request=None,
                   responses={202: PENDING_SCHEMA, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str):
        """Recompute the statistics for these options (the same query parameters as GET); 202,
        then GET shows the previous result until the new one is stored. After few changes the
        recomputation reuses the last full computation's intervals (said in `computation`);
        `full=1` recomputes every figure."""
        return _cached(request, slug, Kind.STATISTICS, self.StatsFilterInput, recompute=True,
                       full_allowed=True)


class FullInput(serializers.Serializer):
    full = serializers.BooleanField(required=False, default=False)


def _lists(params, names: tuple[str, ...]) -> dict:
    """Query parameters with the repeatable ones as lists (?subset_by=a&subset_by=b)."""
    data = {key: params.get(key) for key in params}
    data.update({name: params.getlist(name) for name in names if name in params})
    return data


def _cached(request, slug: str, kind: str, options_input, *, recompute: bool = False,
            full_allowed: bool = False):
    """Validate the options, then answer the cached figures (200), or 202 while they are being
    computed (a first request, or a POST asking for a recomputation)."""
    campaign = campaign_for(request.user, slug)  # someone else's campaign: 404 before any 400
    params = _lists(request.query_params, ("subset_by", "levels"))
    full = params.pop("full", False)
    full = validated(FullInput, {"full": full})["full"] if full_allowed else False
    options = validated(options_input, params)
    cached = statistics_request(campaign=campaign, kind=kind, options=options,
                                recompute=recompute, full=full)
    row = cached.row
    if row.result is None and row.status == Status.FAILED:
        raise ServiceError(f"Computing these figures failed ({row.error}); POST to this URL to "
                           "try again.", code="statistics_failed", status=409)
    if row.result is None or recompute:
        url = request.build_absolute_uri()
        return Response({"status": row.status, "requested_at": row.queued_at, "url": url,
                         "waiting": row.waiting,
                         "message": "The figures are being computed: ask again in a few "
                                    "seconds." if cached.computing else "The figures are ready."},
                        status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "5"})
    freshness = {"computed_at": row.computed_at, "stale": cached.stale,
                 "computing": cached.computing}
    if row.status == Status.FAILED:
        freshness["last_error"] = row.error
    return Response({**row.result, **freshness})


AGREEMENT_SCHEMA = {
    "type": "object",
    "description": "Krippendorff's alpha of one question part at its level of measurement.",
    "properties": {
        "question": {"type": "string"},
        "part": {"type": "string"},
        "level": {"type": "string", "enum": ["nominal", "ordinal", "interval", "ratio"]},
        "alpha": {"type": ["number", "null"]},
        "ci_low": {"type": ["number", "null"]},
        "ci_high": {"type": ["number", "null"]},
        "n_items": {"type": "integer"},
        "n_raters": {"type": "integer"},
        "n_ratings": {"type": "integer"},
        "subset": {"type": ["object", "null"], "description": "Always null here: pooled."},
    },
    "required": ["question", "part", "level", "alpha", "ci_low", "ci_high", "n_items",
                 "n_raters", "n_ratings"],
}


class QuestionAgreementApi(APIView):
    class AgreementInput(serializers.Serializer):
        question = serializers.CharField(max_length=64)
        part = serializers.CharField(max_length=64, required=False, default="",
                                     allow_blank=True)
        bootstrap = serializers.IntegerField(required=False, default=N_BOOT, min_value=0,
                                             max_value=10_000)
        exclude_flagged = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        operation_id="campaigns_agreement", tags=["statistics"],
        parameters=[
            OpenApiParameter("question", str, required=True, description="A question id."),
            OpenApiParameter("part", str, description=(
                "A rubric criterion id, or a part such as `label` for line labels; empty for "
                "the whole answer.")),
            OpenApiParameter("bootstrap", int, description=(
                f"Resamples for the 95% CI (default {N_BOOT}; 0 for the point estimate).")),
            OpenApiParameter("exclude_flagged", bool, description=(
                "Leave workers flagged by quality control out.")),
        ],
        responses={200: AGREEMENT_SCHEMA, **openapi.errors()},
    )
    def get(self, request, slug: str):
        """One question part's agreement (the agreement table's row), fast on big campaigns:
        likert questions and rubric criteria are computed from per-item tallies."""
        from ..selectors.analysis import question_agreement

        campaign = campaign_for(request.user, slug)
        filters = validated(self.AgreementInput, request.query_params)
        try:
            row = question_agreement(campaign=campaign, question=filters["question"],
                                     part=filters["part"], n_boot=filters["bootstrap"],
                                     exclude_flagged=filters["exclude_flagged"])
        except KeyError:
            raise exceptions.ValidationError({"question": [
                f"The campaign has no question part {filters['question']!r}"
                + (f" / {filters['part']!r}." if filters["part"] else ".")]}) from None
        except ValueError as exc:
            raise exceptions.ValidationError({"part": [f"{exc}: no agreement to compute."]}
                                             ) from None
        return Response(row)


REPORT_SCHEMA = {
    "type": "object",
    "description": "The evaluation report (see docs/analysis): design, warnings, agreement, "
                   "systems, comparisons, quality, judges, planning, and `markdown`.",
    "properties": {"campaign": {"type": "string"}, "markdown": {"type": "string"},
                   "design": {"type": "object", "additionalProperties": {}},
                   "planning": {"type": "array", "items": {"type": "object"}}, **FRESHNESS},
    "required": ["campaign", "markdown", "design", "planning", "computed_at", "stale"],
    "additionalProperties": {},
}
REPORT_PARAMETERS = [
    OpenApiParameter("effect", float, description=(
        "Planning: the difference between two systems' means to detect, in the scale's units "
        "(default 0.2 sd of the ratings).")),
    OpenApiParameter("power", float, description="Planning: the power (default 0.8)."),
    *STATS_PARAMETERS,
]


class CampaignReportApi(APIView):
    class ReportInput(CampaignStatsApi.StatsFilterInput):
        effect = serializers.FloatField(required=False, default=None, min_value=1e-9,
                                        allow_null=True)
        power = serializers.FloatField(required=False, default=0.8, min_value=0.5,
                                       max_value=0.99)

    @extend_schema(
        operation_id="campaigns_report", tags=["statistics"], parameters=REPORT_PARAMETERS,
        responses={200: REPORT_SCHEMA, 202: PENDING_SCHEMA, **openapi.errors()},
    )
    def get(self, request, slug: str):
        """The evaluation report: what a paper's human-evaluation section needs, from the same
        figures as /stats/, with a planning table and the report as Markdown; cached like
        /stats/ (`computed_at`, `stale`; 202 while the first computation runs)."""
        return _cached(request, slug, Kind.REPORT, self.ReportInput)

    @extend_schema(operation_id="campaigns_report_recompute", tags=["statistics"],
                   parameters=REPORT_PARAMETERS, request=None,
                   responses={202: PENDING_SCHEMA, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str):
        """Recompute the report for these options (the same query parameters as GET)."""
        return _cached(request, slug, Kind.REPORT, self.ReportInput, recompute=True)
