// The Generate page: the controls follow the chosen model's capabilities (catalog data); one
// model or several to compare; results stream in over the page's socket and survive reloads
// (the page URL carries ?job=<id>, and the socket replays what was missed).
import { StudioSocket } from "./socket.js";
import { JobPanel } from "./job_panel.js";
import { Lightbox } from "./lightbox.js";
import { actionsFor, toggleStar } from "./result_actions.js";
import { CONTROLS, fillSelect, offered, readOwnOptions, renderModelCard, renderOwnOptions } from "./model_options.js";

const models = JSON.parse(document.getElementById("models-data").textContent);
const state = JSON.parse(document.getElementById("page-state").textContent);
const byId = new Map(models.map((m) => [m.id, m]));
const $ = (id) => document.getElementById(id);

const form = $("generate-form");
const modelSelect = $("model");
const compareToggle = $("compare-toggle");
const compareBox = $("compare-models");
const promptBox = $("prompt");
const statusLine = $("form-status");
const results = $("results");
const button = $("generate-button");
const uploadInput = $("reference-upload");
const referenceList = $("reference-list");
const referenceCount = $("reference-count");
const teamSelect = $("team");
const connection = $("connection");

let inputs = [...state.inputs]; // [{id, url}]
const panels = new Map(); // job id -> JobPanel
let pendingRef = null;

// --- which models the form is for ------------------------------------------------------------

function selectedModels() {
  if (!compareToggle.checked) return [byId.get(modelSelect.value) ?? models[0]];
  return [...compareBox.querySelectorAll("input:checked")].map((box) => byId.get(box.value));
}

function applyCapabilities() {
  const chosen = selectedModels().filter(Boolean);
  renderModelCard($("model-card"), chosen);
  renderOwnOptions($("own-options"), form, chosen);
  for (const control of CONTROLS) {
    const wrapper = form.querySelector(`[data-option="${control.name}"]`);
    const input = $(`opt-${control.name}`);
    const values = offered(control, chosen);
    let visible = values !== null && !(Array.isArray(values) && values.length === 0);
    if (control.kind === "count" && typeof values === "number") {
      input.max = values;
      if (Number(input.value) > values) input.value = values;
      if (control.name === "n" && values <= 1) visible = false;
    }
    if (visible && control.kind === "select") fillSelect(input, values, control, chosen[0]);
    if (control.needs) visible = visible && $(`opt-${control.needs}`).checked;
    wrapper.hidden = !visible;
  }
  renderReferences();
}

function currentOptions() {
  const options = {};
  for (const control of CONTROLS) {
    const wrapper = form.querySelector(`[data-option="${control.name}"]`);
    if (wrapper.hidden) continue;
    const input = $(`opt-${control.name}`);
    if (control.kind === "flag") options[control.name] = input.checked;
    else if (input.value !== "") options[control.name] = control.kind === "select" ? input.value : Number(input.value);
  }
  return options;
}

// --- reference images ----------------------------------------------------------------------

function referenceLimit() {
  const limits = selectedModels().filter(Boolean).map((m) => m.capabilities.max_reference_images ?? 0);
  return limits.length ? Math.max(...limits) : 0;
}

function renderReferences() {
  const limit = referenceLimit();
  referenceCount.textContent = `(${inputs.length} of at most ${limit})`;
  referenceList.replaceChildren(...inputs.map((input, index) => {
    const item = document.createElement("li");
    const img = document.createElement("img");
    img.src = input.url;
    img.alt = `Reference image ${index + 1}`;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove";
    remove.textContent = "×";
    remove.setAttribute("aria-label", `Remove reference image ${index + 1}`);
    remove.addEventListener("click", () => {
      inputs.splice(index, 1);
      renderReferences();
    });
    item.append(img, remove);
    return item;
  }));
  uploadInput.disabled = inputs.length >= limit;
  if (inputs.length > limit) statusLine.textContent = `This model takes at most ${limit} reference images.`;
}

function addReference(input) {
  if (inputs.some((i) => i.id === input.id)) return;
  if (inputs.length >= referenceLimit()) {
    statusLine.textContent = `This model takes at most ${referenceLimit()} reference images.`;
    return;
  }
  inputs.push(input);
  renderReferences();
}

function csrfToken() {
  return form.querySelector("input[name=csrfmiddlewaretoken]").value;
}

uploadInput.addEventListener("change", async () => {
  for (const file of uploadInput.files) {
    const body = new FormData();
    body.append("file", file);
    statusLine.textContent = `Uploading ${file.name}…`;
    const response = await fetch(state.upload_url, { method: "POST", body, headers: { "X-CSRFToken": csrfToken() } });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      statusLine.textContent = answer.error?.message ?? `Upload failed (${response.status})`;
      return;
    }
    addReference(answer);
    statusLine.textContent = "";
  }
  uploadInput.value = "";
});

// --- running jobs ----------------------------------------------------------------------------

function setBusy(busy) {
  button.disabled = busy;
  form.setAttribute("aria-busy", busy ? "true" : "false");
}

