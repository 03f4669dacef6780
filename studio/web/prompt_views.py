"""The prompt library page: saved prompts (search, tags, edit, delete), the history of recent
prompts (save one with a click), and reuse (open Generate with ``?prompt=``)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from studio.gateway import prompt_library
from studio.models import Prompt

PAGE = 100
HISTORY = 30


def reuse_url(text: str) -> str:
    return f"{reverse('generate')}?{urlencode({'prompt': text})}"


def _row(prompt: Prompt) -> dict:
    return {"prompt": prompt, "reuse_url": reuse_url(prompt.text), "tags_text": ", ".join(prompt.tags or [])}


@login_required
def prompts(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "").strip()[:300]
    tag = request.GET.get("tag", "").strip()[:prompt_library.MAX_TAG]
    saved = list(prompt_library.search(request.user.id, q, tag)[:PAGE])
    history = Prompt.objects.filter(owner=request.user, use_count__gt=0).order_by("-last_used")
    if q:
        history = history.filter(text__icontains=q)
    return render(request, "studio/prompts.html", {
        "saved": [_row(p) for p in saved], "history": [_row(p) for p in history[:HISTORY]],
        "q": q, "tag": tag, "tags": prompt_library.all_tags(request.user.id),
    })


@login_required
@require_POST
def save_prompt(request: HttpRequest) -> HttpResponse:
    text = request.POST.get("text", "").strip()
    if not text:
        if request.headers.get("Accept", "").startswith("application/json"):
            return JsonResponse({"error": {"message": "text: write the prompt to save", "param": "text"}}, status=400)
        messages.error(request, "text: write the prompt to save")
        return redirect("prompts")
    prompt = prompt_library.save(request.user.id, text, request.POST.get("title", ""), request.POST.get("tags", ""))
    if request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse({"id": prompt.id, "title": prompt.title, "tags": prompt.tags, "saved": True})
    messages.success(request, "Prompt saved to the library.")
    return redirect("prompts")


def _own(request: HttpRequest, prompt_id: int) -> Prompt:
    prompt = Prompt.objects.filter(id=prompt_id, owner=request.user).first()
    if prompt is None:
        raise Http404("no such prompt")
    return prompt


@login_required
@require_POST
def edit_prompt(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = _own(request, prompt_id)
    prompt.title = request.POST.get("title", prompt.title).strip()[:120]
    prompt.tags = prompt_library.normalize_tags(request.POST.get("tags", ""))
    prompt.saved = True
    prompt.save(update_fields=["title", "tags", "saved"])
    messages.success(request, "Prompt updated.")
    return redirect("prompts")


@login_required
@require_POST
def delete_prompt(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """Removes a saved prompt from the library; a prompt that was used stays in the history."""
    prompt = _own(request, prompt_id)
    if prompt.saved and prompt.use_count:
        prompt.saved = False
        prompt.save(update_fields=["saved"])
    else:
        prompt.delete()
    messages.success(request, "Prompt removed.")
    return redirect("prompts")
