"""The broker when CELERY_BROKER_URL is unset: kombu's SQLAlchemy transport on the project's
PostgreSQL, polled more often than kombu's default (once a second, which also fetches at most
one message a second).

Its channel passes the transport options to SQLAlchemy's create_engine, which refuses the
transport's own `polling_interval`; this one keeps that option for the transport. Celery names
it in CELERY_BROKER_TRANSPORT (settings): a URL's `sqla+` prefix would pick kombu's class.
"""
from kombu.transport import sqlalchemy as kombu_sqlalchemy
from sqlalchemy import create_engine

# Seconds between two looks at an empty queue (bench/README.md: idle cost against latency).
POLL_SECONDS = 0.25
TRANSPORT_ONLY = {"polling_interval", "queue_tablename", "message_tablename", "callback",
                  "errback", "max_retries", "interval_start", "interval_step", "interval_max",
                  "retry_errors"}


class Channel(kombu_sqlalchemy.Channel):
    def _engine_from_config(self):
        client = self.connection.client
        options = {key: value for key, value in client.transport_options.items()
                   if key not in TRANSPORT_ONLY}
        return create_engine(client.hostname, **options)


class Transport(kombu_sqlalchemy.Transport):
    Channel = Channel
    polling_interval = POLL_SECONDS
