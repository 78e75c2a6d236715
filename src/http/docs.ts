/**
 * The contract as JSON at /v1/openapi.json and a rendered reference at /docs (Swagger UI served from
 * the installed swagger-ui-dist package: no CDN, works offline). The signaling contract is served
 * whole beside it, /v1/asyncapi.json and /v1/asyncapi.yaml (spec/asyncapi.yaml as written), and
 * rendered on /docs after the HTTP reference (signaling-docs.ts).
 */
import express, { type Router } from 'express';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { asyncapiDocument, asyncapiYaml } from '../../generated/signaling/asyncapi-document.js';
import { renderSignalingReference, signalingCss } from './signaling-docs.js';

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

// Built on the first request to /docs (rendering the signaling contract is not start-up work), then kept.
let page: string | undefined;
const docsPage = (): string =>
  (page ??= `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Convene API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="stylesheet" href="/docs/signaling.css">
  <link rel="icon" href="/docs/favicon-32x32.png">
</head>
<body>
  <nav class="signaling-reference">HTTP reference below (contract: <a href="/v1/openapi.json">/v1/openapi.json</a>);
    <a href="#signaling-reference">signaling reference</a> after it (contract:
    <a href="/v1/asyncapi.json">/v1/asyncapi.json</a>, <a href="/v1/asyncapi.yaml">/v1/asyncapi.yaml</a>).</nav>
  <div id="swagger-ui"></div>
  ${renderSignalingReference(asyncapiDocument)}
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`);

// Error bodies link to `/docs#error-<code>`; the anchors live in the rendered description, which
// exists only once Swagger UI has drawn it, so scroll there when it is done. The signaling anchors
// (`#signaling-<message>`) are in the static page but move down as Swagger UI draws above them.
const init = `window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: false,
  validatorUrl: null, // its badge is an image from validator.swagger.io: nothing leaves this server
  onComplete: function () {
    var target = location.hash && document.getElementById(location.hash.slice(1));
    if (target) target.scrollIntoView();
  },
});
`;

/**
 * The reference page runs Swagger UI's script from this server only: no inline script (init.js is a
 * file for that reason), no plugins, nothing loaded from elsewhere, and no framing (clickjacking).
 * Swagger UI sets inline styles and draws its icons from data: URIs, which the policy allows.
 */
const DOCS_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function docsRouter(document: Record<string, unknown>): Router {
  const router = express.Router();
  router.use('/docs', (_req, res, next) => {
    res.setHeader('content-security-policy', DOCS_POLICY);
    res.setHeader('x-frame-options', 'DENY'); // for browsers that ignore frame-ancestors
    next();
  });
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
    res.type('html').send(docsPage());
  });
  router.get('/docs/signaling.css', (_req, res) => {
    res.type('text/css').send(signalingCss);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(init);
  });
  router.use('/docs', express.static(swaggerUiDir, { index: false, maxAge: '1h' }));
  return router;
}
