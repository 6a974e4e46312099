/**
 * The sendbulk uploads in progress (`UploadSlots`): at most `max` at once, half of them (at least
 * one) of one client, TOO_MANY_UPLOADS with Retry-After past either, and each slot given back
 * once however often its release is called.
 */
import { describe, expect, it } from 'vitest';
import { API_ERRORS } from '../../../../src/api/errors.js';
import { UPLOAD_RETRY_AFTER_S, UploadSlots } from '../../../../src/ingress/http/upload-slots.js';

function refusal(slots: UploadSlots, client: string): { code: string; message: string; headers: Readonly<Record<string, string>> } | null {
  try {
    slots.take(client);
    return null;
  } catch (e) {
    return e as { code: string; message: string; headers: Readonly<Record<string, string>> };
  }
}

describe('UploadSlots', () => {
  it('one client holds at most half the slots; the others are left to other clients, up to the total', () => {
    const slots = new UploadSlots(4);
    expect(slots.perClient).toBe(2);
    slots.take('acme');
    slots.take('acme');
    expect(refusal(slots, 'acme')).toMatchObject({
      code: 'TOO_MANY_UPLOADS',
      message: 'this client has 2 sendbulk uploads in progress, the most one client may have (half of http.maxConcurrentUploads, at least 1); retry after 5 s',
      headers: { 'retry-after': String(UPLOAD_RETRY_AFTER_S) },
    });
    slots.take('globex');
    slots.take('initech');
    expect(slots.inProgress).toBe(4);
    expect(refusal(slots, 'umbrella')).toMatchObject({
      code: 'TOO_MANY_UPLOADS', message: '4 sendbulk uploads are in progress, the most at once (http.maxConcurrentUploads); retry after 5 s',
    });
    expect(API_ERRORS.TOO_MANY_UPLOADS).toBe(429);
  });

  it('at least one slot a client, even when the total is 1 or odd', () => {
    expect(new UploadSlots(1).perClient).toBe(1);
    expect(new UploadSlots(5).perClient).toBe(2);
    const one = new UploadSlots(1);
    one.take('acme');
    expect(refusal(one, 'globex')?.message).toBe('1 sendbulk upload is in progress, the most at once (http.maxConcurrentUploads); retry after 5 s');
    expect(refusal(one, 'acme')?.message).toMatch(/^this client has 1 sendbulk upload in progress/);
  });

  it('a release gives its slot back once, however often it is called', () => {
    const slots = new UploadSlots(2);
    const release = slots.take('acme');
    slots.take('globex');
    release();
    release();
    expect(slots.inProgress).toBe(1);
    // acme's slot is free again; globex still holds its own.
    expect(refusal(slots, 'acme')).toBeNull();
    expect(refusal(slots, 'globex')?.code).toBe('TOO_MANY_UPLOADS');
  });
});
