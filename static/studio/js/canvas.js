// The mask canvas page: paint a mask layer over the picture (brush, eraser, size, undo/redo,
// invert, clear, zoom), or drag a larger frame to outpaint, then send the edit. The job's live
// events arrive over the page's socket and show in a result panel, like on the Generate page.
import { StudioSocket } from "./socket.js";
import { JobPanel } from "./job_panel.js";
import { MaskHistory, paint } from "./mask_history.js";

const models = JSON.parse(document.getElementById("models-data").textContent);
const state = JSON.parse(document.getElementById("page-state").textContent);
const byId = new Map(models.map((m) => [m.id, m]));
const $ = (id) => document.getElementById(id);
const csrf = document.querySelector('meta[name="csrf-token"]').content;

const maskCanvas = $("mask");
const ctx = maskCanvas.getContext("2d");
const stage = $("stage");
const frame = $("frame");
const history = new MaskHistory(`mask:${state.asset.id}`);
const { width: W, height: H } = state.asset;
let tool = "brush";
let zoom = 1;
let current = null; // the stroke being drawn
const grow = { left: 0, top: 0, right: 0, bottom: 0 };

// --- painting ---------------------------------------------------------------------------------

function redraw() {
  paint(ctx, history.ops);
  if (current) paint(ctx, [...history.ops, current]);
  $("undo").disabled = !history.ops.length;
  $("redo").disabled = !history.undone.length;
  $("invert").setAttribute("aria-pressed", String(history.inverted));
}

function point(event) {
  const box = maskCanvas.getBoundingClientRect();
  return [Math.round(((event.clientX - box.left) / box.width) * W), Math.round(((event.clientY - box.top) / box.height) * H)];
}

// Touch: one finger paints; two fingers pinch to zoom (the stroke they began is dropped).
const touches = new Map(); // pointer id -> [x, y]
let pinch = null;
const spread = () => {
  const [a, b] = [...touches.values()];
  return Math.hypot(a[0] - b[0], a[1] - b[1]);
};

maskCanvas.addEventListener("pointerdown", (event) => {
  if (event.pointerType === "touch") touches.set(event.pointerId, [event.clientX, event.clientY]);
  if (touches.size === 2) {
    current = null;
    pinch = { distance: spread(), zoom };
    redraw();
    return;
  }
  if (mode() !== "inpaint" || pinch) return;
  try { maskCanvas.setPointerCapture(event.pointerId); } catch { /* the pointer already left */ }
  current = { type: "stroke", tool, size: Number($("brush-size").value), points: [point(event)] };
  redraw();
});
maskCanvas.addEventListener("pointermove", (event) => {
  if (touches.has(event.pointerId)) touches.set(event.pointerId, [event.clientX, event.clientY]);
  if (pinch && touches.size === 2) {
    setZoom(pinch.zoom * (spread() / pinch.distance));
    return;
  }
  if (!current) return;
  current.points.push(point(event));
  redraw();
});
const endStroke = (event) => {
  touches.delete(event.pointerId);
  if (touches.size < 2) pinch = null;
  if (!current) return;
  history.push(current);
  current = null;
  redraw();
};
maskCanvas.addEventListener("pointerup", endStroke);
maskCanvas.addEventListener("pointercancel", endStroke);

function setTool(name) {
  tool = name;
  $("tool-brush").setAttribute("aria-pressed", String(name === "brush"));
  $("tool-eraser").setAttribute("aria-pressed", String(name === "eraser"));
  stage.dataset.tool = name;
}
$("tool-brush").addEventListener("click", () => setTool("brush"));
$("tool-eraser").addEventListener("click", () => setTool("eraser"));
$("brush-size").addEventListener("input", () => ($("brush-size-value").textContent = $("brush-size").value));
$("undo").addEventListener("click", () => history.undo() && redraw());
$("redo").addEventListener("click", () => history.redo() && redraw());
$("invert").addEventListener("click", () => { history.push({ type: "invert" }); redraw(); });
$("clear").addEventListener("click", () => { history.push({ type: "clear" }); redraw(); });
document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, textarea, select")) return;
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z") {
    event.preventDefault();
    if (event.shiftKey) history.redo(); else history.undo();
    redraw();
  } else if (event.key === "b") setTool("brush");
  else if (event.key === "e") setTool("eraser");
});

