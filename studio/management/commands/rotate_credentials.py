"""Re-encrypt every stored upstream credential with the first key of STUDIO_CREDENTIAL_KEYS.

Put the new key first in ``STUDIO_CREDENTIAL_KEYS`` (keeping the old ones after it), run this,
then drop the old keys. Credentials still under the key derived from ``SECRET_KEY`` (or written
by earlier versions) are moved to the first key too.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from studio.core import crypto
from studio.models import Upstream


class Command(BaseCommand):
    help = "Re-encrypt every upstream credential with the first key of STUDIO_CREDENTIAL_KEYS."

    def handle(self, *args, **options) -> None:
        rotated = 0
        failed: list[str] = []
        with transaction.atomic():
            rows = Upstream.objects.select_for_update().exclude(credential_encrypted="").only(
                "id", "name", "credential_encrypted")
            for upstream in rows:
                try:
                    token = crypto.rotate(upstream.credential_encrypted)
                except ValueError:
                    failed.append(upstream.name)
                    continue
                # An update of the column alone: the plaintext is unchanged, nothing to announce.
                Upstream.objects.filter(id=upstream.id).update(credential_encrypted=token)
                rotated += 1
            if failed:
                raise CommandError(
                    f"no configured key decrypts the credential of: {', '.join(failed)}; nothing was changed "
                    "(list the key they were written with in STUDIO_CREDENTIAL_KEYS)"
                )
        self.stdout.write(f"re-encrypted {rotated} credential(s) with the first key")
