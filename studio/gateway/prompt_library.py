"""The prompt library's rules: remember a prompt when it runs, save and tag it, search it.

``remember(user_id, text)`` is the one call that generation runners make: it bumps the row of the
same text (so the history has no duplicates) or adds one. It is synchronous; async callers wrap it
with ``sync_to_async`` or call it from a recording task, off the response path.
"""

from __future__ import annotations

from django.db.models import F, Q, QuerySet
from django.utils import timezone

from studio.models import Prompt

MAX_TEXT = 20000
MAX_TAGS = 20
MAX_TAG = 40
HISTORY_KEEP = 500  # unsaved history rows kept per user; older ones are dropped


def normalize_tags(raw: str | list[str]) -> list[str]:
    """``"Portrait, neon,  portrait"`` → ``["neon", "portrait"]`` (lower case, unique, sorted)."""
    items = raw.split(",") if isinstance(raw, str) else raw
    tags = sorted({t.strip().lower()[:MAX_TAG] for t in items if t and t.strip()})
    return tags[:MAX_TAGS]


def remember(user_id: int, text: str) -> Prompt | None:
    """Record that ``text`` was just used; returns its row (None for an empty prompt)."""
    text = (text or "").strip()[:MAX_TEXT]
    if not text:
        return None
    now = timezone.now()
    updated = Prompt.objects.filter(owner_id=user_id, text=text).update(use_count=F("use_count") + 1, last_used=now)
    if updated:
        return Prompt.objects.filter(owner_id=user_id, text=text).order_by("-last_used").first()
    prompt = Prompt.objects.create(owner_id=user_id, text=text, use_count=1, last_used=now)
    _trim_history(user_id)
    return prompt


def _trim_history(user_id: int) -> None:
    stale = (Prompt.objects.filter(owner_id=user_id, saved=False).order_by("-last_used")
             .values_list("id", flat=True)[HISTORY_KEEP:HISTORY_KEEP + 100])
    ids = list(stale)
    if ids:
        Prompt.objects.filter(id__in=ids).delete()


def save(user_id: int, text: str, title: str = "", tags: str | list[str] = "") -> Prompt:
    """Put a prompt in the library (the history row of the same text becomes the saved one)."""
    text = text.strip()[:MAX_TEXT]
    prompt = Prompt.objects.filter(owner_id=user_id, text=text).order_by("-last_used").first()
    if prompt is None:
        prompt = Prompt(owner_id=user_id, text=text)
    prompt.saved = True
    prompt.title = title.strip()[:120]
    prompt.tags = normalize_tags(tags)
    prompt.save()
    return prompt


def search(user_id: int, q: str = "", tag: str = "", saved: bool = True) -> QuerySet[Prompt]:
    prompts = Prompt.objects.filter(owner_id=user_id, saved=saved)
    if q:
        prompts = prompts.filter(Q(text__icontains=q) | Q(title__icontains=q) | Q(tags__icontains=q))
    if tag:
        # Tags are stored normalized, so the JSON text holds the quoted tag exactly.
        prompts = prompts.filter(tags__icontains=f'"{tag.strip().lower()}"')
    return prompts.order_by("-last_used")


def all_tags(user_id: int) -> list[str]:
    tags: set[str] = set()
    for row in Prompt.objects.filter(owner_id=user_id, saved=True).values_list("tags", flat=True):
        tags.update(row or [])
    return sorted(tags)
