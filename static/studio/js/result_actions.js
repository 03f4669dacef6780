// What a designer does next with a result: the actions row under each image (open, download,
// variations, upscale, reuse prompt and seed, edit from here, get code, star), the "Get code"
// dialog, and starring. Per-result data (recipe, upscale plan, code) comes from /assets/<id>/actions.
const cache = new Map();

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function csrfToken() {
  return document.querySelector("input[name=csrfmiddlewaretoken]")?.value
    ?? document.querySelector('meta[name="csrf-token"]')?.content ?? "";
}

export async function actionsFor(asset) {
  if (!cache.has(asset)) {
    cache.set(asset, fetch(`/assets/${asset}/actions`).then((r) => {
      if (!r.ok) throw new Error(`could not load this result's details (${r.status})`);
      return r.json();
    }));
  }
  return cache.get(asset);
}

export async function toggleStar(asset, button) {
  const starred = button.getAttribute("aria-pressed") !== "true";
  const body = new FormData();
  body.append("starred", starred ? "1" : "0");
  const response = await fetch(`/assets/${asset}/star`, {
    method: "POST", body, headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
  });
  if (!response.ok) return false;
  showStar(button, starred);
  cache.get(asset)?.then((data) => { data.starred = starred; }, () => {});
  return true;
}

function showStar(button, starred) {
  button.setAttribute("aria-pressed", String(starred));
  button.textContent = starred ? "★ Starred" : "☆ Star";
}

// "Edit from here": a new multi-turn edit session on this image, then its page.
export function editFromHere(asset) {
  const form = el("form");
  form.method = "post";
  form.action = "/edit/new";
  for (const [name, value] of [["csrfmiddlewaretoken", csrfToken()], ["asset", asset], ["model", ""]]) {
    const input = el("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
}

let codeDialog = null;
export async function showCode(asset) {
  const data = await actionsFor(asset);
  if (!codeDialog) {
    codeDialog = el("dialog", "code-dialog");
    codeDialog.setAttribute("aria-labelledby", "code-title");
    document.body.append(codeDialog);
  }
  const title = el("h2", "", "Get code");
  title.id = "code-title";
  const note = el("p", "meta", data.key_label
    ? `Uses your key ${data.key_label} from the STUDIO_API_KEY environment variable; the key itself is never shown here.`
    : "Make a key on the Keys page and put it in the STUDIO_API_KEY environment variable.");
  const tabs = el("div", "code-tabs");
  tabs.setAttribute("role", "tablist");
  const pre = el("pre", "code-block");
  const code = el("code");
  pre.append(code);
  const copy = el("button", "button", "Copy");
  copy.type = "button";
  const close = el("button", "viewer-close", "Close");
  close.type = "button";
  close.addEventListener("click", () => codeDialog.close());
  const languages = { curl: "curl", python: "Python", javascript: "JavaScript" };
  const select = (lang) => {
    code.textContent = data.code?.[lang] ?? "This result has no recorded request.";
    for (const tab of tabs.children) tab.setAttribute("aria-selected", String(tab.dataset.lang === lang));
  };
  for (const [lang, label] of Object.entries(languages)) {
    const tab = el("button", "code-tab", label);
    tab.type = "button";
    tab.dataset.lang = lang;
    tab.setAttribute("role", "tab");
    tab.addEventListener("click", () => select(lang));
    tabs.append(tab);
  }
  copy.addEventListener("click", async () => {
    try { await navigator.clipboard.writeText(code.textContent); copy.textContent = "Copied"; }
    catch { copy.textContent = "Select and copy"; }
    setTimeout(() => { copy.textContent = "Copy"; }, 1500);
  });
  const bar = el("div", "code-bar");
  bar.append(copy, close);
  codeDialog.replaceChildren(title, note, tabs, pre, bar);
  select("curl");
  codeDialog.showModal();
}

// The row of actions under one result. `handlers` carries the page's own actions (variations,
// upscale, reuse); a page without them gets links to the Generate page instead.
export function actionsRow(data, handlers = {}) {
  const row = el("div", "result-actions");
  row.setAttribute("role", "group");
  row.setAttribute("aria-label", "Result actions");
  const add = (label, title, onClick, className = "") => {
    const button = el("button", `chip ${className}`.trim(), label);
    button.type = "button";
    button.title = title;
    button.addEventListener("click", onClick);
    row.append(button);
    return button;
  };
  add("Open", "Full screen (Enter)", () => handlers.open?.(data), "open");
  const download = el("a", "chip", "Download");
  download.href = `/assets/${data.asset}/file?download=1`;
  download.setAttribute("download", "");
  download.title = "Download the original file (D)";
  row.append(download);
  add("Variations", "Four variations of this image (V)", () => handlers.variations
    ? handlers.variations(data) : location.assign(`/generate/?variations=${data.asset}`), "variations");
  add("Upscale", "A larger version (U)", () => handlers.upscale
    ? handlers.upscale(data) : location.assign(`/generate/?upscale=${data.asset}`), "upscale");
  add("Reuse prompt & seed", "Fill the form with this result's settings (R)", () => handlers.reuse
    ? handlers.reuse(data) : location.assign(`/generate/?recipe=${data.asset}`), "reuse");
  add("Edit from here", "Start a multi-turn edit on this image", () => editFromHere(data.asset), "edit");
  add("Get code", "This request as curl, Python or JavaScript", () => showCode(data.asset), "code");
  const star = add("☆ Star", "Star (S)", () => toggleStar(data.asset, star), "star");
  showStar(star, false);
  // The row is drawn at once; whether the image is starred comes with its details.
  actionsFor(data.asset).then((info) => showStar(star, Boolean(info.starred)), () => {});
  return row;
}
