// The gallery: infinite scroll by cursor, star, bulk select/move/star/delete, keyboard shortcuts.
const grid = document.getElementById("grid");
const statusLine = document.getElementById("gallery-status");
const bulkBar = document.getElementById("bulk");
const bulkCount = document.getElementById("bulk-count");
const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
let nextCursor = grid.dataset.next || "";
let loading = false;

const say = (text) => { statusLine.textContent = text; };

function post(url, body, json = false) {
  const headers = { "X-CSRFToken": csrf, Accept: "application/json" };
  let payload = body;
  if (json) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  return fetch(url, { method: "POST", headers, body: payload, credentials: "same-origin" });
}

function tileElement(t) {
  const li = document.createElement("li");
  li.className = "tile" + (t.starred ? " starred" : "");
  Object.assign(li.dataset, { id: t.id, detail: t.detail_url, canCurate: t.can_curate ? "1" : "0",
    canManage: t.can_manage ? "1" : "0" });
  const label = (t.prompt || "item").slice(0, 40);
  const check = Object.assign(document.createElement("input"), { type: "checkbox", className: "select" });
  check.setAttribute("aria-label", `Select ${label}`);
  const link = Object.assign(document.createElement("a"), { className: "open", href: t.detail_url });
  const img = Object.assign(document.createElement("img"), { src: t.thumb_url, loading: "lazy", decoding: "async",
    alt: (t.prompt || "Generated image").slice(0, 120), width: t.width || 256, height: t.height || 256 });
  link.append(img);
  if (t.kind === "video") link.append(Object.assign(document.createElement("span"), { className: "badge", textContent: "Video" }));
  const star = Object.assign(document.createElement("button"), { type: "button", className: "star", textContent: "★",
    disabled: !t.can_curate });
  star.setAttribute("aria-pressed", String(t.starred));
  star.setAttribute("aria-label", "Star");
  const caption = document.createElement("div");
  caption.className = "caption";
  const where = t.visibility === "team" ? " · team" : t.visibility === "link" ? " · link" : "";
  caption.append(Object.assign(document.createElement("span"), { className: "prompt", textContent: (t.prompt || "").slice(0, 80) }),
    Object.assign(document.createElement("span"), { className: "model", textContent: t.model + where }));
  li.append(check, link, star, caption);
  return li;
}

async function loadMore() {
  if (loading || !nextCursor) return;
  loading = true;
  say("Loading more…");
  const params = new URLSearchParams(location.search);
  params.set("cursor", nextCursor);
  try {
    const response = await fetch(`${grid.dataset.pageUrl}?${params}`, { credentials: "same-origin" });
    const page = await response.json();
    if (!response.ok) throw new Error(page.error?.message || response.statusText);
    const fragment = document.createDocumentFragment();
    for (const t of page.items) fragment.append(tileElement(t));
    grid.append(fragment);
    nextCursor = page.next || "";
    say(nextCursor ? "" : `All ${grid.children.length} items shown.`);
  } catch (error) {
    say(`Could not load more: ${error.message}`);
  } finally {
    loading = false;
  }
}

const sentinel = document.getElementById("sentinel");
if ("IntersectionObserver" in window) {
  new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) loadMore(); },
    { rootMargin: "1200px 0px" }).observe(sentinel);
}

async function toggleStar(tile) {
  if (tile.dataset.canCurate !== "1") return;
  const button = tile.querySelector(".star");
  const wanted = button.getAttribute("aria-pressed") !== "true";
  const form = new FormData();
  form.set("starred", wanted ? "1" : "0");
  const response = await post(`/assets/${tile.dataset.id}/star`, form);
  if (!response.ok) { say("Could not change the star."); return; }
  const { starred } = await response.json();
  button.setAttribute("aria-pressed", String(starred));
  tile.classList.toggle("starred", starred);
  say(starred ? "Starred." : "Star removed.");
}

// --- selection and bulk actions ----------------------------------------------------------------
const selected = () => [...grid.querySelectorAll(".tile .select:checked")].map((c) => c.closest(".tile"));

