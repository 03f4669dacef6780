// Compose: pick gallery images, give each a role in words, make one picture from them. The job's
// live events show in a result panel, with the images it was made from (and their roles) beside it.
import { StudioSocket } from "./socket.js";
import { JobPanel } from "./job_panel.js";

const models = JSON.parse(document.getElementById("models-data").textContent);
const state = JSON.parse(document.getElementById("page-state").textContent);
const byId = new Map(models.map((m) => [m.id, m]));
const choices = new Map(state.choices.map((c) => [c.id, c]));
const $ = (id) => document.getElementById(id);
const csrf = document.querySelector('meta[name="csrf-token"]').content;
let chosen = [...state.preselected]; // asset ids, in order
const roles = new Map(); // asset id -> role text

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderPicker() {
  const picker = $("compose-picker");
  if (!state.choices.length) return;
  picker.replaceChildren(...state.choices.map((choice) => {
    const li = el("li");
    const button = el("button");
    button.type = "button";
    button.dataset.asset = choice.id;
    const position = chosen.indexOf(choice.id);
    button.setAttribute("aria-pressed", String(position >= 0));
    button.setAttribute("aria-label", `${position >= 0 ? "Remove" : "Add"}: ${choice.prompt || "image"}`);
    const img = el("img");
    img.src = choice.thumb;
    img.alt = "";
    button.append(img);
    button.addEventListener("click", () => toggle(choice.id));
    li.append(button);
    return li;
  }));
}

function renderChosen() {
  const list = $("compose-list");
  list.replaceChildren(...chosen.map((id, index) => {
    const li = el("li", "compose-item");
    li.dataset.asset = id;
    const img = el("img");
    img.src = choices.get(id).thumb;
    img.alt = `Image ${index + 1}`;
    const box = el("div");
    const label = el("label", "", "");
    label.append(el("span", "number", `Image ${index + 1}`), document.createTextNode(" · what to take from it"));
    const input = el("input");
    input.id = `role-${index + 1}`;
    label.htmlFor = input.id;
    input.placeholder = index === 0 ? "the cat" : "the background";
    input.value = roles.get(id) ?? "";
    input.addEventListener("input", () => roles.set(id, input.value));
    box.append(label, input);
    const remove = el("button", "link", "Remove");
    remove.type = "button";
    remove.setAttribute("aria-label", `Remove image ${index + 1}`);
    remove.addEventListener("click", () => toggle(id));
    li.append(img, box, remove);
    return li;
  }));
  $("compose-empty").hidden = chosen.length > 0;
  const model = byId.get($("model").value);
  $("form-status").textContent = model && chosen.length > model.max_images
    ? `${model.name} takes at most ${model.max_images} images.` : "";
}

function toggle(id) {
  chosen = chosen.includes(id) ? chosen.filter((x) => x !== id) : [...chosen, id];
  renderPicker();
  renderChosen();
}

const socket = new StudioSocket();
const panels = new Map();
socket.on((event) => panels.get(event.id)?.handle(event));

function lineage(items) {
  const list = el("ul", "lineage-inputs");
  list.setAttribute("aria-label", "Made from");
  items.forEach((item, index) => {
    const li = el("li");
    const link = el("a");
    link.href = `/assets/${item.asset}/`;
    const img = el("img");
    img.src = choices.get(item.asset)?.thumb ?? "";
    img.alt = `Input ${index + 1}: ${item.role}`;
    link.append(img);
    li.append(link, el("span", "", `${index + 1}. ${item.role}`));
    list.append(li);
  });
  return list;
}

$("model").addEventListener("change", renderChosen);
$("compose-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const status = $("form-status");
  const model = byId.get($("model").value);
  const items = chosen.map((asset) => ({ asset, role: roles.get(asset) ?? "" }));
  const body = { model: model.id, prompt: $("prompt").value, items };
  if ($("team")?.value) body.team = $("team").value;
  status.classList.remove("error");
  status.textContent = "Sending…";
  const response = await fetch(state.start_url, {
    method: "POST", headers: { "Content-Type": "application/json", "X-CSRFToken": csrf }, body: JSON.stringify(body),
  }).catch((error) => ({ ok: false, status: 0, json: async () => ({ error: { message: error.message } }) }));
  const answer = await response.json();
  if (!response.ok) {
    status.textContent = answer.error?.message ?? `Failed (${response.status})`;
    status.classList.add("error");
    return;
  }
  status.textContent = "";
  const panel = new JobPanel($("results"), { id: answer.job, model: model.id, modelName: model.name });
  panel.root.append(el("h3", "group-title", "Made from"), lineage(items));
  $("results").prepend(panel.root);
  panels.set(answer.job, panel);
  socket.subscribe(answer.job);
});

renderPicker();
renderChosen();
