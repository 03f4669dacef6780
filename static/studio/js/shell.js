// Every page: the compact header's menu on small screens, and "?" lists the page's shortcuts
// wherever a page does not handle it itself.
const toggle = document.getElementById("menu-toggle");
const nav = document.getElementById("main-nav");
toggle?.addEventListener("click", () => {
  const open = !nav.classList.contains("open");
  nav.classList.toggle("open", open);
  toggle.setAttribute("aria-expanded", String(open));
});
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && nav?.classList.contains("open")) {
    nav.classList.remove("open");
    toggle.setAttribute("aria-expanded", "false");
    toggle.focus();
  }
});
