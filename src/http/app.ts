import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyReply, type FastifyServerOptions, LogController } from 'fastify';
import { giveWayToApiRequests } from './foreground.ts';
import { logOneLinePerRequest } from './request-log.ts';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { AppError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { createProcessLogger } from '../lib/logger.ts';
import { apiKeyAuth } from './auth.ts';
import type { App, AppDeps, RouteDeps } from './context.ts';
import {
  answerClientError,
  badUrlError,
  errorHandler,
  methodNotAllowedHook,
  notFoundHandler,
} from './errors.ts';
import { closeConnectionWhileDraining } from './graceful-close.ts';
import { OAuthStates } from './oauth-state.ts';
import { registerRoutes } from './routes/index.ts';
import { RouteTable } from './route-table.ts';
import { invalidUtf8Field, NO_NUL_PATTERN, rejectInvalidText, TEXT_RULE } from './text-guard.ts';

interface BuildAppOptions {
  /** The process's pino logger (default: one at KB_LOG_LEVEL), or false for none (tests). */
  logger?: FastifyServerOptions['loggerInstance'] | false;
}

/** Build the Fastify instance. Tests call this with their own parts (database, model, fakes). */
export async function buildApp(appDeps: AppDeps, opts: BuildAppOptions = {}): Promise<App> {
  const deps: RouteDeps = { ...appDeps, oauthStates: new OAuthStates(appDeps.db, appDeps.sources.cipher) };
  const routes = new RouteTable();
  const app = createServer(deps, opts, routes);

  installErrorHandlingAndHooks(app, routes);
  acceptJsonBodiesOnly(app);
  await registerOpenApi(app);

  logOneLinePerRequest(app);
  giveWayToApiRequests(app, deps.db.foreground);
  app.addHook('onRequest', apiKeyAuth(deps.db));
  app.addHook('onRequest', methodNotAllowedHook(routes));
  app.addHook('preValidation', rejectInvalidText);

  if (deps.config.KB_RATE_LIMIT_PER_MINUTE > 0)
    await registerRateLimit(app, deps.config.KB_RATE_LIMIT_PER_MINUTE);

  await registerRoutes(app, deps);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}

/**
 * The Fastify instance with the server's options: request ids, exact route matching, graceful close, and
 * the router's own errors answered in the API's shape.
 */
function createServer(deps: RouteDeps, opts: BuildAppOptions, routes: RouteTable): App {
  const logger =
    opts.logger === false
      ? { logger: false as const }
      : { loggerInstance: opts.logger ?? createProcessLogger({ level: deps.config.KB_LOG_LEVEL }) };
  return Fastify({
    ...logger,
    // One line a request instead (request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.KB_BODY_LIMIT_BYTES,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : newId();
    },
    requestIdHeader: false,
    // The seed's crawl path has a trailing slash and others have none: match exactly as written.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // On shutdown (closeGracefully in graceful-close.ts), requests already on a connection are served to
    // the end, with no framework-shaped 503s; connections are closed after their last answer.
    return503OnClosing: false,
    forceCloseConnections: false,
    // Errors the router raises before any route runs (bad percent-encoding, an over-long parameter)
    // answer in the API's shape like every other error, without echoing the path.
    frameworkErrors: (err, request, reply) =>
      errorHandler(
        err.code === 'FST_ERR_BAD_URL' ? badUrlError(routes, request.url) : err,
        request,
        reply as unknown as FastifyReply,
      ),
    clientErrorHandler: answerClientError,
  }).withTypeProvider<ZodTypeProvider>() as App;
}

/** The API's error shape for every error, 404 and 405 from the route table, and headers on every answer. */
function installErrorHandlingAndHooks(app: App, routes: RouteTable): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler(routes));
  // Every route, as registered (the docs UI's and the HEAD routes of GETs included): 405 needs them.
  app.addHook('onRoute', (route) => routes.add(route.method, route.url));
  app.decorateRequest('caller', null);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onSend', closeConnectionWhileDraining);
}

/**
 * Only JSON bodies exist in this API. Fastify's default text/plain parser is removed so a wrong
 * Content-Type is a 415, not a string handed to a route.
 */
