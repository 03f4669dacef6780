// The Video page, in a designer's terms: a model by name, presets, aspect ratio, duration,
// resolution and sound (only what the chosen model offers), first/last frames or references
// picked from the gallery or uploaded, the expected cost and time before creating; then cards
// that show progress against the model's usual time, the cost, a poster frame and the video.
// Task ids, webhook secrets and the upstream's raw state live in collapsed "Advanced" panels.
// Status changes arrive as "video.status" events on the user's group; should one be missed, the
// page re-reads its unfinished tasks now and then, so nothing is left spinning.
import { StudioSocket } from "./socket.js";
import { formatUsd } from "./money.js";

const $ = (id) => document.getElementById(id);
const list = $("video-tasks");
const empty = $("video-empty");
const form = $("video-form");
const status = $("video-status");
const models = JSON.parse($("video-models").textContent);
const initial = JSON.parse($("video-initial-tasks").textContent);
const uploadUrl = JSON.parse($("video-upload-url").textContent);
const mediaBox = $("video-media");
const slotsBox = $("media-slots");
const dialog = $("video-picker-dialog");
const picker = $("video-picker");
const TERMINAL = new Set(["succeeded", "failed", "expired", "cancelled", "unknown"]);
const STATUS_NAMES = { queued: "Queued", running: "Rendering", succeeded: "Ready", failed: "Failed",
  expired: "Expired", cancelled: "Cancelled", unknown: "Unknown" };
const SLOT_NAMES = { first_frame: "First frame", last_frame: "Last frame", references: "Reference" };
const RATIO_NAMES = { "16:9": "Landscape", "9:16": "Vertical", "1:1": "Square", "4:3": "Classic", "3:4": "Portrait",
  "21:9": "Cinema", "9:21": "Tall", "5:4": "Photo", "4:5": "Feed", adaptive: "Match the image" };
const CATCH_UP_MS = 20000;

const chosen = { first_frame: null, last_frame: null, references: [] };
let activeSlot = "first_frame";
let activeIndex = 0; // which reference the picker fills
const seen = new Map(); // task id → last rendered row

// Our file URLs are absolute for API clients; the page uses them relative to its own origin
// (an upstream's own link, when a video was not mirrored, stays as it is).
function local(url) {
  if (!url) return "";
  try {
    const u = new URL(url, location.href);
    return u.origin === location.origin || u.pathname.startsWith("/video/files/") ? u.pathname + u.search : url;
  } catch { return url; }
}

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

const modelById = (id) => models.find((m) => m.id === id);
function currentModel() { return modelById(form.model.value); }
function mode() { return form.querySelector("input[name=mode]:checked").value; }
function checkedValue(name) { return form.querySelector(`input[name=${name}]:checked`)?.value ?? ""; }
function seconds(n) { return n < 90 ? `${Math.max(1, Math.round(n))} s` : `${Math.round(n / 60)} min`; }
function typicalSeconds(model, duration) {
  const t = model?.typical ?? { fixed: 60, per_second: 0 };
  return t.fixed + t.per_second * (Number(duration) || 5);
}
function perSecond(model, resolution, audio) {
  const table = model?.per_second ?? {};
  return table[`${resolution}${audio ? "+audio" : ""}`] ?? table[resolution] ?? null;
}

// --- choices the model offers ----------------------------------------------------------------
function chip(name, value, checked, ...content) {
  const input = el("input", { type: "radio", name, value, checked });
  return el("label", {}, input, ...content);
}

function shapeIcon(ratio) {
  const [w, h] = ratio.split(":").map(Number);
  const box = el("span", { className: "shape", ariaHidden: "true" });
  const scale = 16 / Math.max(w || 1, h || 1);
  box.style.width = `${Math.round((w || 1) * scale)}px`;
  box.style.height = `${Math.round((h || 1) * scale)}px`;
  return box;
}

function fillChips(container, name, values, wanted, label) {
  const keep = values.includes(wanted) ? wanted : values[0];
  container.replaceChildren(...values.map((v) => chip(name, v, v === keep, ...label(v))));
}

function applyPreset(preset) {
  const model = currentModel();
  fillChips($("video-ratio-list"), "ratio", model.options.ratios.length ? model.options.ratios : ["16:9"], preset.ratio, ratioLabel);
  fillChips($("video-resolution-list"), "resolution", model.options.resolutions, preset.resolution, (v) => [v]);
  form.duration.value = preset.duration;
  form.generate_audio.checked = preset.audio;
  syncEstimate();
}

function ratioLabel(v) { return v === "adaptive" ? [RATIO_NAMES[v]] : [shapeIcon(v), `${v} ${RATIO_NAMES[v] ?? ""}`.trim()]; }

