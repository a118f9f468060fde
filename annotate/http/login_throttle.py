"""Login throttling (django-axes): failed password logins are counted per username and client
address, and a pair that failed too often is locked out for a cool-off time."""
import ipaddress

from axes.backends import AxesStandaloneBackend

from .ratelimit import client_address


class ThrottledLoginBackend(AxesStandaloneBackend):
    """Axes' lockout check for logins that come with a request (the admin login page).

    A password checked without a request (a management command, a script) has no client
    address to count against and nothing to throttle, so it goes on to the model backend
    instead of being refused.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def login_client_address(request) -> str | None:
    """The client address the rate limits use, or None when it is not an IP address (axes
    stores it in an inet column)."""
    address = client_address(request)
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return None
    return address
