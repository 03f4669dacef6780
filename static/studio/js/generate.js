// The Generate page: controls follow the chosen model's capabilities; frames appear as they stream.
import { StudioSocket } from "./socket.js";

const models = JSON.parse(document.getElementById("models-data").textContent);
const form = document.getElementById("generate-form");
const modelSelect = document.getElementById("model");
const ratioSelect = document.getElementById("aspect_ratio");
const sizeSelect = document.getElementById("image_size");
const statusLine = document.getElementById("form-status");
const thoughts = document.getElementById("thoughts");
const images = document.getElementById("images");
const text = document.getElementById("text");
const meta = document.getElementById("meta");
const button = document.getElementById("generate-button");

function fillSelect(select, values, preferred) {
  const previous = select.value;
  select.replaceChildren(...values.map((v) => new Option(v, v)));
  if (values.includes(previous)) select.value = previous;
  else if (values.includes(preferred)) select.value = preferred;
}

function applyCapabilities() {
  const model = models.find((m) => m.id === modelSelect.value) ?? models[0];
  const caps = model?.capabilities ?? {};
  fillSelect(ratioSelect, caps.aspect_ratios ?? ["1:1"], "1:1");
  fillSelect(sizeSelect, caps.image_sizes ?? ["1K"], "1K");
}

modelSelect.addEventListener("change", applyCapabilities);
applyCapabilities();

const socket = new StudioSocket();
let currentJob = null;
let pendingRef = null;

function setBusy(busy) {
  button.disabled = busy;
  form.setAttribute("aria-busy", busy ? "true" : "false");
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  const prompt = document.getElementById("prompt").value.trim();
  if (!prompt) {
    statusLine.textContent = "Write a prompt first.";
    return;
  }
  thoughts.replaceChildren();
  images.replaceChildren();
  text.textContent = "";
  meta.textContent = "";
  statusLine.textContent = "Sending…";
  setBusy(true);
  pendingRef = crypto.randomUUID ? crypto.randomUUID() : String(Date.now());
  socket.send({
    action: "generate", ref: pendingRef, model: modelSelect.value, prompt,
    aspect_ratio: ratioSelect.value, image_size: sizeSelect.value,
  });
});

document.addEventListener("keydown", (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === "Enter") form.requestSubmit();
});

function addImage(data) {
  const figure = document.createElement("figure");
  figure.className = data.thought ? "draft" : "final";
  const img = document.createElement("img");
  img.src = data.url;
  img.alt = data.thought ? "Draft while thinking" : `Generated image ${data.width}×${data.height}`;
  img.dataset.asset = data.asset;
  figure.append(img);
  const caption = document.createElement("figcaption");
  caption.textContent = data.thought ? "draft" : `${data.width}×${data.height}`;
  figure.append(caption);
  if (data.thought) thoughts.append(figure);
  else images.append(figure);
}

socket.on((event) => {
  if (event.type === "job.rejected" && event.ref === pendingRef) {
    statusLine.textContent = event.data.message;
    setBusy(false);
    return;
  }
  if (event.type === "job.accepted" && event.ref === pendingRef) {
    currentJob = event.id;
    socket.follow(currentJob);
    statusLine.textContent = "Generating…";
    return;
  }
  if (!currentJob || event.id !== currentJob) return;
  switch (event.type) {
    case "job.text":
      if (event.data.thought) {
        const p = document.createElement("p");
        p.className = "thought";
        p.textContent = event.data.text;
        thoughts.append(p);
      } else {
        text.textContent += event.data.text;
      }
      break;
    case "job.image":
      addImage(event.data);
      break;
    case "job.completed": {
      setBusy(false);
      const usage = event.data.usage ?? {};
      if (event.data.images === 0) {
        statusLine.textContent = `No image: ${event.data.block_reason || event.data.finish_reason || "the model returned none"}`;
      } else {
        statusLine.textContent = "Done.";
      }
      meta.textContent = `${(event.data.duration_ms / 1000).toFixed(1)} s · ${usage.totalTokenCount ?? 0} tokens`;
      break;
    }
    case "job.failed":
      setBusy(false);
      statusLine.textContent = `Failed: ${event.data.message}`;
      break;
  }
});