function syncFields() {
  const model = currentModel();
  if (!model) return;
  const o = model.options;
  fillChips($("video-ratio-list"), "ratio", o.ratios.length ? o.ratios : ["16:9"], checkedValue("ratio") || "16:9", ratioLabel);
  const preferred = o.resolutions.includes(checkedValue("resolution")) ? checkedValue("resolution") : o.default_resolution;
  fillChips($("video-resolution-list"), "resolution", o.resolutions, preferred, (v) => [v]);
  form.duration.min = o.duration.min; form.duration.max = o.duration.max;
  form.duration.value = Math.max(o.duration.min, Math.min(Number(form.duration.value) || 5, o.duration.max));
  $("audio-field").hidden = !o.audio;
  $("seed-field").hidden = !o.seed;
  const presets = $("video-preset-list");
  presets.replaceChildren(...model.presets.map((p) => {
    const label = chip("preset", p.id, false, p.name, el("span", { className: "hint", textContent: p.summary }));
    label.querySelector("input").addEventListener("change", () => applyPreset(p));
    return label;
  }));
  $("video-presets").hidden = model.presets.length === 0;
  const allowed = { text: true, first: o.media.first_frame > 0, first_last: o.media.first_frame > 0 && o.media.last_frame > 0,
    references: o.media.reference_image > 0 };
  for (const input of form.querySelectorAll("input[name=mode]")) {
    input.disabled = !allowed[input.value];
    input.closest("label").title = input.disabled ? `${model.name} does not take this input` : "";
  }
  if (!allowed[mode()]) form.querySelector("input[name=mode][value=text]").checked = true;
  const can = [`${o.duration.min}–${o.duration.max} s`, o.resolutions.join(" / ")];
  if (o.audio) can.push("sound");
  if (allowed.first_last) can.push("first & last frame"); else if (allowed.first) can.push("first frame");
  if (allowed.references) can.push(`up to ${o.media.reference_image} references`);
  const rate = perSecond(model, o.resolutions[0], false);
  if (rate !== null) can.push(`from ${formatUsd(rate)} per second`);
  $("video-model-card").textContent = can.join(" · ");
  syncSlots();
  syncEstimate();
}

function syncEstimate() {
  const model = currentModel();
  if (!model) return;
  const duration = Number(form.duration.value);
  $("video-duration-out").textContent = `${duration} s`;
  const audio = model.options.audio && form.generate_audio.checked;
  const rate = perSecond(model, checkedValue("resolution"), audio);
  const box = $("video-estimate");
  box.replaceChildren();
  if (rate !== null) box.append("Costs about ", el("strong", { textContent: formatUsd(rate * duration) }), " · ");
  else box.append("No price listed · ");
  box.append(`usually ready in about ${seconds(typicalSeconds(model, duration))}`);
}

// --- frames and references: the picker dialog ----------------------------------------------------
function slotsForMode() {
  return { text: [], first: ["first_frame"], first_last: ["first_frame", "last_frame"], references: ["references"] }[mode()];
}

function slotButton(slot, pick, index) {
  const label = slot === "references" ? `${SLOT_NAMES[slot]} ${index + 1}` : SLOT_NAMES[slot];
  const button = el("button", { type: "button", className: "slot" });
  button.dataset.slot = slot;
  button.setAttribute("aria-label", pick ? `${label}: chosen (click to change)` : `${label}: choose an image`);
  if (pick) button.append(el("img", { src: pick.thumb, alt: "" }));
  button.append(el("span", { className: "slot-name", textContent: label }));
  button.addEventListener("click", () => {
    activeSlot = slot;
    activeIndex = index;
    openPicker();
  });
  const wrap = el("span", { className: "slot-wrap" }, button);
  if (pick) {
    wrap.append(el("button", { type: "button", className: "link", textContent: "Remove", ariaLabel: `Remove the ${label.toLowerCase()}`,
      onclick: () => {
        if (slot === "references") chosen.references.splice(index, 1); else chosen[slot] = null;
        syncSlots();
      } }));
  }
  return wrap;
}

function syncSlots() {
  const slots = slotsForMode();
  mediaBox.hidden = slots.length === 0;
  if (!slots.includes(activeSlot)) activeSlot = slots[0];
  const limit = currentModel()?.options.media.reference_image ?? 0;
  const buttons = [];
  for (const slot of slots) {
    if (slot === "references") {
      chosen.references.forEach((r, i) => buttons.push(slotButton(slot, r, i)));
      if (chosen.references.length < limit) buttons.push(slotButton(slot, null, chosen.references.length));
    } else {
      buttons.push(slotButton(slot, chosen[slot], 0));
    }
  }
  slotsBox.replaceChildren(...buttons);
  const inUse = new Set([chosen.first_frame?.id, chosen.last_frame?.id, ...chosen.references.map((r) => r.id)]);
  for (const b of picker.querySelectorAll("button")) b.setAttribute("aria-pressed", String(inUse.has(b.dataset.asset)));
}

