"""Video protocols get one name each: ark (A), dashscope (B), generic (C); upstream protocols come
from the provider registry instead of a fixed list."""

from django.db import migrations, models

NAMES = {"A": "ark", "B": "dashscope", "C": "generic"}
ROUTES = {"video.alpha": "video.ark", "video.beta": "video.dashscope"}


def rename(apps, schema_editor, names, routes):
    VideoTask = apps.get_model("studio", "VideoTask")
    PlatformModel = apps.get_model("studio", "PlatformModel")
    UsageRecord = apps.get_model("studio", "UsageRecord")
    for old, new in names.items():
        VideoTask.objects.filter(protocol=old).update(protocol=new)
        UsageRecord.objects.filter(route=f"video.{old}").update(route=f"video.{new}")
    for model in PlatformModel.objects.all():
        renamed = [routes.get(route, route) for route in model.routes or []]
        if renamed != model.routes:
            model.routes = renamed
            model.save(update_fields=["routes"])


def forwards(apps, schema_editor):
    rename(apps, schema_editor, NAMES, ROUTES)


def backwards(apps, schema_editor):
    rename(apps, schema_editor, {v: k for k, v in NAMES.items()}, {v: k for k, v in ROUTES.items()})


class Migration(migrations.Migration):

    dependencies = [
        ("studio", "0006_shared_state"),
    ]

    operations = [
        migrations.AlterField(
            model_name="videotask",
            name="protocol",
            field=models.CharField(choices=[("ark", "ark (protocol A, /v1/alpha)"),
                                            ("dashscope", "dashscope (protocol B, /v1/beta)"),
                                            ("generic", "generic (protocol C, /v1/video)")], max_length=12),
        ),
        migrations.AlterField(
            model_name="upstream",
            name="protocol",
            field=models.CharField(max_length=20),
        ),
        migrations.RunPython(forwards, backwards),
    ]
