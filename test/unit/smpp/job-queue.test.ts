import { describe, expect, it } from 'vitest';
import { JobQueue } from '../../../src/smpp/job-queue.js';

const job = (id: string) => ({ id, ticket: 0 });

describe('JobQueue', () => {
  it('serves the front before the back, in order', () => {
    const q = new JobQueue<ReturnType<typeof job>>();
    q.pushBack(job('a'));
    q.pushBack(job('b'));
    q.pushFront(job('retry'));
    expect([q.shift()?.id, q.shift()?.id, q.shift()?.id, q.shift()]).toEqual(['retry', 'a', 'b', undefined]);
    expect(q.size).toBe(0);
  });

  it('skips withdrawn jobs and counts only live ones', () => {
    const q = new JobQueue<ReturnType<typeof job>>();
    const a = job('a');
    q.pushBack(a);
    q.pushBack(job('b'));
    q.withdraw(a);
    expect(q.size).toBe(1);
    expect(q.shift()?.id).toBe('b');
    q.pushBack(a); // a withdrawn job may be queued again
    expect(q.shift()?.id).toBe('a');
  });

  it('releases delayed jobs when due, earliest first, ahead of waiting work', () => {
    const q = new JobQueue<ReturnType<typeof job>>();
    q.pushBack(job('waiting'));
    q.pushDelayed(job('late'), 200);
    q.pushDelayed(job('early'), 100);
    expect(q.release(50)).toBe(100);
    expect(q.release(250)).toBeUndefined();
    expect([q.shift()?.id, q.shift()?.id, q.shift()?.id]).toEqual(['early', 'late', 'waiting']);
  });

  it('drains everything, delayed included', () => {
    const q = new JobQueue<ReturnType<typeof job>>();
    q.pushBack(job('a'));
    q.pushDelayed(job('b'), 100);
    expect(q.drainAll().map((j) => j.id).sort()).toEqual(['a', 'b']);
    expect(q.size).toBe(0);
  });
});
