// Module hooks that let a child `node` process run the TypeScript sources directly (Node 20
// cannot strip types): `./x.js` specifiers fall back to `./x.ts`, and `.ts` files are
// transpiled with the project's own TypeScript, one file at a time, types dropped.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (e) {
    const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
    if (relative && specifier.endsWith('.js')) return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
    throw e;
  }
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const source = await readFile(fileURLToPath(url), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    fileName: url,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
