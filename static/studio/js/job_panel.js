// One job's results: thoughts, live previews, images, text, then latency, usage and cost.
// Images arrive as URLs of stored files; a live preview (a partial image of any family, or a
// draft while the model thinks) is replaced by its image when that is done. A sequential set
// reads as one group with its count; a layer stack as its picture plus its layers.
import { formatUsd } from "./money.js";
import { actionsRow } from "./result_actions.js";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function usageSummary(usage) {
  if (!usage) return "";
  const total = usage.totalTokenCount ?? usage.total_tokens;
  const input = usage.promptTokenCount ?? usage.input_tokens;
  const output = usage.candidatesTokenCount ?? usage.output_tokens;
  const parts = [];
  if (total !== undefined) parts.push(`${total} tokens`);
  if (input !== undefined && output !== undefined) parts.push(`${input} in / ${output} out`);
  if (usage.generated_images !== undefined) parts.push(`${usage.generated_images} billed images`);
  return parts.join(" · ");
}

// Estimated USD of a job from its usage and the model's price sheet (per million tokens, per
// image by size, per request); null when the model has no price.
export function costOf(usage, price, images = 0, size = "") {
  if (!price) return null;
  const input = usage?.promptTokenCount ?? usage?.input_tokens ?? 0;
  const total = usage?.totalTokenCount ?? usage?.total_tokens;
  const output = usage?.candidatesTokenCount ?? usage?.output_tokens ?? (total !== undefined ? total - input : 0);
  let usd = (input * price.input_per_million + output * price.output_per_million) / 1e6 + (price.per_request ?? 0);
  const perImage = Object.entries(price.per_image ?? {});
  if (perImage.length && images) {
    const match = perImage.find(([name]) => name.split("/")[0] === size) ?? perImage.sort((a, b) => a[1] - b[1])[0];
    usd += images * match[1];
  }
  return usd || null;
}

export class JobPanel {
  constructor(container, { id, model, modelName, onUseAsInput, actions, price }) {
    this.id = id;
    this.model = model;
    this.onUseAsInput = onUseAsInput;
    this.actions = actions; // page handlers: open, variations, upscale, reuse
    this.price = price; // USD per million tokens, or null
    this.group = null;
    this.capped = [];
    this.root = el("article", "job");
    this.root.dataset.job = id;
    this.root.dataset.model = model;
    this.root.setAttribute("aria-label", `Result of ${modelName}`);
    this.root.setAttribute("aria-busy", "true");
    const head = el("header", "job-head");
    this.heading = el("h2", "job-model", modelName);
    head.append(this.heading);
    this.state = el("span", "job-state", "Waiting…");
    head.append(this.state);
    this.thoughts = el("div", "thoughts");
    this.partials = el("div", "partials");
    this.images = el("div", "images");
    this.text = el("p", "model-text");
    this.meta = el("p", "meta");
    this.root.append(head, this.thoughts, this.partials, this.images, this.text, this.meta);
    container.append(this.root);
    this.done = false;
  }

  rename(model, modelName) {
    this.model = model;
    this.root.dataset.model = model;
    this.heading.textContent = modelName;
    this.root.setAttribute("aria-label", `Result of ${modelName}`);
  }

  setState(text, kind = "") {
    this.state.textContent = text;
    this.state.dataset.kind = kind;
  }

  handle(event) {
    const data = event.data ?? {};
    switch (event.type) {
      case "job.started":
        this.setState("Generating…", "running");
        this.group = data.group ?? null;
        this.root.dataset.group = this.group ?? "";
        break;
      case "job.text":
        if (data.thought) this.thoughts.append(el("p", "thought", data.text));
        else this.text.textContent += data.text;
        break;
      case "job.partial":
        this.showPartial(data);
        break;
      case "job.image":
        if (data.thought) this.showPartial({ ...data, index: 0, partial_index: this.drafts = (this.drafts ?? -1) + 1 }, "Draft");
        else this.showFinal(data);
        break;
      case "job.item_failed": {
        if (data.error?.code === "MaxImagesExceeded") { this.capped.push(data.index); break; } // summed up at the end
        const message = data.error?.message ?? "this image was not made";
        this.images.append(el("p", "item-error error", `Image ${data.index + 1}: ${message}`));
        break;
      }
      case "job.feedback":
        this.meta.textContent = `Feedback: ${JSON.stringify(data.prompt_feedback)}`;
        break;
      case "job.completed":
        this.complete(data);
        break;
      case "job.failed":
        this.finish();
        this.setState("Failed", "failed");
        this.images.append(el("p", "error", `Failed: ${data.message}`));
        break;
      case "job.unknown":
        this.finish();
        this.setState("Not found", "failed");
        this.images.append(el("p", "error", "This job does not exist or is not yours to see."));
        break;
    }
  }

  figure(data, className, alt, caption) {
    const figure = el("figure", className);
    const img = el("img");
    img.src = data.url;
    img.alt = alt;
    img.dataset.asset = data.asset;
    if (data.width && data.height) {
      img.width = data.width;
      img.height = data.height;
    }
    figure.append(img, el("figcaption", "", caption));
    return figure;
  }

