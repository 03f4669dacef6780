// An edit session: the thread from the source image to the head turn, sibling switchers,
// branching from any turn, live turns over the studio socket, the tree of every turn, and a
// compare view (slider and side by side) of a turn with its parent.
import { StudioSocket } from "./socket.js";

const state = JSON.parse(document.getElementById("edit-state").textContent);
const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
const $ = (id) => document.getElementById(id);
const socket = new StudioSocket();

let tree = state.tree;
let branchFrom = undefined; // undefined: follow the head; null: the source image; else a turn id
const live = new Map(); // job id -> {thoughts, text, images, state, message}
const pendingRefs = new Map(); // ref -> true while waiting for the server to accept an edit

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const turn = (id) => tree.turns[id];

function pathTo(id) {
  const path = [];
  for (let t = id ? turn(id) : null; t; t = t.parent ? turn(t.parent) : null) path.unshift(t.id);
  return path;
}

function shortLabel(t, max = 36) {
  const text = t.instruction.length > max ? `${t.instruction.slice(0, max - 1)}…` : t.instruction;
  return text;
}

// The turn a new instruction continues from: the chosen branch point, else the newest answered
// turn on the path (a failed or blocked head has no image to continue).
function continueFrom() {
  if (branchFrom !== undefined) return branchFrom;
  const path = pathTo(tree.head);
  for (let i = path.length - 1; i >= 0; i--) if (turn(path[i]).status === "succeeded") return path[i];
  return null;
}

// Trees asked of the server, and the newest of them shown: answers may come back in another order
// than they were asked for (a turn's "started" and "completed" each ask), and an older one must not
// put back a turn that has finished as still running.
let treesAsked = 0;
let treeShown = 0;

async function showTree(response, asked) {
  if (!response.ok) return;
  const fresh = await response.json();
  if (asked <= treeShown) return; // a newer tree is on the page already
  treeShown = asked;
  tree = fresh;
  render();
}

