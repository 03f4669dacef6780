// The detail page: the same result actions as on Generate, and the picture full screen with the
// rest of its run (← → to move between them).
import { Lightbox } from "./lightbox.js";
import { actionsRow } from "./result_actions.js";

const holder = document.getElementById("result-actions");
const picture = document.querySelector(".detail .media img");
if (holder && picture) {
  const asset = holder.dataset.asset;
  const items = () => [
    { url: picture.getAttribute("src"), download: `${picture.getAttribute("src")}?download=1`, caption: picture.alt },
    ...[...document.querySelectorAll(".lineage img[data-file]")].map((img) => ({
      url: img.dataset.file, download: `${img.dataset.file}?download=1`, caption: img.alt,
    })),
  ];
  const lightbox = new Lightbox(items);
  const open = () => lightbox.open(picture.getAttribute("src"));
  picture.addEventListener("click", open);
  holder.replaceChildren(actionsRow({ asset, url: picture.getAttribute("src") }, { open }));
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.target.closest("input, textarea, select, dialog")) return;
    if (e.key === "Enter" && e.target.closest("button, a")) return;
    const keys = { o: open, Enter: open, d: () => holder.querySelector("a[download]").click(),
      s: () => holder.querySelector(".star").click(), v: () => holder.querySelector(".variations").click(),
      u: () => holder.querySelector(".upscale").click(), r: () => holder.querySelector(".reuse").click() };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
}