  showPartial(data, word = "Preview") {
    const key = String(data.index ?? 0);
    const alt = `${word} ${data.partial_index + 1} of image ${Number(key) + 1}`;
    const figure = this.figure(data, "partial", alt, `live ${word.toLowerCase()} ${data.partial_index + 1}`);
    figure.dataset.index = key;
    const old = this.partials.querySelector(`figure[data-index="${key}"]`);
    if (old) old.replaceWith(figure);
    else this.partials.append(figure);
    this.setState(`${word} ${data.partial_index + 1}…`, "running");
  }

  showFinal(data) {
    this.partials.querySelector(`figure[data-index="${data.index ?? 0}"]`)?.remove();
    if (this.group === "layers" && data.z_index > 0) {
      this.addLayer(data);
      return;
    }
    const label = data.name ? `Layer ${data.z_index}: ${data.name}` : `Generated image ${data.width}×${data.height}`;
    const parts = [`${data.width}×${data.height}`];
    if (this.group === "set") parts.unshift(`${this.images.querySelectorAll("figure.final").length + 1} of the set`);
    const figure = this.figure(data, "final", label, parts.join(" · "));
    figure.tabIndex = 0;
    figure.dataset.asset = data.asset;
    figure.querySelector("img").addEventListener("click", () => this.actions?.open?.(data));
    const actions = actionsRow(data, this.actions ?? {});
    if (this.onUseAsInput) {
      const use = el("button", "chip", "Use as input");
      use.type = "button";
      use.addEventListener("click", () => this.onUseAsInput({ id: data.asset, url: data.url }));
      actions.append(use);
    }
    figure.append(actions);
    this.images.append(figure);
  }

  addLayer(data) {
    if (!this.layerStrip) {
      this.layerStrip = el("div", "layer-strip");
      this.layerLink = el("a", "layer-link");
      this.layerStrip.append(this.layerLink);
      this.images.after(this.layerStrip);
    }
    const thumb = el("img", "layer-thumb");
    thumb.src = data.url;
    thumb.alt = `Layer ${data.z_index}: ${data.name ?? ""}`;
    thumb.title = data.name ?? "";
    this.layerStrip.append(thumb);
    const count = this.layerStrip.querySelectorAll("img").length;
    this.layerLink.textContent = `${count} layer${count === 1 ? "" : "s"} · open the layer stack →`;
    this.layerLink.href = `/assets/${data.asset}/layers`;
  }

  finish() {
    this.done = true;
    this.root.setAttribute("aria-busy", "false");
  }

  complete(data) {
    this.finish();
    this.partials.replaceChildren();
    if (data.images === 0) {
      this.setState(`No image: ${data.block_reason || data.finish_reason || "the model returned none"}`, "empty");
    } else {
      this.setState("Done", "done");
    }
    const parts = [`${(data.duration_ms / 1000).toFixed(1)} s`];
    if (data.first_byte_ms !== undefined && data.first_byte_ms !== null) parts.push(`first frame ${data.first_byte_ms} ms`);
    if (this.group === "set") {
      const made = this.images.querySelectorAll("figure.final").length;
      let summary = `Set of ${made} image${made === 1 ? "" : "s"}`;
      if (this.capped.length) summary += ` (the prompt asked for ${made + this.capped.length}; your limit was ${made})`;
      this.setState(summary, "done");
      this.images.before(this.setHeading ??= el("p", "set-heading", summary));
      this.setHeading.textContent = summary;
      const first = this.images.querySelector("figure.final");
      if (first) {
        const open = el("a", "set-link", "View the set as a strip →");
        open.href = `/assets/${first.dataset.asset}/set`;
        this.setHeading.append(" ", open);
      }
    } else if (this.group !== "layers") {
      parts.push(`${data.images} image${data.images === 1 ? "" : "s"}`);
    }
    const usage = usageSummary(data.usage);
    if (usage) parts.push(usage);
    const first = this.images.querySelector("figure.final img");
    const size = first ? `${first.getAttribute("width")}x${first.getAttribute("height")}` : "";
    this.meta.textContent = parts.join(" · ");
    this.meta.dataset.latencyMs = data.duration_ms;
    // The cost its usage record keeps; an estimate from the price sheet only for an older record.
    const billed = data.usage?.generated_images ?? data.images;
    const recorded = data.cost_usd === undefined || data.cost_usd === null ? null : Number(data.cost_usd);
    const cost = recorded ?? costOf(data.usage, this.price, billed, size);
    if (cost !== null) {
      const label = el("span", "job-cost", `${recorded === null ? "≈ " : ""}${formatUsd(cost)}`);
      label.title = recorded === null ? "Estimated from the price list" : "Charged for this job";
      this.meta.append(" · ", label);
      this.meta.dataset.cost = cost.toFixed(6);
    }
  }
}