function refreshBulk() {
  const count = selected().length;
  bulkBar.hidden = count === 0;
  bulkCount.textContent = `${count} selected`;
  grid.querySelectorAll(".tile").forEach((t) => t.classList.toggle("picked", t.querySelector(".select").checked));
}

async function bulk(action) {
  const tiles = selected();
  if (action === "clear") { tiles.forEach((t) => { t.querySelector(".select").checked = false; }); refreshBulk(); return; }
  if (!tiles.length) return;
  const body = { action, ids: tiles.map((t) => t.dataset.id) };
  if (action === "move") {
    const target = document.getElementById("bulk-target").value;
    if (!target) { say("Choose where to move them first."); return; }
    const [what, id] = target.split(":");
    body[what] = id;
  }
  if (action === "delete" && !confirm(`Delete ${tiles.length} item(s)? This cannot be undone.`)) return;
  const response = await post(grid.dataset.bulkUrl, body, true);
  const result = await response.json();
  if (!response.ok) { say(result.error?.message || "That did not work."); return; }
  const done = new Set(result.done);
  for (const t of tiles) {
    if (!done.has(t.dataset.id)) continue;
    if (action === "delete") t.remove();
    if (action === "star" || action === "unstar") {
      t.classList.toggle("starred", action === "star");
      t.querySelector(".star").setAttribute("aria-pressed", String(action === "star"));
    }
    const check = t.querySelector(".select");
    if (check) check.checked = false;
  }
  refreshBulk();
  const skipped = result.skipped.length ? `, ${result.skipped.length} skipped (not allowed)` : "";
  say(`${action}: ${result.done.length} done${skipped}.`);
}

bulkBar.addEventListener("click", (event) => {
  const action = event.target.closest("[data-bulk]")?.dataset.bulk;
  if (action) bulk(action);
});

grid.addEventListener("click", (event) => {
  const star = event.target.closest(".star");
  if (star) { toggleStar(star.closest(".tile")); }
});
grid.addEventListener("change", (event) => { if (event.target.matches(".select")) refreshBulk(); });

// --- keyboard ----------------------------------------------------------------------------------
const tiles = () => [...grid.querySelectorAll(".tile")];
const current = () => document.activeElement?.closest?.(".tile");

function focusTile(index) {
  const all = tiles();
  if (!all.length) return;
  const tile = all[Math.max(0, Math.min(index, all.length - 1))];
  tile.querySelector(".open").focus();
  tile.scrollIntoView({ block: "nearest" });
  if (index >= all.length - 6) loadMore();
}

async function deleteOne(tile) {
  if (tile.dataset.canManage !== "1") { say("Only the owner or a team admin can delete this."); return; }
  if (!confirm("Delete this item? This cannot be undone.")) return;
  const response = await post(`/assets/${tile.dataset.id}/delete`, new FormData());
  if (!response.ok) { say("Could not delete it."); return; }
  const index = tiles().indexOf(tile);
  tile.remove();
  say("Deleted.");
  focusTile(index);
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const typing = event.target.closest?.("input, textarea, select, [contenteditable]");
  if (typing) { if (event.key === "Escape") event.target.blur(); return; }
  const tile = current();
  if (!tile && event.key.startsWith("Arrow")) return;  // arrows scroll the page until a tile has focus
  const index = tile ? tiles().indexOf(tile) : -1;
  const keys = {
    j: () => focusTile(index + 1), ArrowRight: () => focusTile(index + 1), ArrowDown: () => focusTile(index + 1),
    k: () => focusTile(index - 1), ArrowLeft: () => focusTile(index - 1), ArrowUp: () => focusTile(index - 1),
    s: () => tile && toggleStar(tile),
    x: () => { if (tile) { const c = tile.querySelector(".select"); c.checked = !c.checked; refreshBulk(); } },
    Delete: () => tile && deleteOne(tile),
    "/": () => document.getElementById("q").focus(),
  };
  const action = keys[event.key];
  if (!action) return;  // Enter on a focused tile's link opens it natively
  event.preventDefault();
  action();
});

const toggle = document.getElementById("shortcuts-toggle");
toggle.addEventListener("click", () => {
  const help = document.getElementById("shortcuts");
  help.hidden = !help.hidden;
  toggle.setAttribute("aria-expanded", String(!help.hidden));
});
