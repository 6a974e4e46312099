import type { EncodeOptions } from '../../src/sms/segment.js';

/** The configuration defaults of an upstream as encoder options, with any of them replaced. */
export function encodeOptions(over: Partial<EncodeOptions> = {}): EncodeOptions {
  return {
    messageType: 'AUTO',
    defaultAlphabet: 'gsm7',
    nationalShift: false,
    longMessages: 'udh',
    udhReferenceBits: 8,
    maxParts: 255,
    reference: 0,
    ...over,
  };
}
