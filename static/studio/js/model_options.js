// What the chosen models offer: which option controls show and with which values (in a compare
// run, only what every chosen model shares), each model's own options apart, and the model card
// with its abilities and price. Pure rendering from the catalog data; the Generate page wires it.

// Which capability drives each control; `families` limits a control to some model families.
export const CONTROLS = [
  { name: "aspect_ratio", cap: "aspect_ratios", kind: "select", preferred: "1:1" },
  { name: "image_size", cap: "image_sizes", kind: "select", preferred: "1K" },
  { name: "size", cap: "sizes", kind: "select", preferred: ["1024x1024", "2K"], families: ["standard", "layered"] },
  { name: "quality", cap: "qualities", kind: "select", preferred: "auto", families: ["standard", "layered"] },
  { name: "output_format", cap: "output_formats", kind: "select", families: ["standard", "layered"] },
  { name: "background", cap: "backgrounds", kind: "select", preferred: "auto", families: ["standard", "layered"] },
  { name: "optimize_prompt", cap: "optimize_prompt_modes", kind: "select", blank: "Off" },
  { name: "n", cap: "max_n", kind: "count", min: 1, families: ["standard"] },
  { name: "partial_images", cap: "max_partial_images", kind: "count", min: 0, families: ["standard"] },
  { name: "seed", cap: "seed", kind: "number" },
  { name: "sequential", cap: "sequential", kind: "flag" },
  { name: "max_images", cap: "max_images", kind: "count", min: 1, needs: "sequential" },
  { name: "layer_decomposition", cap: "layer_decomposition", kind: "flag" },
  { name: "watermark", cap: "watermark", kind: "flag" },
];

// The values a control offers for the chosen models: in a compare run, only what all share.
export function offered(control, chosen) {
  const lists = chosen.map((m) => {
    if (control.families && !control.families.includes(m.family)) return null;
    return m.capabilities[control.cap] ?? null;
  });
  if (!lists.length || lists.some((v) => v === null || v === false || v === 0)) return null;
  if (Array.isArray(lists[0])) return lists.reduce((a, b) => a.filter((v) => b.includes(v)));
  if (typeof lists[0] === "number") return Math.min(...lists);
  return true;
}

export function fillSelect(select, values, control, model) {
  const previous = select.value;
  const options = values.map((v) => new Option(v, v));
  if (control.blank) options.unshift(new Option(control.blank, ""));
  select.replaceChildren(...options);
  const preferred = [previous, ...[control.preferred ?? []].flat(), model?.capabilities.default_output_format];
  const pick = preferred.find((v) => v !== undefined && (values.includes(v) || (control.blank && v === "")));
  if (pick !== undefined) select.value = pick;
}

function priceText(model) {
  if (!model?.price) return "price not listed";
  const lines = model.price.lines;
  return lines.length > 3 ? `${lines.slice(0, 3).join(" · ")} · and ${lines.length - 3} more` : lines.join(" · ");
}

// Under the picker: what the chosen model can do and what it costs.
export function renderModelCard(card, chosen) {
  if (!card) return;
  card.replaceChildren(...chosen.map((m) => {
    const item = document.createElement("div");
    item.className = "model-card-item";
    const head = document.createElement("strong");
    head.textContent = m.name;
    const price = document.createElement("span");
    price.className = "price";
    price.textContent = priceText(m);
    const can = document.createElement("span");
    can.className = "can";
    can.textContent = m.abilities.join(" · ");
    item.append(head, price, can);
    return item;
  }));
}

// In a compare run, each model's own options (those not every chosen model offers) get their own
// small section, so comparing across families hides nothing.
export function renderOwnOptions(box, form, chosen) {
  box.replaceChildren();
  box.hidden = chosen.length < 2;
  if (chosen.length < 2) return;
  for (const model of chosen) {
    const own = CONTROLS.filter((c) => c.kind === "select" && offered(c, chosen) === null && offered(c, [model]) !== null);
    if (!own.length) continue;
    const set = document.createElement("fieldset");
    set.className = "own-options";
    set.dataset.model = model.id;
    const legend = document.createElement("legend");
    legend.textContent = `${model.name} only`;
    set.append(legend);
    for (const control of own) {
      const id = `own-${model.id}-${control.name}`.replace(/[^a-zA-Z0-9_-]/g, "-");
      const label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = form.querySelector(`[data-option="${control.name}"] label`)?.textContent ?? control.name;
      const select = document.createElement("select");
      select.id = id;
      select.dataset.option = control.name;
      fillSelect(select, offered(control, [model]), control, model);
      set.append(label, select);
    }
    box.append(set);
  }
}

// Each model's own options as chosen: {model id: {option: value}}.
export function readOwnOptions(box) {
  const result = {};
  for (const set of box.querySelectorAll("fieldset[data-model]")) {
    result[set.dataset.model] = Object.fromEntries([...set.querySelectorAll("select")].map((s) => [s.dataset.option, s.value]));
  }
  return result;
}
