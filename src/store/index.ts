/**
 * The store's contract as code outside src/ (the bench) may use it; the back-ends have their own
 * entries (sqlite/index.ts, postgres/index.ts). eslint.config.js holds it to this.
 */
export type { NewMessage } from './intake.js';
export type { Store } from './store.js';
