// The Video page: create tasks through the studio, and follow every task's status live.
// Status changes arrive as "video.status" events on the user's group; the page never polls.
import { StudioSocket } from "./socket.js";

const list = document.getElementById("video-tasks");
const empty = document.getElementById("video-empty");
const form = document.getElementById("video-form");
const status = document.getElementById("video-status");
const models = JSON.parse(document.getElementById("video-models").textContent);
const TERMINAL_FAILURES = new Set(["failed", "expired", "cancelled", "unknown"]);

// Our file URLs are absolute for API clients; the page uses them relative to its own origin.
function local(url) {
  if (!url) return "";
  try { const u = new URL(url, location.href); return u.pathname + u.search; } catch { return url; }
}

function fillOptions(select, values, preferred) {
  select.replaceChildren(...values.map((v) => new Option(v, v, false, v === preferred)));
}

function syncFields() {
  const model = models.find((m) => m.id === form.model.value);
  if (!model) return;
  const caps = model.capabilities;
  fillOptions(form.resolution, (caps.resolutions || []).map((r) => r.toLowerCase()), "480p");
  fillOptions(form.ratio, caps.ratios || ["16:9"], "16:9");
  const d = caps.duration || { min: 2, max: 15 };
  form.duration.min = d.min; form.duration.max = d.max;
  form.duration.value = Math.max(d.min, Math.min(5, d.max));
}

function render(task) {
  let item = list.querySelector(`[data-task="${CSS.escape(task.task_id || task.id)}"]`);
  if (!item) {
    item = document.createElement("li");
    item.className = "task card";
    item.dataset.task = task.task_id || task.id;
    list.prepend(item);
  }
  item.dataset.status = task.status;
  item.replaceChildren();
  if (task.status === "succeeded" && task.video_url) {
    const video = document.createElement("video");
    video.controls = true;
    video.preload = "metadata";
    video.src = local(task.video_url);
    if (task.last_frame_url) video.poster = local(task.last_frame_url);
    item.append(video);
  }
  const line = document.createElement("p");
  const badge = document.createElement("span");
  badge.className = "badge";
  badge.textContent = task.status;
  const meta = document.createElement("span");
  meta.className = "meta";
  meta.textContent = ` ${task.model} · ${item.dataset.task}`;
  line.append(badge, meta);
  const prompt = document.createElement("p");
  prompt.className = "prompt";
  prompt.textContent = (task.prompt || "").slice(0, 160);
  item.append(line, prompt);
  if (TERMINAL_FAILURES.has(task.status) && task.error_message) {
    const error = document.createElement("p");
    error.className = "error";
    error.textContent = `${task.error_code}: ${task.error_message}`;
    item.append(error);
  }
  empty.hidden = true;
}

const socket = new StudioSocket();
socket.on((event) => {
  if (event.type === "video.status") render(event.data);
});

form.model.addEventListener("change", syncFields);
syncFields();

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  status.textContent = "Creating…";
  status.classList.remove("error");
  const body = {
    model: form.model.value, prompt: form.prompt.value, duration: Number(form.duration.value),
    resolution: form.resolution.value, ratio: form.ratio.value,
  };
  try {
    const response = await fetch("create", {
      method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-CSRFToken": form.csrfmiddlewaretoken.value },
    });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error?.message || `HTTP ${response.status}`);
    render(data.task);
    status.textContent = "Task created; it updates here as it runs.";
  } catch (error) {
    status.textContent = error.message;
    status.classList.add("error");
  } finally {
    button.disabled = false;
  }
});
