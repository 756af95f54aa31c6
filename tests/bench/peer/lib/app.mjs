// The Fastify application: routes, the error body, ETag / If-None-Match and Cache-Control.
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';

import { ApiError, ifNoneMatchMatches, knownParams, parseQueryString, strongEtag } from './format.mjs';
import {
  HASH_PARAMS, HISTORY_PARAMS, history, historyByHash, historySchema, isFinal, recordSchema,
} from './history.mjs';

const JSON_TYPE = 'application/json; charset=utf-8';
const HISTORY_CACHE = 'public, max-age=2';
const FINAL_RECORD_CACHE = 'public, max-age=3600';
const REFERENCE_CACHE = 'public, max-age=60';

// nginx's $request_id (X-Request-Id), or one made here.
function requestId(request) {
  const id = request.headers['x-request-id'];
  if (typeof id === 'string' && id.length > 0 && id.length <= 64 && /^[A-Za-z0-9-]+$/.test(id)) {
    return id;
  }
  return randomBytes(16).toString('hex');
}

function errorBody(error, id) {
  const body = { code: error.code, message: error.message };
  if (error.param) body.param = error.param;
  body.request_id = id;
  return JSON.stringify({ error: body });
}

export function buildApp(pool, reference) {
  const app = Fastify({
    logger: false,
    routerOptions: { querystringParser: parseQueryString },
    // nginx keeps its connections to us open (upstream keepalive): close idle ones after nginx.
    keepAliveTimeout: 75_000,
  });

  // Every 200 carries a strong ETag of its body and answers If-None-Match with a 304.
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 200 || typeof payload !== 'string') return payload;
    const etag = strongEtag(payload);
    reply.header('ETag', etag);
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch && ifNoneMatchMatches(ifNoneMatch, etag)) {
      reply.code(304);
      return '';
    }
    return payload;
  });

  app.setErrorHandler((error, request, reply) => {
    let apiError = error;
    if (!(error instanceof ApiError)) {
      const database = error.code && (error.fatal || /^(ER_|ECONN|PROTOCOL_|ETIMEDOUT)/.test(error.code));
      if (database) {
        reply.header('Retry-After', '1');
        apiError = new ApiError(503, 'unavailable',
          'The service cannot reach its database; retry shortly');
      } else {
        apiError = new ApiError(500, 'internal', 'Internal error');
      }
      console.error(`peer: ${request.method} ${request.url}: ${error.stack || error}`);
    }
    reply.code(apiError.status).header('Cache-Control', 'no-store').type(JSON_TYPE)
      .send(errorBody(apiError, requestId(request)));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).header('Cache-Control', 'no-store').type(JSON_TYPE)
      .send(errorBody(new ApiError(404, 'not_found', 'No such endpoint'), requestId(request)));
  });

  app.get('/v1/networks', async (request, reply) => {
    knownParams(request.query, []);
    reply.header('Cache-Control', REFERENCE_CACHE).type(JSON_TYPE);
    return reference.networksBody;
  });

  app.get('/v1/history', { schema: { response: { 200: historySchema } } },
    async (request, reply) => {
      const answer = await history(pool, reference, knownParams(request.query, HISTORY_PARAMS));
      reply.header('Cache-Control', HISTORY_CACHE);
      return answer;
    });

  app.get('/v1/history/hash', { schema: { response: { 200: recordSchema } } },
    async (request, reply) => {
      const answer = await historyByHash(pool, reference, knownParams(request.query, HASH_PARAMS));
      reply.header('Cache-Control', isFinal(answer) ? FINAL_RECORD_CACHE : HISTORY_CACHE);
      return answer;
    });

  return app;
}