// --- zoom and the outpaint frame -----------------------------------------------------------------

function layout() {
  const width = W * zoom;
  const height = H * zoom;
  const left = grow.left * zoom;
  const top = grow.top * zoom;
  const outpainting = mode() === "outpaint";
  const padX = outpainting ? left : 0;
  const padY = outpainting ? top : 0;
  stage.style.width = `${width + (outpainting ? (grow.left + grow.right) * zoom : 0)}px`;
  stage.style.height = `${height + (outpainting ? (grow.top + grow.bottom) * zoom : 0)}px`;
  for (const node of [$("source"), maskCanvas]) {
    Object.assign(node.style, { width: `${width}px`, height: `${height}px`, left: `${padX}px`, top: `${padY}px` });
  }
  frame.hidden = !outpainting;
  $("zoom-value").textContent = `${Math.round(zoom * 100)}%`;
  $("canvas-size").textContent = `${W + grow.left + grow.right} × ${H + grow.top + grow.bottom}`;
}

function setZoom(value) {
  zoom = Math.min(8, Math.max(0.1, value));
  layout();
}
function fit() {
  const wrap = $("stage-wrap");
  const padding = parseFloat(getComputedStyle(wrap).paddingLeft) * 2;
  const room = wrap.clientWidth - padding;
  const total = W + (mode() === "outpaint" ? grow.left + grow.right : 0);
  setZoom(Math.min(1, room / total));
}
$("zoom-in").addEventListener("click", () => setZoom(zoom * 1.25));
$("zoom-out").addEventListener("click", () => setZoom(zoom / 1.25));
$("zoom-fit").addEventListener("click", fit);
let fitted = true; // until the user zooms, the picture follows the viewport (rotating a phone)
for (const id of ["zoom-in", "zoom-out"]) $(id).addEventListener("click", () => { fitted = false; });
$("zoom-fit").addEventListener("click", () => { fitted = true; });
window.addEventListener("resize", () => { if (fitted) fit(); });

for (const side of Object.keys(grow)) {
  const input = $(`grow-${side}`);
  input.addEventListener("input", () => {
    grow[side] = Math.max(0, Math.round(Number(input.value) || 0));
    layout();
  });
}
for (const handle of frame.querySelectorAll(".handle")) {
  handle.addEventListener("pointerdown", (event) => {
    const side = handle.dataset.side;
    const start = { x: event.clientX, y: event.clientY, value: grow[side] };
    handle.setPointerCapture(event.pointerId);
    const move = (e) => {
      const delta = { left: start.x - e.clientX, right: e.clientX - start.x, top: start.y - e.clientY, bottom: e.clientY - start.y }[side];
      grow[side] = Math.max(0, Math.round(start.value + delta / zoom));
      $(`grow-${side}`).value = grow[side];
      layout();
    };
    const up = () => { handle.removeEventListener("pointermove", move); handle.removeEventListener("pointerup", up); };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", up);
  });
}

// --- model, mode and background ----------------------------------------------------------------

function mode() {
  return document.querySelector('input[name="mode"]:checked').value;
}

function syncModel() {
  const model = byId.get($("model").value);
  const can = { inpaint: model.mask, outpaint: model.outpaint, edit: true };
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.disabled = !can[radio.value];
  const note = $("mode-note");
  if (!model.mask) {
    note.hidden = false;
    note.textContent = `${model.name} edits the whole picture from your words and takes no mask; inpaint and outpaint need a model with masks.`;
    document.querySelector('input[name="mode"][value="edit"]').checked = true;
  } else note.hidden = true;
  const qualities = model.family === "standard" ? model.capabilities.qualities ?? [] : [];
  $("standard-options").hidden = !qualities.length;
  $("opt-quality").replaceChildren(new Option("Model default", ""), ...qualities.map((q) => new Option(q, q)));
  syncMode();
}

