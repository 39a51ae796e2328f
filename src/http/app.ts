import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyReply, type FastifyServerOptions, LogController } from 'fastify';
import { giveWayToApiRequests } from './foreground.ts';
import { registerOpenApi } from './openapi.ts';
import { logOneLinePerRequest } from './request-log.ts';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
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
import { invalidUtf8Field, rejectInvalidText } from './text-guard.ts';

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