function clearResults() {
  for (const id of panels.keys()) socket.forget(id);
  panels.clear();
  results.replaceChildren();
  results.classList.toggle("compare", compareToggle.checked);
}

function rememberJobsInUrl() {
  const url = new URL(location.href);
  url.searchParams.delete("job");
  for (const id of panels.keys()) url.searchParams.append("job", id);
  history.replaceState(null, "", url);
}

function panelFor(id, model) {
  let panel = panels.get(id);
  if (!panel) {
    const info = byId.get(model);
    panel = new JobPanel(results, {
      id, model, modelName: info?.name ?? model ?? "Job", onUseAsInput: addReference, actions: resultHandlers, price: info?.price,
    });
    panels.set(id, panel);
    results.classList.toggle("compare", panels.size > 1);
  }
  return panel;
}

function updateStatus() {
  const running = [...panels.values()].filter((p) => !p.done).length;
  if (running) statusLine.textContent = `Generating on ${running} model${running === 1 ? "" : "s"}…`;
  else if (panels.size) {
    statusLine.textContent = "Done.";
    setBusy(false);
  }
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  const prompt = promptBox.value.trim();
  const chosen = selectedModels().filter(Boolean);
  const layersOnly = chosen.length === 1 && $("opt-layer_decomposition").checked && inputs.length > 0;
  if (!prompt && !layersOnly) {
    statusLine.textContent = "Write a prompt first.";
    promptBox.focus();
    return;
  }
  if (compareToggle.checked && (chosen.length < 2 || chosen.length > 4)) {
    statusLine.textContent = "Choose 2 to 4 models to compare.";
    return;
  }
  clearResults();
  statusLine.textContent = "Sending…";
  setBusy(true);
  pendingRef = crypto.randomUUID ? crypto.randomUUID() : String(Date.now());
  const message = {
    ref: pendingRef, prompt, options: currentOptions(), inputs: inputs.map((i) => i.id), team: teamSelect.value || null,
  };
  if (compareToggle.checked) {
    socket.send({ action: "compare", models: chosen.map((m) => m.id), model_options: readOwnOptions($("own-options")), ...message });
  }
  else socket.send({ action: "generate", model: chosen[0].id, ...message });
});

const socket = new StudioSocket();

socket.on((event) => {
  if (event.type === "socket.closed") {
    connection.textContent = "Connection lost; reconnecting…";
    return;
  }
  if (event.type === "socket.open") {
    connection.textContent = "";
    return;
  }
  if (event.type === "job.rejected" && event.ref === pendingRef) {
    const where = event.data.model ? `${byId.get(event.data.model)?.name ?? event.data.model}: ` : "";
    statusLine.textContent = `${where}${event.data.message}`;
    if (!panels.size || [...panels.values()].every((p) => p.done)) setBusy(false);
    return;
  }
  if (event.type === "compare.accepted" && event.ref === pendingRef && event.data.variations) {
    const title = document.createElement("p");
    title.className = "group-title-bar";
    title.textContent = `${event.data.variations} variations · same prompt and settings, new seeds`;
    results.prepend(title);
    return;
  }
  if (event.type === "job.accepted" && event.ref === pendingRef) {
    panelFor(event.id, event.data.model);
    socket.follow(event.id);
    rememberJobsInUrl();
    updateStatus();
    return;
  }
  const panel = panels.get(event.id);
  if (!panel) return;
  if (event.type === "job.started" && event.data.model && panel.model !== event.data.model) {
    panel.price = byId.get(event.data.model)?.price;
    panel.rename(event.data.model, byId.get(event.data.model)?.name ?? event.data.model);
    if (!promptBox.value) promptBox.value = event.data.prompt ?? "";
  }
  panel.handle(event);
  if (["job.completed", "job.failed", "job.unknown"].includes(event.type)) updateStatus();
});

// --- result actions --------------------------------------------------------------------------

const lightbox = new Lightbox(() => [...results.querySelectorAll("figure.final img")].map((img) => ({
  url: img.getAttribute("src"), download: `/assets/${img.dataset.asset}/file?download=1`, caption: img.alt,
})));

function startRun(message) {
  clearResults();
  setBusy(true);
  statusLine.textContent = "Sending…";
  pendingRef = crypto.randomUUID ? crypto.randomUUID() : String(Date.now());
  socket.send({ ref: pendingRef, ...message });
}

function applyRecipe(recipe) {
  if (!recipe) return;
  if (compareToggle.checked) setCompare(false);
  if (byId.has(recipe.model)) modelSelect.value = recipe.model;
  promptBox.value = recipe.prompt;
  applyCapabilities();
  const options = { ...recipe.options, ...(recipe.seed !== null && recipe.seed !== undefined ? { seed: recipe.seed } : {}) };
  for (const [name, value] of Object.entries(options)) {
    const input = $(`opt-${name}`);
    if (input && !input.closest("[data-option]").hidden) input.value = value;
  }
  const seedShown = !form.querySelector('[data-option="seed"]').hidden;
  statusLine.textContent = recipe.seed !== null && recipe.seed !== undefined && seedShown
    ? `Prompt, settings and seed ${recipe.seed} reused: generate to make it again, or change one thing.`
    : "Prompt and settings reused (this model takes no seed).";
}

