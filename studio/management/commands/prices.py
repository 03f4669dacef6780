"""``manage.py prices export FILE`` / ``prices import FILE``: the price table as JSON or CSV.

The format follows the file's extension (``.json`` or ``.csv``; ``-`` is standard output as JSON
unless ``--format csv``). See ``studio.gateway.price_table`` for the columns.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from studio.gateway import price_table


class Command(BaseCommand):
    help = "Export or import the price table (JSON or CSV)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("action", choices=["export", "import"])
        parser.add_argument("file", help="A .json or .csv file; '-' for standard output/input.")
        parser.add_argument("--format", choices=["json", "csv"], help="Override the format the extension implies.")

    def handle(self, *args, **options) -> None:
        path = options["file"]
        fmt = options["format"] or ("csv" if path.lower().endswith(".csv") else "json")
        if options["action"] == "export":
            data = price_table.dumps(price_table.export_rows(), fmt)
            if path == "-":
                sys.stdout.buffer.write(data)
            else:
                Path(path).write_bytes(data)
                self.stderr.write(f"Exported {len(price_table.export_rows())} prices to {path}")
            return
        try:
            data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from None
        try:
            added, skipped = price_table.import_rows(price_table.loads(data, fmt))
        except price_table.PriceFormatError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Imported {added} prices ({skipped} already present).")
