import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The relative modules a file names: `import`, `import type`, `export … from` and `import()`.
 * A type-only import counts: the two modules still cannot be understood, or moved, one without
 * the other. A dynamic import counts: it defers loading, not the dependency.
 */
function relativeImports(file: string, text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles
    .map((f) => f.fileName)
    .filter((name) => name.startsWith('./') || name.startsWith('../'))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')));
}

/** The .ts files under `folders` as a graph: each file (path from the repository's root) and those it imports. */
function moduleGraph(folders: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const folder of folders) {
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })) {
      if (!entry.endsWith('.ts') || entry.endsWith('.d.ts')) continue;
      const file = join(ROOT, folder, entry);
      graph.set(relative(ROOT, file), relativeImports(file, readFileSync(file, 'utf8')).map((to) => relative(ROOT, to)));
    }
  }
  return graph;
}

/**
 * Each circle of the graph as one path round it (`a.ts -> b.ts -> a.ts`): one per strongly
 * connected component of more than one module, or of a module that imports itself (Tarjan).
 */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => circleThrough(graph, new Set(component)).join(' -> ')).sort();
}

/** The shortest path from the component's first module (by name) back to itself, inside it. */
function circleThrough(graph: ReadonlyMap<string, readonly string[]>, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const next of graph.get(node) ?? []) {
      if (!component.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== start && at !== undefined; at = cameFrom.get(at)) path.unshift(at);
        return [start, ...path];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

describe('import circles', () => {
  it('finds a circle through type-only, re-export and dynamic imports, and names it', () => {
    const at = (name: string): string => join(ROOT, name);
    const text: Record<string, string> = {
      'a.ts': "import type { B } from './b.js';",
      'b.ts': "export { c } from './c.js';",
      'c.ts': "const a = () => import('./a.js');",
      'd.ts': "import { a } from './a.js'; import { z } from 'node:fs';",
      'e.ts': "import { e } from './e.js';",
    };
    const graph = new Map(Object.entries(text).map(([name, source]) => [name, relativeImports(at(name), source).map((to) => relative(ROOT, to))]));
    expect(importCircles(graph)).toEqual(['a.ts -> b.ts -> c.ts -> a.ts', 'e.ts -> e.ts']);
  });

  it('src/ and bench/ have none: a module never needs, through others, a module that needs it', () => {
    const graph = moduleGraph(['src', 'bench']);
    expect(graph.size).toBeGreaterThan(200);
    expect(importCircles(graph)).toEqual([]);
  });
});