const resultHandlers = {
  open: (data) => lightbox.open(data.url ?? `/assets/${data.asset}/file`),
  variations: (data) => startRun({ action: "variations", asset: data.asset, count: 4 }),
  upscale: async (data) => {
    try {
      const info = await actionsFor(data.asset);
      if (!info.upscale.model) {
        statusLine.textContent = info.upscale.message;
        return;
      }
      startRun({ action: "generate", model: info.upscale.model, prompt: info.upscale.prompt,
        options: { image_size: info.upscale.tier }, inputs: [data.asset], team: teamSelect.value || null });
      statusLine.textContent = `Upscaling to ${info.upscale.tier} with ${info.upscale.model_name}…`;
    } catch (error) {
      statusLine.textContent = error.message;
    }
  },
  reuse: async (data) => {
    try {
      applyRecipe((await actionsFor(data.asset)).recipe);
      promptBox.focus();
    } catch (error) {
      statusLine.textContent = error.message;
    }
  },
};

function focusedResult() {
  const figure = document.activeElement?.closest?.("figure.final") ?? results.querySelector("figure.final");
  return figure ? { figure, asset: figure.dataset.asset, url: figure.querySelector("img").getAttribute("src") } : null;
}

// --- page state, model choice, shortcuts ---------------------------------------------------

function setCompare(on) {
  compareToggle.checked = on;
  compareBox.hidden = !on;
  $("single-model").hidden = on;
  $("generate-label").textContent = on ? "Compare" : "Generate";
  if (on && !compareBox.querySelector("input:checked")) {
    compareBox.querySelector(`input[value="${CSS.escape(modelSelect.value)}"]`)?.click();
  }
  applyCapabilities();
}

modelSelect.addEventListener("change", applyCapabilities);
compareToggle.addEventListener("change", () => setCompare(compareToggle.checked));
compareBox.addEventListener("change", applyCapabilities);
$("opt-sequential").addEventListener("change", applyCapabilities);

for (const team of state.teams) teamSelect.append(new Option(team.name, team.id));
$("team-choice").hidden = state.teams.length === 0;

const shortcuts = $("shortcuts");
const shortcutsButton = $("shortcuts-button");
function toggleShortcuts(show = shortcuts.hidden) {
  shortcuts.hidden = !show;
  shortcutsButton.setAttribute("aria-expanded", String(show));
}
shortcutsButton.addEventListener("click", () => toggleShortcuts());

function typing(target) {
  return target.closest?.("input, textarea, select, [contenteditable]") !== null;
}

function moveFocus(step) {
  const figures = [...results.querySelectorAll("figure.final")];
  if (!figures.length) return;
  const index = figures.indexOf(document.activeElement);
  const next = figures[(index + step + figures.length) % figures.length];
  next.focus();
  next.scrollIntoView({ block: "nearest" });
}

document.addEventListener("keydown", (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
    e.preventDefault();
    if (!button.disabled) form.requestSubmit();
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target) || e.target.closest?.("dialog")) return;
  if (e.key === "Enter" && e.target.closest?.("button, a")) return; // Enter on a button or link is theirs
  const actions = {
    c: () => setCompare(!compareToggle.checked),
    "/": () => promptBox.focus(),
    m: () => (compareToggle.checked ? compareBox.querySelector("input") : modelSelect).focus(),
    j: () => moveFocus(1),
    k: () => moveFocus(-1),
    "?": () => toggleShortcuts(),
    Escape: () => toggleShortcuts(false),
    Enter: () => { const r = focusedResult(); if (r) resultHandlers.open(r); },
    o: () => { const r = focusedResult(); if (r) resultHandlers.open(r); },
    d: () => { const r = focusedResult(); r?.figure.querySelector("a[download]")?.click(); },
    s: () => { const r = focusedResult(); if (r) toggleStar(r.asset, r.figure.querySelector(".star")); },
    v: () => { const r = focusedResult(); if (r) resultHandlers.variations(r); },
    u: () => { const r = focusedResult(); if (r) resultHandlers.upscale(r); },
    r: () => { const r = focusedResult(); if (r) resultHandlers.reuse(r); },
  };
  const action = actions[e.key];
  if (action) {
    e.preventDefault();
    action();
  }
});

if (state.compare.length >= 2) {
  for (const id of state.compare) compareBox.querySelector(`input[value="${CSS.escape(id)}"]`).checked = true;
  setCompare(true);
} else {
  applyCapabilities();
}

// Jobs named in the URL (a reload, or the same job opened on another device): replay and follow.
for (const id of state.jobs) {
  panelFor(id, null);
  socket.subscribe(id);
}
if (state.jobs.length) {
  setBusy(true);
  statusLine.textContent = "Catching up…";
}

// Links from a result elsewhere (the detail page): fill the form, run variations or upscale.
if (state.recipe) applyRecipe(state.recipe);
if (state.variations) resultHandlers.variations({ asset: state.variations });
else if (state.upscale) resultHandlers.upscale({ asset: state.upscale });
