"""The campaign's submissions page: approve / reject / bonus list, its downloads, and sending
approvals and bonuses to Prolific with the researcher's own token (never stored)."""
from __future__ import annotations

import json

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse

from ..models import Campaign

DOWNLOADS = {  # ?download=<key>: (file suffix, content type)
    "csv": ("submissions.csv", "text/csv; charset=utf-8"),
    "json": ("submissions.json", "application/json"),
    "bonus": ("prolific-bonus.csv", "text/csv; charset=utf-8"),
    "approve": ("prolific-approve.csv", "text/csv; charset=utf-8"),
    "qualification": ("qualification.csv", "text/csv; charset=utf-8"),
}


class ProlificSendForm(forms.Form):
    token = forms.CharField(
        required=False, strip=True, widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
        label="Prolific API token",
        help_text="Used for this request only, never stored. Empty: PROLIFIC_API_TOKEN from the "
                  "server's environment.")
    approve = forms.BooleanField(required=False, initial=True,
                                 label="Approve the submissions suggested for approval")
    bonus = forms.BooleanField(required=False, initial=True,
                               label="Set up and pay the bonus column")

    def clean(self):
        data = super().clean()
        if not (data.get("approve") or data.get("bonus")):
            raise forms.ValidationError("Choose approvals, bonuses or both.")
        return data


def download(campaign: Campaign, rows: list[dict], key: str) -> HttpResponse:
    """One of the list's files as an attachment (DOWNLOADS names them)."""
    from ..selectors.approvals import prolific_approve_list, prolific_bonus_csv, submissions_csv
    from ..selectors.qualification import qualification_csv, qualification_rows

    writers = {"csv": submissions_csv, "bonus": prolific_bonus_csv,
               "qualification": lambda _: qualification_csv(
                   qualification_rows(campaign=campaign)),
               "approve": prolific_approve_list,
               "json": lambda r: json.dumps({"campaign": campaign.slug, "submissions": r})}
    content = writers[key](rows)
    suffix, content_type = DOWNLOADS[key]
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-{suffix}"'
    return response


def submissions_view(model_admin, request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """GET: the list (?download=csv|json|bonus|approve for its files); POST: send to Prolific."""
    # Imported on use: the list runs the quality checks (pandas, scipy).
    from ..selectors.approvals import campaign_submissions, screened_out_participants
    from ..selectors.qualification import qualification_counts
    from ..services.prolific import (
        ProlificError,
        submissions_send_to_prolific,
        token_from_environment,
    )

    key = request.GET.get("download", "")
    if key and key not in DOWNLOADS:
        return HttpResponse(f"Unknown download {key[:40]!r}: use one of {', '.join(DOWNLOADS)}.",
                            status=400, content_type="text/plain; charset=utf-8")
    form = ProlificSendForm(request.POST or None)
    if request.method == "POST":
        if not model_admin.has_change_permission(request, campaign):
            raise PermissionDenied
        if form.is_valid():
            data = form.cleaned_data
            try:
                result = submissions_send_to_prolific(
                    campaign=campaign, token=data["token"] or token_from_environment(),
                    approve=data["approve"], bonus=data["bonus"])
            except ProlificError as exc:
                messages.error(request, exc.message)
            else:
                messages.success(request, f"Sent {len(result.approved)} approvals and "
                                 f"{len(result.bonus_payments)} bonus payments to Prolific.")
                return redirect(request.path)
    rows = [] if key == "qualification" else campaign_submissions(campaign=campaign)
    if key:
        return download(campaign, rows, key)
    counts = {a: sum(r["action"] == a for r in rows) for a in ("approve", "review", "reject")}
    return TemplateResponse(request, "admin/campaigns/campaign/submissions.html", {
        **model_admin.admin_site.each_context(request), "opts": model_admin.model._meta,
        "original": campaign, "campaign": campaign, "has_view_permission": True,
        "title": f"Submissions: {campaign.name}", "rows": rows, "counts": counts,
        "form": form, "can_send": model_admin.has_change_permission(request, campaign),
        "downloads": DOWNLOADS, "screened_out": screened_out_participants(campaign=campaign),
        "qualification": qualification_counts(campaign=campaign),
    }, status=400 if form.errors else 200)
