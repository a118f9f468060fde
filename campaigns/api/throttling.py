"""Rate limits for scripts: requests authenticated by an API token, per user."""
from rest_framework.authtoken.models import Token
from rest_framework.throttling import UserRateThrottle

from annotate.http.ratelimit import hit


class TokenRateThrottle(UserRateThrottle):
    """Counts only token-authenticated requests (rate: REST_FRAMEWORK rates["token"]).

    Sessions are people clicking in the docs page; scripts use tokens and are what can run away.
    Counted by the worker pages' limiter (a moving window, one atomic step in Redis), not by
    DRF's read-then-write history, which concurrent requests overran.
    """

    scope = "token"
    retry_after: int | None = None

    def allow_request(self, request, view) -> bool:
        if not isinstance(request.auth, Token):
            return True
        self.retry_after = hit(scope="api-token", key=str(request.user.pk),
                               limit=self.num_requests, window=self.duration)
        return self.retry_after is None

    def wait(self) -> float | None:
        return self.retry_after
