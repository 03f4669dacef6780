// Starts Swagger UI on /v1/docs with the settings the page carries (no inline script).
(function () {
  const settings = JSON.parse(document.getElementById("swagger-settings").textContent);
  settings.dom_id = "#swagger-ui";
  settings.presets = [SwaggerUIBundle.presets.apis];
  window.ui = SwaggerUIBundle(settings);
})();
