"""Assets' content hashes become BLAKE3, named by algorithm: ``sha256`` is renamed
``content_hash`` and the digests already stored are marked ``sha256:`` (one UPDATE)."""

from django.db import migrations, models
from django.db.models import F, Value
from django.db.models.functions import Concat, Substr


def mark_legacy(apps, schema_editor) -> None:
    Asset = apps.get_model("studio", "Asset")
    Asset.objects.exclude(content_hash="").update(content_hash=Concat(Value("sha256:"), F("content_hash")))


def unmark_legacy(apps, schema_editor) -> None:
    Asset = apps.get_model("studio", "Asset")
    Asset.objects.filter(content_hash__startswith="sha256:").update(content_hash=Substr("content_hash", 8))
    Asset.objects.exclude(content_hash="").exclude(content_hash__regex=r"^[0-9a-f]{64}$").update(content_hash="")


class Migration(migrations.Migration):

    dependencies = [
        ('studio', '0012_usage_owner_indexes'),
    ]

    operations = [
        migrations.RenameField(model_name='asset', old_name='sha256', new_name='content_hash'),
        migrations.AlterField(
            model_name='asset',
            name='content_hash',
            field=models.CharField(blank=True, db_index=True, max_length=71),
        ),
        migrations.RunPython(mark_legacy, unmark_legacy),
    ]
