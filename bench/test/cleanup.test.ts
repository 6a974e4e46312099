/**
 * The benchmark's clean-up list: what an interrupted scale-out run removes, each thing once,
 * newest first, past one that fails; and the signal handler that runs it once and exits.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { BenchCleanup, cleanUpOnSignal, type SignalSource } from '../src/cleanup.js';

describe('BenchCleanup', () => {
  it('runs each clean-up once, newest first, and goes on past one that fails', async () => {
    const cleanup = new BenchCleanup();
    const ran: string[] = [];
    cleanup.add('folder', () => { ran.push('folder'); });
    cleanup.add('schema', () => { ran.push('schema'); return 'could not drop schema s: lock timeout'; });
    cleanup.add('queue', () => { ran.push('queue'); throw new Error('channel closed'); });
    cleanup.add('daemon', async () => { ran.push('daemon'); });
    const problems = await cleanup.runAll();
    expect(ran).toEqual(['daemon', 'queue', 'schema', 'folder']);
    expect(problems).toEqual(['could not remove queue: channel closed', 'could not drop schema s: lock timeout']);
    expect(await cleanup.runAll()).toBe(problems);
    expect(ran).toHaveLength(4);
  });

  it('does not run again what its handle ran, and waits for one its handle began', async () => {
    const cleanup = new BenchCleanup();
    const ran: string[] = [];
    let finishDrop: () => void = () => {};
    const removeFolder = cleanup.add('folder', () => { ran.push('folder'); });
    const dropSchema = cleanup.add('schema', () => new Promise<void>((r) => { finishDrop = r; }).then(() => { ran.push('schema'); }));
    expect(await removeFolder()).toEqual([]);
    const dropping = dropSchema();
    const all = cleanup.runAll();
    finishDrop();
    await Promise.all([dropping, all]);
    expect(await dropSchema()).toEqual([]);
    expect(ran).toEqual(['folder', 'schema']);
  });

  it('removes at once what is added after runAll has begun', async () => {
    const cleanup = new BenchCleanup();
    await cleanup.runAll();
    expect(cleanup.closed).toBe(true);
    let killed = 0;
    const kill = cleanup.add('daemon', () => { killed++; });
    await kill();
    expect(killed).toBe(1);
  });
});

describe('cleanUpOnSignal', () => {
  const signals = (): EventEmitter & SignalSource => new EventEmitter();

  it('on SIGINT runs the clean-up once, a second signal included, and exits 130 with one line', async () => {
    const source = signals();
    const cleanup = new BenchCleanup();
    let removed = 0;
    cleanup.add('schema', () => { removed++; });
    const exits: Array<[string, number]> = [];
    let exited: () => void = () => {};
    const exitedOnce = new Promise<void>((r) => { exited = r; });
    cleanUpOnSignal(cleanup, (line, code) => { exits.push([line, code]); exited(); }, source);
    source.emit('SIGINT', 'SIGINT');
    source.emit('SIGTERM', 'SIGTERM');
    await exitedOnce;
    await new Promise((r) => setImmediate(r));
    expect(removed).toBe(1);
    expect(exits).toHaveLength(1);
    expect(exits[0]![1]).toBe(130);
    expect(exits[0]![0]).toMatch(/^bench: interrupted by SIGINT; removed [^\n]+$/);
  });

  it('on SIGTERM exits 143 and names what it could not remove', async () => {
    const source = signals();
    const cleanup = new BenchCleanup();
    cleanup.add('queue q', () => { throw new Error('broker\ngone'); });
    const exit = new Promise<[string, number]>((r) => cleanUpOnSignal(cleanup, (line, code) => r([line, code]), source));
    source.emit('SIGTERM', 'SIGTERM');
    expect(await exit).toEqual(['bench: interrupted by SIGTERM; could not remove everything: could not remove queue q: broker gone', 143]);
  });

  it('stops listening when told', () => {
    const source = signals();
    const stop = cleanUpOnSignal(new BenchCleanup(), () => {}, source);
    expect(source.listenerCount('SIGINT') + source.listenerCount('SIGTERM')).toBe(2);
    stop();
    expect(source.listenerCount('SIGINT') + source.listenerCount('SIGTERM')).toBe(0);
  });
});
