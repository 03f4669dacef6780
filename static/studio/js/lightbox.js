// A full-screen viewer for a list of images: ← → (or swipe) to move, D to download the original,
// Esc to close. `items()` is asked each time it opens, so new results join the sequence.
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class Lightbox {
  constructor(items) {
    this.items = items; // () => [{ url, download, caption }]
    this.index = 0;
    this.dialog = el("dialog", "viewer");
    this.dialog.setAttribute("aria-label", "Image viewer");
    this.image = el("img");
    this.caption = el("p", "viewer-caption");
    this.caption.setAttribute("aria-live", "polite");
    const bar = el("div", "viewer-bar");
    this.prev = el("button", "viewer-step", "←");
    this.prev.type = "button";
    this.prev.setAttribute("aria-label", "Previous image");
    this.next = el("button", "viewer-step", "→");
    this.next.type = "button";
    this.next.setAttribute("aria-label", "Next image");
    this.download = el("a", "button", "Download");
    this.download.setAttribute("download", "");
    const close = el("button", "viewer-close", "Close");
    close.type = "button";
    bar.append(this.prev, this.caption, this.next, this.download, close);
    this.dialog.append(this.image, bar);
    document.body.append(this.dialog);
    this.prev.addEventListener("click", () => this.step(-1));
    this.next.addEventListener("click", () => this.step(1));
    close.addEventListener("click", () => this.dialog.close());
    this.image.addEventListener("click", () => this.step(1));
    this.dialog.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight") { e.preventDefault(); this.step(1); }
      else if (e.key === "ArrowLeft") { e.preventDefault(); this.step(-1); }
      else if (e.key === "d" || e.key === "D") { e.preventDefault(); this.download.click(); }
    });
    let startX = null;
    this.dialog.addEventListener("touchstart", (e) => { startX = e.touches[0].clientX; }, { passive: true });
    this.dialog.addEventListener("touchend", (e) => {
      if (startX === null) return;
      const dx = e.changedTouches[0].clientX - startX;
      if (Math.abs(dx) > 40) this.step(dx < 0 ? 1 : -1);
      startX = null;
    });
  }

  open(url) {
    const list = this.items();
    this.index = Math.max(0, list.findIndex((item) => item.url === url));
    this.show(list);
    if (!this.dialog.open) this.dialog.showModal();
  }

  step(delta) {
    const list = this.items();
    if (!list.length) return;
    this.index = (this.index + delta + list.length) % list.length;
    this.show(list);
  }

  show(list) {
    const item = list[this.index];
    if (!item) return;
    this.image.src = item.url;
    this.image.alt = item.caption || `Image ${this.index + 1}`;
    this.caption.textContent = `${this.index + 1} / ${list.length}${item.caption ? ` · ${item.caption}` : ""}`;
    this.download.href = item.download;
    this.prev.disabled = this.next.disabled = list.length < 2;
  }
}