function acceptJsonBodiesOnly(app: App): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    let parsed: unknown;
    try {
      parsed = parseJsonBody(req.headers['content-type'], body as Buffer);
    } catch (err) {
      done(err as Error, undefined);
      return;
    }
    done(null, parsed);
  });
}

/** The OpenAPI document (served at /openapi.json) and its browsable UI at /docs. */
async function registerOpenApi(app: App): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Knowledge-base connector service',
        version: '1.0.0',
        description:
          'Connect content sources, crawl websites, and search the resulting knowledge base. ' +
          'Every /api route except the OAuth callback and the admin API takes `Authorization: Bearer <api key>`.\n\n' +
          `Text: ${TEXT_RULE} Every request string in this document declares it as \`pattern: ${NO_NUL_PATTERN}\`.\n\n` +
          'Methods: a path answers a method it does not list with 405 method_not_allowed and an `Allow` header, ' +
          'and OPTIONS with 204 and `Allow`; a path that does not exist is 404 not_found.',
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key of your organization (`kb_...`).',
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'KB_ADMIN_TOKEN (admin API only).' },
        },
      },
      security: [{ apiKey: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => withTextRule(jsonSchemaTransformObject(document) as OpenApiDocument),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
}

/** Requests a minute per API key (else per address), on /api routes only. */
async function registerRateLimit(app: App, perMinute: number): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (req) => req.caller?.keyId ?? req.ip,
    allowList: (req) => !req.url.startsWith('/api/'),
    errorResponseBuilder: (_req, context) =>
      new AppError(
        'rate_limited',
        `Too many requests for this API key; retry in ${Math.ceil(context.ttl / 1000)} s.`,
      ),
  });
}

/**
 * A JSON body as this API accepts it: UTF-8 (the only charset JSON allows between systems, RFC 8259),
 * strictly decoded (invalid bytes are refused, not silently replaced and stored), and parseable.
 */
function parseJsonBody(contentType: string | undefined, body: Buffer): unknown {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError(
      'unsupported_media_type',
      `Send the body as UTF-8 JSON; charset=${charset} is not accepted.`,
    );
  }
  if (body.length === 0) throw new AppError('invalid_request', 'The body is empty; send a JSON object.');
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    const field = invalidUtf8Field(body);
    throw new AppError(
      'invalid_request',
      field
        ? `${field} contains bytes that are not UTF-8; send the body as UTF-8 JSON.`
        : 'The body is not valid UTF-8; send it as UTF-8 JSON.',
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('invalid_request', 'The body is not valid JSON.');
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

type JsonSchema = { [keyword: string]: unknown };
interface OpenApiDocument {
  paths?: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ schema?: JsonSchema }>;
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
      }
    >
  >;
  [key: string]: unknown;
}

/**
 * Declares the text rule (text-guard.ts) where the service enforces it: every string a request carries
 * (parameters and bodies, at any depth) gets `pattern: ^[^\u0000]*$`, unless it has a pattern, an enum
 * or a constant of its own. A generator reading the document then knows a NUL is refused. (That a lone
 * surrogate is refused needs no declaring: JSON Schema strings are Unicode text.)
 */
function withTextRule(document: OpenApiDocument): OpenApiDocument {
  const visit = (schema: unknown): void => {
    if (schema === null || typeof schema !== 'object') return;
    if (Array.isArray(schema)) {
      for (const s of schema) visit(s);
      return;
    }
    const s = schema as JsonSchema;
    const types = Array.isArray(s['type']) ? s['type'] : [s['type']];
    if (
      types.includes('string') &&
      s['pattern'] === undefined &&
      s['enum'] === undefined &&
      s['const'] === undefined
    ) {
      s['pattern'] = NO_NUL_PATTERN;
    }
    for (const key of ['items', 'additionalProperties', 'not', 'allOf', 'anyOf', 'oneOf', 'prefixItems'])
      visit(s[key]);
    if (s['properties'] && typeof s['properties'] === 'object')
      for (const p of Object.values(s['properties'])) visit(p);
  };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const op of Object.values(operations)) {
      for (const p of op.parameters ?? []) visit(p.schema);
      for (const media of Object.values(op.requestBody?.content ?? {})) visit(media.schema);
    }
  }
  return document;
}