function openPicker() {
  const label = activeSlot === "references" ? `reference ${activeIndex + 1}` : SLOT_NAMES[activeSlot].toLowerCase();
  $("video-picker-title").textContent = `Choose the ${label}`;
  $("video-upload-status").textContent = "";
  dialog.showModal();
}

function choose(pick) {
  if (activeSlot === "references") {
    if (activeIndex < chosen.references.length) chosen.references[activeIndex] = pick;
    else if (!chosen.references.some((r) => r.id === pick.id)) chosen.references.push(pick);
  } else {
    chosen[activeSlot] = pick;
  }
  dialog.close();
  syncSlots();
  // The next empty slot is the likely next choice: focus it.
  slotsBox.querySelector("button.slot:not(:has(img))")?.focus();
}

picker.addEventListener("click", (e) => {
  const button = e.target.closest("button[data-asset]");
  if (button) choose({ id: button.dataset.asset, thumb: button.dataset.thumb });
});

$("video-upload").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  const note = $("video-upload-status");
  note.textContent = "Uploading…";
  note.classList.remove("error");
  const body = new FormData();
  body.append("file", file);
  try {
    const response = await fetch(uploadUrl, { method: "POST", body, headers: { "X-CSRFToken": form.csrfmiddlewaretoken.value } });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error?.message || `HTTP ${response.status}`);
    const tile = el("button", { type: "button", ariaLabel: `Uploaded image ${file.name}` }, el("img", { src: data.url, alt: "" }));
    Object.assign(tile.dataset, { asset: data.id, thumb: data.url });
    picker.prepend(el("li", {}, tile));
    $("video-picker-empty")?.remove();
    note.textContent = "";
    choose({ id: data.id, thumb: data.url });
  } catch (error) {
    note.textContent = error.message;
    note.classList.add("error");
  } finally {
    e.target.value = "";
  }
});

// --- task cards ------------------------------------------------------------------------------
function optionsLine(task) {
  const o = task.options ?? {};
  const parts = [o.ratio, o.duration ? `${o.duration} s` : "", o.resolution, o.generate_audio === false ? "silent" : (o.generate_audio ? "sound" : "")];
  return parts.filter(Boolean).join(" · ");
}

function costLabel(task) {
  const failed = TERMINAL.has(task.status) && task.status !== "succeeded";
  if (failed && !Number(task.cost_usd)) return el("span", { className: "cost", textContent: "not charged" });
  if (task.cost_usd) return el("span", { className: "cost", title: "Charged for this video", textContent: formatUsd(Number(task.cost_usd)) });
  const o = task.options ?? {};
  const rate = perSecond(modelById(task.model), String(o.resolution ?? "").toLowerCase(), o.generate_audio !== false);
  if (!TERMINAL.has(task.status) && rate !== null && o.duration) {
    return el("span", { className: "cost", title: "Estimated from today's price; charged when the video is ready",
      textContent: `≈ ${formatUsd(rate * o.duration)}` });
  }
  return null;
}

function advancedPanel(task, id) {
  const rows = [["Task id", id], ["Protocol", task.protocol], ["Upstream state", task.upstream_status || "—"],
    ["Model id", task.model], ["Created", task.created]];
  if (task.options?.seed !== undefined) rows.push(["Seed", String(task.options.seed)]);
  if (task.error_code) rows.push(["Error code", task.error_code]);
  const dl = el("dl");
  for (const [name, value] of rows) dl.append(el("dt", { textContent: name }), el("dd", {}, el("code", { textContent: value ?? "" })));
  return el("details", { className: "advanced" }, el("summary", { textContent: "Advanced" }), dl);
}

function progressBox(task, id) {
  const box = el("div", { className: "placeholder" });
  const bar = el("div", { className: "bar" });
  const track = el("div", { className: "progress", role: "progressbar", ariaLabel: "Progress (estimated)" }, bar);
  track.setAttribute("aria-valuemin", "0");
  track.setAttribute("aria-valuemax", "100");
  box.append(track);
  const text = el("p", { className: "progress-text", ariaLive: "off" });
  const fragment = document.createDocumentFragment();
  fragment.append(box, text);
  progress.set(id, { task, bar, track, text });
  tick(id);
  return fragment;
}