async function setHead(id) {
  tree.head = id;
  branchFrom = undefined;
  render();
  if (!state.can_edit) return;
  const asked = ++treesAsked;
  const response = await fetch(state.head_url, {
    method: "POST", headers: { "X-CSRFToken": csrf, "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ turn: id }),
  });
  await showTree(response, asked);
}

async function refresh() {
  const asked = ++treesAsked;
  await showTree(await fetch(state.tree_url, { headers: { Accept: "application/json" } }), asked);
}

// --- rendering ------------------------------------------------------------------------------

function reasonOf(t) {
  if (t.status === "failed") {
    const err = t.error || {};
    return `Failed${err.status ? ` (${err.status})` : ""}: ${err.message || "the model did not answer"}`;
  }
  if (t.status === "blocked") {
    const feedback = t.error?.prompt_feedback;
    const why = feedback?.blockReason || t.finish_reason || "NO_IMAGE";
    return `No image: the model stopped with ${why}.`;
  }
  return "";
}

function siblingSwitcher(t) {
  if (t.sibling_count < 2) return null;
  const i = t.sibling_index - 1;
  const go = (offset) => () => setHead(t.leaves[t.siblings[i + offset]]);
  return el("div", { class: "siblings", role: "group", "aria-label": "Versions of this turn" },
    el("button", { type: "button", class: "ghost", "aria-label": "Previous version", disabled: i === 0, onclick: go(-1) }, "‹"),
    el("span", { class: "sibling-count" }, `${t.sibling_index}/${t.sibling_count}`),
    el("button", { type: "button", class: "ghost", "aria-label": "Next version", disabled: i === t.sibling_count - 1, onclick: go(1) }, "›"));
}

function liveBody(t) {
  const job = live.get(t.job) || { thoughts: [], text: "", images: [] };
  const finals = job.images.filter((image) => !image.thought);
  const drafts = job.images.filter((image) => image.thought);
  return [
    el("p", { class: "turn-state" }, el("span", { class: "spinner", "aria-hidden": "true" }), job.state || "Working…"),
    job.thoughts.length ? el("div", { class: "thoughts" }, job.thoughts.map((text) => el("p", { class: "thought" }, text))) : null,
    drafts.map((image) => el("figure", { class: "draft" }, el("img", { src: image.url, alt: "Draft" }))),
    job.text ? el("p", { class: "model-text" }, job.text) : null,
    finals.map((image) => el("img", { class: "turn-image", src: image.url, alt: t.instruction })),
  ];
}

function turnItem(t, isLast) {
  const running = t.status === "running";
  const actions = state.can_edit && !running ? el("div", { class: "turn-actions" },
    el("button", { type: "button", class: "ghost", onclick: () => regenerate(t) }, "Regenerate"),
    t.status === "succeeded" ? el("button", {
      type: "button", class: "ghost", "aria-pressed": String(branchFrom === t.id),
      onclick: () => { branchFrom = t.id; render(); $("instruction")?.focus(); },
    }, isLast ? "Continue from here" : "Branch from here") : null,
  ) : null;
  const compare = t.image && t.parent_image
    ? el("button", { type: "button", class: "ghost", onclick: () => openCompare(t) }, "Compare with parent") : null;
  const body = running ? liveBody(t) : [
    t.image ? el("a", { href: `/assets/${t.asset}/`, class: "image-link" },
      el("img", { class: "turn-image", src: t.image, alt: t.instruction, width: t.width, height: t.height })) : null,
    t.text ? el("p", { class: "model-text" }, t.text) : null,
    reasonOf(t) ? el("p", { class: "error", role: "alert" }, reasonOf(t)) : null,
  ];
  return el("li", { class: `turn status-${t.status}`, "data-turn": t.id, "aria-current": t.id === tree.head ? "true" : null },
    el("div", { class: "bubble user" },
      el("p", { class: "instruction" }, t.instruction),
      siblingSwitcher(t)),
    el("div", { class: "bubble model" },
      el("p", { class: "meta" }, `${t.model}${t.finish_reason && t.status === "succeeded" ? ` · ${t.finish_reason}` : ""}`),
      body,
      el("div", { class: "turn-tools" }, compare, actions)));
}

function renderThread() {
  const path = pathTo(tree.head);
  const from = continueFrom();
  const items = [el("li", { class: "turn source" },
    el("div", { class: "bubble model" },
      el("p", { class: "meta" }, "Original"),
      tree.source.image ? el("img", { class: "turn-image", src: tree.source.image, alt: "The original image" }) : null,
      state.can_edit ? el("div", { class: "turn-tools" }, el("button", {
        type: "button", class: "ghost", "aria-pressed": String(branchFrom === null),
        onclick: () => { branchFrom = null; render(); $("instruction")?.focus(); },
      }, "Start a new branch from the original")) : null))];
  path.forEach((id, i) => items.push(turnItem(turn(id), i === path.length - 1)));
  $("thread").replaceChildren(...items);

  const label = $("continue-label");
  if (label) {
    label.textContent = from ? `“${shortLabel(turn(from))}”` : "the original image";
    $("continue-reset").hidden = branchFrom === undefined;
    document.querySelectorAll(".turn").forEach((node) => node.classList.toggle("branch-point", node.dataset.turn === from));
  }
}

function renderBreadcrumb() {
  const crumbs = [el("li", {}, el("button", { type: "button", class: "link", onclick: () => { branchFrom = null; render(); } }, "Original"))];
  for (const id of pathTo(tree.head)) {
    const t = turn(id);
    crumbs.push(el("li", {}, el("button", {
      type: "button", class: "link", "aria-current": id === tree.head ? "step" : null, onclick: () => setHead(id),
    }, shortLabel(t, 24), t.sibling_count > 1 ? el("span", { class: "sibling-count" }, ` ${t.sibling_index}/${t.sibling_count}`) : null)));
  }
  $("breadcrumb").replaceChildren(...crumbs);
}

function treeBranch(ids, depth) {
  return el("ul", { role: depth ? "group" : null }, ids.map((id) => {
    const t = turn(id);
    const onPath = pathTo(tree.head).includes(id);
    return el("li", { role: "treeitem", "aria-expanded": t.children.length ? "true" : null, "aria-selected": String(id === tree.head) },
      el("button", { type: "button", class: `node ${onPath ? "on-path" : ""} status-${t.status}`, onclick: () => setHead(id), title: t.instruction },
        t.image ? el("img", { src: t.image, alt: "" }) : el("span", { class: "no-image", "aria-hidden": "true" }, t.status === "running" ? "…" : "!"),
        el("span", { class: "node-label" }, shortLabel(t, 28))),
      t.children.length ? treeBranch(t.children, depth + 1) : null);
  }));
}

function renderTree() {
  $("tree").replaceChildren(tree.roots.length ? treeBranch(tree.roots, 0) : el("p", { class: "empty" }, "No turns yet: describe a change below."));
}

function render() {
  renderBreadcrumb();
  renderThread();
  renderTree();
  for (const id of pathTo(tree.head)) {
    const t = turn(id);
    if (t.status === "running" && t.job) socket.subscribe(t.job); // catch up after a reload
  }
}

// --- compare --------------------------------------------------------------------------------

function openCompare(t) {
  $("compare").hidden = false;
  $("compare-before").src = $("side-before").src = t.parent_image;
  $("compare-after").src = $("side-after").src = t.image;
  const parent = t.parent ? `“${shortLabel(turn(t.parent))}”` : "the original";
  $("compare-caption").textContent = `“${shortLabel(t)}” against ${parent}`;
  setSlider(50);
  $("compare").scrollIntoView({ block: "nearest" });
}

function setSlider(value) {
  $("compare-range").value = value;
  $("compare-before").style.clipPath = `inset(0 ${100 - value}% 0 0)`;
  $("divider").style.left = `${value}%`;
}

function setMode(side) {
  $("slider-view").hidden = side;
  $("side-view").hidden = !side;
  $("mode-slider").setAttribute("aria-pressed", String(!side));
  $("mode-side").setAttribute("aria-pressed", String(side));
}

$("compare-range").addEventListener("input", (e) => setSlider(Number(e.target.value)));
$("mode-slider").addEventListener("click", () => setMode(false));
$("mode-side").addEventListener("click", () => setMode(true));
$("compare-close").addEventListener("click", () => { $("compare").hidden = true; });

// --- sending turns --------------------------------------------------------------------------

function status(text, isError = false) {
  const node = $("composer-status");
  if (!node) return;
  node.textContent = text;
  node.classList.toggle("error", isError);
}

function sendEdit(message) {
  const ref = crypto.randomUUID ? crypto.randomUUID() : String(Date.now());
  pendingRefs.set(ref, true);
  $("send").disabled = true;
  status("Sending…");
  socket.send({ action: "edit", ref, session: tree.id, model: $("turn-model")?.value, ...message });
}

function regenerate(t) {
  sendEdit({ regenerate: t.id });
}

$("composer")?.addEventListener("submit", (e) => {
  e.preventDefault();
  const instruction = $("instruction").value.trim();
  if (!instruction) {
    status("Write what to change first.", true);
    $("instruction").setAttribute("aria-invalid", "true");
    return;
  }
  $("instruction").removeAttribute("aria-invalid");
  sendEdit({ parent: continueFrom(), instruction });
});
$("instruction")?.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("composer").requestSubmit();
});
$("continue-reset")?.addEventListener("click", () => { branchFrom = undefined; render(); });

function jobState(id) {
  if (!live.has(id)) live.set(id, { thoughts: [], text: "", images: [], state: "Working…" });
  return live.get(id);
}

socket.on((event) => {
  const data = event.data || {};
  switch (event.type) {
    case "job.rejected":
      if (!pendingRefs.delete(event.ref)) return;
      $("send").disabled = false;
      status(data.message || "The turn was refused.", true);
      return;
    case "edit.turn":
      if (!pendingRefs.delete(event.ref)) return;
      $("send").disabled = false;
      $("instruction").value = "";
      status("");
      branchFrom = undefined;
      jobState(event.id);
      refresh();
      return;
    case "job.text": {
      const job = jobState(event.id);
      if (data.thought) job.thoughts.push(data.text);
      else job.text += data.text;
      break;
    }
    case "job.image":
      jobState(event.id).images.push(data);
      jobState(event.id).state = data.thought ? "Drafting…" : "Finishing…";
      break;
    case "job.completed":
    case "job.failed":
      live.delete(event.id);
      refresh();
      return;
    default:
      return;
  }
  if (Object.values(tree.turns).some((t) => t.job === event.id && t.status === "running")) renderThread();
});

render();
