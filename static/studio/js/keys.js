// Keys page: copy the one-time secret; confirm before revoking.
const copy = document.getElementById("copy-secret");
if (copy) {
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(copy.dataset.secret);
      copy.textContent = "Copied";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById("new-secret"));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      copy.textContent = "Selected: press Ctrl+C";
    }
  });
}
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => { if (!confirm(form.dataset.confirm)) event.preventDefault(); });
}
