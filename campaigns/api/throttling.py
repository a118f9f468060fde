"""Rate limits for scripts: requests authenticated by an API token, per user."""
from rest_framework.authtoken.models import Token
from rest_framework.throttling import UserRateThrottle


class TokenRateThrottle(UserRateThrottle):
    """Counts only token-authenticated requests (rate: REST_FRAMEWORK rates["token"]).

    Sessions are people clicking in the docs page; scripts use tokens and are what can run away.
    """

    scope = "token"

    def allow_request(self, request, view) -> bool:
        if not isinstance(request.auth, Token):
            return True
        return super().allow_request(request, view)
