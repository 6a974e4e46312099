/** What code outside src/ (the bench) may use of core; eslint.config.js holds it to this. */
export { SystemClock } from './clock.js';
export { uuidV7 } from './ids.js';
export { silentLog } from './log.js';
