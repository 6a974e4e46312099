/**
 * How the store's statements are sent: prepared once per connection by name (the default,
 * `db.ts`), or planned for each run (`plannedEachRun`). Its own module: the statements are
 * constants of the modules that `db.ts` imports.
 */
const PLANNED_EACH_RUN = new Set<string>();

/**
 * Marks a statement to be planned for each run with its parameters' values (sent unprepared)
 * instead of prepared by name. A prepared statement soon runs a generic plan, made for no values
 * in particular and kept until the tables' statistics change: for a statement that joins arrays
 * of a batch's keys to a big table, that plan is made for an `unnest` of 10 rows and for the
 * table as it was at the time (empty, in a new schema), and stays while the table grows. Planned
 * each run, such a statement (one per batch of up to 500 writes) costs a plan of a millisecond or less.
 */
export function plannedEachRun(text: string): string {
  PLANNED_EACH_RUN.add(text);
  return text;
}

export function isPlannedEachRun(text: string): boolean {
  return PLANNED_EACH_RUN.has(text);
}
