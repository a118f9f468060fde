"""Worker-facing routes (no account needed)."""
from django.urls import path, register_converter

from . import views

app_name = "campaigns"


class TokenConverter:
    """An assignment token's alphabet (URL-safe base64), so a NUL or other byte never reaches
    the database as a lookup value."""

    regex = "[A-Za-z0-9_-]{1,64}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class PositionConverter:
    """A position within an assignment: up to six digits, within PostgreSQL's integer range
    (position 0 still reaches the view, which answers 404)."""

    regex = "[0-9]{1,6}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(TokenConverter, "token")
register_converter(PositionConverter, "position")

urlpatterns = [
    path("c/<slug:slug>/", views.campaign_entry, name="entry"),
    path("a/<token:token>/<position:position>/", views.item_page, name="item"),
    path("a/<token:token>/finish/", views.finish_page, name="finish"),
    path("a/<token:token>/done/", views.done_page, name="done"),
    path("q/<token:token>/", views.qualification_outcome_page, name="qualification"),
    path("q/<token:token>/<position:position>/", views.qualification_item_page,
         name="qualification-item"),
    path("q/<token:token>/begin/", views.qualification_begin, name="qualification-begin"),
]
