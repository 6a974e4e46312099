/** What code outside src/ (the bench) may use of dispatch; eslint.config.js holds it to this. */
export { RouteTable, type RouteSpec } from './route-table.js';
