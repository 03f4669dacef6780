from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('studio', '0009_merge_0008_embedding_models_0008_stored_responses'),
    ]

    operations = [
        migrations.AddField(
            model_name='storedresponse',
            name='context',
            field=models.JSONField(default=list),
        ),
    ]
