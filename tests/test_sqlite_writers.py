"""The embedded SQLite database with several writers (the in-process worker, the recorder, pages):
a transaction that reads and then writes while another connection commits a write waits its turn
instead of failing with "database is locked"."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's locking only"),
]


def test_a_read_then_write_transaction_survives_another_connections_write():
    have_read, other_done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def reader_then_writer() -> None:
        try:
            with transaction.atomic():
                assert not User.objects.filter(username="first").exists()
                have_read.set()
                other_done.wait(2)  # deferred: the other write commits here; immediate: it waits for us
                User.objects.create(username="first")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    def writer() -> None:
        try:
            have_read.wait(10)
            User.objects.create(username="second")
            other_done.set()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    first = threading.Thread(target=reader_then_writer)
    first.start()
    second = threading.Thread(target=writer)
    second.start()
    first.join(30)
    second.join(30)
    assert errors == []
    assert set(User.objects.values_list("username", flat=True)) == {"first", "second"}
