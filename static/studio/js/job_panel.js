// One job's results: thoughts, previews, images, text, then latency and usage.
// Images arrive as URLs of stored files; a preview is replaced by its image when that is done.

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

export class JobPanel {
  constructor(container, { id, model, modelName, onUseAsInput }) {
    this.id = id;
    this.model = model;
    this.onUseAsInput = onUseAsInput;
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
        break;
      case "job.text":
        if (data.thought) this.thoughts.append(el("p", "thought", data.text));
        else this.text.textContent += data.text;
        break;
      case "job.partial":
        this.showPartial(data);
        break;
      case "job.image":
        if (data.thought) this.thoughts.append(this.figure(data, "draft", "Draft while thinking", "draft"));
        else this.showFinal(data);
        break;
      case "job.item_failed": {
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

  showPartial(data) {
    const key = String(data.index ?? 0);
    const alt = `Preview ${data.partial_index + 1} of image ${Number(key) + 1}`;
    const figure = this.figure(data, "partial", alt, `preview ${data.partial_index + 1}`);
    figure.dataset.index = key;
    const old = this.partials.querySelector(`figure[data-index="${key}"]`);
    if (old) old.replaceWith(figure);
    else this.partials.append(figure);
    this.setState(`Preview ${data.partial_index + 1}…`, "running");
  }

  showFinal(data) {
    this.partials.querySelector(`figure[data-index="${data.index ?? 0}"]`)?.remove();
    const label = data.name ? `Layer ${data.z_index}: ${data.name}` : `Generated image ${data.width}×${data.height}`;
    const parts = [`${data.width}×${data.height}`];
    if (data.name) parts.unshift(`layer ${data.z_index} · ${data.name}`);
    const figure = this.figure(data, "final", label, parts.join(" · "));
    figure.tabIndex = 0;
    const actions = el("div", "figure-actions");
    const open = el("a", "", "Details");
    open.href = `/assets/${data.asset}/`;
    const use = el("button", "link", "Use as input");
    use.type = "button";
    use.addEventListener("click", () => this.onUseAsInput?.({ id: data.asset, url: data.url }));
    actions.append(open, use);
    figure.append(actions);
    this.images.append(figure);
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
    parts.push(`${data.images} image${data.images === 1 ? "" : "s"}`);
    const usage = usageSummary(data.usage);
    if (usage) parts.push(usage);
    this.meta.textContent = parts.join(" · ");
    this.meta.dataset.latencyMs = data.duration_ms;
  }
}
