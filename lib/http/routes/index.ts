import { openApiDocument, type OpenApiDocument } from '../openapi.js';
import { route, type Route } from '../spec.js';
import { serveReference } from './reference.js';
import { receiveWebhook } from './hooks.js';
import { sessionSearch } from './search.js';
import { health } from './service.js';
import {
  appendMessages,
  cleanupSessions,
  continueSession,
  createSession,
  deleteSession,
  getAuditLog,
  getLatestSession,
  getSession,
  listSessions,
  popMessages,
  replaceSession,
  trimSession,
} from './sessions.js';

/**
 * Every route of the API, in registration order (static paths before the `{id}` they would shadow). The
 * app registers exactly these, and the OpenAPI document is generated from exactly these.
 */
export const routes: readonly Route[] = [
  health as Route,
  route(
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      tag: 'service',
      summary: 'This document',
      auth: 'none',
      responses: { 200: { description: 'OpenAPI 3.1.' } },
    },
    (c) => serveReference(c, routes, false),
  ),
  route(
    {
      method: 'get',
      path: '/docs',
      operationId: 'docs',
      tag: 'service',
      summary: 'The API reference page, made from this document',
      auth: 'none',
      responses: { 200: { description: 'HTML.', html: true } },
    },
    (c) => serveReference(c, routes, true),
  ),
  createSession,
  listSessions,
  getLatestSession,
  cleanupSessions,
  getSession,
  replaceSession,
  deleteSession,
  appendMessages,
  continueSession,
  getAuditLog,
  receiveWebhook,
  sessionSearch,
  trimSession,
  popMessages,
] as Route[];

/** The OpenAPI document of the API (made once). */
export function apiDocument(): OpenApiDocument {
  return openApiDocument(routes);
}
