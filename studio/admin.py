"""Django admin for every record. A key created here shows its secret once."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.utils import timezone

from studio.models import (
    ApiKey,
    Asset,
    Budget,
    BudgetAlert,
    EditSession,
    EditTurn,
    Generation,
    Membership,
    PlatformModel,
    Price,
    RateLimit,
    Team,
    Upstream,
    UsageRecord,
    VideoTask,
)
from studio.providers.registry import protocol_choices, vendors


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created"]
    prepopulated_fields = {"slug": ["name"]}
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["team", "user", "role"]
    list_filter = ["role"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "owner", "team", "revoked", "expires_at", "last_used_at", "created"]
    list_filter = ["revoked"]
    search_fields = ["name", "prefix", "owner__username"]
    readonly_fields = ["prefix", "last_used_at", "created"]
    fields = ["owner", "team", "name", "allowed_models", "expires_at", "revoked", "prefix", "last_used_at", "created"]

    def save_model(self, request, obj: ApiKey, form, change: bool) -> None:
        if not change:
            secret = obj.set_new_secret()
            super().save_model(request, obj, form, change)
            messages.warning(request, f"The new key's secret, shown only now: {secret}")
            return
        super().save_model(request, obj, form, change)


class UpstreamForm(forms.ModelForm):
    protocol = forms.ChoiceField(choices=protocol_choices, help_text="The vendor protocol this upstream speaks.")
    credential = forms.CharField(
        required=False, widget=forms.PasswordInput(render_value=False),
        help_text="Stored encrypted. Leave empty to keep the current credential.",
    )

    class Meta:
        model = Upstream
        fields = ["name", "protocol", "base_url", "credential", "priority", "weight", "enabled", "timeout", "model_map"]

    def save(self, commit: bool = True) -> Upstream:
        upstream = super().save(commit=False)
        if self.cleaned_data.get("credential"):
            upstream.credential = self.cleaned_data["credential"]
        if commit:
            upstream.save()
        return upstream


@admin.register(Upstream)
class UpstreamAdmin(admin.ModelAdmin):
    form = UpstreamForm
    list_display = ["name", "protocol", "base_url", "priority", "weight", "enabled", "consecutive_failures",
                    "breaker", "last_success_at", "last_error_at", "last_error_short"]
    list_filter = ["protocol", "enabled"]
    readonly_fields = ["consecutive_failures", "last_error", "last_error_at", "last_success_at", "breaker_open_until"]

    def get_fields(self, request, obj=None):
        return [*UpstreamForm.Meta.fields, *self.readonly_fields] if obj else UpstreamForm.Meta.fields

    @admin.display(description="Breaker")
    def breaker(self, obj: Upstream) -> str:
        if obj.breaker_open_until and obj.breaker_open_until > timezone.now():
            return f"open until {obj.breaker_open_until:%H:%M:%S}"
        return "closed"

    @admin.display(description="Last error")
    def last_error_short(self, obj: Upstream) -> str:
        return obj.last_error[:120]


class PlatformModelForm(forms.ModelForm):
    default_protocol = forms.ChoiceField(
        choices=lambda: [("", "—"), *((v.protocol, v.label) for v in vendors().values())], required=False,
        help_text="The protocol this model is spoken in when its upstream is the multi-protocol sandbox.",
    )

    class Meta:
        model = PlatformModel
        fields = "__all__"


@admin.register(PlatformModel)
class PlatformModelAdmin(admin.ModelAdmin):
    form = PlatformModelForm
    list_display = ["model_id", "kind", "default_protocol", "enabled", "owned_by"]
    list_filter = ["kind", "enabled"]
    search_fields = ["model_id", "display_name"]


@admin.register(Generation)
class GenerationAdmin(admin.ModelAdmin):
    list_display = ["created", "model_id", "route", "status", "user", "cost_usd", "duration_ms"]
    list_filter = ["status", "route", "model_id"]
    search_fields = ["prompt"]
    raw_id_fields = ["parent", "api_key", "upstream"]


@admin.register(Asset)
class AssetAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "mime", "bytes", "width", "height", "owner", "visibility", "created"]
    list_filter = ["kind", "visibility", "is_input"]
    raw_id_fields = ["generation"]


@admin.register(UsageRecord)
class UsageRecordAdmin(admin.ModelAdmin):
    list_display = ["created", "model_id", "route", "status_code", "total_tokens", "cost_usd", "latency_ms", "api_key"]
    list_filter = ["route", "status_code"]


@admin.register(VideoTask)
class VideoTaskAdmin(admin.ModelAdmin):
    list_display = ["id", "model_id", "protocol", "status", "user", "upstream", "cost_usd", "poll_attempts", "created"]
    list_filter = ["status", "protocol", "model_id"]
    search_fields = ["id", "upstream_task_id", "prompt"]
    raw_id_fields = ["api_key", "upstream", "video", "last_frame"]
    readonly_fields = ["lease_owner", "lease_expires_at"]


class EditTurnInline(admin.TabularInline):
    model = EditTurn
    fk_name = "session"
    extra = 0
    fields = ["instruction", "parent", "status", "output", "created"]
    readonly_fields = ["created"]
    raw_id_fields = ["parent", "output"]


@admin.register(EditSession)
class EditSessionAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "owner", "model_id", "updated"]
    raw_id_fields = ["source", "head"]
    inlines = [EditTurnInline]


class RateLimitInline(admin.TabularInline):
    model = RateLimit
    extra = 0
    fields = ["model_id", "rpm", "tpm", "ipm", "concurrent_videos"]


class BudgetInline(admin.TabularInline):
    model = Budget
    extra = 0
    fields = ["limit_usd", "period", "soft_percent", "webhook_url", "enabled"]


ApiKeyAdmin.inlines = [*ApiKeyAdmin.inlines, RateLimitInline, BudgetInline]
TeamAdmin.inlines = [*TeamAdmin.inlines, RateLimitInline, BudgetInline]


@admin.register(Price)
class PriceAdmin(admin.ModelAdmin):
    """A price change is a new row from a later ``effective_from``: past records keep their cost."""

    list_display = ["model_id", "upstream", "effective_from", "input_per_million", "output_per_million",
                    "cached_per_million", "per_request", "note"]
    list_filter = ["model_id", "upstream"]
    search_fields = ["model_id", "note"]


@admin.register(Budget)
class BudgetAdmin(admin.ModelAdmin):
    list_display = ["__str__", "period", "limit_usd", "soft_percent", "enabled", "created"]
    list_filter = ["period", "enabled"]
    raw_id_fields = ["api_key", "user", "team"]


@admin.register(BudgetAlert)
class BudgetAlertAdmin(admin.ModelAdmin):
    list_display = ["created", "budget", "level", "window_start", "spent_usd", "webhook_status"]
    list_filter = ["level"]
    fields = readonly_fields = ["budget", "level", "window_start", "spent_usd", "webhook_url", "webhook_attempts",
                                "webhook_status", "webhook_due_at", "created"]


@admin.register(RateLimit)
class RateLimitAdmin(admin.ModelAdmin):
    list_display = ["__str__", "model_id", "rpm", "tpm", "ipm", "concurrent_videos"]
    raw_id_fields = ["api_key", "team"]
