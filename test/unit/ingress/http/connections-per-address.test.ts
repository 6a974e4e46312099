/**
 * The count behind http.maxConnectionsPerAddress: at most `max` open per address, a slot freed on
 * close, and no entry kept for an address with nothing open, whatever addresses come and go.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionsPerAddress } from '../../../../src/ingress/http/connections-per-address.js';

describe('ConnectionsPerAddress', () => {
  it('takes max connections from one address, refuses the next, and takes one again once one closes', () => {
    const c = new ConnectionsPerAddress(2);
    expect([c.open('10.0.0.1'), c.open('10.0.0.1'), c.open('10.0.0.1')]).toEqual([true, true, false]);
    expect(c.open('10.0.0.2')).toBe(true);
    c.close('10.0.0.1');
    expect([c.open('10.0.0.1'), c.open('10.0.0.1')]).toEqual([true, false]);
  });

  it('holds no entry for an address whose connections have all closed', () => {
    const c = new ConnectionsPerAddress(3);
    for (let i = 0; i < 10_000; i++) {
      const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      expect(c.open(address)).toBe(true);
      expect(c.open(address)).toBe(true);
      c.close(address);
      c.close(address);
    }
    expect(c.addresses).toBe(0);
    expect(c.open('::1')).toBe(true);
    expect(c.addresses).toBe(1);
    c.close('::1');
    // A close with nothing counted (a refused connection's) changes nothing.
    c.close('::1');
    expect(c.addresses).toBe(0);
  });
});
