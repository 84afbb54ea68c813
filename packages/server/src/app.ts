import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './http/app-env.ts';
import type { Services } from './services.ts';
import { ApiError, NotFoundError } from './errors.ts';
import { apiPath } from './http/api-path.ts';
import { accessMiddlewares } from './auth/auth-middleware.ts';
import { securityHeaders } from './auth/security-headers.ts';
import { noNulInQuery } from './http/no-nul-in-query.ts';
import { jsonBodyLimit } from './http/json-body-limit.ts';
import { problemResponse, toProblem } from './http/problem.ts';
import { requestLog } from './http/request-log.ts';
import { auditRoutes } from './routes/audit.ts';
import { authRoutes } from './routes/auth.ts';
import { tokenRoutes } from './routes/tokens.ts';
import { userRoutes } from './routes/users.ts';
import { requestMetrics } from './http/request-metrics.ts';
import { agentConnectRoutes } from './routes/agent-connect.ts';
import { boardRoutes } from './routes/boards.ts';
import { boardLabelRoutes } from './routes/board-labels.ts';
import { powerRoutes } from './routes/power.ts';
import { boardTelemetryRoutes } from './routes/board-telemetry.ts';
import { healthCheckRoutes } from './routes/health-checks.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { deviceScriptsRoutes } from './routes/device-scripts.ts';
import { deviceScriptRelayRoutes } from './routes/device-script-relay.ts';
import { docsRoutes } from './routes/docs.ts';
import { healthRoutes } from './routes/health.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { invocationOperationRoutes } from './routes/invocation-operations.ts';
import { invocationMetricRoutes } from './routes/invocation-metrics.ts';
import { invocationResultRoutes } from './routes/invocation-results.ts';
import { operationRoutes } from './routes/operations.ts';
import { pacRoutes } from './routes/pacs.ts';
import { appRoutes } from './routes/apps.ts';
import { invocationPatchRoutes } from './routes/invocation-patch.ts';
import { invocationFileRoutes } from './routes/invocation-files.ts';
import { invocationRoutes } from './routes/invocations.ts';
import { videoRoutes } from './routes/videos.ts';
import { uploadRoutes } from './routes/uploads.ts';
import { agentEnrollRoutes } from './routes/agent-enroll.ts';
import { boardApprovalRoutes } from './routes/board-approval.ts';
import { downloadRoutes } from './routes/downloads.ts';
import { agentUpdateRoutes } from './routes/agent-update.ts';
import { rolloutRoutes } from './routes/rollouts.ts';
import { reservationRoutes } from './routes/reservations.ts';
import { baselineRoutes } from './routes/baselines.ts';
import { comparisonRoutes } from './routes/comparisons.ts';
import { deviceScriptProgramRoutes } from './routes/device-script-programs.ts';
import { provisioningKeyRoutes } from './routes/provisioning-keys.ts';
import { tusResumableOnEveryAnswer } from './uploads/tus-resumable.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { terminalRoutes } from './routes/terminal.ts';
import { conformOpenApiDocument } from './http/openapi-conformance.ts';
import { ROUTE_ROLES } from './auth/route-roles.ts';

