import { html } from 'hono/html';

/**
 * The API reference page: Swagger UI over the app's OpenAPI document. Every URL is relative to
 * /docs, so the page also works where the app is mounted under a prefix, as the agent-server is
 * behind the control plane's proxy (`/api/v1/sandboxes/{id}/agent/docs`).
 */
export function renderDocsPage(title: string) {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title} API reference</title>
    <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" />
    <link rel="stylesheet" href="docs/assets/swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="docs/assets/swagger-ui-bundle.js"></script>
    <script>
      window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#swagger-ui', deepLinking: true });
    </script>
  </body>
</html>`;
}
