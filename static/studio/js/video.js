// The Video page: create tasks (from a prompt, a first frame, first + last frames or references
// picked from the gallery) through the studio, follow every task's status live, play and extend.
// Status changes arrive as "video.status" events on the user's group; should one be missed, the
// page re-reads its unfinished tasks now and then, so nothing is left spinning.
import { StudioSocket } from "./socket.js";

const list = document.getElementById("video-tasks");
const empty = document.getElementById("video-empty");
const form = document.getElementById("video-form");
const status = document.getElementById("video-status");
const models = JSON.parse(document.getElementById("video-models").textContent);
const initial = JSON.parse(document.getElementById("video-initial-tasks").textContent);
const mediaBox = document.getElementById("video-media");
const slotsBox = document.getElementById("media-slots");
const picker = document.getElementById("video-picker");
const TERMINAL = new Set(["succeeded", "failed", "expired", "cancelled", "unknown"]);
const SLOT_NAMES = { first_frame: "First frame", last_frame: "Last frame", references: "Reference" };
const CATCH_UP_MS = 20000;

const chosen = { first_frame: null, last_frame: null, references: [] };
let activeSlot = "first_frame";
const seen = new Map(); // task id → last rendered row

// Our file URLs are absolute for API clients; the page uses them relative to its own origin.
function local(url) {
  if (!url) return "";
  try { const u = new URL(url, location.href); return u.pathname + u.search; } catch { return url; }
}

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function currentModel() { return models.find((m) => m.id === form.model.value); }
function mode() { return form.querySelector("input[name=mode]:checked").value; }

function fillOptions(select, values, preferred) {
  const keep = select.value;
  select.replaceChildren(...values.map((v) => new Option(v, v)));
  select.value = values.includes(keep) ? keep : (values.includes(preferred) ? preferred : values[0] ?? "");
}

// --- model options and media slots -----------------------------------------------------------
function syncFields() {
  const model = currentModel();
  if (!model) return;
  const o = model.options;
  fillOptions(form.resolution, o.resolutions, o.resolutions.includes("480p") ? "480p" : o.default_resolution);
  fillOptions(form.ratio, o.ratios.length ? o.ratios : ["16:9"], "16:9");
  form.duration.min = o.duration.min; form.duration.max = o.duration.max;
  form.duration.value = Math.max(o.duration.min, Math.min(Number(form.duration.value) || 5, o.duration.max));
  document.getElementById("audio-field").hidden = !o.audio;
  document.getElementById("seed-field").hidden = !o.seed;
  const allowed = { text: true, first: o.media.first_frame > 0, first_last: o.media.first_frame > 0 && o.media.last_frame > 0,
    references: o.media.reference_image > 0 };
  for (const input of form.querySelectorAll("input[name=mode]")) {
    input.disabled = !allowed[input.value];
    input.closest("label").title = input.disabled ? `${model.id} does not take this input` : "";
  }
  if (!allowed[mode()]) form.querySelector("input[name=mode][value=text]").checked = true;
  syncSlots();
}

function slotsForMode() {
  return { text: [], first: ["first_frame"], first_last: ["first_frame", "last_frame"], references: ["references"] }[mode()];
}

function slotButton(slot, assetId, thumb, index) {
  const label = slot === "references" ? `${SLOT_NAMES[slot]} ${index + 1}` : SLOT_NAMES[slot];
  const button = el("button", { type: "button", className: "slot" + (slot === activeSlot ? " active" : "") });
  button.dataset.slot = slot;
  button.setAttribute("aria-label", assetId ? `${label}: chosen (click to clear)` : `${label}: empty`);
  if (thumb) button.append(el("img", { src: thumb, alt: "" }));
  button.append(el("span", { className: "slot-name", textContent: label }));
  button.addEventListener("click", () => {
    if (assetId && slot === "references") chosen.references.splice(index, 1);
    else if (assetId) chosen[slot] = null;
    activeSlot = slot;
    syncSlots();
  });
  return button;
}

function syncSlots() {
  const slots = slotsForMode();
  mediaBox.hidden = slots.length === 0;
  if (!slots.includes(activeSlot)) activeSlot = slots[0];
  const limit = currentModel()?.options.media.reference_image ?? 0;
  const buttons = [];
  for (const slot of slots) {
    if (slot === "references") {
      chosen.references.forEach((r, i) => buttons.push(slotButton(slot, r.id, r.thumb, i)));
      if (chosen.references.length < limit) buttons.push(slotButton(slot, null, null, chosen.references.length));
    } else {
      buttons.push(slotButton(slot, chosen[slot]?.id, chosen[slot]?.thumb, 0));
    }
  }
  slotsBox.replaceChildren(...buttons);
  const inUse = new Set([chosen.first_frame?.id, chosen.last_frame?.id, ...chosen.references.map((r) => r.id)]);
  for (const b of picker?.querySelectorAll("button") ?? []) b.setAttribute("aria-pressed", String(inUse.has(b.dataset.asset)));
}

picker?.addEventListener("click", (e) => {
  const button = e.target.closest("button[data-asset]");
  if (!button) return;
  const pick = { id: button.dataset.asset, thumb: button.dataset.thumb };
  if (activeSlot === "references") {
    const limit = currentModel()?.options.media.reference_image ?? 0;
    if (chosen.references.length < limit && !chosen.references.some((r) => r.id === pick.id)) chosen.references.push(pick);
  } else {
    chosen[activeSlot] = pick;
    if (activeSlot === "first_frame" && mode() === "first_last") activeSlot = "last_frame"; // fill the next slot
  }
  syncSlots();
});