export function createApp(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ getPath: apiPath });

  app.use('*', requestLog(ctx.log));
  app.use('*', requestMetrics(ctx.metrics));
  // tus 1.0: Tus-Resumable on every answer of the upload routes, the access checks' 401/403 included.
  app.use('/api/uploads/*', tusResumableOnEveryAnswer);
  // Content-Security-Policy (no framing), X-Frame-Options, Referrer-Policy, nosniff.
  app.use('*', securityHeaders());
  // People and access (auth/middleware/): host allow-list, who is calling, cross-site checks, roles, cut-off, audit.
  app.use('*', ...accessMiddlewares(ctx.auth));
  const proxied = (p: string) => /^\/api\/device-scripts\/[^/]+\/proxy(\/|$)/.test(p);
  app.use('/api/*', jsonBodyLimit({ exempt: proxied }));
  // No NUL in a query string a route could carry into PostgreSQL (the proxy passes its URL on to the board).
  app.use('/api/*', noNulInQuery({ exempt: proxied }));

  // One module per resource.
  app.route('/', healthRoutes(ctx));
  app.route('/', docsRoutes(ctx.version));
  app.route('/', metricsRoutes(ctx));
  app.route('/', invocationRoutes(ctx));
  app.route('/', invocationFileRoutes(ctx));
  app.route('/', uploadRoutes(ctx));
  app.route('/', videoRoutes(ctx));
  app.route('/', deviceScriptsRoutes(ctx));
  app.route('/', deviceScriptRelayRoutes(ctx));
  app.route('/', deviceScriptProgramRoutes(ctx));
  app.route('/', boardLabelRoutes(ctx));
  app.route('/', boardRoutes(ctx));
  app.route('/', powerRoutes(ctx));
  app.route('/', boardTelemetryRoutes(ctx));
  app.route('/', healthCheckRoutes(ctx));
  app.route('/', operationRoutes(ctx));
  app.route('/', invocationOperationRoutes(ctx));
  app.route('/', invocationMetricRoutes(ctx));
  app.route('/', invocationResultRoutes(ctx));
  app.route('/', pacRoutes(ctx));
  app.route('/', appRoutes(ctx));
  app.route('/', invocationPatchRoutes(ctx));
  app.route('/', agentConnectRoutes(ctx));
  app.route('/', agentEnrollRoutes(ctx));
  app.route('/', boardApprovalRoutes(ctx));
  app.route('/', provisioningKeyRoutes(ctx));
  app.route('/', downloadRoutes(ctx));
  app.route('/', agentUpdateRoutes(ctx));
  app.route('/', rolloutRoutes(ctx));
  app.route('/', reservationRoutes(ctx));
  app.route('/', baselineRoutes(ctx));
  app.route('/', comparisonRoutes(ctx));
  app.route('/', webhookRoutes(ctx));
  app.route('/', terminalRoutes(ctx));
  app.route('/', authRoutes(ctx.auth));
  app.route('/', userRoutes(ctx.auth));
  app.route('/', tokenRoutes(ctx.auth));
  app.route('/', auditRoutes(ctx.auth));
  app.route('/', dashboardRoutes());

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'session', { type: 'apiKey', in: 'cookie', name: 'mm_session' });
  // Served conformed (http/openapi-conformance.ts): error schemas, 401s, operationIds, headers.
  const openApiConfig: Parameters<typeof app.getOpenAPI31Document>[0] = {
    openapi: '3.1.0',
    info: {
      title: 'Model Manager API',
      version: ctx.version,
      description: 'Control plane of Model Manager: invocations, boards, operations, PACs and device scripts.',
    },
    security: [{ bearer: [] }, { session: [] }],
  };
  let openApiDocument: unknown;
  app.get('/api/openapi.json', (c) => c.json((openApiDocument ??= conformOpenApiDocument(app.getOpenAPI31Document(openApiConfig), ROUTE_ROLES))));

  app.notFound((c) => problemResponse(c, toProblem(new NotFoundError('route_not_found', 'No such route.'))));

  app.onError((err, c) => {
    const problem = toProblem(err);
    if (problem.status >= 500 && problem.code === 'internal_error') {
      ctx.log.error({ err, req_id: c.get('requestId'), path: c.req.path }, 'unhandled error');
    }
    const headers: Record<string, string> = err instanceof ApiError ? { ...err.headers } : {};
    if (problem.code === 'database_unreachable') {
      if (!(err instanceof ApiError)) ctx.log.warn({ err, req_id: c.get('requestId'), path: c.req.path }, 'the database is unreachable');
      headers['retry-after'] = '5';
    }
    if (problem.status === 401 && problem.code !== 'invalid_credentials') headers['www-authenticate'] = 'Bearer';
    return problemResponse(c, problem, headers);
  });

  return app;
}

export type App = ReturnType<typeof createApp>;
