/**
 * The JSON Schemas of /openapi.json, generated from the zod schemas the daemon uses: request
 * bodies and query parameters as they are validated (api/validation.ts, zod's input side),
 * replies and webhook bodies as the view code is typed by them (api/responses.ts, the output
 * side). OpenAPI 3.1 takes JSON Schema 2020-12 as zod writes it.
 */
import { z } from 'zod';
import { responseSchemas } from '../../api/responses.js';
import { bulkRequestSchema, deadResendSchema, identifySchema, queryIdSchema, resendDlrSchema, sendNowSchema, sendSmsSchema } from '../../api/validation.js';
import { DEAD_EVENTS_QUERY } from './events.js';

export type Json = Record<string, unknown>;

/** `$schema` and `$id` belong to a standalone schema, not to a component of the document. */
function component(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

/** The JSON Schema of one zod schema: `input` for what a client sends, `output` for what smppd writes. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  return component(z.toJSONSchema(schema, { io, unrepresentable: 'any' }));
}

const REQUESTS = {
  SendSms: sendSmsSchema,
  BulkRequest: bulkRequestSchema,
  Identify: identifySchema,
  SendNow: sendNowSchema,
  ResendDlr: resendDlrSchema,
  DeadResend: deadResendSchema,
} as const;

/** components.schemas: the request bodies, then every named reply (their references between them kept). */
export function componentSchemas(): Json {
  const requests = Object.fromEntries(Object.entries(REQUESTS).map(([name, schema]) => [name, jsonSchema(schema)]));
  const generated = z.toJSONSchema(responseSchemas, { io: 'output', unrepresentable: 'any', uri: (id) => `#/components/schemas/${id}` }) as { schemas: Record<string, Json> };
  const replies = Object.fromEntries(Object.entries(generated.schemas).map(([name, schema]) => [name, component(schema)]));
  return { ...requests, ...replies };
}

/** Query parameters, as `toId` and /events/dead check them. */
export const PARAMETER_SCHEMAS = {
  id: jsonSchema(queryIdSchema),
  limit: jsonSchema(DEAD_EVENTS_QUERY.limit),
  after: jsonSchema(DEAD_EVENTS_QUERY.after),
} as const;
