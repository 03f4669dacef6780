// Layers: per-layer visibility, bounding boxes on/off, hover a row to highlight its box.
// Sets: a filmstrip with click to select, ← → to step, click the picture to enlarge.

function setupLayers(stage) {
  const rows = document.querySelectorAll("#layer-list .layer-row");
  const pieces = (id) => stage.querySelectorAll(`[data-layer="${CSS.escape(id)}"]`);
  for (const row of rows) {
    const id = row.dataset.layer;
    row.querySelector("input.visible").addEventListener("change", (e) => {
      for (const el of pieces(id)) el.hidden = !e.target.checked;
      row.classList.toggle("off", !e.target.checked);
    });
    const highlight = (on) => { for (const el of pieces(id)) el.classList.toggle("hot", on); };
    row.addEventListener("mouseenter", () => highlight(true));
    row.addEventListener("mouseleave", () => highlight(false));
  }
  for (const group of document.querySelectorAll(".layer-group")) {
    group.querySelector("input.group-visible")?.addEventListener("change", (e) => {
      group.classList.toggle("off", !e.target.checked);
      for (const input of group.querySelectorAll("input.visible")) {
        input.checked = e.target.checked;
        input.dispatchEvent(new Event("change"));
      }
    });
  }
  const boxes = document.getElementById("layer-boxes");
  document.getElementById("show-boxes").addEventListener("change", (e) => { boxes.hidden = !e.target.checked; });
  document.getElementById("solo-off").addEventListener("click", () => {
    for (const input of document.querySelectorAll("#layer-list input.visible, #layer-list input.group-visible")) {
      if (!input.checked) { input.checked = true; input.dispatchEvent(new Event("change")); }
    }
  });
}

function setupStrip(strip) {
  const frames = [...strip.querySelectorAll(".frame")];
  const image = document.getElementById("set-image");
  const position = document.getElementById("set-position");
  const open = document.getElementById("set-open");
  const download = document.getElementById("set-download");
  const lightbox = document.getElementById("set-lightbox");
  let current = Math.max(0, frames.findIndex((f) => f.classList.contains("current")));

  function select(index) {
    current = (index + frames.length) % frames.length;
    const frame = frames[current];
    for (const f of frames) { f.classList.remove("current"); f.removeAttribute("aria-current"); }
    frame.classList.add("current");
    frame.setAttribute("aria-current", "true");
    frame.scrollIntoView({ block: "nearest", inline: "center" });
    image.src = frame.dataset.file;
    image.alt = `Image ${current + 1} of ${frames.length}`;
    position.textContent = `${current + 1} / ${frames.length}`;
    open.href = frame.dataset.detail;
    download.href = `${frame.dataset.file}?download=1`;
    if (lightbox.open) lightbox.querySelector("img").src = frame.dataset.file;
  }

  frames.forEach((frame, index) => frame.addEventListener("click", () => select(index)));
  document.getElementById("set-prev").addEventListener("click", () => select(current - 1));
  document.getElementById("set-next").addEventListener("click", () => select(current + 1));
  image.addEventListener("click", () => {
    lightbox.querySelector("img").src = frames[current].dataset.file;
    lightbox.showModal();
  });
  lightbox.addEventListener("click", () => lightbox.close());
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, textarea, select")) return;
    if (e.key === "ArrowLeft") { e.preventDefault(); select(current - 1); }
    if (e.key === "ArrowRight") { e.preventDefault(); select(current + 1); }
  });
}

const stage = document.getElementById("layer-stage");
if (stage) setupLayers(stage);
const strip = document.getElementById("filmstrip");
if (strip) setupStrip(strip);
