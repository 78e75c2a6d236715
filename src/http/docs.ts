/**
 * The contract as JSON at /v1/openapi.json and a rendered reference at /docs (Swagger UI served from
 * the installed swagger-ui-dist package: no CDN, works offline). The signaling contract is served
 * whole beside it: /v1/asyncapi.json and /v1/asyncapi.yaml (spec/asyncapi.yaml as written).
 */
import express, { type Router } from 'express';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { asyncapiDocument, asyncapiYaml } from '../../generated/signaling/asyncapi-document.js';

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Convene API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// Error bodies link to `/docs#error-<code>`; the anchors live in the rendered description, which
// exists only once Swagger UI has drawn it, so scroll there when it is done.
const init = `window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: false,
  onComplete: function () {
    var target = location.hash && document.getElementById(location.hash.slice(1));
    if (target) target.scrollIntoView();
  },
});
`;

export function docsRouter(document: Record<string, unknown>): Router {
  const router = express.Router();
  const json = JSON.stringify(document);
  router.get('/v1/openapi.json', (_req, res) => {
    res.type('application/json').send(json);
  });
  const asyncapiJson = JSON.stringify(asyncapiDocument);
  router.get('/v1/asyncapi.json', (_req, res) => {
    res.type('application/json').send(asyncapiJson);
  });
  router.get('/v1/asyncapi.yaml', (_req, res) => {
    res.type('application/yaml').send(asyncapiYaml);
  });
  router.get(['/docs', '/docs/'], (_req, res) => {
    res.type('html').send(page);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(init);
  });
  router.use('/docs', express.static(swaggerUiDir, { index: false, maxAge: '1h' }));
  return router;
}