// --- task cards ------------------------------------------------------------------------------
function render(task) {
  const id = task.task_id || task.id;
  seen.set(id, task);
  let item = list.querySelector(`[data-task="${CSS.escape(id)}"]`);
  if (!item) {
    item = el("li", { className: "task card" });
    item.dataset.task = id;
    list.prepend(item);
  }
  item.dataset.status = task.status;
  item.replaceChildren();
  if (task.status === "succeeded" && task.video_url) {
    const video = el("video", { controls: true, preload: "metadata", src: local(task.video_url) });
    video.setAttribute("aria-label", `Video: ${(task.prompt || id).slice(0, 80)}`);
    if (task.last_frame_url) video.poster = local(task.last_frame_url);
    item.append(video);
  } else if (!TERMINAL.has(task.status)) {
    item.append(el("div", { className: "placeholder", role: "img", ariaLabel: "Video in progress" }));
  }
  const badge = el("span", { className: "badge" });
  if (!TERMINAL.has(task.status)) badge.append(el("span", { className: "spinner", ariaHidden: "true" }));
  badge.append(task.status);
  item.append(el("p", {}, badge, el("span", { className: "meta", textContent: ` ${task.model} · ${id}` })));
  if (task.prompt) item.append(el("p", { className: "prompt", textContent: task.prompt.slice(0, 160) }));
  if (TERMINAL.has(task.status) && task.status !== "succeeded") {
    const code = task.error_code || task.status;
    const message = task.error_message || (task.status === "expired" ? "the task ran past its deadline" : "the upstream gave no reason");
    item.append(el("p", { className: "task-error", role: "alert" }, el("code", { textContent: code }), ` ${message}`));
  }
  if (task.status === "succeeded") {
    const actions = el("div", { className: "task-actions" });
    const extend = el("button", { type: "button", className: "extend", textContent: "Extend from last frame" });
    extend.addEventListener("click", () => startExtend(task));
    actions.append(extend);
    if (task.video_asset) actions.append(el("a", { href: `/assets/${task.video_asset}/`, textContent: "In gallery" }));
    if (task.video_url) actions.append(el("a", { href: local(task.video_url), download: "", textContent: "Download" }));
    item.append(actions);
  }
  empty.hidden = true;
}

function startExtend(task) {
  const id = task.task_id || task.id;
  form.extend_from.value = id;
  form.model.value = task.model;
  syncFields();
  form.querySelector("input[name=mode][value=text]").checked = true;
  syncSlots();
  form.prompt.value = task.prompt || "";
  status.classList.remove("error");
  status.replaceChildren(`Extending ${id}: its last frame becomes the first frame. `,
    el("button", { type: "button", className: "link", textContent: "Cancel", onclick: () => { form.extend_from.value = ""; status.textContent = ""; } }));
  form.prompt.focus();
}

// --- live status ---------------------------------------------------------------------------------
const socket = new StudioSocket();
socket.on((event) => {
  if (event.type === "video.status") render(event.data);
});

async function catchUp() {
  const open = [...seen.values()].filter((t) => !TERMINAL.has(t.status)).map((t) => t.task_id || t.id);
  if (!open.length) return;
  try {
    const response = await fetch(`tasks?ids=${encodeURIComponent(open.join(","))}`);
    if (response.ok) for (const task of (await response.json()).tasks) {
      const before = seen.get(task.id);
      if (!before || before.status !== task.status) render(task);
    }
  } catch { /* offline: the next round or a live event will tell */ }
}
setInterval(catchUp, CATCH_UP_MS);
document.addEventListener("visibilitychange", () => { if (!document.hidden) catchUp(); });

for (const task of [...initial].reverse()) render(task);

form.model.addEventListener("change", syncFields);
for (const input of form.querySelectorAll("input[name=mode]")) input.addEventListener("change", syncSlots);
syncFields();

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  status.textContent = "Creating…";
  status.classList.remove("error");
  const o = currentModel()?.options;
  const body = {
    model: form.model.value, prompt: form.prompt.value, duration: Number(form.duration.value),
    resolution: form.resolution.value, ratio: form.ratio.value,
  };
  if (o?.seed && form.seed.value !== "") body.seed = Number(form.seed.value);
  if (o?.audio) body.generate_audio = form.generate_audio.checked;
  const slots = slotsForMode();
  if (form.extend_from.value) body.extend_from = form.extend_from.value;
  else if (slots.includes("first_frame")) body.first_frame = chosen.first_frame?.id;
  if (slots.includes("last_frame")) body.last_frame = chosen.last_frame?.id;
  if (slots.includes("references")) body.references = chosen.references.map((r) => r.id);
  try {
    const missing = slots.find((s) => (s === "references" ? !chosen.references.length : !chosen[s]));
    if (missing && !(missing === "first_frame" && body.extend_from)) throw new Error(`Pick an image for the ${SLOT_NAMES[missing].toLowerCase()} slot.`);
    const response = await fetch("create", {
      method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-CSRFToken": form.csrfmiddlewaretoken.value },
    });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error?.message || `HTTP ${response.status}`);
    render(data.task);
    form.extend_from.value = "";
    status.textContent = "Task created; it updates here as it runs.";
  } catch (error) {
    status.textContent = error.message;
    status.classList.add("error");
  } finally {
    button.disabled = false;
  }
});
