/**
 * Just enough of the Dockerfile and .dockerignore formats to check the image statically (no
 * Docker engine in CI): instructions by stage, their flags and arguments, and the context filter.
 * https://docs.docker.com/reference/dockerfile/ and …/build/concepts/context/#dockerignore-files
 */

export interface Instruction {
  /** Upper case: `RUN`, `COPY`, … */
  keyword: string;
  /** Everything after the keyword, continuation lines joined with a space. */
  args: string;
  /** 1-based line of the keyword. */
  line: number;
}

export interface Stage {
  /** The `AS` name; undefined for an unnamed stage. */
  name: string | undefined;
  /** The base image with the global ARGs substituted. */
  base: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** Global ARGs (before the first FROM) and their defaults. */
  args: Map<string, string>;
  stages: Stage[];
}

export function parseDockerfile(text: string): Dockerfile {
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const ins of instructions(text)) {
    if (ins.keyword === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`line ${ins.line}: cannot read FROM ${ins.args}`);
      stages.push({ name: m[2], base: substitute(m[1]!, args), instructions: [] });
    } else if (stages.length === 0) {
      if (ins.keyword !== 'ARG') throw new Error(`line ${ins.line}: ${ins.keyword} before the first FROM`);
      const [name, value = ''] = ins.args.split('=', 2);
      args.set(name!.trim(), value.trim());
    } else {
      stages.at(-1)!.instructions.push(ins);
    }
  }
  return { args, stages };
}

/** Logical instructions: comments and blank lines dropped (inside continuations too), `\` continuations joined. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending: { parts: string[]; line: number } | undefined;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line.startsWith('#') || line === '') return;
    const continues = line.endsWith('\\');
    const part = continues ? line.slice(0, -1).trim() : line;
    pending ??= { parts: [], line: i + 1 };
    if (part !== '') pending.parts.push(part);
    if (continues) return;
    const joined = pending.parts.join(' ');
    const space = joined.search(/\s/);
    out.push({
      keyword: (space < 0 ? joined : joined.slice(0, space)).toUpperCase(),
      args: space < 0 ? '' : joined.slice(space + 1).trim(),
      line: pending.line,
    });
    pending = undefined;
  });
  return out;
}

function substitute(value: string, args: Map<string, string>): string {
  return value.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string | undefined, bare: string | undefined) => args.get((braced ?? bare)!) ?? '');
}

/** `--name=value` flags before the arguments (`COPY --from=deps …`, `HEALTHCHECK --interval=30s CMD …`). */
export function splitFlags(args: string): { flags: Map<string, string>; rest: string } {
  const flags = new Map<string, string>();
  let rest = args;
  for (let m = /^--([\w-]+)(?:=(\S*))?\s*/.exec(rest); m; m = /^--([\w-]+)(?:=(\S*))?\s*/.exec(rest)) {
    flags.set(m[1]!, m[2] ?? 'true');
    rest = rest.slice(m[0].length);
  }
  return { flags, rest };
}

/** The exec form `["a", "b"]` as a list; a shell form as `['/bin/sh', '-c', text]`. */
export function commandOf(args: string): string[] {
  if (!args.startsWith('[')) return ['/bin/sh', '-c', args];
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error(`not a JSON list of strings: ${args}`);
  return parsed;
}

export interface Copy {
  from: string | undefined;
  sources: string[];
  dest: string;
}

export function parseCopy(args: string): Copy {
  const { flags, rest } = splitFlags(args);
  const words = rest.startsWith('[') ? commandOf(rest) : rest.split(/\s+/);
  if (words.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`);
  return { from: flags.get('from'), sources: words.slice(0, -1), dest: words.at(-1)! };
}

/**
 * The .dockerignore filter: each pattern is a path glob from the context root (`*`, `?`, `**`
 * for any number of folders); a match on a folder takes everything in it; a later `!pattern`
 * takes a path back in. Returns whether `path` (relative, `/`-separated) stays out of the context.
 */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')).map((l) => {
    const negated = l.startsWith('!');
    const pattern = (negated ? l.slice(1) : l).trim().replace(/^\/+/, '').replace(/\/+$/, '');
    return { negated, re: globToRegExp(pattern) };
  });
  return (path) => {
    const parts = path.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const { negated, re } of rules) {
      if (prefixes.some((p) => re.test(p))) excluded = !negated;
    }
    return excluded;
  };
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (glob.startsWith('**/', i)) { re += '(?:.*/)?'; i += 2; }
    else if (glob.startsWith('**', i)) { re += '.*'; i += 1; }
    else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