// Progress is an estimate: time since creation against how long this model usually takes.
const progress = new Map();
function tick(id) {
  const entry = progress.get(id);
  if (!entry) return;
  const { task, bar, track, text } = entry;
  const typical = typicalSeconds(modelById(task.model), task.options?.duration);
  const elapsed = Math.max(0, (Date.now() - Date.parse(task.created)) / 1000);
  const share = Math.min(0.95, elapsed / typical);
  const percent = Math.round(share * 100);
  bar.style.width = `${Math.max(3, percent)}%`;
  track.setAttribute("aria-valuenow", String(percent));
  const left = typical - elapsed;
  const phase = task.status === "queued" ? "Waiting for a slot" : "Rendering";
  text.textContent = left > 1 ? `${phase} · about ${seconds(left)} left` : `${phase} · taking a little longer than usual`;
}
setInterval(() => { for (const id of progress.keys()) tick(id); }, 1000);

function render(task) {
  const id = task.task_id || task.id;
  seen.set(id, task);
  progress.delete(id);
  let item = list.querySelector(`[data-task="${CSS.escape(id)}"]`);
  if (!item) {
    item = el("li", { className: "task card" });
    item.dataset.task = id;
    list.prepend(item);
  }
  item.dataset.status = task.status;
  item.replaceChildren();
  const model = modelById(task.model);
  const label = (task.prompt || model?.name || "video").slice(0, 80);
  if (task.status === "succeeded" && task.video_url) {
    const video = el("video", { controls: true, preload: "metadata", src: local(task.video_url) });
    video.setAttribute("aria-label", `Video: ${label}`);
    video.poster = local(task.poster_url || task.last_frame_url);
    item.append(video);
  } else if (task.status === "succeeded" && task.poster_url) {
    item.append(el("img", { className: "poster", src: local(task.poster_url), alt: `Poster of ${label}` }));
  } else if (!TERMINAL.has(task.status)) {
    item.append(progressBox(task, id));
  }
  const badge = el("span", { className: "badge" });
  if (!TERMINAL.has(task.status)) badge.append(el("span", { className: "spinner", ariaHidden: "true" }));
  badge.append(STATUS_NAMES[task.status] ?? task.status);
  item.append(el("div", { className: "head" }, el("span", { className: "model-name", textContent: model?.name ?? task.model }), badge));
  if (task.prompt) item.append(el("p", { className: "prompt", textContent: task.prompt.slice(0, 160) }));
  const facts = el("p", { className: "facts" });
  const line = optionsLine(task);
  if (line) facts.append(line);
  const cost = costLabel(task);
  if (cost) facts.append(line ? " · " : "", cost);
  if (facts.childNodes.length) item.append(facts);
  if (TERMINAL.has(task.status) && task.status !== "succeeded") {
    const message = task.error_message || (task.status === "expired" ? "the task ran past its deadline" : "the upstream gave no reason");
    item.append(el("p", { className: "task-error", role: "alert", textContent: message }));
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
  item.append(advancedPanel(task, id));
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
  status.replaceChildren("Extending this video: its last frame becomes the first frame. ",
    el("button", { type: "button", className: "link", textContent: "Cancel", onclick: () => { form.extend_from.value = ""; status.textContent = ""; } }));
  status.dataset.extending = id;
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

list.replaceChildren();
for (const task of [...initial].reverse()) render(task);

form.model.addEventListener("change", syncFields);
form.duration.addEventListener("input", syncEstimate);
form.generate_audio.addEventListener("change", syncEstimate);
form.addEventListener("change", (e) => {
  if (e.target.name === "resolution") syncEstimate();
  if (["ratio", "resolution", "duration", "generate_audio"].includes(e.target.name)) {
    for (const p of form.querySelectorAll("input[name=preset]")) p.checked = false; // no longer the preset as chosen
  }
});
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
    resolution: checkedValue("resolution"), ratio: checkedValue("ratio"),
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
    if (missing && !(missing === "first_frame" && body.extend_from)) throw new Error(`Choose an image for the ${SLOT_NAMES[missing].toLowerCase()}.`);
    const response = await fetch("create", {
      method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-CSRFToken": form.csrfmiddlewaretoken.value },
    });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error?.message || `HTTP ${response.status}`);
    render(data.task);
    // On a narrow screen the cards are below the form: bring the new one into view.
    if (matchMedia("(max-width: 860px)").matches) list.firstElementChild?.scrollIntoView({ block: "start" });
    form.extend_from.value = "";
    delete status.dataset.extending;
    status.textContent = "Video started: its card shows the progress.";
  } catch (error) {
    status.textContent = error.message;
    status.classList.add("error");
  } finally {
    button.disabled = false;
  }
});
