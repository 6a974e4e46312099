/**
 * The `admin` section: who may call the admin API under /admin (status, suspending an upstream,
 * searching messages across clients). Its tokens are not clients' tokens: a client's token is
 * refused there (403), and an admin token is no client. Without the section the admin API is off.
 *
 * Token files are read by load.ts with the clients' (`adminTokenFiles`); that no token is used
 * twice, by two admins or by an admin and a client, is checked here once the files are read
 * (`adminTokenProblems`). Messages name the key path, never the token.
 */
import { z } from 'zod';
import { TOKEN_MIN } from './client-schema.js';
import { nonEmpty, typeMessage } from './schema-parts.js';

const ADMIN_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

/** One admin: a name (logged with what it does) and a bearer token. */
const adminTokenSchema = z.strictObject({
  /** Required. 1–64 of A-Z a-z 0-9 _ . @ - ; unique among admins. Logged with each suspend and resume. */
  name: z.string({ error: typeMessage('a string') }).regex(ADMIN_NAME, { error: 'must be 1–64 letters, digits, _ . @ or -' }),
  /** Exactly one of token and tokenFile. At least 16 characters; unique among admins and clients. */
  token: z.string({ error: typeMessage('a string') }).min(TOKEN_MIN, { error: `must be at least ${TOKEN_MIN} characters` }).optional(),
  /** A file holding the token; one trailing newline is trimmed. Relative to the config file. */
  tokenFile: nonEmpty().optional(),
}, { error: 'must be a mapping { name, token or tokenFile }' }).superRefine((a, ctx) => {
  if (a.token !== undefined && a.tokenFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['token'], message: 'give token or tokenFile, not both' });
  } else if (a.token === undefined && a.tokenFile === undefined) {
    ctx.addIssue({ code: 'custom', path: ['token'], message: 'one of token or tokenFile is required' });
  }
});

export const adminSchema = z.strictObject({
  /** At least one; names unique. */
  tokens: z.array(adminTokenSchema, { error: typeMessage('a list of { name, token or tokenFile }') })
    .min(1, { error: 'must list at least one admin token; leave admin out to turn the admin API off' }),
}, { error: 'must be a mapping { tokens }' }).superRefine((a, ctx) => {
  const seen = new Map<string, number>();
  a.tokens.forEach((t, i) => {
    const first = seen.get(t.name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['tokens', i, 'name'], message: `duplicates admin.tokens[${first}].name` });
    else seen.set(t.name, i);
  });
});

export type ParsedAdmin = z.output<typeof adminSchema>;

/** One admin with its token read. */
export interface AdminTokenConfig {
  name: string;
  /** The bearer token. A secret: masked by maskSecrets, redacted by the logger. */
  token: string;
}

/** The admin section resolved: at least one admin. */
export interface AdminConfig {
  tokens: AdminTokenConfig[];
}

/** The key path load.ts reads a token file of, and reports it under. */
export const adminTokenFileAt = (i: number): string => `admin.tokens[${i}].tokenFile`;

/** The token files the unvalidated input names: [index, file] (a file beside an inline token is the schema's to refuse). */
export function adminTokenFiles(input: unknown): Array<[number, unknown]> {
  const tokens = isRecord(input) && isRecord(input.admin) ? input.admin.tokens : undefined;
  if (!Array.isArray(tokens)) return [];
  return tokens.flatMap((t: unknown, i): Array<[number, unknown]> => (isRecord(t) && t.token === undefined ? [[i, t.tokenFile]] : []));
}

/**
 * Each admin token used twice: by two admins, or by an admin and a client (a client's token must
 * be refused at /admin, and an admin's is no client's). Names the later admin, never the token.
 * `clientTokens`: each client's token (inline or read from its file) to the client's index.
 */
export function adminTokenProblems(input: unknown, files: ReadonlyMap<string, Buffer>, clientTokens: ReadonlyMap<string, number>): string[] {
  const tokens = isRecord(input) && isRecord(input.admin) ? input.admin.tokens : undefined;
  if (!Array.isArray(tokens)) return [];
  const seen = new Map<string, number>();
  const problems: string[] = [];
  tokens.forEach((t: unknown, i) => {
    if (!isRecord(t)) return;
    const inline = typeof t.token === 'string' ? t.token : undefined;
    const token = inline ?? files.get(adminTokenFileAt(i))?.toString('utf8');
    if (token === undefined) return;
    const at = `admin.tokens[${i}].${inline !== undefined ? 'token' : 'tokenFile'}`;
    const client = clientTokens.get(token);
    const first = seen.get(token);
    if (client !== undefined) problems.push(`${at}: the same token as clients[${client}]; an admin token must not be a client's`);
    else if (first !== undefined) problems.push(`${at}: the same token as admin.tokens[${first}]; each admin needs its own`);
    else seen.set(token, i);
  });
  return problems;
}

/** The section with each token read (inline, or the content of its file). */
export function resolveAdmin(parsed: ParsedAdmin, secret: (inline: string | undefined, at: string) => string): AdminConfig {
  return { tokens: parsed.tokens.map((t, i) => ({ name: t.name, token: secret(t.token, adminTokenFileAt(i)) })) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