function syncMode() {
  const current = mode();
  stage.dataset.mode = current;
  $("outpaint-options").hidden = current !== "outpaint";
  maskCanvas.hidden = current === "outpaint";
  $("stage-hint").textContent = {
    inpaint: "Paint over the area to change. The mask stays its own layer; the picture is never painted on.",
    outpaint: "Drag the frame's edges (or type margins) to make the canvas larger; the picture stays as it is.",
    edit: "The whole picture is edited from your words.",
  }[current];
  layout();
}

function syncBackground() {
  const kind = $("background-kind").value;
  $("background-colour-row").hidden = kind !== "colour";
  $("background-assets").hidden = kind !== "asset";
}

let chosenBackground = state.backgrounds[0]?.id ?? null;
for (const item of state.backgrounds) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.asset = item.id;
  button.setAttribute("aria-pressed", String(item.id === chosenBackground));
  const img = document.createElement("img");
  img.src = item.thumb;
  img.alt = `Background choice ${item.width}×${item.height}`;
  button.append(img);
  button.addEventListener("click", () => {
    chosenBackground = item.id;
    for (const other of $("background-assets").querySelectorAll("button")) other.setAttribute("aria-pressed", String(other === button));
  });
  li.append(button);
  $("background-assets").append(li);
}

$("model").addEventListener("change", syncModel);
document.querySelectorAll('input[name="mode"]').forEach((radio) => radio.addEventListener("change", syncMode));
$("background-kind").addEventListener("change", syncBackground);

// --- sending -------------------------------------------------------------------------------------

const socket = new StudioSocket();
const panels = new Map();
socket.on((event) => panels.get(event.id)?.handle(event));

function background() {
  const kind = $("background-kind").value;
  if (kind === "colour") return { kind, value: $("background-colour").value };
  if (kind === "asset") return { kind, value: chosenBackground };
  return { kind };
}

function maskLayer() {
  const layer = document.createElement("canvas");
  layer.width = W;
  layer.height = H;
  paint(layer.getContext("2d"), history.ops);
  return layer.toDataURL("image/png");
}

$("canvas-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const status = $("form-status");
  const model = byId.get($("model").value);
  const body = { model: model.id, prompt: $("prompt").value, mode: mode(), options: {} };
  if ($("opt-quality").value) body.options.quality = $("opt-quality").value;
  if ($("team")?.value) body.team = $("team").value;
  if (body.mode === "inpaint") body.mask = maskLayer();
  if (body.mode === "outpaint") Object.assign(body, { frame: { ...grow }, background: background() });
  status.textContent = "Sending…";
  status.classList.remove("error");
  $("send").disabled = true;
  try {
    const response = await fetch(state.submit_url, {
      method: "POST", headers: { "Content-Type": "application/json", "X-CSRFToken": csrf }, body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) {
      status.textContent = answer.error?.message ?? `Failed (${response.status})`;
      status.classList.add("error");
      if (answer.error?.param) status.dataset.param = answer.error.param;
      return;
    }
    status.textContent = "";
    const panel = new JobPanel($("results"), { id: answer.job, model: model.id, modelName: model.name });
    panel.root.dataset.mode = body.mode;
    if (answer.mask) panel.root.dataset.mask = answer.mask;
    $("results").prepend(panel.root);
    panels.set(answer.job, panel);
    socket.subscribe(answer.job);
  } catch (error) {
    status.textContent = `Could not send: ${error.message}`;
    status.classList.add("error");
  } finally {
    $("send").disabled = false;
  }
});

if (state.initial_model && byId.has(state.initial_model)) $("model").value = state.initial_model;
$("source").decode().catch(() => {}).finally(fit);
syncModel();
syncBackground();
fit();
redraw();
