/** The daemon benchmark's reading of a sendbulk run: the rate it held, apart from its start and its tail. */
import { describe, expect, it } from 'vitest';
import { steadyRate } from '../src/daemon-measure.js';

describe('steadyRate', () => {
  it('leaves out the first and the last second, then takes the median and the lowest', () => {
    expect(steadyRate([3000, 9900, 10000, 9950, 10020, 400])).toEqual({ samples: [3000, 9900, 10000, 9950, 10020, 400], median: 9950, min: 9900 });
  });

  it('with fewer than three seconds, takes them all', () => {
    expect(steadyRate([5000, 7000])).toEqual({ samples: [5000, 7000], median: 5000, min: 5000 });
    expect(steadyRate([])).toEqual({ samples: [], median: 0, min: 0 });
  });
});
