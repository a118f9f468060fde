"""The broker when CELERY_BROKER_URL is unset: kombu's SQLAlchemy transport on the project's
PostgreSQL, polled more often than kombu's default (once a second, which also fetches at most
one message a second).

Its channel passes the transport options to SQLAlchemy's create_engine, which refuses the
transport's own `polling_interval`; this one keeps that option for the transport. Celery names
it in CELERY_BROKER_TRANSPORT (settings): a URL's `sqla+` prefix would pick kombu's class.
"""
from kombu.transport import sqlalchemy as kombu_sqlalchemy
from kombu.transport.sqlalchemy.models import metadata
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

# Any fixed key: the processes that create the broker's tables take turns on it.
TABLES_LOCK = 0x6B6F6D6275  # "kombu"
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

    def _open(self):
        """kombu creates its tables on a process's first connection, guarded by a thread lock
        only: a worker's consumer and its beat starting together on a fresh database raced on
        CREATE SEQUENCE and the worker died. Here the processes take turns on an advisory lock."""
        hostname = self.connection.client.hostname
        if hostname not in self._engines:
            with kombu_sqlalchemy._MUTEX:
                if hostname not in self._engines:
                    engine = self._engine_from_config()
                    with engine.begin() as conn:
                        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                                     {"key": TABLES_LOCK})
                        metadata.create_all(conn)
                    self._engines[hostname] = engine, sessionmaker(bind=engine)
        return self._engines[hostname]

    def _get_or_create(self, queue):
        """A queue's row, created by whichever process comes first: kombu catches only
        OperationalError, so the loser of two processes creating the same queue crashed."""
        try:
            return super()._get_or_create(queue)
        except IntegrityError:
            self.session.rollback()
            return self.session.query(self.queue_cls).filter(self.queue_cls.name == queue).one()


class Transport(kombu_sqlalchemy.Transport):
    Channel = Channel
    polling_interval = POLL_SECONDS
