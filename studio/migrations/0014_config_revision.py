"""The revision number of the rows the gateway's snapshot is made of (one row, number 0)."""

from django.db import migrations, models


def first_row(apps, schema_editor) -> None:
    apps.get_model("studio", "ConfigRevision").objects.get_or_create(pk=1)


class Migration(migrations.Migration):

    dependencies = [
        ('studio', '0013_asset_content_hash'),
    ]

    operations = [
        migrations.CreateModel(
            name='ConfigRevision',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('number', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(first_row, migrations.RunPython.noop),
    ]
