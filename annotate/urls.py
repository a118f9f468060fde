"""URL routes: admin, worker pages, API, health."""
from django.contrib import admin
from django.urls import include, path

from campaigns import views
from campaigns.views import site

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", views.healthz, name="healthz"),
    path("exports/<int:job_id>/download/", views.export_download, name="export_download"),
    path("api/", include("campaigns.api.urls")),
    path("item-images/<path:name>", views.item_image, name="item_image"),
    path("", include("campaigns.urls")),
    path("", site.home, name="home"),
    path("favicon.ico", site.favicon, name="favicon"),
    path("help/schema/", site.schema_help, name="schema-help"),
    path("account/api-token/", site.api_token_page, name="api-token"),
]

# A database outage anywhere in the request answers 503 "please retry", not 500; every error
# page is JSON under /api/ (annotate/http/errors.py).
handler500 = "annotate.http.outage.server_error"
handler400 = "annotate.http.errors.bad_request"
handler403 = "annotate.http.errors.permission_denied"
handler404 = "annotate.http.errors.page_not_found"
