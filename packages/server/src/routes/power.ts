import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { validationHook } from '../http/validation.ts';
import { IdParams } from '../http/params.ts';
import { notFound } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { requestAuth, setAuditTarget } from '../auth/request-auth.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { respondWithOperation } from '../operations/respond.ts';
import { IncidentSchema } from '../power/incident-object.ts';
import { POWER_ACTIONS } from '../power/power-kinds.ts';

const PowerBody = z
  .object({ action: z.enum(POWER_ACTIONS).openapi({ description: '`on`, `off`, or `cycle` (off, MM_POWER_CYCLE_OFF_S, on)' }) })
  .strict()
  .openapi('PowerRequest', { example: { action: 'cycle' } });

const IncidentList = z.object({ incidents: z.array(IncidentSchema) }).openapi('IncidentList');

const powerRoute = createRoute({
  method: 'post',
  path: '/api/boards/{id}/power/',
  tags: ['boards', 'power'],
  summary: "Switch a board's power through its lab host and pdudaemon",
  description:
    'Starts operation `power_on`, `power_off` or `power_cycle` at once (it does not wait for the board, which may be off or hung); ' +
    'its lab host relays the command to pdudaemon (docs/power.md). Answers like every operation-creating POST ' +
    '(`Prefer: respond-async` → 202; otherwise waits). The operation fails `power_controller_offline` when the lab host is not linked, ' +
    "`pdu_error` with pdudaemon's answer when the command failed.",
  middleware: [requireJson] as const,
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: PowerBody } } } },
  responses: {
    200: { description: 'The operation, succeeded', content: { 'application/json': { schema: OperationSchema } } },
    202: { description: 'The operation, still running (`Location` names it)', content: { 'application/json': { schema: OperationSchema } } },
    400: { description: 'Bad input (problem+json, `validation_failed`)' },
    403: { description: 'Not an admin (nor the holder of the board)' },
    404: { description: 'No such board (`board_not_found`)' },
    409: { description: '`power_not_configured`: the board has no power controller' },
    415: { description: 'The body is not application/json' },
    502: { description: '`operation_failed`: the operation failed (`power_controller_offline`, `pdu_error`); the operation is in the body' },
  },
});

const incidentsRoute = createRoute({
  method: 'get',
  path: '/api/boards/{id}/incidents/',
  tags: ['boards', 'power'],
  summary: "A board's incidents: hangs, their recovery and time to recover",
  request: { params: IdParams },
  responses: {
    200: { description: 'Its incidents, newest first (at most 100)', content: { 'application/json': { schema: IncidentList } } },
    404: { description: 'No such board (`board_not_found`)' },
  },
});

/** Power control and incidents (docs/power.md). */
export function powerRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });

  app.openapi(powerRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { action } = c.req.valid('json');
    await ctx.power.requireControl(requestAuth().principal, id);
    const op = await ctx.power.control(id, action);
    setAuditTarget(`board ${id}`, { action, operation_id: op.id });
    return respondWithOperation(c, ctx, op);
  });

  app.openapi(incidentsRoute, async (c) => c.json({ incidents: await ctx.power.incidents(c.req.valid('param').id) }, 200));

  return app;
}
